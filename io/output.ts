/**
 * Thaw outputs: `writeOutput(path, schema, batches)` writes CSV, JSON lines, Parquet or
 * Arrow IPC, picked by extension (or `format`), streaming batch by batch.
 *
 * | extension | format | writer |
 * |---|---|---|
 * | `.csv` | `csv` | `_write_text.ts` |
 * | `.jsonl`, `.ndjson` | `jsonl` | `_write_text.ts` |
 * | `.parquet` | `parquet` | `_write_parquet.ts` (locked-down DuckDB, zstd) |
 * | `.arrow` / `.arrows` | `arrow` | `_write_arrow.ts` (IPC file / stream format) |
 * | `.xlsx` | `xlsx` | `xlsx.ts` (own streaming writer; Excel's row and column limits) |
 *
 * A regular file (or a new path) is written to a locked temp file beside it
 * (`.<name>.pf.tmp-<random>`, covered by `.gitignore`; stale ones of a killed process
 * are removed by the next write, see `internal/temp_files.ts`), flushed to disk as it
 * grows, fsynced and renamed
 * over the target only once complete: no half-written file ever carries the final
 * name, and a failure removes the temp file. A symbolic link to a file is followed (the
 * file is replaced, the link kept). Anything else is never renamed over: `-` means
 * stdout (CSV unless a format is given; Arrow in the IPC stream format), and a FIFO or
 * a device (`/dev/stdout`) is opened and written in place. Parquet, which DuckDB writes
 * to a seekable file, goes to such a stream through a private temp directory. Every format reads
 * back through `openSource` to the same values (CSV and JSON lines cannot carry NaN
 * payload bits, timestamp units other than us/ns, or a timezone other than UTC).
 *
 * @module
 */
import { nodePath } from "../internal/node_builtin.ts";
import type { Batch, Schema } from "../format/column.ts";
import type { LockedTemp } from "../internal/temp_files.ts";
import type { DuckImage } from "./_duckdb_image.ts";
import { type ByteWriter, readRange, removeQuietly, writeAll } from "./_file.ts";
import { type RenderedRows, writeCsv, writeJsonl } from "./_write_text.ts";
import type { ArrowParts } from "./arrow_table.ts";
import { IoError } from "./errors.ts";

// Loaded where used: stdout (a 10-row slice piped on) needs neither temp files nor the
// xlsx writer, and evaluating them costs such a start ~2 ms. Literal specifiers: they
// load no npm package (Arrow and DuckDB go by computed ones, below).
function tempFiles(): Promise<typeof import("../internal/temp_files.ts")> {
  return import("../internal/temp_files.ts");
}

/** The output formats `writeOutput` writes. */
export type OutputFormat = "csv" | "jsonl" | "json" | "parquet" | "arrow" | "xlsx";

/** Output formats by file extension (lower case, with the dot). */
export const OUTPUT_EXTENSIONS: Readonly<Record<string, OutputFormat>> = Object.freeze({
  ".csv": "csv",
  ".jsonl": "jsonl",
  ".ndjson": "jsonl",
  ".json": "json",
  ".parquet": "parquet",
  ".arrow": "arrow",
  ".arrows": "arrow",
  ".xlsx": "xlsx",
});

const FORMATS: readonly OutputFormat[] = ["csv", "jsonl", "json", "parquet", "arrow", "xlsx"];

/** The path that means stdout. */
const STDOUT = "-";

/** Options of {@link writeOutput}. */
export interface WriteOutputOptions {
  /** Format to write, instead of guessing from the extension. */
  format?: OutputFormat;
  /** CSV delimiter (default `,`). */
  delimiter?: string;
  /** Arrow IPC stream format instead of file format (default: only for `.arrows`). */
  arrowStream?: boolean;
  /** xlsx: start a new sheet past Excel's 1,048,576 rows instead of failing. */
  splitSheets?: boolean;
  /**
   * Whether an existing regular file at the path may be replaced (default true). When
   * false, an existing file is refused before anything is written, and again,
   * atomically, when the output is put in place. Streams (stdout, a FIFO, a device) are
   * written in place either way.
   */
  replace?: boolean;
  /**
   * What {@link startOutput} started for this output ahead of the rows; taken (and
   * closed) by the write, whether it uses it or not.
   */
  started?: StartedOutput | null;
}

