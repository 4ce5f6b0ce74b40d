/**
 * How a source is cut into tasks and how one task's rows are read, shared by the
 * master (layout, first chunk, rows for workers that cannot read the source) and the
 * workers (their chunk).
 *
 * One task is one chunk of exactly `chunk_rows` rows (the last one shorter), so the
 * archive's chunk boundaries are the local freeze's. Each chunk must also encode to
 * the same bytes as in a local freeze, so a task reads a *window*: the run of the
 * local freeze's read batches ("pieces", `ops/chunk_window.ts`) covering its chunk,
 * then cuts its rows out with `cutChunk`. The pieces are global multiples of the
 * batch size for CSV, JSON lines and Parquet, and per record batch for Arrow IPC (its
 * reader cuts each record batch separately).
 *
 * Windows are byte ranges for CSV and JSON lines (found by `csvRowBoundaries` /
 * `jsonlRowBoundaries`, a scan that parses nothing) and row ranges for Parquet (row
 * groups are skipped by DuckDB) and Arrow IPC.
 *
 * @module
 */
import type { TextFallback } from "../client/types.ts";
import type { Batch, Field, Schema } from "../format/column.ts";
import { csvRowBoundaries, readCsvRange } from "../io/csv.ts";
import { jsonlRowBoundaries, readJsonlRange } from "../io/jsonl.ts";
import { openParquet, type ParquetReaders, parquetRowGroups } from "../io/parquet.ts";
import { arrowBatchLayout, openArrow } from "../io/arrow.ts";
import { openSource, sourceFormatOf } from "../io/source.ts";
import type { SourceFormat } from "../io/types.ts";
import { JobError } from "../client/errors.ts";
import {
  type FileIdentity,
  handleIdentity,
  handleIdentitySync,
  openedIdentity,
  sameFile,
  unchanged,
} from "../internal/file_identity.ts";
import { openForRead, readFailed } from "../io/_file.ts";
import type { FieldJson, TaskWindow } from "../client/types.ts";
import { cutChunk, freezeBatchRows, readChunk } from "../io/chunk_window.ts";
import { IoError } from "../io/errors.ts";

/**
 * A task of at most this many cells (rows × columns) is *small*: it takes about as
 * long as a round trip to the master, so a worker may hold the next ones while it
 * computes one (the master's spare slots), and may send its result with the next
 * one's (`POST /tasks/done`). A larger one waits for nothing and nothing waits for it.
 */
export const SMALL_TASK_CELLS = 32_768;

/**
 * Whether a task of `rows` rows of `columns` columns is small (see
 * {@link SMALL_TASK_CELLS}): the one rule the master (spare slots) and the worker
 * (results sent together) both apply.
 *
 * @param rows The task's rows.
 * @param columns The job's columns (at least 1 counts).
 * @returns True for a task of at most `SMALL_TASK_CELLS` cells.
 */
export function isSmallTask(rows: number, columns: number): boolean {
  return rows * Math.max(1, columns) <= SMALL_TASK_CELLS;
}

/** A source cut into task windows. */
export interface SourceLayout {
  /** Format read. */
  format: SourceFormat;
  /** File size when laid out. */
  bytes: number;
  /** Rows in the source. */
  rows: number;
  /** One window per chunk, in order. */
  windows: TaskWindow[];
}

/**
 * Resolves a source's format (the given one, else by extension).
 *
 * @param path The source.
 * @param format A format, or undefined.
 * @returns The format.
 * @throws {import("../io/errors.ts").IoError} UNKNOWN_FORMAT for an unknown extension.
 */
export function formatOf(path: string, format?: SourceFormat): SourceFormat {
  return format ?? sourceFormatOf(path);
}

/**
 * Cuts a source into one window per chunk, without parsing it.
 *
 * @param path The source file.
 * @param options Format, rows per chunk, and open Parquet files to use (else the
 * file is opened for this alone).
 * @returns The layout.
 * @throws {import("../io/errors.ts").IoError} READ_FAILED, PARSE_FAILED (a CSV header).
 */
