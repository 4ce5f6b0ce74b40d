/**
 * `json_schema_v2` through the library, end to end: a JSON-lines file whose nested
 * objects make a json column and a CSV file with JSON text in a string column freeze,
 * `audit` names the predictor, and thawing to the source's format gives the same bytes.
 *
 * @module
 */
import assert from "node:assert/strict";
import { audit, freeze, thaw, thawTable } from "../mod.ts";

const TMP = ".tmp/ops_freeze_json_shred";
await Deno.remove(TMP, { recursive: true }).catch(() => {});
await Deno.mkdir(TMP, { recursive: true });

const EVENTS = ["click", "view", "scroll", "caf\\u00e9", 'say \\"hi\\"'];
const PAGES = ["/a", "/b", "\\/c", "/日本", "/🧊"];

/** Event-log objects of varied spelling: floats as written, escapes, nesting, extra keys. */
function props(i: number): string {
  const page = PAGES[i % PAGES.length]!;
  const extra = i % 7 === 0 ? `, "ratio": ${["1.50", "-0", "1e5", "0.1"][i % 4]}` : "";
  const nested = i % 11 === 0 ? `,"tags":["x", {"k":null}]` : "";
  if (i % 97 === 0) return "[1, 2]"; // not an object: kept raw
  return `{"user":${(i * 7919) % 5000},"event":"${EVENTS[i % EVENTS.length]}","ts":${
    1700000000 + i * 3
  },"page":"${page}"${extra}${nested},"ok":${i % 3 === 0}}`;
}

Deno.test("freeze() shreds a JSON-lines json column and thaws it to the same bytes", async () => {
  const lines = Array.from({ length: 6000 }, (_, i) => `{"id":${i},"props":${props(i)}}\n`);
  const source = `${TMP}/events.jsonl`;
  await Deno.writeTextFile(source, lines.join(""));
  const archive = `${TMP}/events.pf`;
  await freeze(source, archive, { chunkRows: 2000, threads: 0 });
  const report = await audit(archive);
  const column = report.columns.find((c) => c.name === "props")!;
  assert.equal(column.type, "json");
  assert.deepEqual(Object.keys(column.predictors), ["json_schema_v2"]);
  await thaw(archive, `${TMP}/events.out.jsonl`);
  assert.equal(await Deno.readTextFile(`${TMP}/events.out.jsonl`), lines.join(""));
});

Deno.test("freeze() shreds JSON text in a CSV string column and thaws it to the same bytes", async () => {
  const quote = (s: string) => `"${s.replaceAll('"', '""')}"`;
  const rows = Array.from(
    { length: 5000 },
    (_, i) => `${i},${quote(i % 50 === 0 ? "" : props(i))}\n`,
  );
  const text = `id,payload\n${rows.join("")}`;
  const source = `${TMP}/events.csv`;
  await Deno.writeTextFile(source, text);
  const archive = `${TMP}/events_csv.pf`;
  // The pool and inline writers choose the same predictors, so the same bytes.
  const pooled = await freeze(source, archive, { chunkRows: 2500, threads: 2 });
  const inline = await freeze(source, `${TMP}/events_csv_inline.pf`, {
    chunkRows: 2500,
    threads: 0,
  });
  assert.equal(pooled.payload_sha256, inline.payload_sha256);
  const report = await audit(archive);
  const column = report.columns.find((c) => c.name === "payload")!;
  assert.equal(column.type, "string");
  assert.deepEqual(Object.keys(column.predictors), ["json_schema_v2"]);
  await thaw(archive, `${TMP}/events.out.csv`);
  assert.equal(await Deno.readTextFile(`${TMP}/events.out.csv`), text);
  const table = await thawTable(archive);
  assert.equal(table.getChild("payload")!.get(1), props(1));
});