/** What {@link startOutput} started: close it if the write never runs. */
export interface StartedOutput {
  /** The Parquet writer's Worker, loading DuckDB meanwhile. */
  readonly parquet: Promise<ParquetWorker | null>;
  /** Stops what was started (idempotent). */
  close(): void;
}

/**
 * Starts, before the rows come, what writing `path` will need: for a Parquet file,
 * the writer's Worker, whose DuckDB (~0.1-0.2 s to load, more on a busy machine)
 * then loads while the caller opens its source, instead of from the write on. Hand
 * it to {@link writeOutput} (`started`); close it if the write never runs.
 *
 * @param path The output path.
 * @param format Its format, else by extension.
 * @returns What was started, or null when the output needs nothing ahead.
 */
export function startOutput(path: string, format?: OutputFormat): StartedOutput | null {
  if (path === STDOUT) return null;
  let f: OutputFormat;
  try {
    f = format ?? outputFormatOf(path);
  } catch {
    return null; // writeOutput reports it
  }
  if (f !== "parquet") return null;
  const parquet = startParquetWorker();
  let closed = false;
  return {
    parquet,
    close() {
      if (closed) return;
      closed = true;
      parquet.then((w) => w?.close());
    },
  };
}

/** What {@link writeOutput} wrote. */
export interface WriteOutputResult {
  /** Rows written. */
  rows: number;
  /** Size of the output file in bytes. */
  bytes: number;
}

/**
 * Tells an output's format from its extension (`-`, stdout, is CSV).
 *
 * @param path A file path.
 * @returns The format.
 * @throws {IoError} UNKNOWN_FORMAT naming the extension and the known ones.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { outputFormatOf } from "./output.ts";
 * assert.equal(outputFormatOf("out/table.Parquet"), "parquet");
 * ```
 */
export function outputFormatOf(path: string): OutputFormat {
  if (path === STDOUT) return "csv";
  const ext = extensionOf(path).toLowerCase();
  const format = Object.hasOwn(OUTPUT_EXTENSIONS, ext) ? OUTPUT_EXTENSIONS[ext] : undefined;
  if (format === undefined) {
    const known = Object.keys(OUTPUT_EXTENSIONS).join(", ");
    throw new IoError(
      "UNKNOWN_FORMAT",
      `Cannot tell the output format of '${path}' from its extension '${ext}': known extensions are ${known} (or pass a format)`,
      { path },
    );
  }
  return format;
}

/**
 * `node:path`'s `extname(path)`, without loading `node:path` for a plain name: a last
 * segment (after the last `/`, `\\` or `:`) with a dot past its first character and not
 * all dots, where every platform's `extname` gives the text from the last dot. Loading
 * `node:path` starts Node compatibility in this thread (~15-20 ms of CPU); a thaw asked
 * for the output's format before it opened the archive, so that start came before the
 * first chunk could reach a Worker, and held up the Workers' own start. Other names go
 * to `node:path` itself.
 *
 * @param path A file path.
 * @returns Its extension with the dot, or "".
 */
export function extensionOf(path: string): string {
  const cut = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"), path.lastIndexOf(":"));
  const dot = path.lastIndexOf(".");
  if (dot > cut + 1 && !/^\.+$/.test(path.slice(cut + 1))) return path.slice(dot);
  return nodePath().extname(path);
}

function checkDelimiter(d: string): void {
  const c = d.charCodeAt(0);
  if (d.length !== 1 || c > 127 || c === 34 || c === 10 || c === 13) {
    throw new IoError(
      "INVALID_OPTION",
      `Cannot use '${d}' as the CSV delimiter: it must be one ASCII character other than a quote, CR or LF`,
    );
  }
}

/**
 * Writes batches to a file, atomically (temp file beside the target, then rename), or
 * straight into a stream: `-` (stdout), a FIFO or a device.
 *
 * @param path The output file (replaced if it exists; a symbolic link to a file is
 * followed and the file it names replaced), or `-` for stdout.
 * @param schema The schema of every batch.
 * @param batches The rows, sync or async: batches, or rows a Worker prepared for this
 * format ({@link Prepared}: `renderRows` for CSV and JSON, `batchToArrowParts` for Arrow,
 * `duckImageOf` for Parquet).
 * @param options `format` (else by extension; CSV for `-`), `delimiter` (CSV), `arrowStream`.
 * @returns Rows and bytes written.
 * @throws {IoError} UNKNOWN_FORMAT, INVALID_OPTION, SCHEMA_MISMATCH (a batch that does
 * not match `schema`), WRITE_FAILED (I/O or DuckDB failure, a value the format cannot
 * hold, or a target that is a directory or a link to nothing). Errors thrown by
 * `batches` itself propagate unchanged. On any failure a file target is left
 * untouched; a stream keeps what was already written to it.
 *
 * @example Write a CSV file
 * ```ts ignore
 * const { rows, bytes } = await writeOutput("out.csv", source.schema, source.batches());
 * ```
 */
