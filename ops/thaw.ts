/**
 * `thaw`: an archive (or a slice of it) → a file (CSV, JSON lines, Parquet,
 * Arrow IPC, xlsx) or an in-memory Arrow table. Reads only the chunks the row
 * range touches and only the blocks of the requested columns; every block read
 * is checked against its SHA-256 before it is decoded.
 *
 * A `where` filter first skips every chunk whose footer min/max cannot match,
 * then reads only the filter's columns of the others, and the remaining columns
 * only where a row matched (see `_scan.ts`). A partitioned dataset directory
 * (see `partition.ts`) thaws as one table, opening only the partitions the
 * filter can match. Output streams batch by batch: memory stays bounded by a
 * chunk, whatever the archive size.
 *
 * @module
 */
import type * as arrow from "apache-arrow";
import type { Batch, Schema } from "../format/column.ts";
import type { Evolution } from "./evolve.ts";
import type { RowRange } from "../format/reader.ts";
import type { KeyRing } from "../format/key_provider.ts";
import {
  type OutputFormat,
  outputFormatOf,
  type StartedOutput,
  startOutput,
  writeOutput,
} from "../io/output.ts";
import { OpsError } from "./errors.ts";
import { isRemote } from "../storage/is_remote.ts";
import { ArchiveReader, type OpenOptions } from "../format/reader.ts";
import type { Prepared } from "../io/output.ts";
import type { ArrowParts } from "../io/arrow_table.ts";
import type { PoolOutput } from "./_pool_scan.ts";
import type { BlockPool } from "../format/pool.ts";
import { checkThreads } from "./threads.ts";
import type { PartitionCounters } from "./partition_read.ts";
import { newCounters, scanArchive, selectSchema, whereFor } from "./_scan.ts";
import type { CompiledWhere, WhereNode } from "./where.ts";

/** Options of `thaw` and `thawTable`. */
export interface ThawOptions {
  /** Rows `[start, end)`, 0-based (default: all). */
  rows?: RowRange;
  /** Columns to keep, in output order (default: all). */
  columns?: string[];
  /** Output format, instead of guessing from the extension. */
  format?: OutputFormat;
  /** CSV delimiter (default `,`). */
  delimiter?: string;
  /**
   * Row filter, e.g. `delay > 60 and origin in ('SFO', 'LAX')` (see `where.ts`
   * for the grammar). Chunks whose min/max cannot match are never read.
   */
  where?: string | WhereNode | CompiledWhere;
  /** xlsx: start a new sheet every 1,048,575 rows instead of refusing a bigger output. */
  splitSheets?: boolean;
  /**
   * Keys of an encrypted archive (a raw key, key providers). Without them an
   * encrypted archive fails with `KEY_REQUIRED` before any output is created.
   */
  keys?: KeyRing;
  /**
   * Refuse an archive that is not encrypted (`NOT_ENCRYPTED`, before any output is
   * created), e.g. where only encrypted archives may exist.
   */
  requireEncryption?: boolean;
  /**
   * Whether an existing file at the output path may be replaced (default true; the CLI
   * passes false unless `--force`). When false it is `DESTINATION_EXISTS` before any
   * row is read. Stdout, a FIFO or a device is written in place either way.
   */
  overwrite?: boolean;
  /** Storage class of an output written to object storage; ignored for a local file. */
  storageClass?: string;
  /**
   * Worker threads that decode chunks (and render CSV/JSON text) while this thread
   * reads (default: one per core; 0 decodes on the calling thread; at most 4 per
   * core). A read of one chunk, a `where` filter or a `schema` decodes on the
   * calling thread whatever this says.
   */
  threads?: number;
  /**
   * The schema to give the rows in (schema evolution, `evolve.ts`): columns the archive
   * lacks come back null, columns it has that are not named are dropped, compatible
   * types are cast exactly; anything else is SCHEMA_INCOMPATIBLE before a row is read.
   * `columns` then picks among this schema's columns.
   */
  schema?: Schema;
}

