/**
 * Streaming entry points: `freezeStream` (an async iterable of batches → an
 * archive) and `freezeFile` (a file → an archive, or a partitioned directory).
 *
 * Both go through `freeze`'s pipeline, which never holds more than a bounded
 * number of chunks: the source is read batch by batch, re-cut into chunks of
 * `chunk_rows`, each chunk encoded in the Worker pool with at most
 * (threads × 2) chunks in flight, and written as soon as it is its turn. So peak
 * memory depends on `chunk_rows`, the row width and the thread count, not on
 * the source's size (`bench/memory_bench.ts` measures it).
 *
 * @module
 */
import * as arrow from "apache-arrow";
import type { Batch, Schema } from "../format/column.ts";
import { batchFromArrow } from "../io/arrow_table.ts";
import { schemaFromArrow } from "../io/arrow_schema.ts";
import { OpsError } from "./errors.ts";
import { freeze, type FreezeOptions, type FreezeSummary } from "./freeze.ts";
import { freezePartitioned, type PartitionedSummary } from "./partition.ts";

/** Options of `freezeStream`: `freeze`'s, plus the schema for a stream that may be empty. */
export interface FreezeStreamOptions extends FreezeOptions {
  /** Schema of the batches (default: the first batch's; required when the stream may be empty). */
  schema?: Schema;
}

/** Options of `freezeFile`: `freeze`'s, plus partition columns. */
export interface FreezeFileOptions extends FreezeOptions {
  /** Write one archive per distinct value of these columns under `archive` (a directory). */
  partitionBy?: string[];
}

/**
 * Freezes a stream of batches into an archive, writing chunks as they fill.
 *
 * @param batches Our `Batch`es or Arrow `RecordBatch`es, sync or async, all of one schema.
 * @param archive Destination path (temp file + rename).
 * @param options `freeze`'s options; `schema` when the stream may be empty.
 * @returns The freeze summary.
 * @throws {OpsError} BAD_OPTION for an empty stream without `schema`; as `freeze` otherwise.
 *
 * @example Freeze batches produced on the fly
 * ```ts
 * import assert from "node:assert/strict";
 * import { tableFromArrays } from "apache-arrow";
 * import { freezeStream } from "./stream.ts";
 * async function* produce() {
 *   for (let i = 0; i < 3; i++) yield* tableFromArrays({ n: Float64Array.of(i, i + 0.5) }).batches;
 * }
 * const dir = await Deno.makeTempDir();
 * const s = await freezeStream(produce(), `${dir}/s.pf`, { threads: 0 });
 * assert.equal(s.rows, 6);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function freezeStream(
  batches: AsyncIterable<Batch | arrow.RecordBatch> | Iterable<Batch | arrow.RecordBatch>,
  archive: string,
  options: FreezeStreamOptions = {},
): Promise<FreezeSummary> {
  const it = Symbol.asyncIterator in batches
    ? (batches as AsyncIterable<Batch | arrow.RecordBatch>)[Symbol.asyncIterator]()
    : (batches as Iterable<Batch | arrow.RecordBatch>)[Symbol.iterator]();
  const first = await it.next();
  let schema = options.schema;
  if (first.done) {
    if (!schema) {
      throw new OpsError(
        "BAD_OPTION",
        "Cannot freeze an empty stream without a schema: pass options.schema",
      );
    }
  } else {
    schema ??= first.value instanceof arrow.RecordBatch
      ? schemaFromArrow(first.value.schema, options.types)
      : first.value.schema;
  }
  const fixed = schema;
  const toBatch = (b: Batch | arrow.RecordBatch): Batch =>
    b instanceof arrow.RecordBatch ? batchFromArrow(b, fixed) : b;
  async function* all(): AsyncGenerator<Batch> {
    if (first.done) return;
    yield toBatch(first.value);
    for (;;) {
      const next = await it.next();
      if (next.done) return;
      yield toBatch(next.value);
    }
  }
  const { schema: _drop, ...rest } = options;
  return await freeze({ schema: fixed, batches: all() }, archive, rest);
}

/**
 * Freezes a file (CSV, JSON lines, Parquet, Arrow IPC) in bounded memory; with
 * `partitionBy`, into a partitioned directory (see `partition.ts`).
 *
 * @param path The source file.
 * @param archive Destination archive, or directory with `partitionBy`.
 * @param options `freeze`'s options, plus `partitionBy`.
 * @returns The freeze summary (with `partitions` when partitioned).
 * @throws {OpsError} As `freeze` and `freezePartitioned`.
 */
export async function freezeFile(
  path: string,
  archive: string,
  options: FreezeFileOptions = {},
): Promise<FreezeSummary | PartitionedSummary> {
  if (typeof path !== "string") {
    throw new OpsError(
      "BAD_OPTION",
      "freezeFile() takes a file path; use freezeStream() for batches",
    );
  }
  const { partitionBy, ...rest } = options;
  if (partitionBy && partitionBy.length > 0) {
    return await freezePartitioned(path, archive, { ...rest, partitionBy });
  }
  return await freeze(path, archive, rest);
}