export async function writeOutput(
  path: string,
  schema: Schema,
  batches: AsyncIterable<Prepared> | Iterable<Prepared>,
  options: WriteOutputOptions = {},
): Promise<WriteOutputResult> {
  try {
    return await writeOutputOnce(path, schema, batches, options);
  } finally {
    // Already closed by a write that used it; this lets go of one it did not.
    options.started?.close();
  }
}

async function writeOutputOnce(
  path: string,
  schema: Schema,
  batches: AsyncIterable<Prepared> | Iterable<Prepared>,
  options: WriteOutputOptions,
): Promise<WriteOutputResult> {
  const format = options.format ?? outputFormatOf(path);
  if (!FORMATS.includes(format)) {
    throw new IoError(
      "UNKNOWN_FORMAT",
      `Cannot write format '${format}': known formats are ${FORMATS.join(", ")}`,
      { path },
    );
  }
  const delimiter = options.delimiter ?? ",";
  checkDelimiter(delimiter);
  const target = await outputTarget(path);
  // A Parquet file takes the Worker started for it; anything else lets it go.
  const started = target.kind === "file" && format === "parquet" ? options.started ?? null : null;
  if (started === null) options.started?.close();
  const replace = options.replace ?? true;
  if (target.kind === "file" && !replace && await (await tempFiles()).pathExists(target.path)) {
    throw destinationExists(path);
  }
  const sourceErrors = new WeakSet<object>();
  const input = tagErrors(batches, sourceErrors);
  const spec: WriteSpec = {
    schema,
    input,
    format,
    delimiter,
    splitSheets: options.splitSheets,
    arrowStream: options.arrowStream ??
      (path === STDOUT || extensionOf(path).toLowerCase() === ".arrows"),
  };
  try {
    return target.kind === "file"
      ? await writeFile(target.path, spec, replace, started)
      : await writeStream(target, spec);
  } catch (err) {
    if (typeof err === "object" && err !== null && sourceErrors.has(err)) throw err;
    if (err instanceof IoError) {
      if (err.path !== undefined) throw err;
      throw new IoError(err.code, err.message, {
        path,
        cause: err,
        ...(err.column === undefined ? {} : { column: err.column }),
      });
    }
    throw writeFailed(path, err);
  }
}

/** The formats {@link writeToStream} writes: those that stream. */
export const STREAM_FORMATS = ["csv", "jsonl", "arrow"] as const;

/** A format {@link writeToStream} writes. */
export type StreamFormat = typeof STREAM_FORMATS[number];

/**
 * Writes rows into a byte stream (a server's response body) in a format that streams:
 * CSV, JSON lines, or Arrow IPC in its stream format. Each piece is written once the
 * stream takes it, so memory stays bounded by one batch however many rows there are.
 * The stream is closed at the end, and aborted with the error when a batch or a write
 * fails (the reader sees a cut body, never a silently short one).
 *
 * @param writable Where the bytes go.
 * @param schema The rows' columns.
 * @param batches The rows.
 * @param options Format and CSV delimiter.
 * @returns Rows and bytes written.
 */
export async function writeToStream(
  writable: WritableStream<Uint8Array>,
  schema: Schema,
  batches: AsyncIterable<Batch> | Iterable<Batch>,
  options: { format: StreamFormat; delimiter?: string },
): Promise<WriteOutputResult> {
  const delimiter = options.delimiter ?? ",";
  checkDelimiter(delimiter);
  const writer = writable.getWriter();
  let bytes = 0;
  const sink: ByteWriter = {
    write: async (p) => {
      // The writers reuse their buffers: the stream gets a copy it may keep.
      await writer.write(p.slice());
      bytes += p.length;
      return p.length;
    },
  };
  const spec: WriteSpec = {
    schema,
    input: (async function* () {
      yield* batches;
    })(),
    format: options.format,
    delimiter,
    splitSheets: undefined,
    arrowStream: true,
  };
  try {
    const rows = await writeTo(sink, spec);
    await writer.close();
    return { rows, bytes };
  } catch (err) {
    await writer.abort(err).catch(() => {});
    throw err;
  }
}

