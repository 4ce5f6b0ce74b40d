/**
 * How a freeze cuts a source into chunks, in the terms every reader of one chunk
 * shares (the local freeze's Parquet Workers, `ops/_freeze_worker.ts`, and the
 * cluster's tasks, `cluster/task_source.ts`):
 *
 * - the streaming freeze reads the source in batches of {@link freezeBatchRows} rows
 *   and re-cuts them into chunks (`rechunk`);
 * - a column gets a validity bitmap when the *read batch* it came from held a null,
 *   and a slice keeps its batch's bitmap; so a chunk read on its own must be read as
 *   the run of whole batches ("pieces") that covers it, then cut out of them
 *   ({@link cutChunk}), or its bytes would differ from the streaming freeze's;
 * - a Parquet chunk is read as the window of whole batches that covers it (on
 *   multiples of the batch size, as a file is read from row 0: {@link chunkWindows})
 *   through an open file ({@link readChunk}), by the local freeze and the cluster.
 *
 * @module
 */
import type { Batch, Schema } from "../format/column.ts";
import { concatBatches, sliceBatch } from "../format/column.ts";
import { DEFAULT_BATCH_ROWS } from "./types.ts";
import { IoError } from "./errors.ts";
import type { ParquetRanges } from "./parquet.ts";

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

/** One chunk as a window of whole read batches. */
export interface ChunkWindow {
  /** First row of the window (a multiple of the batch size). */
  start: number;
  /** One past its last row (a multiple of the batch size, or the file's end). */
  end: number;
  /** Rows of the window before the chunk's first row. */
  skip: number;
  /** Rows of the chunk. */
  rows: number;
}

/**
 * Cuts `rows` rows into chunks of `chunkRows`, each as the window of whole batches of
 * `batchRows` rows that covers it.
 *
 * @param rows Rows in the file.
 * @param chunkRows Rows per chunk.
 * @param batchRows Rows per read batch.
 * @returns One window per chunk, in order.
 */
export function chunkWindows(rows: number, chunkRows: number, batchRows: number): ChunkWindow[] {
  const out: ChunkWindow[] = [];
  for (let s = 0; s < rows; s += chunkRows) {
    const e = Math.min(s + chunkRows, rows);
    const start = Math.floor(s / batchRows) * batchRows;
    const end = Math.min(Math.ceil(e / batchRows) * batchRows, rows);
    out.push({ start, end, skip: s - start, rows: e - s });
  }
  return out;
}

/**
 * Reads one chunk's rows: its window in read batches, sliced and joined as `rechunk` does.
 *
 * @param file The open Parquet file (its batch size is the window's).
 * @param window The chunk's window.
 * @param path The file's path, for messages.
 * @returns The chunk's rows.
 * @throws {IoError} from the reader; READ_FAILED when the window does not hold the
 * rows the layout promised (the file changed).
 */
export async function readChunk(
  file: ParquetRanges,
  window: ChunkWindow,
  path: string,
): Promise<Batch> {
  const { chunk, read } = await cutChunk(
    file.read({ start: window.start, end: window.end }),
    file.schema,
    window.skip,
    window.rows,
  );
  if (read !== window.end - window.start || chunk === null) {
    throw new IoError(
      "READ_FAILED",
      `Cannot read rows ${window.start}:${window.end} of Parquet '${path}': got ${read} rows, the file changed while it was read`,
      { path },
    );
  }
  return chunk;
}