export async function layoutSource(
  path: string,
  options: { format: SourceFormat; chunkRows: number; readers?: ParquetReaders },
): Promise<SourceLayout> {
  const { format, chunkRows, readers } = options;
  const batch = freezeBatchRows(chunkRows);
  let rows: number;
  let bytes: number;
  // Piece k covers rows [starts[k], starts[k + 1]); `unit(k)` is where piece k starts
  // in the window's unit (a byte offset, or the row itself).
  let starts: number[];
  let unit: (k: number) => number;
  switch (format) {
    case "csv":
    case "jsonl": {
      const b = format === "csv"
        ? await csvRowBoundaries(path, batch)
        : await jsonlRowBoundaries(path, batch);
      rows = b.rows;
      bytes = b.bytes;
      starts = b.offsets.map((_, k) => Math.min(k * batch, rows));
      const offsets = b.offsets;
      unit = (k) => offsets[k]!;
      break;
    }
    case "parquet": {
      const { stat } = await statOf(path);
      bytes = stat.size;
      rows = readers
        ? (await (await readers.get(path, {}, batch)).rowGroups()).rows
        : (await parquetRowGroups(path)).rows;
      starts = [];
      for (let r = 0; r < rows; r += batch) starts.push(r);
      starts.push(rows);
      unit = (k) => starts[k]!;
      break;
    }
    case "arrow": {
      const { stat } = await statOf(path);
      bytes = stat.size;
      const layout = await arrowBatchLayout(path);
      rows = layout.rows;
      starts = [];
      let at = 0;
      for (const n of layout.batches) {
        for (let s = 0; s < n; s += batch) starts.push(at + s);
        at += n;
      }
      starts.push(rows);
      unit = (k) => starts[k]!;
      break;
    }
  }
  const windows: TaskWindow[] = [];
  let k0 = 0;
  for (let s = 0; s < rows; s += chunkRows) {
    const e = Math.min(s + chunkRows, rows);
    while (k0 + 1 < starts.length && starts[k0 + 1]! <= s) k0++;
    let k1 = k0 + 1;
    while (starts[k1]! < e) k1++;
    windows.push({
      unit: format === "csv" || format === "jsonl" ? "bytes" : "rows",
      start: unit(k0),
      end: unit(k1),
      span_rows: starts[k1]! - starts[k0]!,
      skip: s - starts[k0]!,
      rows: e - s,
      batch_rows: batch,
    });
  }
  return { format, bytes, rows, windows };
}

