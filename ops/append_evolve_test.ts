import assert from "node:assert/strict";
import { tableFromArrays } from "apache-arrow";
import { cellValue, type Field, type Schema } from "../format/column.ts";
import { ArchiveReader } from "../format/reader.ts";
import { randomBatch } from "../format/_test_utils.ts";
import { append } from "./append.ts";
import { diff } from "./diff.ts";
import { OpsError } from "./errors.ts";
import { freeze } from "./freeze.ts";
import { audit, verify } from "./inspect.ts";
import { thaw } from "./thaw.ts";
import { SqlSession } from "./sql.ts";

const TMP = ".tmp/ops_append_evolve";
await Deno.mkdir(TMP, { recursive: true });

/** `id,city` rows from..to as CSV, with a `score` column when asked. */
function csv(from: number, to: number, withScore = false): string {
  const lines = [withScore ? "id,city,score" : "id,city"];
  for (let i = from; i < to; i++) {
    const city = ["Oslo", "Lima", "Pune"][i % 3]!;
    lines.push(withScore ? `${i},${city},${i % 7 === 0 ? "" : i * 10}` : `${i},${city}`);
  }
  return lines.join("\n") + "\n";
}

/** All rows of an archive as plain values, one object per row. */
async function rowsOf(path: string, options: Parameters<ArchiveReader["read"]>[0] = {}) {
  const reader = await ArchiveReader.open(path);
  try {
    const out: Record<string, unknown>[] = [];
    for await (const b of reader.read(options)) {
      for (let r = 0; r < b.length; r++) {
        out.push(Object.fromEntries(b.schema.map((f, i) => [f.name, cellValue(b.columns[i]!, r)])));
      }
    }
    return out;
  } finally {
    reader.close();
  }
}

/** freeze 0..250 (chunks of 100), then append 250..400 with a new `score` column. */
async function evolved(name: string): Promise<string> {
  await Deno.writeTextFile(`${TMP}/${name}_a.csv`, csv(0, 250));
  await Deno.writeTextFile(`${TMP}/${name}_b.csv`, csv(250, 400, true));
  await freeze(`${TMP}/${name}_a.csv`, `${TMP}/${name}.pf`, { chunkRows: 100, threads: 0 });
  await Deno.copyFile(`${TMP}/${name}.pf`, `${TMP}/${name}_before.pf`);
  await append(`${TMP}/${name}_b.csv`, `${TMP}/${name}.pf`, { evolve: true, threads: 0 });
  return `${TMP}/${name}.pf`;
}

function expectedScore(i: number): bigint | null {
  return i < 250 || i % 7 === 0 ? null : BigInt(i * 10);
}

Deno.test("append({evolve}) adds a nullable column: stored chunks are copied as they were and read it as null", async () => {
  const path = await evolved("basic");
  const rows = await rowsOf(path);
  assert.equal(rows.length, 400);
  rows.forEach((row, i) => {
    assert.deepEqual(row, {
      id: BigInt(i),
      city: ["Oslo", "Lima", "Pune"][i % 3],
      score: expectedScore(i),
    }, `row ${i}`);
  });
  const report = await audit(path);
  assert.equal(report.format_version, "1.8");
  assert.deepEqual(report.columns.map((c) => [c.name, c.since_chunk]), [
    ["id", 0],
    ["city", 0],
    ["score", 3],
  ]);
  assert.equal(
    report.columns[2]!.null_count,
    250 + [...Array(150).keys()].filter((k) => (k + 250) % 7 === 0).length,
  );
  assert.equal((await verify(path)).ok, true);
  const d = await diff(`${TMP}/basic_before.pf`, path);
  assert.deepEqual(d.summary, { unchanged: 3, changed: 0, added: 2, removed: 0 });
  assert.deepEqual(
    d.schema.changes.map((c) => [c.column, c.kind, c.compatible]),
    [["score", "added", true]],
  );
});

