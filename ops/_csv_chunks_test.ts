/**
 * Tests of a freeze Worker's CSV chunks (`_csv_chunks.ts`, `_freeze_worker.ts`): a chunk
 * handed out before the freeze planned is parsed, then encoded once the
 * `CsvPlansNotice` comes, to the bytes of a chunk handed out with its encoding; a notice
 * of no encoding rejects it, and a max_speed freeze whose plan fails reports the plan's
 * error; a Worker fixes a max_speed freeze's predictors (`CsvPredictorsTask`) as this
 * thread would; a Worker's warm-up parses a chunk's first rows as the chunk's read does and
 * changes no block's bytes.
 *
 * @module
 */
import assert from "node:assert/strict";
import { BlockPool } from "../format/pool.ts";
import { type ChunkResult, INLINE_ENCODER } from "../format/chunk.ts";
import type { BlockPlan } from "../format/block_encode.ts";
import type { Schema } from "../format/column.ts";
import { planColumns, planPredictors } from "../format/plan.ts";
import { reviveIoError } from "../io/errors.ts";
import { csvRowBoundaries, openCsv, readCsvHeader } from "../io/csv.ts";
import type { CsvChunkTask, CsvPlansNotice, CsvPredictorsTask } from "./_csv_chunks.ts";
import { readCsvChunk, readFirstCsvChunk, warmUpCsvChunk, warmUpEncoding } from "./_csv_chunks.ts";
import { freeze } from "./freeze.ts";
import { OpsError } from "./errors.ts";

const TMP = ".tmp/ops_csv_chunks";
await Deno.remove(TMP, { recursive: true }).catch(() => {});
await Deno.mkdir(TMP, { recursive: true });

const PATH = `${TMP}/rows.csv`;
await Deno.writeTextFile(
  PATH,
  "id,city,at\n" +
    Array.from(
      { length: 900 },
      (_, i) => `${i},${["Oslo", "Lima", "Pune"][i % 3]},2024-01-0${1 + (i % 9)} 10:00:0${i % 10}`,
    )
      .join("\n") +
    "\n",
);

async function chunkTasks(): Promise<CsvChunkTask[]> {
  const source = await openCsv(PATH);
  await source.close();
  const cut = await csvRowBoundaries(PATH, 300);
  return cut.offsets.slice(1).map((end, i) => ({
    kind: "csv-chunk",
    chunk: {
      path: PATH,
      range: { start: cut.offsets[i]!, end },
      firstRow: 300 * i,
      rows: 300,
      delimiter: ",",
      types: {},
    },
    schema: source.schema,
  }));
}

function freezePool(): BlockPool {
  return new BlockPool(2, {
    script: new URL("./_freeze_worker.ts", import.meta.url),
    revive: reviveIoError,
  });
}

Deno.test("a CSV chunk handed out before the plan is encoded when the notice comes", async () => {
  const tasks = await chunkTasks();
  const first = await readCsvChunk(tasks[0]!.chunk, tasks[0]!.schema);
  const encoding = { plans: planColumns(first, {}), codec: "zstd" };
  const pool = freezePool();
  try {
    const early = tasks.map((task) => pool.run<ChunkResult>(task));
    pool.notify({ kind: "csv-plans", encoding } satisfies CsvPlansNotice);
    const late = tasks.map((task) => pool.run<ChunkResult>({ ...task, encoding }));
    const [a, b] = [await Promise.all(early), await Promise.all(late)];
    assert.equal(a.length, 3);
    for (let i = 0; i < a.length; i++) {
      assert.equal(a[i]!.chunk.rows, 300);
      assert.deepEqual(
        a[i]!.chunk.blocks.map((block) => [...block.bytes]),
        b[i]!.chunk.blocks.map((block) => [...block.bytes]),
        `chunk ${i}`,
      );
    }
  } finally {
    await pool.shutdown();
  }
});

Deno.test("a CSV chunk waiting for its encoding is rejected by a notice of none", async () => {
  const [task] = await chunkTasks();
  const pool = freezePool();
  try {
    const waiting = pool.run<ChunkResult>(task);
    pool.notify({ kind: "csv-plans", encoding: null } satisfies CsvPlansNotice);
    await assert.rejects(waiting, /stopped before it planned/);
  } finally {
    await pool.shutdown();
  }
});

Deno.test("a max_speed freeze whose plan fails reports the plan's error, before or after its first chunks were handed out", async () => {
  // Conditioning: this thread plans on the sample after handing out the first chunks;
  // without, the header is planned before any chunk.
  for (const conditioning of [true, undefined]) {
    await assert.rejects(
      freeze(PATH, `${TMP}/bad.pf`, {
        profile: "max_speed",
        chunkRows: 100,
        threads: 2,
        columnCodecs: { nowhere: "zstd" },
        ...(conditioning ? { conditioning } : {}),
      }),
      (err: unknown) => err instanceof OpsError && err.code === "BAD_OPTION",
    );
    await assert.rejects(Deno.stat(`${TMP}/bad.pf`), Deno.errors.NotFound);
  }
});

