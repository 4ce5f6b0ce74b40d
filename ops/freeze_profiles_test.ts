/**
 * Codec profiles and per-column codecs (`freeze --profile`, `--column-codec`): every
 * profile and every mix thaws to exactly the rows frozen (property test over random
 * columns and codecs); what each column was written with is in the header and `audit`
 * (codec, level, `auto_reason`); one codec for all keeps the archive at its old version,
 * several make it `mixed` (1.6); an append keeps each column's codec; bad choices are
 * BAD_OPTION naming what to fix.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tableFromArrays } from "apache-arrow";
import { freeze } from "./freeze.ts";
import { append } from "./append.ts";
import { audit } from "./inspect.ts";
import { thaw, thawTable } from "./thaw.ts";
import { OpsError } from "./errors.ts";

const dir = await Deno.makeTempDir({ prefix: "permafrost-profiles-" });

/** A small table with a text, an integer-like and a float column. */
function table(rows: number, seed = 1) {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  return tableFromArrays({
    id: Float64Array.from({ length: rows }, (_, i) => i * 3),
    city: Array.from({ length: rows }, () => ["Oslo", "Lima", "Pune", "Kobe"][next() % 4]!),
    temp: Float64Array.from({ length: rows }, () => (next() % 4000) / 100 - 10),
    note: Array.from({ length: rows }, (_, i) => `note ${i % 37} lorem ${next() % 11}`),
  });
}

function rowsOf(t: { toArray(): unknown[] }): string {
  return JSON.stringify(t.toArray());
}

Deno.test("every profile thaws to the rows frozen, and audit says what each column used", async () => {
  const source = table(5000);
  const expected = rowsOf(source);
  for (const profile of ["max_speed", "balanced", "auto", "max_compression"] as const) {
    const path = join(dir, `${profile}.pf`);
    await freeze(source, path, { profile, chunkRows: 2000, threads: 0 });
    assert.equal(rowsOf(await thawTable(path)), expected, profile);
    const report = await audit(path);
    const codecs = report.columns.map((c) => c.codec);
    if (profile === "max_speed") {
      assert.deepEqual(codecs, ["zstd", "zstd", "zstd", "zstd"]);
      assert.deepEqual(report.columns.map((c) => c.level), [3, 3, 3, 3]);
      assert.equal(report.format_version, "1.3", "one codec: the format of before");
    }
    if (profile === "balanced") {
      assert.equal(report.codec, "zstd");
      assert.deepEqual(report.columns.map((c) => c.level), [null, null, null, null]);
    }
    if (profile === "auto" || (profile === "max_compression" && report.codec === "mixed")) {
      for (const c of report.columns) {
        assert.match(c.auto_reason ?? "", new RegExp(`^${profile}: `));
      }
    }
    if (profile === "max_compression" && report.codec !== "mixed") {
      // One codec for every column made the smaller archive: one reason, in the header.
      assert.match(report.auto_reason ?? "", /^max_compression: \w+ for all, \d+ B vs \d+ B/);
      for (const c of report.columns) assert.equal(c.auto_reason, null);
    }
    if (profile === "auto" || profile === "max_compression") {
      assert.equal(report.codec === "mixed", new Set(codecs).size > 1);
      assert.equal(report.format_version, report.codec === "mixed" ? "1.6" : "1.3");
    }
  }
});

Deno.test("max_compression gives a small table one codec when the per-column records cost more than they save", async () => {
  const source = table(400);
  const path = join(dir, "small-max.pf");
  await freeze(source, path, { profile: "max_compression", threads: 0 });
  const report = await audit(path);
  assert.notEqual(report.codec, "mixed");
  assert.equal(report.format_version, "1.3");
  assert.match(report.auto_reason ?? "", new RegExp(`^max_compression: ${report.codec} for all`));
  assert.deepEqual(
    report.columns.map((c) => [c.codec, c.auto_reason]),
    report.columns.map(() => [report.codec, null]),
  );
  // The same rows with each column's own codec, forced: larger, records and all.
  const own = join(dir, "small-own.pf");
  const columnCodecs = Object.fromEntries(
    report.columns.map((c, i) => [c.name, i % 2 ? "lzma2" : "zstd"]),
  );
  await freeze(source, own, { columnCodecs, threads: 0 });
  assert.equal(rowsOf(await thawTable(path)), rowsOf(source));
  assert.ok(report.file_bytes < (await audit(own)).file_bytes);
});

Deno.test("--column-codec: each named column its codec and level; an append keeps them", async () => {
  const path = join(dir, "mixed.pf");
  await freeze(table(3000), path, {
    columnCodecs: { note: "lzma2", temp: "zstd:5" },
    chunkRows: 1000,
    threads: 0,
  });
  const report = await audit(path);
  assert.equal(report.codec, "mixed");
  assert.equal(report.format_version, "1.6");
  assert.deepEqual(
    report.columns.map((c) => [c.name, c.codec, c.level]),
    [["id", "zstd", null], ["city", "zstd", null], ["temp", "zstd", 5], ["note", "lzma2", null]],
  );
  const more = table(1500, 7);
  await append(more, path, { threads: 0 });
  const back = await thawTable(path);
  assert.equal(back.numRows, 4500);
  assert.equal(
    JSON.stringify(back.toArray().slice(3000)),
    rowsOf(more),
    "the appended rows come back",
  );
  const after = await audit(path);
  assert.deepEqual(after.columns.map((c) => c.codec), report.columns.map((c) => c.codec));
});

