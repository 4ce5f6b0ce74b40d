/**
 * Arrow IPC sources (file format `.arrow` or stream format `.arrows`; the reader tells
 * them apart by their magic): record batches are read one at a time and converted
 * exactly by `arrow_table.ts`, sliced to at most `batchRows` rows. Also the batch
 * layout ({@link arrowBatchLayout}) and row-range reads (`rows` option) that the cluster
 * splitter uses.
 *
 * @module
 */
import * as arrow from "apache-arrow";
import { type FileHandle, open } from "node:fs/promises";
import type { Batch, Schema } from "../format/column.ts";
import { fileSize, readFailed } from "./_file.ts";
import { batchFromArrow } from "./arrow_table.ts";
import { schemaFromArrow } from "./arrow_schema.ts";
import { IoError } from "./errors.ts";
import { DEFAULT_BATCH_ROWS, type OpenSourceOptions, type Source } from "./types.ts";

/** Options of {@link openArrow}. */
export interface OpenArrowOptions extends OpenSourceOptions {
  /** Read only rows `[start, end)` (0-based, in file order). */
  rows?: { start: number; end: number };
}

/** The record-batch layout of an Arrow IPC file. */
export interface ArrowBatchLayout {
  /** Total rows. */
  rows: number;
  /** Rows in each record batch, in file order. */
  batches: number[];
}

async function openHandle(path: string): Promise<FileHandle> {
  try {
    return await open(path, "r");
  } catch (cause) {
    throw readFailed(path, cause);
  }
}

function parseFailed(path: string, cause: unknown): IoError {
  if (cause instanceof IoError) {
    return new IoError(cause.code, `${cause.message} (Arrow '${path}')`, {
      path,
      cause,
      ...(cause.column === undefined ? {} : { column: cause.column }),
    });
  }
  const why = cause instanceof Error ? cause.message : String(cause);
  return new IoError("PARSE_FAILED", `Cannot read Arrow IPC '${path}': ${why}`, { path, cause });
}

type AsyncReader = arrow.AsyncRecordBatchFileReader | arrow.AsyncRecordBatchStreamReader;

async function openReader(path: string): Promise<{ reader: AsyncReader; handle: FileHandle }> {
  const handle = await openHandle(path);
  try {
    const reader = await arrow.RecordBatchReader.from(handle);
    await reader.open();
    if (!reader.schema) throw new Error("the file holds no schema");
    return { reader: reader as AsyncReader, handle };
  } catch (cause) {
    await handle.close();
    throw parseFailed(path, cause);
  }
}

/**
 * Reads the record-batch layout of an Arrow IPC file (for cutting it into tasks).
 *
 * @param path The Arrow IPC file.
 * @returns Total rows and rows per record batch.
 * @throws {IoError} READ_FAILED or PARSE_FAILED.
 */
export async function arrowBatchLayout(path: string): Promise<ArrowBatchLayout> {
  await fileSize(path);
  const { reader, handle } = await openReader(path);
  const batches: number[] = [];
  try {
    for await (const rb of reader) batches.push(rb.numRows);
  } catch (cause) {
    throw parseFailed(path, cause);
  } finally {
    await handle.close();
  }
  return { rows: batches.reduce((a, b) => a + b, 0), batches };
}

/**
 * Opens an Arrow IPC file (file or stream format) as a {@link Source}.
 *
 * @param path The Arrow IPC file.
 * @param options Batch size, forced types (`string` or the column's own type) and rows.
 * @returns The source.
 * @throws {IoError} READ_FAILED, PARSE_FAILED or INVALID_OPTION; SCHEMA_MISMATCH later,
 * from the batch iterator, when a Uint64 does not fit int64.
 */
export async function openArrow(path: string, options: OpenArrowOptions = {}): Promise<Source> {
  const batchRows = options.batchRows ?? DEFAULT_BATCH_ROWS;
  if (!Number.isSafeInteger(batchRows) || batchRows < 1) {
    throw new IoError(
      "INVALID_OPTION",
      `Cannot use batchRows '${batchRows}': it must be a positive integer`,
    );
  }
  const rows = options.rows;
  if (
    rows !== undefined &&
    (!Number.isSafeInteger(rows.start) || !Number.isSafeInteger(rows.end) || rows.start < 0 ||
      rows.end < rows.start)
  ) {
    throw new IoError("INVALID_OPTION", `Cannot read rows ${rows.start}:${rows.end} of '${path}'`, {
      path,
    });
  }
  const bytes = await fileSize(path);
  const { reader, handle } = await openReader(path);
  let schema: Schema;
  try {
    schema = schemaFromArrow(reader.schema, options.types ?? {}, `Arrow '${path}'`);
  } finally {
    await handle.close();
  }
  return {
    schema,
    format: "arrow",
    bytes,
    batches: () => arrowBatches(path, schema, batchRows, rows),
    close: () => Promise.resolve(),
  };
}

async function* arrowBatches(
  path: string,
  schema: Schema,
  batchRows: number,
  rows: { start: number; end: number } | undefined,
): AsyncGenerator<Batch> {
  const { reader, handle } = await openReader(path);
  const start = rows?.start ?? 0;
  const end = rows?.end ?? Infinity;
  let at = 0;
  try {
    for (;;) {
      let r: IteratorResult<arrow.RecordBatch>;
      try {
        r = await reader.next();
      } catch (cause) {
        throw parseFailed(path, cause);
      }
      if (r.done) break;
      const rb = r.value;
      const first = at;
      at += rb.numRows;
      if (at <= start) continue;
      if (first >= end) break;
      const lo = Math.max(0, start - first);
      const hi = Math.min(rb.numRows, end - first);
      for (let s = lo; s < hi; s += batchRows) {
        const e = Math.min(hi, s + batchRows);
        const part = s === 0 && e === rb.numRows ? rb : rb.slice(s, e);
        try {
          yield batchFromArrow(part, schema);
        } catch (cause) {
          if (cause instanceof IoError) throw parseFailed(path, cause);
          throw cause;
        }
      }
    }
  } finally {
    await handle.close();
  }
}