Deno.test("a Worker fixes a max_speed freeze's predictors on the file's first rows as planPredictors does here", async () => {
  const source = await openCsv(PATH);
  await source.close();
  const { schema } = source;
  const { dataStart, bytes } = await readCsvHeader(PATH);
  const all = await readFirstCsvChunk(PATH, schema, dataStart, bytes, 900, {
    delimiter: ",",
    types: {},
  });
  const plans = planColumns(all!, { quick: true });
  // A file of 2,000 rows of ~1.5 kB: its first megabyte holds the first 200 rows, not
  // the first 1,000 (read as text then).
  const big = `${TMP}/big.csv`;
  await Deno.writeTextFile(
    big,
    "id,city,at\n" +
      Array.from(
        { length: 2000 },
        (_, i) => `${i},${"Oslo Lima Pune ".repeat(100).slice(i % 7)},2024-01-01 10:00:0${i % 10}`,
      ).join("\n") + "\n",
  );
  const bigSource = await openCsv(big);
  await bigSource.close();
  const bigHeader = await readCsvHeader(big);
  const pool = freezePool();
  try {
    // Fewer rows than the file has, and more; rows past the first megabyte.
    const cases: [string, Schema, { dataStart: number; bytes: number }, number, number][] = [
      [PATH, schema, { dataStart, bytes }, 200, 200],
      [PATH, schema, { dataStart, bytes }, 5000, 900],
      [big, bigSource.schema, bigHeader, 200, 200],
      [big, bigSource.schema, bigHeader, 1000, 1000],
    ];
    for (const [path, fields, at, rows, expected] of cases) {
      const sample = await readFirstCsvChunk(path, fields, at.dataStart, at.bytes, rows, {
        delimiter: ",",
        types: {},
      });
      assert.equal(sample!.length, expected);
      const task: CsvPredictorsTask = {
        kind: "csv-predictors",
        path,
        schema: fields,
        delimiter: ",",
        types: {},
        dataStart: at.dataStart,
        bytes: at.bytes,
        rows,
        encoding: {
          plans: path === PATH ? plans : planColumns(sample!, { quick: true }),
          codec: "zstd",
        },
      };
      const fixed = await pool.run<Record<string, BlockPlan>>(task);
      assert.deepEqual(
        fixed,
        planPredictors(sample!, task.encoding.plans, "zstd"),
        `${path} ${rows}`,
      );
      assert.ok(Object.values(fixed).every((plan) => typeof plan.predictor === "string"));
    }
  } finally {
    await pool.shutdown();
  }
});

Deno.test("a Worker's warm-up rows are its chunk's first rows, and warming up changes no block", async () => {
  const tasks = await chunkTasks();
  const task = tasks[1]!;
  const rows = await readCsvChunk(task.chunk, task.schema);
  const encoding = { plans: planColumns(rows, {}), codec: "zstd" };
  const before = await INLINE_ENCODER.encode({ batch: rows, ...encoding });
  const file = await Deno.open(PATH);
  try {
    const warm = await warmUpCsvChunk(task.chunk, task.schema, file, 5, 3);
    assert.ok(warm);
    assert.equal(warm.length, 5);
    for (let c = 0; c < rows.schema.length; c++) {
      assert.deepEqual(
        [...warm.columns[c]!.values],
        [...rows.columns[c]!.values].slice(0, 5),
        rows.schema[c]!.name,
      );
    }
    let calls = 0;
    await warmUpEncoding(warm, encoding, (job) => {
      calls++;
      return INLINE_ENCODER.encode(job);
    }, 3);
    assert.equal(calls, 3);
    // The chunk itself, read after the warm-up (with the file it moved in), encodes as before.
    const after = await INLINE_ENCODER.encode({
      batch: await readCsvChunk(task.chunk, task.schema, file),
      ...encoding,
    });
    assert.deepEqual(
      after.chunk.blocks.map((block) => [...block.bytes]),
      before.chunk.blocks.map((block) => [...block.bytes]),
    );
    assert.deepEqual(after.chunk.stats, before.chunk.stats);
  } finally {
    file.close();
  }
});

Deno.test("a Worker's warm-up is skipped where it could cost or fail: too few lines, rows that do not parse, another codec", async () => {
  const tasks = await chunkTasks();
  const task = tasks[2]!;
  const file = await Deno.open(PATH);
  try {
    // The chunk holds 300 lines.
    assert.equal(await warmUpCsvChunk(task.chunk, task.schema, file, 301, 2), null);
    // A first line that is not a row of this schema (three text fields as a number).
    const bad = `${TMP}/bad_head.csv`;
    await Deno.writeTextFile(bad, "id,city,at\nx,Oslo,2024-01-01 10:00:00\n");
    const badFile = await Deno.open(bad);
    try {
      const chunk = { ...task.chunk, path: bad, range: { start: 11, end: 40 }, firstRow: 0 };
      assert.equal(await warmUpCsvChunk(chunk, task.schema, badFile, 1, 2), null);
    } finally {
      badFile.close();
    }
    const warm = await warmUpCsvChunk(task.chunk, task.schema, file, 4, 1);
    assert.ok(warm);
    let calls = 0;
    const count = () => {
      calls++;
      return Promise.resolve();
    };
    const plans = planColumns(warm, {});
    await warmUpEncoding(warm, { plans, codec: "lzma2" }, count, 2);
    const mixed = { ...plans, city: { ...plans.city!, codec: "zpaq" } };
    await warmUpEncoding(warm, { plans: mixed, codec: "zstd" }, count, 2);
    assert.equal(calls, 0);
    // An encoding that fails is the chunk's to report, not the warm-up's.
    await warmUpEncoding(warm, { plans, codec: "zstd" }, () => Promise.reject(new Error("no")), 2);
  } finally {
    file.close();
  }
});
