import assert from "node:assert/strict";
import { dirname } from "node:path";
import { freeze } from "../ops/freeze.ts";
import { thaw } from "../ops/thaw.ts";
import { cli } from "./_test_utils.ts";
import { freezeProgressText, parseRows, parseTypes, thawStatsText } from "./archive.ts";
import { UsageError } from "./errors.ts";

const TMP = ".tmp/cli_archive";
await Deno.mkdir(TMP, { recursive: true });

Deno.test("append --evolve adds a nullable column; without it the new column is refused with a hint", async () => {
  await Deno.writeTextFile(`${TMP}/ev_a.csv`, "id,v\n1,x\n2,y\n");
  await Deno.writeTextFile(`${TMP}/ev_b.csv`, "id,v,tip\n3,z,1.5\n4,w,\n");
  await freeze(`${TMP}/ev_a.csv`, `${TMP}/ev.pf`, { threads: 0 });
  const before = await Deno.readFile(`${TMP}/ev.pf`);
  const plain = await cli(["append", `${TMP}/ev_b.csv`, `${TMP}/ev.pf`]);
  assert.equal(plain.code, 1);
  assert.match(plain.err, /extra "tip" \(float64\).*--evolve adds new nullable columns/);
  assert.deepEqual(await Deno.readFile(`${TMP}/ev.pf`), before);
  const evolved = await cli(["append", `${TMP}/ev_b.csv`, `${TMP}/ev.pf`, "--evolve"]);
  assert.equal(evolved.code, 0, evolved.err);
  assert.match(evolved.err, /appended 2 rows in 1 chunk\(s\)/);
  assert.match(
    evolved.err,
    /added column\(s\) tip: the 1 chunk\(s\) stored before read them as null/,
  );
  const audit = await cli(["audit", `${TMP}/ev.pf`, "--json"]);
  const report = JSON.parse(audit.out);
  assert.equal(report.format_version, "1.8");
  assert.deepEqual(report.columns.map((c: { since_chunk: number }) => c.since_chunk), [0, 0, 1]);
  const table = await cli(["audit", `${TMP}/ev.pf`, "--table"]);
  assert.match(table.out, /since/);
  await thaw(`${TMP}/ev.pf`, `${TMP}/ev_out.csv`);
  assert.equal(
    await Deno.readTextFile(`${TMP}/ev_out.csv`),
    "id,v,tip\n1,x,\n2,y,\n3,z,1.5\n4,w,\n",
  );
  const verify = await cli(["verify", `${TMP}/ev.pf`]);
  assert.equal(verify.code, 0, verify.err);
  assert.match(verify.err, /columns added by an append .*: tip from chunk 1/);
  const peek = await cli(["peek", `${TMP}/ev.pf`, "--json"]);
  assert.equal(peek.code, 0, peek.err);
  assert.deepEqual(JSON.parse(peek.out).rows.map((r: unknown[]) => r[2]), [null, null, 1.5, null]);
});

Deno.test("append and diff exit 0/1/2 and print data to stdout, messages to stderr", async () => {
  await Deno.writeTextFile(`${TMP}/a.csv`, "id,v\n1,x\n2,y\n");
  await Deno.writeTextFile(`${TMP}/b.csv`, "id,v\n3,z\n");
  await freeze(`${TMP}/a.csv`, `${TMP}/a.pf`, { threads: 0 });
  await Deno.copyFile(`${TMP}/a.pf`, `${TMP}/c.pf`);

  const appended = await cli(["append", `${TMP}/b.csv`, `${TMP}/c.pf`, "--threads", "1"]);
  assert.equal(appended.code, 0, appended.err);
  assert.match(appended.err, /appended 1 rows in 1 chunk\(s\) to .*c\.pf: 2 -> 3 rows/);

  assert.equal((await cli(["diff", `${TMP}/a.pf`, `${TMP}/a.pf`, "--exit-code"])).code, 0);
  const differ = await cli(["diff", `${TMP}/a.pf`, `${TMP}/c.pf`, "--exit-code"]);
  assert.equal(differ.code, 1);
  assert.match(differ.out, /1 unchanged, 0 changed, 1 added, 0 removed/);
  const json = await cli(["diff", `${TMP}/a.pf`, `${TMP}/c.pf`, "--json"]);
  assert.equal(json.code, 0);
  assert.deepEqual(JSON.parse(json.out).summary, {
    unchanged: 1,
    changed: 0,
    added: 1,
    removed: 0,
  });

  const usage = await cli(["diff", `${TMP}/a.pf`]);
  assert.equal(usage.code, 2);
  assert.match(usage.err, /'diff' takes <a\.pf> <b\.pf>, got '.*a\.pf'/);
  assert.match(usage.err, /see 'permafrost diff --help'/);
  const flag = await cli(["append", "--bogus"]);
  assert.equal(flag.code, 2);
  assert.match(flag.err, /'append' has no flag '--bogus'/);
  const missing = await cli(["diff", `${TMP}/a.pf`, `${TMP}/nope.pf`]);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /^error: Cannot open archive .*no such file.* \[BAD_ARGUMENT\]$/);
  await Deno.writeTextFile(`${TMP}/bad.csv`, "id,w\n3,z\n");
  const mismatch = await cli(["append", `${TMP}/bad.csv`, `${TMP}/c.pf`]);
  assert.equal(mismatch.code, 1);
  assert.match(mismatch.err, /missing "v" \(string\); extra "w".*\[SCHEMA_MISMATCH\]/);
});

