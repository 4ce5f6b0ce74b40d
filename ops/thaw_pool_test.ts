/**
 * A thaw on Worker threads (`_pool_scan.ts`) writes the same bytes as one on the
 * calling thread, for every output format, type, slice and encrypted archive, and
 * fails the same way on damaged bytes: nothing written, the error typed and named.
 */
import assert from "node:assert/strict";
import { ALL_TYPES, randomBatch, resealArchive, writeTestArchive } from "../format/_test_utils.ts";
import type { Schema } from "../format/column.ts";
import { ArchiveReader } from "../format/reader.ts";
import { decodeChunkJob, packColumns } from "../format/chunk_decode.ts";
import { thaw, thawTable } from "./thaw.ts";
import { tableToIPC } from "apache-arrow";
import type { ThawOptions } from "./thaw.ts";
import { DETACH_PROTECTOR_BROKEN, evalTracingDetach } from "../internal/_test_utils.ts";

const TMP = ".tmp/ops_thaw_pool";
const KEY = Uint8Array.from({ length: 32 }, (_, i) => 7 * i + 1);
const SCHEMA: Schema = [
  ...ALL_TYPES,
  { name: "f32", type: "float32", nullable: true },
  { name: "f16", type: "float16", nullable: true },
];
const FORMATS = ["csv", "jsonl", "json", "arrow", "parquet"] as const;

await Deno.mkdir(TMP, { recursive: true });

/** Thaws with and without Workers and returns both outputs. */
async function both(
  archive: string,
  ext: string,
  options: ThawOptions = {},
): Promise<[Uint8Array, Uint8Array, number]> {
  const inline = `${TMP}/inline.${ext}`;
  const pooled = `${TMP}/pooled.${ext}`;
  const a = await thaw(archive, inline, { ...options, threads: 0 });
  const b = await thaw(archive, pooled, { ...options, threads: 2 });
  assert.equal(b.rows, a.rows);
  assert.equal(b.chunks_read, a.chunks_read);
  assert.equal(b.bytes_read, a.bytes_read);
  return [await Deno.readFile(inline), await Deno.readFile(pooled), b.rows];
}

Deno.test("a thaw on Worker threads writes every format byte for byte as one on this thread", async (t) => {
  const archive = `${TMP}/all.pf`;
  const batch = randomBatch(SCHEMA, 1_000, 41);
  await writeTestArchive(archive, batch, { chunkRows: 97 });
  for (const format of FORMATS) {
    await t.step(format, async () => {
      const [inline, pooled] = await both(archive, format);
      assert.ok(inline.length > 1000);
      assert.deepEqual(pooled, inline);
    });
  }
  await t.step("a slice across chunks, some columns, a tab delimiter", async () => {
    const options: ThawOptions = {
      rows: { start: 150, end: 777 },
      columns: ["s", "i", "j", "ts"],
      delimiter: "\t",
      format: "csv",
    };
    const [inline, pooled, rows] = await both(archive, "tsv", options);
    assert.equal(rows, 627);
    assert.deepEqual(pooled, inline);
  });
  await t.step("a slice as a JSON array (its separators depend on the row's place)", async () => {
    const [inline, pooled, rows] = await both(archive, "json", { rows: { start: 95, end: 400 } });
    assert.equal(rows, 305);
    const lines = new TextDecoder().decode(pooled).split("\n");
    assert.equal(lines.filter((l) => l.startsWith("{")).length, 305);
    assert.equal(lines[0], "[");
    assert.ok(lines[1]!.endsWith("},") && !lines[305]!.endsWith(","));
    assert.deepEqual(pooled, inline);
  });
  await t.step("more chunks than the pool holds at once, one column", async () => {
    const many = `${TMP}/many.pf`;
    await writeTestArchive(many, batch, { chunkRows: 7 });
    const [inline, pooled] = await both(many, "jsonl", { columns: ["cat"] });
    assert.deepEqual(pooled, inline);
  });
});

Deno.test("an encrypted archive thaws the same on Worker threads", async () => {
  const archive = `${TMP}/enc.pf`;
  await writeTestArchive(archive, randomBatch(SCHEMA, 600, 5), {
    chunkRows: 128,
    encryption: { key: KEY },
  });
  for (const format of ["csv", "arrow", "parquet"]) {
    const [inline, pooled] = await both(archive, format, { keys: { key: KEY } });
    assert.deepEqual(pooled, inline);
  }
});

