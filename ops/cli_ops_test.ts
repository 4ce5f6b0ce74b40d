import assert from "node:assert/strict";
import {
  type CliIo,
  partitionByFlag,
  runAppend,
  runDiff,
  thawFlagOptions,
  thawStatsText,
} from "./cli_ops.ts";
import { OpsError } from "./errors.ts";
import { freeze } from "./freeze.ts";
import { thaw } from "./thaw.ts";

const TMP = ".tmp/ops_cli";
await Deno.mkdir(TMP, { recursive: true });

function capture(): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => void stdout.push(t), err: (t) => void stderr.push(t) };
}

Deno.test("runAppend() and runDiff() return 0/1/2 and print data to stdout, messages to stderr", async () => {
  await Deno.writeTextFile(`${TMP}/a.csv`, "id,v\n1,x\n2,y\n");
  await Deno.writeTextFile(`${TMP}/b.csv`, "id,v\n3,z\n");
  await freeze(`${TMP}/a.csv`, `${TMP}/a.pf`, { threads: 0 });
  await Deno.copyFile(`${TMP}/a.pf`, `${TMP}/c.pf`);

  const appended = capture();
  assert.equal(await runAppend([`${TMP}/b.csv`, `${TMP}/c.pf`, "--threads", "1"], appended), 0);
  assert.match(
    appended.stderr.join("\n"),
    /appended 1 rows in 1 chunk\(s\) to .*c\.pf: 2 -> 3 rows/,
  );

  const same = capture();
  assert.equal(await runDiff([`${TMP}/a.pf`, `${TMP}/a.pf`, "--exit-code"], same), 0);
  const differ = capture();
  assert.equal(await runDiff([`${TMP}/a.pf`, `${TMP}/c.pf`, "--exit-code"], differ), 1);
  assert.match(differ.stdout.join(""), /1 unchanged, 0 changed, 1 added, 0 removed/);
  const json = capture();
  assert.equal(await runDiff([`${TMP}/a.pf`, `${TMP}/c.pf`, "--json"], json), 0);
  assert.deepEqual(JSON.parse(json.stdout.join("")).summary, {
    unchanged: 1,
    changed: 0,
    added: 1,
    removed: 0,
  });

  const usage = capture();
  assert.equal(await runDiff([`${TMP}/a.pf`], usage), 2);
  assert.match(usage.stderr.join(""), /Expected <a\.pf> <b\.pf>, got '.*a\.pf'/);
  const flag = capture();
  assert.equal(await runAppend(["--bogus"], flag), 2);
  const missing = capture();
  assert.equal(await runDiff([`${TMP}/a.pf`, `${TMP}/nope.pf`], missing), 1);
  assert.match(
    missing.stderr.join(""),
    /FormatError BAD_ARGUMENT: Cannot open archive .*no such file/,
  );
  const mismatch = capture();
  await Deno.writeTextFile(`${TMP}/bad.csv`, "id,w\n3,z\n");
  assert.equal(await runAppend([`${TMP}/bad.csv`, `${TMP}/c.pf`], mismatch), 1);
  assert.match(
    mismatch.stderr.join(""),
    /OpsError SCHEMA_MISMATCH: .*missing "v" \(string\); extra "w"/,
  );
});

Deno.test("thawFlagOptions() and partitionByFlag() read the new flags; thawStatsText() reports pruning", async () => {
  assert.deepEqual(thawFlagOptions({ where: "a > 1", "split-sheets": true }), {
    where: "a > 1",
    splitSheets: true,
  });
  assert.deepEqual(thawFlagOptions({}), {});
  assert.throws(() => thawFlagOptions({ where: " " }), OpsError);
  assert.deepEqual(partitionByFlag({ "partition-by": "country, year" }), ["country", "year"]);
  assert.equal(partitionByFlag({}), undefined);
  assert.throws(() => partitionByFlag({ "partition-by": "," }), /needs column names/);
  const lines = ["n"];
  for (let i = 0; i < 5000; i++) lines.push(String(i));
  await Deno.writeTextFile(`${TMP}/n.csv`, lines.join("\n") + "\n");
  await freeze(`${TMP}/n.csv`, `${TMP}/n.pf`, { chunkRows: 500, threads: 0 });
  const s = await thaw(`${TMP}/n.pf`, `${TMP}/n_out.csv`, { where: "n >= 4990" });
  assert.match(
    thawStatsText(s),
    /^9 of 10 chunks skipped by min\/max; read .* of .* payload \(\d+\.\d%\)$/,
  );
});