async function statOf(path: string): Promise<{ stat: Deno.FileInfo }> {
  try {
    return { stat: await Deno.stat(path) };
  } catch (cause) {
    throw new JobError("SOURCE_NOT_FOUND", `Cannot read source '${path}': ${message(cause)}`, {
      cause,
      path,
    });
  }
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Opens a source just to read its schema (inferred from the sample for CSV and JSON
 * lines, as a local freeze does), with some columns forced to text.
 *
 * @param path The source.
 * @param options Format, forced text columns, the batch size (as the local freeze
 * opens it), and open Parquet files to use.
 * @returns The schema and the file size.
 * @throws {import("../io/errors.ts").IoError} from the reader.
 */
export async function sourceSchema(
  path: string,
  options: {
    format: SourceFormat;
    types: Record<string, TextFallback>;
    batchRows: number;
    readers?: ParquetReaders;
  },
): Promise<{ schema: Schema; bytes: number }> {
  if (options.format === "parquet" && options.readers) {
    const reader = await options.readers.get(path, options.types, options.batchRows);
    return { schema: reader.schema, bytes: reader.bytes };
  }
  const source = await openSource(path, {
    format: options.format,
    types: { ...options.types },
    batchRows: options.batchRows,
  });
  try {
    return { schema: source.schema, bytes: source.bytes };
  } finally {
    await source.close();
  }
}

/** What {@link readTaskRows} needs. */
export interface TaskRead {
  /** Source file. */
  path: string;
  /** Its format. */
  format: SourceFormat;
  /** The job's schema. */
  schema: Schema;
  /** Columns forced to text. */
  types: Record<string, TextFallback>;
  /** The window. */
  window: TaskWindow;
  /**
   * The file the master laid the job out from (device, inode, size, modification
   * time): the file read must be that one, else SOURCE_CHANGED (a path swapped for a
   * link to another file reads nothing of it).
   */
  identity?: FileIdentity | null;
  /**
   * A CSV source's delimiter, as the master told it once from the file's start (absent:
   * told from the file's start again for this read).
   */
  delimiter?: string;
}

/**
 * Checks that `path` opens the file a job was laid out from.
 *
 * @param path The source path.
 * @param expected Its identity when the job was accepted (nothing is checked when absent).
 * @throws {JobError} SOURCE_CHANGED naming what changed.
 */
export async function checkSourceIdentity(
  path: string,
  expected: FileIdentity | null | undefined,
): Promise<void> {
  if (!expected) return;
  checkIdentity(path, expected, await openedIdentity(path));
}

/** Throws SOURCE_CHANGED unless `now` is the file `expected` was, unchanged. */
function checkIdentity(path: string, expected: FileIdentity, now: FileIdentity | null): void {
  if (!unchanged(expected, now)) throw sourceChanged(path, expected, now);
}

/** SOURCE_CHANGED saying how `now` differs from the file the job was accepted for. */
function sourceChanged(path: string, expected: FileIdentity, now: FileIdentity | null): JobError {
  const what = now === null
    ? "it can no longer be opened as a regular file"
    : !sameFile(expected, now)
    ? "it is now another file (replaced, or a link to another file)"
    : `it changed since the job was accepted (size ${expected.size} -> ${now.size})`;
  return new JobError(
    "SOURCE_CHANGED",
    `Cannot read source '${path}': ${what}; submit the job again`,
    { path },
  );
}

/**
 * Reads one task's rows: the window in the local freeze's batch size, then the
 * chunk's rows out of it, cut exactly as the local freeze cuts them.
 *
 * @param read Source, schema and window.
 * @param readers Open Parquet files to reuse (a worker keeps one set); without, each
 * read opens and closes its file.
 * @param kept A CSV source kept open between small tasks (see {@link KeptSource});
 * without, each read opens and closes its file.
 * @returns The chunk's rows.
 * @throws {import("../io/errors.ts").IoError} from the reader (PARSE_FAILED,
 * SCHEMA_MISMATCH with `column`...); {JobError} SOURCE_CHANGED when the window does
 * not hold the rows or schema the master planned.
 */
export async function readTaskRows(
  read: TaskRead,
  readers?: ParquetReaders,
  kept?: KeptSource,
): Promise<Batch> {
  const { path } = read;
  if (read.format === "csv") return await readCsvWindow(read, kept);
  await checkSourceIdentity(path, read.identity);
  const chunk = await readWindow(read, readers);
  // Again after reading: a file swapped in for the read and back is seen here too.
  await checkSourceIdentity(path, read.identity);
  return chunk;
}

/**
 * One CSV source kept open between the small tasks of a job, which a worker runs one
 * after another from the same file: each then costs no open (a round trip to the
 * runtime's I/O threads) and no close. Only small windows read synchronously use it
 * (see {@link SYNC_WINDOW_BYTES}), so two reads never share its position. Every read
 * still checks the handle's identity after it (`fstat`), and before it unless the last
 * read's check saw the same identity: a file changed in place (before or during a
 * read) fails the task with SOURCE_CHANGED; a path swapped for another file since
 * the open cannot change what the handle reads, the file the job was accepted for.
 * The owner closes it when it has no task left (a deleted source's space is then
 * freed), and it is closed after any failed read.
 */
export class KeptSource {
  #key: string | null = null;
  #file: Deno.FsFile | null = null;
  /** The identity the handle was last seen to have, after a read (see {@link checkedAs}). */
  #checked: FileIdentity | null = null;

  /** The open handle of `path` as the file `identity` names, opened if it is not. */
  async open(path: string, identity: FileIdentity): Promise<Deno.FsFile> {
    const key = `${identity.dev}:${identity.ino}:${path}`;
    if (this.#file && this.#key === key) return this.#file;
    const file = await openForRead(path);
    this.close();
    this.#file = file;
    this.#key = key;
    return file;
  }

  /**
   * Whether the handle was last seen, after a read, to be unchanged from `identity`:
   * a read that checks the handle again after it needs no check before (a file
   * changed since was changed before that second check, which sees it).
   */
  checkedAs(identity: FileIdentity): boolean {
    return this.#checked !== null && unchanged(this.#checked, identity);
  }

  /** Records that the handle was just seen unchanged from `identity` (after a read). */
  markChecked(identity: FileIdentity): void {
    this.#checked = identity;
  }

  /** Closes the handle, if one is open. */
  close(): void {
    const file = this.#file;
    this.#file = null;
    this.#key = null;
    this.#checked = null;
    try {
      file?.close();
    } catch {
      // already closed
    }
  }
}

/**
 * A CSV window is read from the very handle whose identity is checked, so the file
 * is opened once per task (or once for many, `kept`): a path swapped for another
 * file before the open is seen by the check, and a swap after it cannot change what
 * this handle reads. The handle is checked again after the read, for a file changed
 * in place meanwhile.
 */
async function readCsvWindow(read: TaskRead, kept?: KeptSource): Promise<Batch> {
  const { path, identity, window } = read;
  const range = { start: window.start, end: window.end };
  const options = { batchRows: window.batch_rows, delimiter: read.delimiter };
  if (identity && window.end - window.start <= SYNC_WINDOW_BYTES) {
    // Without a kept source, one of its own for this read alone.
    const source = kept ?? new KeptSource();
    let file: Deno.FsFile;
    try {
      file = await source.open(path, identity);
    } catch {
      throw sourceChanged(path, identity, null);
    }
    let bytes: Uint8Array;
    try {
      // Once per handle and identity: the check after each read covers the next one's
      // start (one fstat per task instead of two: a small task's main cost after its
      // encode).
      if (!source.checkedAs(identity)) checkIdentity(path, identity, handleIdentitySync(file));
      bytes = readRangeSync(file, path, window.start, window.end);
      checkIdentity(path, identity, handleIdentitySync(file));
      source.markChecked(identity);
    } catch (err) {
      source.close();
      throw err;
    }
    if (source !== kept) source.close();
    return await cutWindow(read, readCsvRange(path, read.schema, range, { ...options, bytes }));
  }
  let file: Deno.FsFile;
  try {
    file = await openForRead(path);
  } catch (err) {
    throw identity ? sourceChanged(path, identity, null) : err;
  }
  try {
    if (identity) checkIdentity(path, identity, await handleIdentity(file));
    const chunk = await cutWindow(
      read,
      readCsvRange(path, read.schema, range, { ...options, file }),
    );
    if (identity) checkIdentity(path, identity, await handleIdentity(file));
    return chunk;
  } finally {
    file.close();
  }
}

/**
 * CSV windows up to this size, of a source whose identity is known, are read
 * synchronously once open: a small task's two `fstat`s and its read then make no
 * round trip to the runtime's I/O threads each (which cost more than reading 100
 * rows). The thread is held for no longer than reading this much from the page cache
 * takes, well under a millisecond. The open itself stays asynchronous: a path
 * swapped for a FIFO would block it, and the `fstat` after it refuses anything but
 * the regular file the job was accepted for before a byte is read.
 */
const SYNC_WINDOW_BYTES = 256 << 10;

/** Bytes `[start, end)` of an open file, fewer when the file ends first. */
function readRangeSync(file: Deno.FsFile, path: string, start: number, end: number): Uint8Array {
  const out = new Uint8Array(end - start);
  let filled = 0;
  try {
    file.seekSync(start, Deno.SeekMode.Start);
    while (filled < out.length) {
      const n = file.readSync(out.subarray(filled));
      if (n === null || n === 0) break;
      filled += n;
    }
  } catch (cause) {
    throw readFailed(path, cause);
  }
  return filled === out.length ? out : out.subarray(0, filled);
}

async function readWindow(read: TaskRead, readers?: ParquetReaders): Promise<Batch> {
  const { path, format, schema, types, window } = read;
  const range = { start: window.start, end: window.end };
  let close = () => Promise.resolve();
  let batches: AsyncIterable<Batch>;
  switch (format) {
    case "csv": // readTaskRows reads CSV windows itself, on one handle
      return await readCsvWindow(read);
    case "jsonl":
      batches = readJsonlRange(path, schema, range, { batchRows: window.batch_rows });
      break;
    case "parquet":
    case "arrow": {
      if (format === "parquet" && readers) {
        // The local freeze's Parquet reader (a window of whole batches, then the cut).
        const reader = await readers.get(path, types, window.batch_rows);
        if (!sameSchema(reader.schema, schema)) throw schemaChanged(path, reader.schema, schema);
        return await readChunk(reader, { ...range, skip: window.skip, rows: window.rows }, path)
          .catch((err) => {
            // The same finding in the cluster's terms: the source is not as planned.
            if (!(err instanceof IoError) || err.code !== "READ_FAILED") throw err;
            throw new JobError("SOURCE_CHANGED", err.message, { path, cause: err });
          });
      }
      const options = { types: { ...types }, rows: range, batchRows: window.batch_rows };
      const source = format === "parquet"
        ? await openParquet(path, options)
        : await openArrow(path, options);
      close = () => source.close();
      if (!sameSchema(source.schema, schema)) {
        await close();
        throw schemaChanged(path, source.schema, schema);
      }
      batches = source.batches();
      break;
    }
  }
  try {
    return await cutWindow(read, batches);
  } finally {
    await close();
  }
}

/** The chunk's rows cut out of a window's batches, which must hold what the job planned. */
async function cutWindow(read: TaskRead, batches: AsyncIterable<Batch>): Promise<Batch> {
  const { path, schema, window } = read;
  const { chunk, read: at } = await cutChunk(batches, schema, window.skip, window.rows);
  if (at !== window.span_rows) {
    throw new JobError(
      "SOURCE_CHANGED",
      `Cannot read task rows of '${path}': the ${window.unit} window ${window.start}:${window.end} holds ${at} rows, the job planned ${window.span_rows}`,
      { path },
    );
  }
  if (chunk === null || chunk.length !== window.rows) {
    throw new JobError(
      "SOURCE_CHANGED",
      `Cannot read task rows of '${path}': got ${
        chunk?.length ?? 0
      } rows, the job planned ${window.rows}`,
      { path },
    );
  }
  return chunk;
}

function schemaChanged(path: string, found: Schema, planned: Schema): JobError {
  return new JobError(
    "SOURCE_CHANGED",
    `Cannot read task rows of '${path}': its schema is ${describe(found)}, the job planned ${
      describe(planned)
    }`,
    { path },
  );
}

/**
 * Compares two schemas field by field (name, type, nullability, unit, zone).
 *
 * @param a A schema.
 * @param b Another.
 * @returns Whether they are the same.
 */
export function sameSchema(a: Schema, b: Schema): boolean {
  return JSON.stringify(a.map(fieldJson)) === JSON.stringify(b.map(fieldJson));
}

/**
 * A field as plain JSON (the wire form), keys in a fixed order.
 *
 * @param f The field.
 * @returns Its JSON form.
 */
export function fieldJson(f: Field): FieldJson {
  const out: FieldJson = { name: f.name, type: f.type, nullable: f.nullable };
  if (f.unit !== undefined) out.unit = f.unit;
  if (f.timezone !== undefined) out.timezone = f.timezone;
  if (f.precision !== undefined) out.precision = f.precision;
  if (f.scale !== undefined) out.scale = f.scale;
  return out;
}

function describe(schema: Schema): string {
  return schema.map((f) => `${f.name}:${f.type}`).join(", ");
}