/** What `thaw` did. */
export interface ThawSummary {
  /** The file this concerns. */
  path: string;
  /** Rows. */
  rows: number;
  /** Size of the output file in bytes. */
  output_bytes: number;
  /** Chunks decoded. */
  chunks_read: number;
  /** Archive payload bytes read. */
  bytes_read: number;
  /** Chunks in the row range (of the partitions opened, for a dataset directory). */
  chunks_total: number;
  /** Chunks skipped unread because their min/max statistics cannot match `where`. */
  chunks_skipped: number;
  /** Payload bytes of the archives opened (compare with `bytes_read`). */
  payload_bytes: number;
  /** Partitions in a dataset directory (null for a single archive). */
  partitions_total: number | null;
  /** Partitions opened (null for a single archive). */
  partitions_read: number | null;
  /** Wall-clock seconds. */
  seconds: number;
  /** Whether the archive was encrypted (false for a partitioned dataset directory). */
  encrypted: boolean;
}

/**
 * Thaws an archive (or a slice) into a file, atomically.
 *
 * @param archive Archive path.
 * @param output Output path; format from `options.format` or the extension.
 * @param options Rows, columns, format.
 * @returns Rows and bytes written, chunks and bytes read.
 * @throws {FormatError} HASH_MISMATCH or CORRUPT on damaged bytes (nothing is written); {IoError} on output failures;
 * {OpsError} NOT_ENCRYPTED for a plain archive with `requireEncryption`.
 */
export async function thaw(
  archive: string,
  output: string,
  options: ThawOptions = {},
): Promise<ThawSummary> {
  if (isRemote(output)) {
    const { toDestination } = await remote();
    const summary = await toDestination(
      output,
      (local) => thaw(archive, local, { ...options, overwrite: true }),
      { overwrite: options.overwrite, storageClass: options.storageClass },
    );
    return { ...summary, path: output };
  }
  const started = performance.now();
  checkRows(options.rows);
  const threads = checkThreads(options.threads);
  // The Workers start first, so that their start (an isolate and its modules each,
  // ~50 ms) overlaps this thread's own: its Node modules, the header and the footer.
  const early = earlyPool(archive, threads, options);
  // A Parquet output's writer (its Worker loads DuckDB) starts now too.
  const writer = startOutput(output, options.format);
  try {
    return await thawFile(archive, output, options, threads, started, early, writer);
  } finally {
    writer?.close();
    // Closing is idempotent: this stops a pool that went unused (a failure, or a
    // footer that says the read stays on this thread).
    early?.then((pool) => pool.close(), () => {});
  }
}

/** {@link thaw} to a local path, with the pool {@link earlyPool} started (if any). */
async function thawFile(
  archive: string,
  output: string,
  options: ThawOptions,
  threads: number,
  started: number,
  early: Promise<BlockPool> | null,
  writer: StartedOutput | null,
): Promise<ThawSummary> {
  const format = options.format ?? outputFormatOf(output);
  const counters: PartitionCounters = {
    ...newCounters(),
    partitions_total: 0,
    partitions_read: 0,
  };
  const partitions = await partitionsOf(archive);
  const partitioned = partitions !== null;
  let written: { rows: number; bytes: number };
  let encrypted = false;
  if (partitions) {
    const { readManifest, readPartitioned } = partitions;
    checkEncrypted(archive, false, options);
    const { schema } = await readManifest(archive);
    const evolved = await evolution(schema, options);
    const out = evolved ? evolved.target : selectSchema(schema, options.columns);
    const rows = readPartitioned(archive, evolved ? evolved.options : options, counters);
    written = await writeOutput(
      output,
      out,
      evolved ? evolved.evolveBatches(rows, evolved) : rows,
      {
        format,
        delimiter: options.delimiter,
        splitSheets: options.splitSheets,
        replace: options.overwrite,
        started: writer,
      },
    );
  } else {
    const reader = await openArchive(archive, { keys: options.keys, requireKey: true });
    try {
      encrypted = reader.index.header.encryption !== null;
      checkEncrypted(archive, encrypted, options);
      const evolved = await evolution(reader.index.schema, options);
      const schema = evolved ? evolved.target : selectSchema(reader.index.schema, options.columns);
      // Compiled before the output is touched, so a bad --where is reported as such.
      const where = await whereFor(options.where, reader.index.schema);
      if (format === "xlsx" && !options.splitSheets && options.where === undefined) {
        await checkSheetRows(reader.index.footer.rows, options.rows);
      }
      const workers = readThreads(threads, reader, options, evolved);
      const pooled = workers > 0 ? await poolScan() : null;
      const ready = workers > 0 ? await early : null;
      const pool = ready ?? pooled?.thawPool(workers) ?? null;
      try {
        let scan: AsyncIterable<Prepared>;
        if (pool) {
          const chunks = pooled!.scanInPool(
            reader,
            options,
            pool,
            poolOutput(format, options.delimiter),
            counters,
          );
          scan = closedAtEnd(mayReadFirst(output, options) ? startedNow(chunks) : chunks, pool);
        } else {
          const read = scanArchive(reader, { ...(evolved?.options ?? options), where }, counters);
          scan = evolved ? evolved.evolveBatches(read, evolved) : read;
        }
        written = await writeOutput(output, schema, scan, {
          format,
          delimiter: options.delimiter,
          splitSheets: options.splitSheets,
          replace: options.overwrite,
          started: writer,
        });
      } finally {
        pool?.close();
      }
    } finally {
      reader.close();
    }
  }
  return {
    path: output,
    rows: written.rows,
    output_bytes: written.bytes,
    chunks_read: counters.chunks_read,
    bytes_read: counters.bytes_read,
    chunks_total: counters.chunks_total,
    chunks_skipped: counters.chunks_pruned,
    payload_bytes: counters.payload_bytes,
    partitions_total: partitioned ? counters.partitions_total : null,
    partitions_read: partitioned ? counters.partitions_read : null,
    seconds: (performance.now() - started) / 1000,
    encrypted,
  };
}