Deno.test("damaged bytes fail a Worker thaw with the typed error, and nothing is written", async (t) => {
  const good = `${TMP}/good.pf`;
  await writeTestArchive(good, randomBatch(SCHEMA, 900, 9), { chunkRows: 100 });
  const bytes = await Deno.readFile(good);
  const reader = await ArchiveReader.open(good);
  const block = reader.index.footer.chunks[6]!.blocks[5]!; // column "s" of a late chunk
  reader.close();
  const bad = `${TMP}/bad.pf`;
  const out = `${TMP}/bad.csv`;
  const fails = async (code: string) => {
    await Deno.remove(out).catch(() => {});
    for (const format of ["csv", "arrow", "parquet"] as const) {
      await assert.rejects(
        thaw(bad, out, { threads: 2, format }),
        (err: Error & { code?: string; chunk?: number }) => {
          assert.equal(err.code, code, err.message);
          assert.equal(err.chunk, 6);
          assert.match(err.message, /bad\.pf/);
          return true;
        },
      );
      await assert.rejects(Deno.stat(out), Deno.errors.NotFound);
    }
  };
  await t.step("a flipped byte: HASH_MISMATCH (checked before any Worker sees it)", async () => {
    const b = bytes.slice();
    b[block.offset + 3]! ^= 0x10;
    await Deno.writeFile(bad, b);
    await fails("HASH_MISMATCH");
  });
  await t.step("with every hash recomputed: CORRUPT, from the Worker's decoder", async () => {
    const b = bytes.slice();
    for (let i = 0; i < block.length; i++) b[block.offset + i] = 0xa5;
    await Deno.writeFile(bad, resealArchive(b));
    await fails("CORRUPT");
  });
});

Deno.test("a value Parquet cannot hold fails a Worker thaw as it fails one on this thread", async () => {
  // A date past DuckDB's range, in a late chunk: the Worker laying out that chunk refuses it.
  const schema: Schema = [{ name: "day", type: "date", nullable: false }];
  const values = BigInt64Array.from({ length: 300 }, (_, i) => i === 250 ? 2n ** 40n : BigInt(i));
  const archive = `${TMP}/far.pf`;
  const batch = {
    schema,
    columns: [{ type: "date" as const, values, validity: null }],
    length: 300,
  };
  await writeTestArchive(archive, batch, { chunkRows: 50 });
  const out = `${TMP}/far.parquet`;
  for (const threads of [0, 2]) {
    await assert.rejects(
      thaw(archive, out, { threads }),
      (err: Error & { code?: string; column?: string }) => {
        assert.equal(err.code, "WRITE_FAILED", err.message);
        assert.equal(err.column, "day");
        assert.match(err.message, /out of range/);
        return true;
      },
    );
    await assert.rejects(Deno.stat(out), Deno.errors.NotFound);
  }
});

Deno.test("thaw refuses a thread count past the cap", async () => {
  await assert.rejects(
    thaw(`${TMP}/all.pf`, `${TMP}/x.csv`, { threads: 10_000 }),
    /Threads must be at most/,
  );
});

Deno.test("thawTable on Worker threads gives the table one on this thread gives", async () => {
  const archive = `${TMP}/table.pf`;
  await writeTestArchive(archive, randomBatch(SCHEMA, 700, 77), { chunkRows: 64 });
  for (const options of [{}, { rows: { start: 10, end: 500 }, columns: ["j", "dw", "f16"] }]) {
    const inline = await thawTable(archive, { ...options, threads: 0 });
    const pooled = await thawTable(archive, { ...options, threads: 2 });
    assert.equal(pooled.numRows, inline.numRows);
    assert.equal(pooled.batches.length, inline.batches.length);
    assert.deepEqual(tableToIPC(pooled, "file"), tableToIPC(inline, "file"));
  }
});

Deno.test("a thaw whose Workers start before the archive opens (1 MiB and more) writes the same bytes, and a pool it does not use is closed", async (t) => {
  const schema: Schema = [{ name: "x", type: "float64", nullable: false }];
  const batch = randomBatch(schema, 240_000, 7);
  const many = `${TMP}/big_many.pf`;
  const one = `${TMP}/big_one.pf`;
  await writeTestArchive(many, batch, { chunkRows: 60_000 });
  await writeTestArchive(one, batch, { chunkRows: 240_000 });
  for (const archive of [many, one]) {
    assert.ok((await Deno.stat(archive)).size >= 1 << 20, "the early pool's size rule applies");
  }
  await t.step("many chunks: read on the pool started first", async () => {
    const [inline, pooled, rows] = await both(many, "csv");
    assert.equal(rows, 240_000);
    assert.deepEqual(pooled, inline);
  });
  await t.step("one chunk: read on this thread, the pool closed unused", async () => {
    const [inline, pooled, rows] = await both(one, "csv");
    assert.equal(rows, 240_000);
    assert.deepEqual(pooled, inline);
  });
  await t.step("a failure after the pool started rejects with its own error", async () => {
    await assert.rejects(
      thaw(many, `${TMP}/out.unknown`, { threads: 2 }),
      (e: Error & { code?: string }) => e.code === "UNKNOWN_FORMAT",
    );
  });
});

Deno.test("a Worker thaw that may not overwrite refuses an existing output as it was, and writes a new one byte for byte", async () => {
  const archive = `${TMP}/no_overwrite.pf`;
  await writeTestArchive(archive, randomBatch(SCHEMA, 1_000, 43), { chunkRows: 97 });
  const existing = `${TMP}/exists.csv`;
  await Deno.writeTextFile(existing, "old");
  await assert.rejects(
    thaw(archive, existing, { threads: 2, overwrite: false }),
    (e: Error & { code?: string }) => e.code === "DESTINATION_EXISTS",
  );
  assert.equal(await Deno.readTextFile(existing), "old");
  const fresh = `${TMP}/fresh.csv`;
  await Deno.remove(fresh).catch(() => {});
  const summary = await thaw(archive, fresh, { threads: 2, overwrite: false });
  assert.equal(summary.rows, 1_000);
  await thaw(archive, `${TMP}/inline_fresh.csv`, { threads: 0 });
  assert.deepEqual(await Deno.readFile(fresh), await Deno.readFile(`${TMP}/inline_fresh.csv`));
});

