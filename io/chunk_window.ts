/**
 * How a freeze cuts a source into chunks, in the terms every reader of one chunk
 * shares (the local freeze's Parquet Workers, `_parquet_chunks.ts`, and the cluster's
 * tasks, `cluster/task_source.ts`):
 *
 * - the streaming freeze reads the source in batches of {@link freezeBatchRows} rows
 *   and re-cuts them into chunks (`rechunk`);
 * - a column gets a validity bitmap when the *read batch* it came from held a null,
 *   and a slice keeps its batch's bitmap; so a chunk read on its own must be read as
 *   the run of whole batches ("pieces") that covers it, then cut out of them
 *   ({@link cutChunk}), or its bytes would differ from the streaming freeze's.
 *
 * @module
 */
import type { Batch, Schema } from "../format/column.ts";
import { concatBatches, sliceBatch } from "../format/column.ts";
import { DEFAULT_BATCH_ROWS } from "./types.ts";

/**
 * The batch size a freeze reads a source in, for a chunk size.
 *
 * @param chunkRows Rows per chunk.
 * @returns `min(chunkRows, 65536)`.
 */
export function freezeBatchRows(chunkRows: number): number {
  return Math.min(chunkRows, DEFAULT_BATCH_ROWS);
}

/**
 * Cuts a chunk out of the batches of the window that covers it, as `rechunk` cuts
 * the streaming freeze's batches: whole batches are kept, partial ones sliced.
 *
 * @param batches The window's batches, in order.
 * @param schema The chunk's schema.
 * @param skip Rows of the window before the chunk.
 * @param rows Rows of the chunk.
 * @returns The chunk (null when the window held none of its rows) and how many rows
 * the window held; the caller checks both against its layout.
 */
export async function cutChunk(
  batches: AsyncIterable<Batch>,
  schema: Schema,
  skip: number,
  rows: number,
): Promise<{ chunk: Batch | null; read: number }> {
  const parts: Batch[] = [];
  const to = skip + rows;
  let at = 0;
  for await (const batch of batches) {
    const lo = Math.max(skip - at, 0);
    const hi = Math.min(to - at, batch.length);
    if (lo < hi) parts.push(lo === 0 && hi === batch.length ? batch : sliceBatch(batch, lo, hi));
    at += batch.length;
  }
  return { chunk: parts.length === 0 ? null : concatBatches(schema, parts), read: at };
}

/** Re-cuts a stream of batches into batches of exactly `rows` rows (the last may be shorter). */
export async function* rechunk(
  schema: Schema,
  batches: AsyncIterable<Batch> | Iterable<Batch>,
  rows: number,
): AsyncGenerator<Batch> {
  let parts: Batch[] = [];
  let have = 0;
  for await (const batch of batches) {
    let at = 0;
    while (at < batch.length) {
      const take = Math.min(rows - have, batch.length - at);
      parts.push(at === 0 && take === batch.length ? batch : sliceBatch(batch, at, at + take));
      have += take;
      at += take;
      if (have === rows) {
        yield concatBatches(schema, parts);
        parts = [];
        have = 0;
      }
    }
  }
  if (have > 0) yield concatBatches(schema, parts);
}
