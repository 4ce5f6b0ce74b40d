/**
 * `freeze()` of a Parquet file whose chunks the pool's Workers read themselves
 * (`_parquet_chunks.ts`, `_freeze_worker.ts`): the archive is byte-identical to the
 * streaming freeze (threads 0) for every chunk size, null pattern and thread count;
 * errors come back typed (a SCHEMA_MISMATCH in a Worker still widens the column);
 * progress, empty files and encryption keep working.
 *
 * @module
 */
import assert from "node:assert/strict";
import { duckParquet as writeDuckParquet } from "../io/_test_utils.ts";
import { cellValue, concatBatches } from "../format/column.ts";
import { openParquetRanges } from "../io/parquet.ts";
import { freeze, thawTable } from "../mod.ts";
import type { FreezeProgress } from "./freeze.ts";
import { chunkWindows, readChunk } from "../io/chunk_window.ts";
import { rechunk } from "../io/chunk_window.ts";

const TMP = ".tmp/ops_freeze_parquet";
await Deno.mkdir(TMP, { recursive: true });

/** Writes a Parquet file with DuckDB from a query (row groups of `rowGroupSize` rows). */
const duckParquet = (path: string, select: string, rowGroupSize = 10000) =>
  writeDuckParquet(path, select, rowGroupSize);

/**
 * `n` rows of every type, with nulls in chosen places: `near` one null at row `lone`
 * only (so a chunk beside it, sharing its read batch, gets a bitmap without a null of
 * its own), `head` in the first rows, `tail` in the last, `some` scattered, `none`
 * never, `all` always.
 */
function rowsWithNulls(n: number, lone: number): string {
  return `SELECT
    range AS id,
    CASE WHEN range = ${lone} THEN NULL ELSE range * 7 % 1000 END AS near,
    CASE WHEN range < 5 THEN NULL ELSE (range % 97)::DOUBLE / 8 END AS head,
    CASE WHEN range >= ${n - 3} THEN NULL ELSE 'v' || (range % 13)::VARCHAR END AS tail,
    CASE WHEN range % 1777 = 3 THEN NULL ELSE range % 3 = 0 END AS some,
    TIMESTAMP '2024-01-01' + INTERVAL (range) SECOND AS none,
    NULL::INTEGER AS "all",
    DATE '2000-01-01' + (range % 400)::INTEGER AS day
  FROM range(${n})`;
}

Deno.test("freeze() of a Parquet file writes the same payload with 0, 1 and 2 threads", async (t) => {
  const cases = [
    { rows: 1001, lone: 500, chunks: [7, 333, 1000, 1001, 1002] },
    { rows: 100000, lone: 66000, chunks: [65536, 70000, 99999, 100000, 100001] },
  ];
  for (const c of cases) {
    const path = `${TMP}/nulls_${c.rows}.parquet`;
    await duckParquet(path, rowsWithNulls(c.rows, c.lone));
    for (const chunkRows of c.chunks) {
      await t.step(`${c.rows} rows in chunks of ${chunkRows}`, async () => {
        const hashes = new Map<number, string>();
        for (const threads of [0, 1, 2]) {
          const s = await freeze(path, `${TMP}/out_${c.rows}_${chunkRows}_${threads}.pf`, {
            chunkRows,
            threads,
          });
          assert.equal(s.rows, c.rows);
          assert.equal(s.chunks, Math.ceil(c.rows / chunkRows));
          hashes.set(threads, s.payload_sha256);
        }
        assert.equal(hashes.get(1), hashes.get(0), "1 thread");
        assert.equal(hashes.get(2), hashes.get(0), "2 threads");
      });
    }
  }
});