Deno.test("thaw --where, --split-sheets and freeze --partition-by are checked before anything runs", async () => {
  const where = await cli(["thaw", `${TMP}/a.pf`, `${TMP}/x.csv`, "--where", " "]);
  assert.equal(where.code, 2);
  assert.match(where.err, /--where needs a condition/);
  const split = await cli(["thaw", `${TMP}/a.pf`, `${TMP}/x.csv`, "--split-sheets=yes"]);
  assert.equal(split.code, 2);
  assert.match(split.err, /--split-sheets takes no value/);
  const partition = await cli(["freeze", `${TMP}/a.csv`, `${TMP}/p`, "--partition-by", ","]);
  assert.equal(partition.code, 2);
  assert.match(partition.err, /--partition-by needs column names/);
});

Deno.test("parseRows() and parseTypes() read their flags or refuse them by name", () => {
  assert.deepEqual(parseRows("5:10"), { start: 5, end: 10 });
  assert.equal(parseRows(undefined), undefined);
  assert.throws(() => parseRows("10:5"), UsageError);
  assert.throws(() => parseRows("5-10"), /START:END/);
  assert.deepEqual(parseTypes("a=json,b=decimal(18, 2),c=time(ms),d=duration"), {
    a: "json",
    b: { type: "decimal", precision: 18, scale: 2 },
    c: { type: "time", unit: "ms" },
    d: { type: "duration", unit: "us" },
  });
  assert.deepEqual(parseTypes("x=float32,y=float16,z=float64"), {
    x: "float32",
    y: "float16",
    z: "float64",
  });
  assert.throws(() => parseTypes("a=list"), /--types entry 'a=list' is not COLUMN=TYPE/);
  assert.throws(() => parseTypes("=json"), UsageError);
});

