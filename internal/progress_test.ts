import assert from "node:assert/strict";
import { formatCount, formatDuration, formatRate, ProgressBar } from "./progress.ts";

function sink(isTerminal = true) {
  const writes: string[] = [];
  return { writes, sink: { write: (t: string) => void writes.push(t), isTerminal } };
}

Deno.test("ProgressBar shows the percentage, and the time left once a second has passed", () => {
  let now = 0;
  const { writes, sink: s } = sink();
  const bar = new ProgressBar("freeze", s, () => now);
  bar.update(0.25, "100 rows");
  assert.equal(writes.at(-1), `\r\x1b[2Kfreeze [${"#".repeat(7)}${"-".repeat(21)}]  25% 100 rows`);
  now = 4000; // 25% took 4 s: 12 s to go at that pace
  bar.update(0.25, "100 rows");
  assert.ok(writes.at(-1)!.endsWith(" 25%  ETA 12s 100 rows"), writes.at(-1)!);
  now = 4050; // within 100 ms of the last draw: skipped unless forced
  bar.update(0.5, "x");
  assert.equal(writes.length, 2);
  bar.update(null, "unknown size", true);
  assert.match(writes.at(-1)!, /\[ *= *\] unknown size$/);
  bar.done();
  assert.equal(writes.at(-1), "\r\x1b[2K");
});

Deno.test("ProgressBar draws nothing when the sink is not a terminal", () => {
  const { writes, sink: s } = sink(false);
  const bar = new ProgressBar("thaw", s, () => 0);
  bar.update(0.5, "x", true);
  bar.done();
  assert.deepEqual(writes, []);
});

Deno.test("formatDuration() and formatRate()", () => {
  assert.equal(formatDuration(4.4), "4s");
  assert.equal(formatDuration(185), "3m05s");
  assert.equal(formatDuration(7620), "2h07m");
  assert.equal(formatRate(21_900_000, 1), "21.9 MB/s");
});

Deno.test("formatCount() writes what toLocaleString('en-US') writes", () => {
  const values = [0, -0, 7, -7, 999, 1000, -1000, 12345, 999999, 1000000, 3000000, -123456789012];
  values.push(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 60, 1234.5678, NaN);
  for (let digits = 1; digits <= 16; digits++) values.push(Number("9".repeat(digits)));
  for (const n of values) assert.equal(formatCount(n), n.toLocaleString("en-US"), String(n));
});
