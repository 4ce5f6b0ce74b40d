/**
 * Fixtures of the worker's tests: a tiny task over a source file the worker can see,
 * and a row reader that never answers until the task is dropped.
 *
 * @module
 */
import type { Batch } from "../format/column.ts";
import type { TaskSpec } from "../client/types.ts";

await Deno.mkdir(".tmp", { recursive: true });
/**
 * A file the worker can see, so it reads "directly" (through an injected `readRows`);
 * one per test process, since a task names its source's identity (inode, mtime).
 */
export const TEST_SOURCE = await Deno.makeTempFile({ dir: ".tmp", prefix: "worker-source-" });
await Deno.writeTextFile(TEST_SOURCE, "a\n");
globalThis.addEventListener("unload", () => {
  try {
    Deno.removeSync(TEST_SOURCE);
  } catch {
    // Already gone.
  }
});

/** A 3-row task of one int64 column over {@link TEST_SOURCE}, leased as `lease-<id>`. */
export function testSpec(taskId: string): TaskSpec {
  return {
    task_id: taskId,
    job_id: "job",
    index: 0,
    lease: `lease-${taskId}`,
    worker_id: "w1",
    source: specSource(TEST_SOURCE, "csv"),
    window: { unit: "bytes", start: 0, end: 10, span_rows: 3, skip: 0, rows: 3, batch_rows: 3 },
    schema: [{ name: "a", type: "int64", nullable: false }],
    types: {},
    plans: { a: { deps: [], quantization: "QUANT_NONE" } },
    codec: "zstd",
  };
}

/** Rows that never come: the task runs until it is dropped (possibly before this is called). */
export function stuckRows(_read: unknown, signal: AbortSignal): Promise<Batch> {
  return new Promise<Batch>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason));
  });
}

/**
 * A task spec's `source` for a real file, as the master records it (its identity).
 *
 * @param path The file.
 * @param format Its format.
 * @returns The `source` part of a spec.
 */
export function specSource(path: string, format: "csv" | "parquet"): TaskSpec["source"] {
  const info = Deno.statSync(path);
  return {
    path,
    format,
    bytes: info.size,
    dev: info.dev,
    ino: info.ino ?? 0,
    mtime_ms: info.mtime?.getTime() ?? null,
  };
}