/** Where an output goes: a regular file (new or replaced) or a stream written in place. */
type OutputTarget =
  | { kind: "file"; path: string }
  | { kind: "stream"; path: string }
  | { kind: "stdout" };

/**
 * Classifies an output path. Only a regular file (or a new path) is replaced by
 * rename: renaming over anything else would replace a FIFO, a device or a link to
 * one (`/dev/stdout`) with a regular file.
 */
async function outputTarget(path: string): Promise<OutputTarget> {
  if (path === STDOUT) return { kind: "stdout" };
  let info: Deno.FileInfo;
  try {
    const target = await (await tempFiles()).renameTarget(path);
    if (target !== null) return { kind: "file", path: target };
    info = await Deno.stat(path);
  } catch (cause) {
    if (!(cause instanceof Deno.errors.NotFound)) throw writeFailed(path, cause);
    throw new IoError(
      "WRITE_FAILED",
      `Cannot write '${path}': it is a symbolic link to nothing that can be opened; write to the file it should name, or remove the link`,
      { path, cause },
    );
  }
  if (info.isDirectory) {
    throw new IoError(
      "WRITE_FAILED",
      `Cannot write '${path}': it is a directory; give a file name (e.g. '${path}/out.csv')`,
      { path },
    );
  }
  return { kind: "stream", path };
}

/** What to write, whatever the target. */
interface WriteSpec {
  schema: Schema;
  input: AsyncIterable<Prepared>;
  format: OutputFormat;
  delimiter: string;
  splitSheets: boolean | undefined;
  arrowStream: boolean;
}

// The Arrow and Parquet writers (apache-arrow, DuckDB) by computed specifiers, so
// that writing CSV does not load them: Deno resolves a literal import ahead of time,
// on every start (see cli/lazy.ts, whose list `deno compile` includes).
const WRITE_ARROW = new URL("./_write_arrow.ts", import.meta.url);
const WRITE_PARQUET = new URL("./_write_parquet.ts", import.meta.url);

type ParquetWorker = import("./_write_parquet.ts").ParquetWorker;

/**
 * The name `_write_parquet.ts` serves its Worker under (its `PARQUET_WORKER`; a test
 * checks they agree): spawned from here, the Worker starts before this thread has
 * loaded that module (~0.3 s of a busy start, beside the thaw's own modules).
 */
const PARQUET_WORKER = "permafrost-parquet-copy";

/**
 * The Parquet writer's Worker, spawned now ({@link startOutput} at a thaw's start, else
 * {@link writeFile} before making its temp file, so that DuckDB loads meanwhile), or
 * null if it cannot start (the write itself then reports why).
 */
function startParquetWorker(): Promise<ParquetWorker | null> {
  let worker: Worker;
  try {
    worker = new Worker(WRITE_PARQUET.href, { type: "module", name: PARQUET_WORKER });
  } catch {
    return Promise.resolve(null);
  }
  // An error before the writer takes the Worker is kept for it: unhandled, it would
  // end the process.
  const errors: string[] = [];
  worker.onerror = (event) => {
    event.preventDefault();
    errors.push(event.message);
  };
  return (import(WRITE_PARQUET.href) as Promise<typeof import("./_write_parquet.ts")>).then(
    (m) => m.parquetWorker({ worker, errors }),
    () => {
      worker.terminate();
      return null;
    },
  );
}

async function writeParquet(
  path: string,
  schema: Schema,
  input: AsyncIterable<Prepared>,
  worker?: ParquetWorker | null,
): Promise<number> {
  const m = (await import(WRITE_PARQUET.href)) as typeof import("./_write_parquet.ts");
  return await m.writeParquet(path, schema, preparedFor(input, "duckdb"), {
    worker: worker ?? undefined,
  });
}