/**
 * `_remote.ts` (object storage: ranged reads, uploads) and `partition_read.ts` (dataset
 * directories), by computed specifiers: a thaw of a local archive file evaluates
 * neither, and Deno does not even read them (~35 kB, with the stores' modules they
 * name) when it loads this one. `cli/lazy.ts` lists them for `deno compile`.
 */
const REMOTE = new URL("./_remote.ts", import.meta.url);
const PARTITION_READ = new URL("./partition_read.ts", import.meta.url);

function remote(): Promise<typeof import("./_remote.ts")> {
  return import(REMOTE.href);
}

/** Opens an archive at a path (here) or a URI (through `_remote.ts`). */
async function openArchive(where: string, options: OpenOptions): Promise<ArchiveReader> {
  if (!isRemote(where)) return await ArchiveReader.open(where, options);
  return await (await remote()).openArchive(where, options);
}

/**
 * `partition_read.ts` when `archive` is a partitioned dataset (a directory or URI prefix
 * with a manifest), else null. A local path that is not a directory (or cannot be
 * stat'ed: opening it then says why) is no dataset, and loads nothing.
 */
async function partitionsOf(
  archive: string,
): Promise<typeof import("./partition_read.ts") | null> {
  if (!isRemote(archive)) {
    try {
      if (!Deno.statSync(archive).isDirectory) return null;
    } catch {
      return null;
    }
  }
  const module = (await import(PARTITION_READ.href)) as typeof import("./partition_read.ts");
  return (await module.isPartitionedDir(archive)) ? module : null;
}

/** `io/arrow_table.ts`: loaded by {@link thawTable} only. */
const ARROW_TABLE = new URL("../io/arrow_table.ts", import.meta.url);

/**
 * Thaws an archive (or a slice) into an in-memory Arrow table.
 *
 * @param archive Archive path.
 * @param options Rows, columns.
 * @returns The table.
 */
