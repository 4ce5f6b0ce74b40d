/**
 * The worker's task thread reads a task's rows itself and must encode exactly the
 * chunk the main thread would (`readTaskRows` + the inline encoder), for CSV and
 * Parquet, with files kept open across tasks; its failures come back typed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { INLINE_ENCODER } from "../format/chunk.ts";
import type { Schema } from "../format/column.ts";
import { planColumns } from "../format/plan.ts";
import type { EncodedChunk } from "../format/writer.ts";
import { IoError } from "../io/errors.ts";
import type { SourceFormat } from "../io/types.ts";
import { JobError } from "../client/errors.ts";
import { layoutSource, readTaskRows, sourceSchema, type TaskRead } from "../cluster/task_source.ts";
import { freeze } from "../ops/freeze.ts";
import { thaw } from "../ops/thaw.ts";
import { freezeBatchRows } from "../io/chunk_window.ts";
import { tempDir, writeCsv } from "../master/_test_utils.ts";
import { TaskThread } from "./task_thread.ts";

async function taskReads(path: string, format: SourceFormat, chunkRows: number) {
  const layout = await layoutSource(path, { format, chunkRows });
  const { schema } = await sourceSchema(path, {
    format,
    types: {},
    batchRows: freezeBatchRows(chunkRows),
  });
  return layout.windows.map((window): TaskRead => ({
    path,
    format,
    schema: schema as Schema,
    types: {},
    window,
  }));
}

function blockBytes(chunk: EncodedChunk): string[] {
  return chunk.blocks.map((b) => Buffer.from(b.bytes).toString("base64"));
}

Deno.test("TaskThread.readAndEncode() gives the chunks of a read on this thread, for CSV and Parquet", async (t) => {
  const dir = await tempDir("task-thread-");
  const thread = new TaskThread();
  try {
    const csv = join(dir, "a.csv");
    await writeCsv(csv, 9000, { nullEvery: 17 });
    await freeze(csv, join(dir, "a.pf"), { threads: 0 });
    const parquet = join(dir, "a.parquet");
    await thaw(join(dir, "a.pf"), parquet);
    for (const [path, format] of [[csv, "csv"], [parquet, "parquet"]] as const) {
      await t.step(format, async () => {
        const reads = await taskReads(path, format, 2500);
        assert.equal(reads.length, 4);
        const plans = planColumns(await readTaskRows(reads[0]!));
        // Twice over: the second pass finds the Parquet file already open on the thread.
        for (let pass = 0; pass < 2; pass++) {
          for (const read of reads) {
            const here = await INLINE_ENCODER.encode({
              batch: await readTaskRows(read),
              plans,
              codec: "zstd",
            });
            const there = await thread.readAndEncode(read, plans, "zstd");
            assert.equal(there.chunk.rows, read.window.rows);
            assert.deepEqual(blockBytes(there.chunk), blockBytes(here.chunk));
            assert.deepEqual(there.chunk.stats, here.chunk.stats);
          }
        }
      });
    }
  } finally {
    await thread.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("TaskThread.readAndEncode() fails typed: SOURCE_CHANGED, an unreadable Parquet file, a bad cell", async () => {
  const dir = await tempDir("task-thread-bad-");
  const thread = new TaskThread();
  try {
    const csv = join(dir, "a.csv");
    await writeCsv(csv, 100);
    const [read] = await taskReads(csv, "csv", 40);
    const plans = planColumns(await readTaskRows(read!));
    await assert.rejects(
      thread.readAndEncode({ ...read!, window: { ...read!.window, span_rows: 41 } }, plans, "zstd"),
      (err: unknown) => err instanceof JobError && err.code === "SOURCE_CHANGED",
    );
    const fake = join(dir, "fake.parquet");
    await Deno.writeTextFile(fake, "not parquet at all");
    await assert.rejects(
      thread.readAndEncode({ ...read!, path: fake, format: "parquet" }, plans, "zstd"),
      (err: unknown) => err instanceof IoError && err.code === "READ_FAILED" && err.path === fake,
    );
    await writeCsv(csv, 100, { badAt: 3, badCell: "oops" });
    await assert.rejects(
      thread.readAndEncode(read!, plans, "zstd"),
      (err: unknown) => err instanceof IoError && err.column === "n",
    );
    // The thread is still there for the next task.
    await writeCsv(csv, 100);
    assert.equal((await thread.readAndEncode(read!, plans, "zstd")).chunk.rows, 40);
  } finally {
    await thread.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