Deno.test("thawStatsText() reports the chunks pruning skipped", async () => {
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

Deno.test("freeze and thaw refuse an existing destination unless --force", async () => {
  await Deno.writeTextFile(`${TMP}/f.csv`, "id,v\n1,x\n");
  await Deno.writeTextFile(`${TMP}/g.csv`, "id,v\n2,y\n3,z\n");
  await Deno.remove(`${TMP}/f.pf`).catch(() => {});
  await Deno.remove(`${TMP}/f_out.csv`).catch(() => {});
  assert.equal((await cli(["freeze", `${TMP}/f.csv`, `${TMP}/f.pf`])).code, 0);
  const before = await Deno.readFile(`${TMP}/f.pf`);
  const again = await cli(["freeze", `${TMP}/g.csv`, `${TMP}/f.pf`]);
  assert.equal(again.code, 1);
  assert.match(again.err, /'.*f\.pf': it already exists; .*--force.*\[DESTINATION_EXISTS\]/);
  assert.deepEqual(await Deno.readFile(`${TMP}/f.pf`), before, "the archive is untouched");
  const forced = await cli(["freeze", `${TMP}/g.csv`, `${TMP}/f.pf`, "--force"]);
  assert.equal(forced.code, 0, forced.err);
  assert.match(forced.err, /froze 2 rows/);

  assert.equal((await cli(["thaw", `${TMP}/f.pf`, `${TMP}/f_out.csv`])).code, 0);
  await Deno.writeTextFile(`${TMP}/f_out.csv`, "keep me\n");
  const thawAgain = await cli(["thaw", `${TMP}/f.pf`, `${TMP}/f_out.csv`]);
  assert.equal(thawAgain.code, 1);
  assert.match(thawAgain.err, /\[DESTINATION_EXISTS\]/);
  assert.equal(await Deno.readTextFile(`${TMP}/f_out.csv`), "keep me\n");
  assert.equal((await cli(["thaw", `${TMP}/f.pf`, `${TMP}/f_out.csv`, "--force"])).code, 0);
  assert.equal(await Deno.readTextFile(`${TMP}/f_out.csv`), "id,v\n2,y\n3,z\n");
});

Deno.test("freeze tells a ; file's delimiter and says so; --delimiter overrides", async () => {
  await Deno.writeTextFile(`${TMP}/semi.csv`, "city;temp\nParis;12,5\nLyon;9\n");
  await Deno.remove(`${TMP}/semi.pf`).catch(() => {});
  const r = await cli(["freeze", `${TMP}/semi.csv`, `${TMP}/semi.pf`]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.err, /CSV delimiter ';' \(told from the first lines\)/);
  const peek = await cli(["peek", `${TMP}/semi.pf`, "--json"]);
  assert.deepEqual(JSON.parse(peek.out).columns, ["city", "temp"]);
  assert.deepEqual(JSON.parse(peek.out).rows, [["Paris", "12,5"], ["Lyon", "9"]]);
  // With ',' forced, the decimal comma splits a row: refused, never stored changed.
  const forced = await cli([
    "freeze",
    `${TMP}/semi.csv`,
    `${TMP}/semi.pf`,
    "--force",
    "--delimiter",
    ",",
  ]);
  assert.equal(forced.code, 1);
  assert.match(forced.err, /data row 1 has 2 fields, the header has 1 \[PARSE_FAILED\]/);
  const kept = await cli(["peek", `${TMP}/semi.pf`, "--json"]);
  assert.deepEqual(JSON.parse(kept.out).columns, ["city", "temp"]);
});

Deno.test("freezeProgressText() gives rows/s and the source's MB/s when the share read is known", () => {
  const base = { rows: 1_200_000, raw_bytes: 9e9, archive_bytes: 0, seconds: 2 };
  assert.equal(
    freezeProgressText({ ...base, input_bytes: 100e6, fraction: 0.5 }),
    "1,200,000 rows  600,000 rows/s  25.0 MB/s",
  );
  assert.equal(
    freezeProgressText({ ...base, input_bytes: null, fraction: null }),
    "1,200,000 rows  600,000 rows/s",
  );
});

Deno.test("freeze reports the share of a CSV read, reaching 1", async () => {
  const lines = ["n,s"];
  for (let i = 0; i < 20_000; i++) lines.push(`${i},v${i % 7}`);
  await Deno.writeTextFile(`${TMP}/progress.csv`, lines.join("\n") + "\n");
  const fractions: (number | null)[] = [];
  await freeze(`${TMP}/progress.csv`, `${TMP}/progress.pf`, {
    chunkRows: 1000,
    threads: 0,
    onProgress: (p) => fractions.push(p.fraction),
  });
  assert.ok(fractions.length >= 10);
  assert.ok(fractions.every((f) => f !== null && f > 0 && f <= 1), String(fractions));
  assert.ok(fractions.every((f, i) => i === 0 || f! >= fractions[i - 1]!), "never goes back");
  assert.equal(fractions.at(-1), 1);
});

Deno.test("audit: JSON when piped with typed min/max; a table per column with --table or on a terminal", async () => {
  const golden = "tests/golden/tiny_v1_5_types.pf";
  const json = await cli(["audit", golden]);
  assert.equal(json.code, 0, json.err);
  const report = JSON.parse(json.out);
  const price = report.columns.find((c: { name: string }) => c.name === "price");
  assert.deepEqual([price.min, price.min_value, price.max_value], ["-99999", "-999.99", "1.23"]);
  assert.deepEqual([price.precision, price.scale], [10, 2]);
  const table = await cli(["audit", golden, "--table"]);
  assert.match(table.out, /^tests\/golden\/tiny_v1_5_types\.pf: Permafrost archive 1\.5, 3 rows/);
  assert.match(
    table.out,
    /^price +decimal\(10,2\) +delta_zigzag +\d+ B +\d+ B +[█·]{10} +[\d.]+% +1 +-999\.99 +1\.23$/m,
  );
  const terminal = await cli(["audit", golden], { stdoutIsTerminal: true });
  assert.equal(terminal.out, table.out);
  assert.equal((await cli(["audit", golden, "--json"], { stdoutIsTerminal: true })).out, json.out);
  assert.equal((await cli(["audit", golden, "--json", "--table"])).code, 2);
});

Deno.test("freeze - reads stdin (CSV unless --format), spooled to a file that is removed after", async () => {
  const stdin = (text: string) => new Blob([text]).stream();
  await Deno.remove(`${TMP}/stdin.pf`).catch(() => {});
  const r = await cli(["freeze", "-", `${TMP}/stdin.pf`], { stdin: stdin("a;b\n1;2\n3;4\n") });
  assert.equal(r.code, 0, r.err);
  assert.match(r.err, /froze 2 rows/);
  const peek = JSON.parse((await cli(["peek", `${TMP}/stdin.pf`, "--json"])).out);
  assert.deepEqual([peek.columns, peek.rows], [["a", "b"], [[1, 2], [3, 4]]]);
  const jsonl = await cli(["freeze", "-", `${TMP}/stdin.pf`, "--force", "--format", "jsonl"], {
    stdin: stdin('{"x":1}\n{"x":2}\n'),
  });
  assert.equal(jsonl.code, 0, jsonl.err);
  assert.deepEqual(JSON.parse((await cli(["peek", `${TMP}/stdin.pf`, "--json"])).out).columns, [
    "x",
  ]);
  const probe = await Deno.makeTempFile();
  await Deno.remove(probe);
  for await (const e of Deno.readDir(dirname(probe))) {
    assert.ok(!e.name.startsWith("permafrost-stdin-"), `left behind: ${e.name}`);
  }
});

Deno.test("thaw --schema gives the rows in the schema of a file; a bad one is named", async () => {
  await Deno.writeTextFile(`${TMP}/s.csv`, "id,v\n1,x\n2,y\n");
  assert.equal((await cli(["freeze", `${TMP}/s.csv`, `${TMP}/s.pf`, "--force"])).code, 0);
  await Deno.writeTextFile(
    `${TMP}/s.schema.json`,
    JSON.stringify([
      { name: "v", type: "string" },
      { name: "id", type: "string" },
      { name: "added", type: "int64" },
    ]),
  );
  const ok = await cli([
    "thaw",
    `${TMP}/s.pf`,
    `${TMP}/s-new.csv`,
    "--schema",
    `${TMP}/s.schema.json`,
    "--force",
  ]);
  assert.equal(ok.code, 0, ok.err);
  assert.equal(await Deno.readTextFile(`${TMP}/s-new.csv`), "v,id,added\nx,1,\ny,2,\n");
  const missing = await cli([
    "thaw",
    `${TMP}/s.pf`,
    `${TMP}/m.csv`,
    "--schema",
    `${TMP}/nope.json`,
  ]);
  assert.equal(missing.code, 2);
  assert.match(missing.err, /Cannot read --schema .*nope\.json/);
  await Deno.writeTextFile(`${TMP}/narrow.json`, '[{"name":"id","type":"float64"}]');
  const narrow = await cli([
    "thaw",
    `${TMP}/s.pf`,
    `${TMP}/n.csv`,
    "--schema",
    `${TMP}/narrow.json`,
  ]);
  assert.equal(narrow.code, 1);
  assert.match(narrow.err, /column 'id' type changed \(int64 → float64\).*\[SCHEMA_INCOMPATIBLE\]/);
});

Deno.test("thaw --threads picks the Worker threads; the output is the same; past the cap is a usage error", async () => {
  const rows = Array.from({ length: 500 }, (_, i) => `${i},v${i % 7},${(i * 0.5).toFixed(1)}`).join(
    "\n",
  );
  await Deno.writeTextFile(`${TMP}/t.csv`, `id,v,x\n${rows}\n`);
  await Deno.remove(`${TMP}/t.pf`).catch(() => {});
  const frozen = await cli(["freeze", `${TMP}/t.csv`, `${TMP}/t.pf`, "--chunk-rows", "60"]);
  assert.equal(frozen.code, 0, frozen.err);
  const outputs: string[] = [];
  for (const threads of ["1", "3"]) {
    const out = `${TMP}/t_${threads}.csv`;
    const r = await cli(["thaw", `${TMP}/t.pf`, out, "--threads", threads, "--force"]);
    assert.equal(r.code, 0, r.err);
    outputs.push(await Deno.readTextFile(out));
  }
  assert.equal(outputs[0], await Deno.readTextFile(`${TMP}/t.csv`));
  assert.equal(outputs[1], outputs[0]);
  const refused = await cli(["thaw", `${TMP}/t.pf`, `${TMP}/t_x.csv`, "--threads", "99999"]);
  assert.equal(refused.code, 2);
  assert.match(refused.err, /--threads/);
});