Deno.test("append({evolve}) slices across the boundary, projects and filters the added column", async (t) => {
  const path = await evolved("slices");
  const ids = (rows: Record<string, unknown>[]) => rows.map((r) => Number(r.id));
  await t.step("a row range spanning the last old chunk and the first new one", async () => {
    const rows = await rowsOf(path, { rows: { start: 240, end: 262 } });
    assert.deepEqual(ids(rows), [...Array(22).keys()].map((k) => k + 240));
    rows.forEach((r) => assert.equal(r.score, expectedScore(Number(r.id))));
  });
  await t.step("only the added column, from an old chunk", async () => {
    const rows = await rowsOf(path, { rows: { start: 10, end: 13 }, columns: ["score"] });
    assert.deepEqual(rows, [{ score: null }, { score: null }, { score: null }]);
  });
  await t.step("thaw --where on the added column prunes the chunks that lack it", async () => {
    const summary = await thaw(path, `${TMP}/slices_where.jsonl`, { where: "score >= 3500" });
    assert.equal(summary.chunks_total, 5);
    assert.equal(
      summary.chunks_skipped,
      4,
      "the three old chunks (all null) and rows 250..349 (max 3490)",
    );
    const lines = (await Deno.readTextFile(`${TMP}/slices_where.jsonl`)).trim().split("\n");
    const expected = [...Array(50).keys()].map((k) => k + 350).filter((i) => i % 7 !== 0);
    assert.deepEqual(lines.map((l) => JSON.parse(l).id), expected);
  });
  await t.step("thaw --where score is null keeps the old rows", async () => {
    const summary = await thaw(path, `${TMP}/slices_null.csv`, { where: "score is null" });
    assert.equal(
      summary.rows,
      250 + [...Array(150).keys()].filter((k) => (k + 250) % 7 === 0).length,
    );
  });
  await t.step("SQL over the archive sees the column, null in old rows", async () => {
    const session = new SqlSession();
    await session.register("t", path);
    const table = await session.query("SELECT count(*) AS n, count(score) AS scored FROM t");
    const row = table.get(0)!.toJSON() as Record<string, unknown>;
    assert.equal(Number(row.n), 400);
    assert.equal(
      Number(row.scored),
      150 - [...Array(150).keys()].filter((k) => (k + 250) % 7 === 0).length,
    );
  });
});

Deno.test("append({evolve}) fills a nullable column the source lacks, and evolves twice", async () => {
  const path = await evolved("twice");
  // Now the source has no `city` (nullable: CSV columns are) and a second new column.
  await Deno.writeTextFile(`${TMP}/twice_c.csv`, "id,score,note\n400,4000,x\n401,,y\n");
  const s = await append(`${TMP}/twice_c.csv`, path, { evolve: true, threads: 0 });
  assert.deepEqual(s.columns_added, ["note"]);
  assert.deepEqual(s.columns_filled, ["city"]);
  const report = await audit(path);
  assert.deepEqual(report.columns.map((c) => [c.name, c.since_chunk]), [
    ["id", 0],
    ["city", 0],
    ["score", 3],
    ["note", 5],
  ]);
  const rows = await rowsOf(path, { rows: { start: 398, end: 402 } });
  assert.deepEqual(rows, [
    { id: 398n, city: "Pune", score: 3980n, note: null },
    { id: 399n, city: "Oslo", score: null, note: null },
    { id: 400n, city: null, score: 4000n, note: "x" },
    { id: 401n, city: null, score: null, note: "y" },
  ]);
});

Deno.test("append({evolve}) of the archive's own columns writes what a plain append writes", async () => {
  await Deno.writeTextFile(`${TMP}/same_a.csv`, csv(0, 250));
  await Deno.writeTextFile(`${TMP}/same_b.csv`, csv(250, 400));
  await freeze(`${TMP}/same_a.csv`, `${TMP}/same1.pf`, { chunkRows: 100, threads: 0 });
  await Deno.copyFile(`${TMP}/same1.pf`, `${TMP}/same2.pf`);
  await append(`${TMP}/same_b.csv`, `${TMP}/same1.pf`, { threads: 0 });
  await append(`${TMP}/same_b.csv`, `${TMP}/same2.pf`, { threads: 0, evolve: true });
  assert.deepEqual(await Deno.readFile(`${TMP}/same1.pf`), await Deno.readFile(`${TMP}/same2.pf`));
  assert.equal((await audit(`${TMP}/same2.pf`)).format_version, "1.3");
});