Deno.test("random columns with random codecs and levels round-trip exactly", async () => {
  let x = 42;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  const choices = ["zstd", "zstd:1", "zstd:9", "lzma2", "lzma2:0", "lzma2:4"];
  for (let round = 0; round < 6; round++) {
    const columns: Record<string, Float64Array | string[]> = {};
    const codecs: Record<string, string> = {};
    const n = 1 + (next() % 5);
    const rows = 1 + (next() % 3000);
    for (let c = 0; c < n; c++) {
      const name = `c${c}`;
      columns[name] = next() % 2
        ? Float64Array.from({ length: rows }, () => (next() % 100000) / (1 + (next() % 7)))
        : Array.from({ length: rows }, () => `v${next() % 50}${"x".repeat(next() % 5)}`);
      if (next() % 3) codecs[name] = choices[next() % choices.length]!;
    }
    const source = tableFromArrays(columns);
    const path = join(dir, `random-${round}.pf`);
    await freeze(source, path, {
      columnCodecs: codecs,
      chunkRows: 1 + (next() % 1000),
      threads: 0,
    });
    assert.equal(rowsOf(await thawTable(path)), rowsOf(source), JSON.stringify(codecs));
  }
});

Deno.test("bad codec choices are BAD_OPTION naming what to fix", async () => {
  const cases: [Parameters<typeof freeze>[2], RegExp][] = [
    [{ columnCodecs: { nope: "zstd" } }, /'nope', which is not a column \(columns: id, city/],
    [{ columnCodecs: { id: "brotli" } }, /Cannot use codec 'brotli' for column 'id'.*known codecs/],
    [{ columnCodecs: { id: "zstd:40" } }, /zstd takes levels 1..19, not 40/],
    [{ profile: "fastest" as never }, /Unknown profile "fastest": use max_speed, balanced/],
    [{ profile: "auto", codec: "lzma2" }, /Give a codec or a profile, not both/],
  ];
  for (const [options, message] of cases) {
    await assert.rejects(
      freeze(table(10), join(dir, "bad.pf"), { ...options, threads: 0 }),
      (err: unknown) => {
        assert.ok(err instanceof OpsError, String(err));
        assert.equal(err.code, "BAD_OPTION");
        assert.match(err.message, message);
        return true;
      },
    );
  }
});

Deno.test("balanced and max_compression take 500,000-row chunks unless chunkRows is given", async () => {
  const source = table(1200);
  const path = join(dir, "big-chunks.pf");
  await freeze(source, path, { profile: "max_compression", threads: 0 });
  assert.equal((await audit(path)).chunk_rows, 500_000);
  await freeze(source, path, {
    profile: "max_compression",
    chunkRows: 100,
    threads: 0,
    overwrite: true,
  });
  const given = await audit(path);
  assert.equal(given.chunk_rows, 100);
  assert.equal(given.chunk_count, 12);
  await freeze(source, path, { profile: "balanced", threads: 0, overwrite: true });
  assert.equal((await audit(path)).chunk_rows, 500_000);
  for (const profile of [undefined, "max_speed", "auto"] as const) {
    await freeze(source, path, { ...(profile ? { profile } : {}), threads: 0, overwrite: true });
    assert.equal((await audit(path)).chunk_rows, 50_000, String(profile));
  }
});

Deno.test("max_speed encodes every block with the predictor its first chunk's trial chose, and the trial takes a block that predictor declines", async () => {
  // `seq` counts up in the first chunk (a delta predictor wins), then jumps at random;
  // `city` has 200 codes in the first chunk (category_u8 wins), then 700 (more than
  // category_u8 holds).
  let x = 9;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  const lines = ["seq,city,ts"];
  for (let i = 0; i < 5000; i++) {
    const seq = i < 1000 ? i * 7 : next() % 1_000_000;
    const stop = i < 1000 ? (next() >> 12) % 16 : (i * 7919) % 700;
    const city = [stop % 26, (stop / 26) % 26, stop / 676].map((c) => String.fromCharCode(65 + c))
      .join("");
    const ts = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString().slice(0, 19);
    lines.push(`${seq},${city},${ts.replace("T", " ")}`);
  }
  const csv = join(dir, "drift.csv");
  await Deno.writeTextFile(csv, lines.join("\n") + "\n");
  const reference = join(dir, "drift-balanced.pf");
  await freeze(csv, reference, { profile: "balanced", chunkRows: 1000, threads: 0 });
  const csvOf = async (archive: string) => {
    await thaw(archive, `${archive}.csv`, { overwrite: true });
    return await Deno.readTextFile(`${archive}.csv`);
  };
  const expected = await csvOf(reference);
  assert.equal(expected, lines.join("\n") + "\n", "the reference thaws to the file");
  const trial = (await audit(reference)).columns;
  assert.ok(Object.keys(trial[0]!.predictors).length > 1, "per block, the trial changes its mind");
  for (const threads of [0, 2]) {
    const path = join(dir, `drift-fast-${threads}.pf`);
    await freeze(csv, path, { profile: "max_speed", chunkRows: 1000, threads });
    assert.equal(await csvOf(path), expected, `threads ${threads}`);
    const [seq, city, ts] = (await audit(path)).columns;
    assert.deepEqual(Object.values(seq!.predictors), [5], "one predictor for every block");
    assert.deepEqual(ts!.predictors, { ts_delta_s: 5 });
    assert.equal(city!.predictors["category_u8"], 1, "the first chunk's choice");
    assert.equal(Object.values(city!.predictors).reduce((a, b) => a + b), 5);
    assert.ok(Object.keys(city!.predictors).length > 1, "later blocks went through the trial");
  }
});

Deno.test("profiles: teardown", async () => {
  await Deno.remove(dir, { recursive: true });
});