/** Runs one job on a thaw Worker in a fresh process; V8's report of the first detach in each isolate. */
async function protectorTrace(render: unknown): Promise<string> {
  // A job that fails in its decode (no blocks), after the Worker has taken its kind.
  const task = {
    kind: "thaw-chunk",
    job: { chunk: 0, rows: 1, blocks: [], wanted: [0] },
    from: 0,
    to: 1,
    schema: [{ name: "a", type: "int64", nullable: false }],
    render,
  };
  const script = `
    import { thawPool } from ${JSON.stringify(new URL("./_pool_scan.ts", import.meta.url).href)};
    const pool = thawPool(1);
    await pool.run(${
    JSON.stringify(task)
  }).then(() => console.log("ran"), () => console.log("failed"));
    pool.close();
  `;
  const text = await evalTracingDetach(script);
  assert.match(text, /failed/);
  return text;
}

Deno.test("a thaw Worker detaches a buffer before its first Arrow, Parquet or column job, and never for text", async () => {
  // Such answers move buffers with several views; detached before anything is optimized,
  // the first of them deoptimizes nothing. Text answers move one-view buffers, which
  // leave V8's promise (and its faster code) whole: nothing must break it.
  assert.match(await protectorTrace({ arrow: true }), DETACH_PROTECTOR_BROKEN);
  assert.match(await protectorTrace({ duckdb: true }), DETACH_PROTECTOR_BROKEN);
  assert.match(await protectorTrace(null), DETACH_PROTECTOR_BROKEN);
  const text = { rendering: { format: "csv", delimiter: "," }, firstRow: 0 };
  assert.doesNotMatch(await protectorTrace(text), DETACH_PROTECTOR_BROKEN);
});

Deno.test("a text thaw split between decoding and rendering Workers writes the rows byte for byte, coded strings and nulls included", async () => {
  const archive = `${TMP}/split.pf`;
  const schema: Schema = [
    { name: "airport", type: "string", nullable: true },
    { name: "n", type: "int64", nullable: true },
    { name: "at", type: "timestamp", unit: "us", nullable: false },
    { name: "note", type: "string", nullable: true },
  ];
  const rows = 3_000;
  const airports = ["SFO", "LAX", "a,b", "", 'q"t', "ÅRE"];
  const values = (i: number) => i % 17 === 0 ? null : airports[(i * 7) % airports.length]!;
  const batch = {
    schema,
    length: rows,
    columns: [
      {
        type: "string" as const,
        values: Array.from({ length: rows }, (_, i) => values(i) ?? ""),
        validity: Uint8Array.from({ length: rows }, (_, i) => values(i) === null ? 0 : 1),
      },
      {
        type: "int64" as const,
        values: BigInt64Array.from({ length: rows }, (_, i) => BigInt(i * 37 - 900)),
        validity: null,
      },
      {
        type: "timestamp" as const,
        values: BigInt64Array.from(
          { length: rows },
          (_, i) => 978307200000000n + BigInt(i) * 60000000n,
        ),
        validity: null,
      },
      randomBatch([schema[3]!], rows, 5).columns[0]!, // freq_rank in some chunks: coded
    ],
  };
  await writeTestArchive(archive, batch, { chunkRows: 250 });
  // Some chunks' strings decode with dictionary codes (and cross between Workers so).
  const reader = await ArchiveReader.open(archive);
  try {
    let coded = 0;
    for await (const read of reader.chunkJobs({})) {
      const { columns } = packColumns(await decodeChunkJob(read.job));
      coded += columns.filter((c) => "coded" in c).length;
    }
    assert.ok(coded > 0, "no coded string column: the test misses that path");
  } finally {
    reader.close();
  }
  // lzma2 chunks stay whole on each Worker (decoding would be the slow half).
  const slow = `${TMP}/split_lzma2.pf`;
  await writeTestArchive(slow, batch, { chunkRows: 1_000, codec: "lzma2" });
  const [inline, pooled] = await both(slow, "csv");
  assert.deepEqual(pooled, inline);
  for (const format of ["csv", "jsonl", "json"] as const) {
    const inline = `${TMP}/split_inline.${format}`;
    await thaw(archive, inline, { threads: 0 });
    const want = await Deno.readFile(inline);
    for (const threads of [2, 3]) {
      const pooled = `${TMP}/split_${threads}.${format}`;
      const summary = await thaw(archive, pooled, { threads });
      assert.equal(summary.rows, rows);
      assert.deepEqual(await Deno.readFile(pooled), want, `${format}, ${threads} threads`);
    }
  }
});