export async function thawTable(archive: string, options: ThawOptions = {}): Promise<arrow.Table> {
  checkRows(options.rows);
  // apache-arrow by a computed specifier, so that `thaw` to CSV does not load it
  // (Deno resolves a literal import ahead of time: see cli/lazy.ts).
  const { batchesToTable } =
    (await import(ARROW_TABLE.href)) as typeof import("../io/arrow_table.ts");
  const batches: Batch[] = [];
  const partitions = await partitionsOf(archive);
  if (partitions) {
    const { readManifest, readPartitioned } = partitions;
    checkEncrypted(archive, false, options);
    const { schema } = await readManifest(archive);
    const counters = { ...newCounters(), partitions_total: 0, partitions_read: 0 };
    const evolved = await evolution(schema, options);
    const rows = readPartitioned(archive, evolved?.options ?? options, counters);
    for await (const b of evolved ? evolved.evolveBatches(rows, evolved) : rows) batches.push(b);
    return batchesToTable(
      evolved ? evolved.target : selectSchema(schema, options.columns),
      batches,
    );
  }
  const reader = await openArchive(archive, { keys: options.keys, requireKey: true });
  try {
    checkEncrypted(archive, reader.index.header.encryption !== null, options);
    const evolved = await evolution(reader.index.schema, options);
    const schema = evolved ? evolved.target : selectSchema(reader.index.schema, options.columns);
    const workers = readThreads(checkThreads(options.threads), reader, options, evolved);
    if (workers > 0) {
      const { scanInPool, thawPool } = await poolScan();
      const pool = thawPool(workers);
      try {
        const parts: Prepared[] = [];
        for await (const p of scanInPool(reader, options, pool, { arrow: true }, newCounters())) {
          parts.push(p);
        }
        // Torn down while this thread builds the table (see closedAtEnd).
        pool.close();
        return batchesToTable(schema, parts as (Batch | ArrowParts)[]);
      } finally {
        pool.close();
      }
    }
    const rows = scanArchive(reader, evolved?.options ?? options);
    for await (const b of evolved ? evolved.evolveBatches(rows, evolved) : rows) batches.push(b);
    return batchesToTable(schema, batches);
  } finally {
    reader.close();
  }
}

/** An evolution planned for a read, with what applies it. */
type PlannedEvolution = Evolution & {
  options: ThawOptions;
  evolveBatches: typeof import("./evolve.ts").evolveBatches;
};

/**
 * How to read the stored rows for `options.schema`, when given: the evolution, and the
 * options that read only the stored columns it needs (at least one, so rows still count).
 * `evolve.ts` (and its schema diff) loads only then: a thaw without a schema never
 * evaluates it.
 */
async function evolution(
  stored: Schema,
  options: ThawOptions,
): Promise<PlannedEvolution | null> {
  if (!options.schema) return null;
  const { evolveBatches, planEvolution } = await import("./evolve.ts");
  const target = options.columns
    ? options.columns.map((name) => {
      const f = options.schema!.find((g) => g.name === name);
      if (!f) {
        throw new OpsError(
          "BAD_OPTION",
          `Cannot thaw column "${name}": the schema given has ${
            options.schema!.map((g) => g.name).join(", ")
          }`,
        );
      }
      return f;
    })
    : options.schema;
  const plan = planEvolution(stored, target);
  const columns = plan.read.length > 0 ? [...plan.read] : [stored[0]!.name];
  return { ...plan, options: { ...options, columns }, evolveBatches };
}

/**
 * `_pool_scan.ts`, by a computed specifier: it loads the Worker pool (and with it the
 * encoder's modules), which a one-chunk slice never needs (see cli/lazy.ts).
 */
const POOL_SCAN = new URL("./_pool_scan.ts", import.meta.url);

function poolScan(): Promise<typeof import("./_pool_scan.ts")> {
  return import(POOL_SCAN.href);
}

/** Archives smaller than this open before any Worker starts: they may hold one chunk. */
const EARLY_POOL_BYTES = 1 << 20;

/**
 * The thaw pool, started before the archive is opened, when the read will most
 * likely run on it: no `where`, no schema, no row range, and a local archive file of
 * at least {@link EARLY_POOL_BYTES} (many chunks). {@link readThreads} still decides
 * once the footer is read; a pool it does not want is closed unused.
 */
function earlyPool(
  archive: string,
  threads: number,
  options: ThawOptions,
): Promise<BlockPool> | null {
  if (
    threads === 0 || options.where !== undefined || options.schema !== undefined ||
    options.rows !== undefined || isRemote(archive)
  ) {
    return null;
  }
  try {
    const info = Deno.statSync(archive);
    if (!info.isFile || info.size < EARLY_POOL_BYTES) return null;
  } catch {
    // Missing or unreadable: opening it reports that.
    return null;
  }
  const pool = poolScan().then((m) => m.thawPool(threads));
  // Awaited (or closed) once the archive is open; a failed start fails there.
  pool.catch(() => {});
  return pool;
}

/**
 * The Worker threads a read decodes on (0: this thread). A `where` filter, a schema to
 * give the rows and a read of one chunk (a slice: Workers would only add their start)
 * stay here.
 */