Deno.test("freeze() of a Parquet file keeps auto, progress and warnings as the streaming freeze", async () => {
  const path = `${TMP}/auto.parquet`;
  await duckParquet(path, rowsWithNulls(5000, 10));
  const runs = [];
  for (const threads of [0, 2]) {
    const seen: FreezeProgress[] = [];
    const s = await freeze(path, `${TMP}/auto_${threads}.pf`, {
      codec: "auto",
      chunkRows: 700,
      threads,
      onProgress: (p) => seen.push(p),
    });
    runs.push({ s, seen });
  }
  const [inline, pooled] = runs as [(typeof runs)[0], (typeof runs)[0]];
  assert.equal(pooled.s.payload_sha256, inline.s.payload_sha256);
  assert.equal(pooled.s.codec, inline.s.codec);
  assert.equal(pooled.s.auto_reason, inline.s.auto_reason);
  assert.deepEqual(pooled.s.warnings, inline.s.warnings);
  assert.deepEqual(
    pooled.seen.map((p) => [p.rows, p.raw_bytes, p.input_bytes]),
    inline.seen.map((p) => [p.rows, p.raw_bytes, p.input_bytes]),
  );
  assert.equal(pooled.seen.at(-1)?.rows, 5000);
});

Deno.test("freeze() widens a UBIGINT beyond int64 that a Worker meets, as the streaming freeze does", async () => {
  const path = `${TMP}/ubig.parquet`;
  await duckParquet(
    path,
    `SELECT range AS n, CASE WHEN range = 17 THEN 18446744073709551615::UBIGINT
      ELSE range::UBIGINT END AS u FROM range(40)`,
  );
  const inline = await freeze(path, `${TMP}/ubig_0.pf`, { chunkRows: 5, threads: 0 });
  const pooled = await freeze(path, `${TMP}/ubig_2.pf`, { chunkRows: 5, threads: 2 });
  assert.deepEqual(pooled.widened_columns, ["u"]);
  assert.deepEqual(inline.widened_columns, ["u"]);
  assert.equal(pooled.payload_sha256, inline.payload_sha256);
  const back = await thawTable(`${TMP}/ubig_2.pf`);
  assert.equal(back.getChild("u")?.get(17), "18446744073709551615");
});

Deno.test("freeze() of an empty Parquet file and of an encrypted one with Worker reads", async (t) => {
  await t.step("no rows", async () => {
    const path = `${TMP}/empty.parquet`;
    await duckParquet(path, "SELECT range AS n, 'x' AS s FROM range(0)");
    const inline = await freeze(path, `${TMP}/empty_0.pf`, { threads: 0 });
    const pooled = await freeze(path, `${TMP}/empty_2.pf`, { threads: 2 });
    assert.equal(pooled.rows, 0);
    assert.equal(pooled.payload_sha256, inline.payload_sha256);
  });
  await t.step("encrypted", async () => {
    const path = `${TMP}/secret.parquet`;
    await duckParquet(path, rowsWithNulls(2500, 1234));
    const key = crypto.getRandomValues(new Uint8Array(32));
    const s = await freeze(path, `${TMP}/secret.pf`, {
      chunkRows: 300,
      threads: 2,
      encryption: { key },
    });
    assert.equal(s.chunks, 9);
    await freeze(path, `${TMP}/secret_plain.pf`, { chunkRows: 300, threads: 0 });
    const back = await thawTable(`${TMP}/secret.pf`, { keys: { key } });
    const plain = await thawTable(`${TMP}/secret_plain.pf`);
    assert.equal(back.numRows, 2500);
    for (const name of ["id", "near", "head", "tail", "day"]) {
      assert.deepEqual(back.getChild(name)?.toArray(), plain.getChild(name)?.toArray(), name);
    }
  });
});

Deno.test("readChunk() cuts each chunk out of whole read batches as rechunk() does", async () => {
  const path = `${TMP}/windows.parquet`;
  await duckParquet(path, rowsWithNulls(1000, 130), 64);
  for (const [chunkRows, batchRows] of [[100, 100], [250, 64], [999, 999], [1001, 1001]]) {
    const file = await openParquetRanges(path, { batchRows });
    try {
      const windows = chunkWindows(1000, chunkRows!, batchRows!);
      const streamed = [];
      for await (const chunk of rechunk(file.schema, file.read(), chunkRows!)) {
        streamed.push(chunk);
      }
      assert.equal(windows.length, streamed.length);
      for (const [i, w] of windows.entries()) {
        assert.equal(w.start % batchRows!, 0);
        const got = await readChunk(file, w, path);
        assert.deepEqual(got.columns, streamed[i]!.columns, `chunk ${i} of ${chunkRows}`);
      }
      const all = concatBatches(file.schema, streamed);
      assert.equal(cellValue(all.columns[1]!, 130), null);
    } finally {
      file.close();
    }
  }
});