/** Writes a format that streams (every one but Parquet) into `sink`. */
async function writeTo(sink: ByteWriter, spec: WriteSpec): Promise<number> {
  const { schema, input } = spec;
  switch (spec.format) {
    case "csv":
      return writeCsv(sink, schema, preparedFor(input, "text"), spec.delimiter);
    case "jsonl":
      return writeJsonl(sink, schema, preparedFor(input, "text"));
    case "json":
      return writeJsonl(sink, schema, preparedFor(input, "text"), true);
    case "xlsx": {
      const { writeXlsx } = await import("./xlsx.ts");
      return writeXlsx(sink, schema, batchesOnly(input), { splitSheets: spec.splitSheets });
    }
    case "arrow": {
      const m = (await import(WRITE_ARROW.href)) as typeof import("./_write_arrow.ts");
      return await m.writeArrow(sink, schema, preparedFor(input, "arrow"), spec.arrowStream);
    }
    case "parquet":
      throw new Error("writeTo(): Parquet is written by DuckDB to a path");
  }
}

/** Writes a regular file: into a locked temp file beside it, fsynced, then renamed over it. */
async function writeFile(
  path: string,
  spec: WriteSpec,
  replace: boolean,
  started: StartedOutput | null,
): Promise<WriteOutputResult> {
  // Parquet's Worker loads DuckDB while the temp file is made (or since startOutput);
  // closed by writeParquet.
  const parquet = spec.format === "parquet" ? started?.parquet ?? startParquetWorker() : null;
  const { commitTemp, createTempBeside } = await tempFiles();
  let temp: LockedTemp;
  try {
    temp = await createTempBeside(path);
  } catch (cause) {
    parquet?.then((w) => w?.close());
    throw writeFailed(path, cause);
  }
  let rows: number;
  try {
    try {
      if (parquet !== null) {
        rows = await writeParquet(temp.path, spec.schema, spec.input, await parquet);
      } else {
        const ahead = new SyncAhead(temp);
        try {
          rows = await writeTo(ahead, spec);
        } finally {
          await ahead.close();
        }
      }
      await temp.file.sync();
    } finally {
      temp.file.close();
    }
    await commitTemp(temp.path, path, replace);
  } catch (err) {
    await removeQuietly(temp.path);
    if (err instanceof Deno.errors.AlreadyExists) throw destinationExists(path);
    throw err;
  }
  return { rows, bytes: (await Deno.stat(path)).size };
}

/** Bytes written between two of {@link SyncAhead}'s flushes. */
export const SYNC_AHEAD_BYTES = 16 << 20;

/**
 * Writes into a temp file and flushes its data to disk as it grows (`fdatasync` on a
 * second handle, in the background, every {@link SYNC_AHEAD_BYTES}), so that the
 * `fsync` before the rename, which the durability rule keeps, finds only the last
 * bytes still to write out instead of the whole file (~40 ms for 100 MB) while no
 * other work is left to overlap it. A second handle, because Deno runs one handle's
 * operations one after the other: a flush on `temp.file` would hold up its writes.
 * Flushing early changes what is durable when, never what is written.
 */
class SyncAhead implements ByteWriter {
  readonly #temp: LockedTemp;
  #handle: Promise<Deno.FsFile | null> | null = null;
  #running: Promise<void> | null = null;
  #unsynced = 0;

  constructor(temp: LockedTemp) {
    this.#temp = temp;
  }

  async write(p: Uint8Array): Promise<number> {
    const n = await this.#temp.file.write(p);
    this.#unsynced += n;
    if (this.#unsynced >= SYNC_AHEAD_BYTES && this.#running === null) {
      this.#unsynced = 0;
      this.#running = this.#flush().finally(() => {
        this.#running = null;
      });
    }
    return n;
  }

  /** A flush of what is written so far; a failure is left to the final `fsync`. */
  async #flush(): Promise<void> {
    this.#handle ??= Deno.open(this.#temp.path, { read: true }).catch(() => null);
    try {
      await (await this.#handle)?.syncData();
    } catch {
      // The fsync before the rename reports what is wrong with the file.
    }
  }

  /** Waits for the flush in progress, then closes the second handle. */
  async close(): Promise<void> {
    await this.#running;
    (await this.#handle)?.close();
  }
}

/**
 * Writes into a stream in place: stdout, or a FIFO or device opened without
 * truncating. Parquet, which DuckDB writes to a seekable file, is staged in a private
 * temp directory and copied in.
 */