function readThreads(
  threads: number,
  reader: ArchiveReader,
  options: ThawOptions,
  evolved: Evolution | null,
): number {
  if (threads === 0 || evolved !== null || options.where !== undefined) return 0;
  const start = options.rows?.start ?? 0;
  const end = options.rows?.end ?? Infinity;
  const chunks = reader.index.footer.chunks.filter((c) => c.row_end > start && c.row_start < end);
  return chunks.length >= 2 ? threads : 0;
}

/**
 * Whether the pool may start on the rows before the writer has checked the output:
 * yes, unless `overwrite: false` promises DESTINATION_EXISTS before any row is read
 * and something is at the path.
 */
function mayReadFirst(output: string, options: ThawOptions): boolean {
  if (options.overwrite !== false || output === "-") return true;
  try {
    Deno.lstatSync(output);
    return false;
  } catch {
    return true;
  }
}

/**
 * `chunks` with their first step taken now rather than at the writer's first pull: the
 * pool's first chunks are read and handed to the Workers while the writer makes its
 * temp file (the stale ones' directory scan, open, lock). A failure of that step
 * surfaces at that pull, as it would have; if the writer fails before pulling, it is
 * dropped with the pool (closed by the caller).
 */
function startedNow<T>(chunks: AsyncGenerator<T>): AsyncGenerator<T> {
  const first = chunks.next();
  first.catch(() => {});
  return (async function* () {
    const step = await first;
    if (step.done) return;
    yield step.value;
    yield* chunks;
  })();
}

/**
 * `items`, then `pool` closed as soon as the writer has taken the last of them: the
 * Workers' isolates are torn down on their own threads while the writer flushes, syncs
 * and renames, instead of by the process's exit, whose wait grows with the memory still
 * mapped (flights-3m CSV: ~190-240 MB resident at exit -> ~120-170 MB, exit ~60 -> ~30 ms
 * in loaded traces). An early end (an error, a writer that stops) leaves the close to
 * the caller's `finally`.
 */
async function* closedAtEnd<T>(items: AsyncIterable<T>, pool: BlockPool): AsyncGenerator<T> {
  yield* items;
  pool.close();
}

/** What a pool's Workers prepare rows for: text, Arrow IPC and Parquet there, other formats here. */
function poolOutput(format: OutputFormat, delimiter = ","): PoolOutput {
  switch (format) {
    case "csv":
      return { text: { format, delimiter } };
    case "jsonl":
    case "json":
      return { text: { format } };
    case "arrow":
      return { arrow: true };
    case "parquet":
      return { duckdb: true };
    default:
      return null;
  }
}

function checkEncrypted(archive: string, encrypted: boolean, options: ThawOptions): void {
  if (options.requireEncryption && !encrypted) {
    throw new OpsError(
      "NOT_ENCRYPTED",
      `Cannot thaw '${archive}': it is not encrypted, and encryption is required (--require-encryption); thaw it without that flag only if a plain archive is expected`,
      { path: archive },
    );
  }
}

/** Refuses more rows than one sheet holds; `io/xlsx.ts` loads only for an xlsx output. */
async function checkSheetRows(total: number, rows: RowRange | undefined): Promise<void> {
  const { XLSX_MAX_DATA_ROWS } = await import("../io/xlsx.ts");
  const n = Math.max(0, Math.min(total, rows?.end ?? total) - (rows?.start ?? 0));
  if (n > XLSX_MAX_DATA_ROWS) {
    throw new OpsError(
      "BAD_OPTION",
      `Cannot thaw ${n} rows into one xlsx sheet: Excel holds at most ${XLSX_MAX_DATA_ROWS} data rows per sheet (1,048,576 with the header); pass --split-sheets (splitSheets: true), --rows or --where, or pick another format`,
    );
  }
}

function checkRows(rows: RowRange | undefined): void {
  if (!rows) return;
  if (
    !Number.isSafeInteger(rows.start) || !Number.isSafeInteger(rows.end) || rows.start < 0 ||
    rows.end < rows.start
  ) {
    throw new OpsError(
      "BAD_OPTION",
      `Row range ${rows.start}:${rows.end} is not START:END with 0 <= START <= END`,
    );
  }
}
