/**
 * The body of a cluster worker's task thread (`task_thread.ts`): encodes chunks
 * handed to it, and runs {@link ReadTaskJob}s, reading the task's rows from the
 * source itself and encoding them, so the rows never cross threads and the worker's
 * main thread only speaks HTTP. Parquet files stay open across tasks and are closed
 * when the thread shuts down.
 *
 * @module
 */
import { INLINE_ENCODER } from "../format/chunk.ts";
import { servePoolWorker } from "../format/pool.ts";
import { ParquetReaders } from "../io/parquet.ts";
import { readTaskRows } from "../cluster/task_source.ts";
import type { ReadTaskJob, ReadyJob } from "./task_thread.ts";

const files = new ParquetReaders(2);

servePoolWorker({
  async run(task) {
    const job = task as ReadTaskJob | ReadyJob;
    // Answered once this module (DuckDB, codecs) has loaded: the worker registers then.
    if (job?.kind === "ready") return { chunk: { rows: 0, blocks: [], stats: [] }, warnings: [] };
    if (job?.kind !== "read-task") {
      throw new Error(
        `Cannot run a task-thread job of kind "${(task as { kind?: string })?.kind}"`,
      );
    }
    const batch = await readTaskRows(job.read, files);
    return await INLINE_ENCODER.encode({ batch, plans: job.plans, codec: job.codec });
  },
  close() {
    return files.close();
  },
});