async function writeStream(
  target: Exclude<OutputTarget, { kind: "file" }>,
  spec: WriteSpec,
): Promise<WriteOutputResult> {
  let file: Deno.FsFile | undefined;
  if (target.kind === "stream") {
    try {
      file = await Deno.open(target.path, { write: true });
    } catch (cause) {
      throw writeFailed(target.path, cause);
    }
  }
  const out: ByteWriter = file ?? Deno.stdout;
  let bytes = 0;
  const sink: ByteWriter = {
    write: async (p) => {
      const n = await out.write(p);
      bytes += n;
      return n;
    },
  };
  try {
    const rows = spec.format === "parquet"
      ? await stageParquet(sink, spec)
      : await writeTo(sink, spec);
    return { rows, bytes };
  } finally {
    file?.close();
  }
}

async function stageParquet(sink: ByteWriter, spec: WriteSpec): Promise<number> {
  const dir = await Deno.makeTempDir({ prefix: "permafrost-parquet-" });
  try {
    const staged = nodePath().join(dir, "out.parquet");
    const rows = await writeParquet(staged, spec.schema, spec.input);
    const file = await Deno.open(staged, { read: true });
    try {
      for await (const chunk of readRange(file, staged, 0, Infinity)) await writeAll(sink, chunk);
    } finally {
      file.close();
    }
    return rows;
  } finally {
    await removeQuietly(dir);
  }
}

/**
 * Rows as `writeOutput` takes them: batches, or rows a Worker already prepared for one
 * format (rendered as CSV/JSON text, converted to Arrow buffers, or laid out for
 * DuckDB's vectors for Parquet).
 */
export type Prepared = Batch | RenderedRows | ArrowParts | DuckImage;

/** The batches of an input, for a writer that takes nothing prepared. */
function batchesOnly(input: AsyncIterable<Prepared>): AsyncGenerator<Batch> {
  return preparedFor(input, "none") as AsyncGenerator<Batch>;
}

/** Prepared item kinds, by the writer that takes them. */
type PreparedKind = "text" | "arrow" | "duckdb" | "none";

/** What a writer of `K` takes: batches, and rows prepared its own way. */
type PreparedFor<K extends PreparedKind> = K extends "text" ? Batch | RenderedRows
  : K extends "arrow" ? Batch | ArrowParts
  : K extends "duckdb" ? Batch | DuckImage
  : Batch;

/**
 * An input checked for a writer that takes batches and rows prepared its own way:
 * rows prepared for another format cannot be turned back into values.
 */
async function* preparedFor<K extends PreparedKind>(
  input: AsyncIterable<Prepared>,
  kind: K,
): AsyncGenerator<PreparedFor<K>> {
  for await (const item of input) {
    const prepared = "rendered" in item
      ? "text"
      : "arrowParts" in item
      ? "arrow"
      : "duckImage" in item
      ? "duckdb"
      : null;
    if (prepared !== null && prepared !== kind) {
      throw new IoError(
        "SCHEMA_MISMATCH",
        `Cannot write rows prepared as ${prepared} into another format`,
      );
    }
    yield item as PreparedFor<K>;
  }
}

/** Passes batches through, remembering any error the input itself throws. */
async function* tagErrors<T extends Prepared>(
  batches: AsyncIterable<T> | Iterable<T>,
  tagged: WeakSet<object>,
): AsyncGenerator<T> {
  const it = Symbol.asyncIterator in batches
    ? batches[Symbol.asyncIterator]()
    : (batches as Iterable<T>)[Symbol.iterator]();
  try {
    for (;;) {
      let r: IteratorResult<T>;
      try {
        r = await it.next();
      } catch (err) {
        if (typeof err === "object" && err !== null) tagged.add(err);
        throw err;
      }
      if (r.done) return;
      yield r.value;
    }
  } finally {
    await it.return?.();
  }
}

function destinationExists(path: string): IoError {
  return new IoError(
    "DESTINATION_EXISTS",
    `Cannot write '${path}': it already exists; remove it or allow replacing it (--force)`,
    { path },
  );
}

function writeFailed(path: string, cause: unknown): IoError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new IoError(
    "WRITE_FAILED",
    `Cannot write '${path}' (in '${nodePath().dirname(path)}'): ${why}`,
    {
      path,
      cause,
    },
  );
}