Deno.test("append({evolve}) refuses what evolution cannot do, naming the column, and writes nothing", async (t) => {
  const base = `${TMP}/refuse.pf`;
  await freeze(
    tableFromArrays({ id: BigInt64Array.of(1n, 2n), v: Float64Array.of(1.5, 2.5) }),
    base,
    { threads: 0 },
  );
  const before = await Deno.readFile(base);
  const refused = async (
    rows: Parameters<typeof append>[0],
    evolve: boolean,
    column: string,
    text: RegExp,
  ) => {
    await assert.rejects(
      () => append(rows, base, { threads: 0, evolve }),
      (err: unknown) => {
        assert.ok(err instanceof OpsError, String(err));
        assert.equal(err.code, "SCHEMA_MISMATCH");
        assert.equal(err.column, column);
        assert.match(err.message, text);
        return true;
      },
    );
    assert.deepEqual(await Deno.readFile(base), before);
  };
  await t.step("a type change", async () => {
    await refused(
      tableFromArrays({ id: BigInt64Array.of(3n), v: ["x"] }),
      true,
      "v",
      /"v": archive float64, source string \(an append never changes a column's type\)/,
    );
  });
  await t.step("a new column that is not nullable", async () => {
    const {
      Field: ArrowField,
      Float64,
      Int64,
      Schema: ArrowSchema,
      Table,
      makeData,
      RecordBatch,
      Struct,
    } = await import("apache-arrow");
    const schema = new ArrowSchema([
      new ArrowField("id", new Int64(), false),
      new ArrowField("v", new Float64(), false),
      new ArrowField("w", new Float64(), false),
    ]);
    const children = [
      makeData({ type: new Int64(), data: BigInt64Array.of(3n) }),
      makeData({ type: new Float64(), data: Float64Array.of(1) }),
      makeData({ type: new Float64(), data: Float64Array.of(2) }),
    ];
    const data = makeData({ type: new Struct(schema.fields), length: 1, children });
    await refused(
      new Table(schema, [new RecordBatch(schema, data)]),
      true,
      "w",
      /new column "w" \(float64\) is not nullable/,
    );
  });
  await t.step("without evolve, a new column is the old error, with a hint", async () => {
    await refused(
      tableFromArrays({ id: BigInt64Array.of(3n), v: Float64Array.of(1), w: Float64Array.of(2) }),
      false,
      "w",
      /extra "w" \(float64\).*--evolve adds new nullable columns/,
    );
  });
});

Deno.test("append({evolve}) round-trips added columns of random types (property)", async () => {
  const { ALL_TYPES } = await import("../format/_test_utils.ts");
  const pool: Schema = [
    ...ALL_TYPES,
    { name: "f32", type: "float32", nullable: true },
    { name: "f16", type: "float16", nullable: true },
  ];
  // Every type once, each with its own random rows.
  for (const [round, pick] of pool.entries()) {
    const added: Field = { ...pick, name: `new_${round}`, nullable: true };
    const base: Schema = [{ name: "k", type: "int64", nullable: true }];
    const old = randomBatch(base, 37, round);
    const fresh = randomBatch([...base, added], 29, 100 + round, 0.2);
    const path = `${TMP}/prop_${round}.pf`;
    await freeze({ schema: base, batches: [old] }, path, { chunkRows: 16, threads: 0 });
    const s = await append({ schema: fresh.schema, batches: [fresh] }, path, {
      evolve: true,
      threads: 0,
    });
    assert.deepEqual(s.columns_added, [added.name], `round ${round}`);
    const rows = await rowsOf(path);
    assert.equal(rows.length, 66);
    for (let r = 0; r < 37; r++) {
      assert.deepEqual(
        rows[r],
        { k: cellValue(old.columns[0]!, r), [added.name]: null },
        `round ${round} row ${r}`,
      );
    }
    for (let r = 0; r < 29; r++) {
      assert.deepEqual(
        rows[37 + r],
        { k: cellValue(fresh.columns[0]!, r), [added.name]: cellValue(fresh.columns[1]!, r) },
        `round ${round} (${added.type}) row ${37 + r}`,
      );
    }
  }
});

Deno.test("append({evolve}) refuses an encrypted archive as every append does, and writes nothing", async () => {
  const key = crypto.getRandomValues(new Uint8Array(32));
  const path = `${TMP}/secret.pf`;
  await freeze(tableFromArrays({ id: BigInt64Array.of(1n, 2n) }), path, {
    threads: 0,
    encryption: { key },
  });
  const before = await Deno.readFile(path);
  await assert.rejects(
    () =>
      append(tableFromArrays({ id: BigInt64Array.of(3n), extra: ["x"] }), path, {
        evolve: true,
        threads: 0,
      }),
    (err: unknown) => err instanceof OpsError && err.code === "BAD_OPTION",
  );
  assert.deepEqual(await Deno.readFile(path), before);
});

Deno.test("append({evolve}) to an archive with no chunks grows the schema without a since_chunk", async () => {
  const path = `${TMP}/empty.pf`;
  await Deno.writeTextFile(`${TMP}/empty.csv`, "id,city\n");
  await freeze(`${TMP}/empty.csv`, path, { threads: 0 });
  assert.equal((await audit(path)).chunk_count, 0);
  await Deno.writeTextFile(`${TMP}/empty_more.csv`, csv(0, 3, true));
  const s = await append(`${TMP}/empty_more.csv`, path, { evolve: true, threads: 0 });
  assert.deepEqual(s.columns_added, ["score"]);
  const report = await audit(path);
  assert.equal(report.format_version, "1.3", "no chunk lacks a column");
  assert.deepEqual(report.columns.map((c) => c.since_chunk), [0, 0, 0]);
  assert.deepEqual((await rowsOf(path)).map((r) => r.score), [null, 10n, 20n]);
});

Deno.test("a plain append to an evolved archive keeps its since_chunk and copies the lacking chunks as they are", async () => {
  const path = await evolved("plain_after");
  const before = await audit(path);
  await Deno.writeTextFile(`${TMP}/plain_after_c.csv`, csv(400, 420, true));
  await append(`${TMP}/plain_after_c.csv`, path, { threads: 0 });
  const report = await audit(path);
  assert.equal(report.format_version, "1.8");
  assert.deepEqual(report.columns.map((c) => c.since_chunk), [0, 0, 3]);
  assert.deepEqual(report.chunks.slice(0, 5), before.chunks, "stored chunks keep bytes and hashes");
  assert.equal((await verify(path)).ok, true);
  const rows = await rowsOf(path);
  assert.equal(rows.length, 420);
  rows.forEach((r, i) => assert.equal(r.score, expectedScore(i), `row ${i}`));
});
