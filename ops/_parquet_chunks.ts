/**
 * Chunks of a Parquet file read where they are encoded: the layout of a file into
 * chunk windows (from its row count, nothing decoded), reading one chunk's rows
 * through an open {@link ParquetRanges}, and the pool job that does both in a Worker
 * (`_freeze_worker.ts`), so a local freeze decodes the source on every core.
 *
 * A chunk must come out exactly as the streaming freeze cuts it (`chunk_window.ts`):
 * it is read as the window of whole read batches that covers it (on multiples of
 * `batchRows`, as a Parquet file is read from row 0), then cut with `cutChunk`.
 *
 * @module
 */
import type { Batch, Schema } from "../format/column.ts";
import type { ForcedType } from "../io/types.ts";
import type { ChunkEncryption } from "../format/crypto.ts";
import type { ColumnPlan } from "../format/header.ts";
import { IoError } from "../io/errors.ts";
import type { ParquetRanges } from "../io/parquet.ts";
import { cutChunk } from "../io/chunk_window.ts";

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

/** A Parquet file as a freeze reads it. */
export interface ParquetFile {
  /** The file. */
  path: string;
  /** Forced column types, as the freeze opened the file. */
  types: Record<string, ForcedType>;
  /** Rows per read batch. */
  batchRows: number;
}

/**
 * A pool job: open the file (so the first chunk job finds it open); answers an
 * empty chunk. Sent once per Worker while the first chunk is planned.
 */
export interface ParquetOpenTask {
  /** Tells this job from others. */
  kind: "parquet-open";
  /** The file. */
  file: ParquetFile;
}

/** A pool job: read one chunk of a Parquet file, then encode it (see `_freeze_worker.ts`). */
export interface ParquetChunkTask {
  /** Tells this job from others. */
  kind: "parquet-chunk";
  /** The file. */
  file: ParquetFile;
  /** The schema the freeze planned; the Worker's reader must agree. */
  schema: Schema;
  /** The chunk. */
  window: ChunkWindow;
  /** Per-column plans by name. */
  plans: Record<string, ColumnPlan>;
  /** Codec id. */
  codec: string;
  /** Block encryption, with the chunk's first row. */
  encryption?: ChunkEncryption;
}
