/**
 * The CLI end to end, as a user runs it: `deno run <permissions> main.ts ...`
 * in a subprocess, checking stdout, stderr and exit codes.
 */
import assert from "node:assert/strict";

const TMP = ".tmp/e2e_cli";
await Deno.remove(TMP, { recursive: true }).catch(() => {});
await Deno.mkdir(TMP, { recursive: true });

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-ffi",
      "--allow-run=zpaq",
      "main.ts",
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

const CSV = [
  "ts,sensor,reading,ok,note",
  ...Array.from(
    { length: 3000 },
    (_, i) =>
      `2024-01-0${1 + (i % 9)} 00:${String(i % 60).padStart(2, "0")}:00,s${i % 5},${i}.${
        (i % 9) + 1
      },${i % 3 === 0},"note ${i}, with comma"`,
  ),
].join("\n") + "\n";

Deno.test("CLI freeze → audit → verify → peek → thaw round-trips a CSV", async () => {
  await Deno.writeTextFile(`${TMP}/in.csv`, CSV);
  const frozen = await cli(
    "freeze",
    `${TMP}/in.csv`,
    `${TMP}/a.pf`,
    "--codec",
    "lzma2",
    "--chunk-rows",
    "1000",
  );
  assert.equal(frozen.code, 0, frozen.stderr);
  assert.match(frozen.stderr, /froze 3,000 rows: .* -> .* in [\d.]+ s, codec lzma2/);

  const audited = await cli("audit", `${TMP}/a.pf`);
  assert.equal(audited.code, 0, audited.stderr);
  const report = JSON.parse(audited.stdout);
  assert.equal(report.rows, 3000);
  assert.equal(report.chunk_count, 3);
  assert.equal(report.codec, "lzma2");
  assert.deepEqual(report.columns.map((c: { name: string }) => c.name), [
    "ts",
    "sensor",
    "reading",
    "ok",
    "note",
  ]);

  const verified = await cli("verify", `${TMP}/a.pf`);
  assert.equal(verified.code, 0, verified.stderr);
  assert.match(verified.stderr, /^ok: /);

  const peeked = await cli("peek", `${TMP}/a.pf`, "--rows", "3");
  assert.equal(peeked.code, 0, peeked.stderr);
  assert.equal(peeked.stdout.trim().split("\n").length, 5, peeked.stdout);
  assert.match(peeked.stdout, /note 1, with comma/);

  const thawed = await cli("thaw", `${TMP}/a.pf`, `${TMP}/back.csv`);
  assert.equal(thawed.code, 0, thawed.stderr);
  assert.equal(await Deno.readTextFile(`${TMP}/back.csv`), CSV);

  const slice = await cli(
    "thaw",
    `${TMP}/a.pf`,
    `${TMP}/slice.jsonl`,
    "--rows",
    "1500:1503",
    "--columns",
    "reading,sensor",
  );
  assert.equal(slice.code, 0, slice.stderr);
  assert.match(slice.stderr, /1 chunk\(s\) read/);
  const lines = (await Deno.readTextFile(`${TMP}/slice.jsonl`)).trim().split("\n").map((l) =>
    JSON.parse(l)
  );
  assert.deepEqual(lines, [
    { reading: 1500.7, sensor: "s0" },
    { reading: 1501.8, sensor: "s1" },
    { reading: 1502.9, sensor: "s2" },
  ]);
});

Deno.test("CLI verify exits 1 naming the first bad chunk", async () => {
  await Deno.writeTextFile(`${TMP}/in2.csv`, CSV);
  assert.equal(
    (await cli("freeze", `${TMP}/in2.csv`, `${TMP}/b.pf`, "--chunk-rows", "1000")).code,
    0,
  );
  const report = JSON.parse((await cli("audit", `${TMP}/b.pf`)).stdout);
  const bytes = await Deno.readFile(`${TMP}/b.pf`);
  bytes[report.chunks[2].offset + 5]! ^= 0xff;
  await Deno.writeFile(`${TMP}/b.pf`, bytes);
  const verified = await cli("verify", `${TMP}/b.pf`);
  assert.equal(verified.code, 1);
  assert.match(verified.stderr, /first bad chunk is 2/);
  const thawed = await cli("thaw", `${TMP}/b.pf`, `${TMP}/b.csv`);
  assert.equal(thawed.code, 1);
  assert.match(thawed.stderr, /HASH_MISMATCH/);
  await assert.rejects(
    Deno.stat(`${TMP}/b.csv`),
    Deno.errors.NotFound,
    "no output from a damaged archive",
  );
});

Deno.test("CLI exits 2 on usage errors and 1 on failures, with a message", async () => {
  const none = await cli();
  assert.equal(none.code, 2);
  assert.match(none.stderr, /Usage: permafrost/);
  const unknown = await cli("defrost");
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command 'defrost'/);
  const missing = await cli("freeze", "only-one-arg.csv");
  assert.equal(missing.code, 2);
  const badFlag = await cli("freeze", "a.csv", "b.pf", "--codec", "gzip");
  assert.equal(badFlag.code, 2);
  assert.match(badFlag.stderr, /--codec/);
  const badRows = await cli("thaw", "a.pf", "b.csv", "--rows", "5-3");
  assert.equal(badRows.code, 2);
  await Deno.writeTextFile(`${TMP}/not.pf`, "hello,world\n");
  const notArchive = await cli("audit", `${TMP}/not.pf`);
  assert.equal(notArchive.code, 1);
  assert.match(notArchive.stderr, /BAD_MAGIC/);
  const noFile = await cli("freeze", `${TMP}/does-not-exist.csv`, `${TMP}/x.pf`);
  assert.equal(noFile.code, 1);
  assert.match(
    noFile.stderr,
    /no such file \(looked for \/.*does-not-exist\.csv\) \[READ_FAILED\]/,
  );
});
