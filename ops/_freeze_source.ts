/**
 * A freeze's source opened for reading: as batches on this thread (`openFreezeSource`,
 * shared with `append`), or as chunks (`openChunks`) that Worker threads read where they
 * encode them — a Parquet file by row windows, a CSV file by byte ranges of one chunk's
 * rows — so the source is decoded on every core.
 *
 * @module
 */
import type * as arrow from "apache-arrow";
import type { Batch, Schema } from "../format/column.ts";
import { DEFAULT_CHUNK_ROWS } from "../format/constants.ts";
import { BlockPool } from "../format/pool.ts";
import { IoError } from "../io/errors.ts";
import type { ParquetRanges } from "../io/parquet.ts";
import { openSource } from "../io/source.ts";
import type { CsvDialect } from "../io/csv_dialect.ts";
import type { Source } from "../io/types.ts";
import { csvRowRanges, readCsvHeader } from "../io/csv.ts";
import {
  type ChunkWindow,
  chunkWindows,
  freezeBatchRows,
  readChunk,
  rechunk,
} from "../io/chunk_window.ts";
import type { ParquetFile, ParquetOpenTask } from "./_parquet_chunks.ts";
import {
  type CsvChunk,
  type CsvCut,
  type CsvCutTask,
  type PredictorSample,
  readFirstCsvChunk,
} from "./_csv_chunks.ts";
import type { FreezeOptions, FreezeSource } from "./freeze.ts";
import { freezePool, readInWorkers } from "./_freeze_pool.ts";

/** A freeze source opened for reading: its schema and batch stream. */
export interface OpenedSource {
  /** Columns. */
  schema: Schema;
  /** How a CSV file is read (absent for other sources). */
  dialect?: CsvDialect | null;
  /** How far into the file reading has got (CSV, JSON lines). */
  position?: () => number;
  /** Rows, read once. */
  batches: AsyncIterable<Batch> | Iterable<Batch>;
  /** Input file size, when the source is a file. */
  bytes: number | null;
  /** Releases the source. */
  close(): Promise<void>;
}

/**
 * Opens any freeze source (file, Arrow table, or batches) for one pass.
 * Shared with `append` and the partitioned freeze.
 *
 * @param source What `freeze` accepts.
 * @param options `format`, `types` and `chunkRows` (batch size) for files.
 * @returns The opened source; close it when done.
 */
export function openFreezeSource(
  source: FreezeSource,
  options: FreezeOptions,
): Promise<OpenedSource> {
  return openAny(source, options);
}

async function openAny(source: FreezeSource, options: FreezeOptions): Promise<OpenedSource> {
  if (typeof source === "string") return streaming(await openFile(source, options));
  if ("batches" in source && "schema" in source && !("numRows" in source)) {
    return {
      schema: source.schema,
      batches: source.batches,
      bytes: null,
      close: () => Promise.resolve(),
    };
  }
  // Loaded here: apache-arrow is ~30 ms of CPU to load, which a file's freeze never uses.
  const { tableToBatches } = await import("../io/arrow_table.ts");
  const { schema, batches } = tableToBatches(source as arrow.Table, options.types);
  return { schema, batches, bytes: null, close: () => Promise.resolve() };
}

/** A source file opened as every freeze opens one: its header, dialect and schema settled. */
function openFile(path: string, options: FreezeOptions): Promise<Source> {
  return openSource(path, {
    format: options.format,
    types: options.types,
    delimiter: options.delimiter,
    batchRows: freezeBatchRows(options.chunkRows ?? DEFAULT_CHUNK_ROWS),
  });
}

/** An opened file read as one stream of batches. */
function streaming(opened: Source): OpenedSource {
  return {
    schema: opened.schema,
    batches: opened.batches(),
    bytes: opened.bytes,
    dialect: opened.dialect ?? null,
    ...(opened.position ? { position: opened.position } : {}),
    close: () => opened.close(),
  };
}

/** The share of a source read so far, from its byte position or its row count. */
export function shareRead(opened: OpenedChunks, rows: number): number | null {
  if (opened.shareOfRows) return opened.shareOfRows(rows);
  if (opened.position && opened.bytes) return Math.min(1, opened.position() / opened.bytes);
  if (opened.totalRows) return Math.min(1, rows / opened.totalRows);
  return null;
}

/**
 * One chunk to encode: its rows, or where a Worker reads them (a window of a Parquet
 * file, a byte range of a CSV file).
 */
export type ChunkUnit = { batch: Batch } | { window: ChunkWindow; file: ParquetFile } | {
  csv: CsvChunk;
};

/** A source opened as chunks (not read batches). */
export interface OpenedChunks {
  /** Columns. */
  schema: Schema;
  /** The chunks, in order; the first carries its rows (the plan's sample) unless `sample` is set. */
  chunks: AsyncIterable<ChunkUnit>;
  /** Input file size, when the source is a file. */
  bytes: number | null;
  /** How a CSV file is read (absent for other sources). */
  dialect?: CsvDialect | null;
  /** How far into the file reading has got, for a share-done figure (see {@link FreezeProgress}). */
  position?: () => number;
  /** Rows in the source, when known before reading (Parquet). */
  totalRows?: number;
  /** The share of the source the first `rows` rows are, when the source tells it so. */
  shareOfRows?: (rows: number) => number | null;
  /**
   * Reads the rows to plan on, when they are not the first chunk's (the first chunk is
   * then a chunk like any other, see `planRows` of {@link openChunks}); an empty batch
   * for a file without rows. Read when first called (once), so a freeze can hand the
   * Workers their first chunks before this thread reads the sample.
   */
  sample?: () => Promise<Batch>;
  /** Where `sample` reads its rows, for a Worker to read them instead (`CsvPredictorsTask`). */
  predictorSample?: PredictorSample;
  /** The pool to encode in (0 threads: none, encode inline). */
  pool: BlockPool | undefined;
  /** Releases the source and stops the pool. */
  close(): Promise<void>;
}

/**
 * Opens a source as chunks. A Parquet file with Worker threads and no primary key to
 * check is laid out into chunk windows from its row count, and a CSV file into byte
 * ranges of a chunk's rows each (`_csv_chunks.ts`); only the first chunk is read here: each Worker reads the rest itself (`_freeze_worker.ts`),
 * so decoding uses every core. Everything else streams through this thread
 * (`rechunk`).
 */
export async function openChunks(
  source: FreezeSource,
  options: FreezeOptions & { chunkRows: number; threads: number; planRows?: number },
): Promise<OpenedChunks> {
  const format = readInWorkers(source, options);
  if (typeof source === "string" && format !== null) {
    // Read where they are encoded: a Parquet file by row windows, a CSV file by ranges.
    if (format === "parquet") return await openParquetChunks(source, options);
    if (format === "csv") {
      // Started before the file is opened, so the Workers load their modules (the
      // encoder, node:zlib) while this thread infers the types and plans.
      const pool = freezePool(options.threads);
      let file: Source;
      try {
        file = await openFile(source, options);
      } catch (err) {
        await pool.shutdown();
        throw err;
      }
      return await openCsvChunks(source, file, pool, options);
    }
  }
  return batchChunks(await openAny(source, options), options);
}

/** Chunks of a source read on this thread (`rechunk`), encoded in the pool when there is one. */
function batchChunks(
  opened: OpenedSource,
  options: { chunkRows: number; threads: number },
): OpenedChunks {
  const pool = options.threads > 0 ? new BlockPool(options.threads) : undefined;
  return {
    schema: opened.schema,
    chunks: mapChunks(rechunk(opened.schema, opened.batches, options.chunkRows)),
    bytes: opened.bytes,
    dialect: opened.dialect ?? null,
    ...(opened.position ? { position: opened.position } : {}),
    pool,
    close: async () => {
      pool?.close();
      await opened.close();
    },
  };
}

async function* mapChunks(batches: AsyncIterable<Batch>): AsyncGenerator<ChunkUnit> {
  for await (const batch of batches) yield { batch };
}

/**
 * A CSV file cut into chunks for the Workers to parse, with the header, dialect and
 * schema `source` (the file, opened) settled. The cut (`csvRowBoundaries`, a pass over
 * the whole file) runs in a Worker while this thread reads the first chunk from the
 * data's start and the freeze plans on it, so neither waits for the other; the later
 * chunks are handed out once it is known. A file of one chunk is that first read.
 */
async function openCsvChunks(
  path: string,
  source: Source,
  pool: BlockPool,
  options: FreezeOptions & { chunkRows: number; threads: number; planRows?: number },
): Promise<OpenedChunks> {
  if (options.planRows !== undefined) return await sampledCsvChunks(path, source, pool, options);
  const { chunkRows } = options;
  const bytes = source.bytes ?? 0;
  const delimiter = source.dialect?.delimiter ?? ",";
  await source.close(); // the first chunk is read below, the rest by the Workers
  const types = { ...options.types };
  // The pool started first: the cut runs while the first chunk is read.
  const task: CsvCutTask = { kind: "csv-cut", path, everyRows: chunkRows, delimiter };
  const cutting = pool.run<CsvCut>(task);
  cutting.catch(() => {}); // awaited by the chunks below; this only marks it handled
  let first: Batch | null;
  try {
    const { dataStart } = await readCsvHeader(path, { delimiter });
    first = await readFirstCsvChunk(path, source.schema, dataStart, bytes, chunkRows, {
      delimiter,
      types,
    });
  } catch (err) {
    await pool.shutdown();
    throw err;
  }
  let totalRows: number | undefined;
  async function* chunks(): AsyncGenerator<ChunkUnit> {
    if (first) yield { batch: first }; // the freeze plans on it while the cut runs
    const cut = await cutting;
    totalRows = cut.rows;
    if ((first?.length ?? 0) !== Math.min(chunkRows, cut.rows)) {
      throw new IoError(
        "READ_FAILED",
        `Cannot read '${path}': its first ${chunkRows} rows held ${
          first?.length ?? 0
        } rows, and ${cut.rows} when it was cut into chunks; was it changed while it was frozen?`,
        { path },
      );
    }
    const { offsets } = cut;
    for (let i = 1; i + 1 < offsets.length; i++) {
      yield {
        csv: {
          path,
          range: { start: offsets[i]!, end: offsets[i + 1]! },
          firstRow: i * chunkRows,
          rows: Math.min(chunkRows, cut.rows - i * chunkRows),
          delimiter,
          types,
        },
      };
    }
  }
  return {
    schema: source.schema,
    chunks: chunks(),
    bytes,
    dialect: source.dialect ?? null,
    get totalRows() {
      return totalRows;
    },
    pool,
    close: () => pool.shutdown(),
  };
}

/**
 * A CSV file cut into chunks for the Workers to parse, every one of them, the cut
 * running on this thread as they are handed out (`csvRowRanges`); only the plan's
 * sample, the first `planRows` rows, is read here (when the freeze asks, once the
 * Workers have their first chunks; or by a Worker, from `predictorSample`), so the
 * Workers start at once instead of after a pass over the whole file.
 */
async function sampledCsvChunks(
  path: string,
  source: Source,
  pool: BlockPool,
  options: FreezeOptions & { chunkRows: number; threads: number; planRows?: number },
): Promise<OpenedChunks> {
  const { chunkRows } = options;
  const bytes = source.bytes ?? 0;
  const delimiter = source.dialect?.delimiter ?? ",";
  await source.close(); // the sample is read by `sample`, the chunks by the Workers
  const types = { ...options.types };
  // The pool started first: the Workers load while the file is cut.
  let cut: Awaited<ReturnType<typeof csvRowRanges>>;
  try {
    cut = await csvRowRanges(path, chunkRows, { delimiter });
  } catch (err) {
    await pool.shutdown();
    throw err;
  }
  const { dataStart } = cut.header;
  const { schema } = source;
  // Read when the freeze asks, after it has handed the Workers their first chunks:
  // ~10-15 ms of this thread's CPU off their path (see OpenedChunks.sample).
  let sampled: Promise<Batch> | undefined;
  const predictorSample: PredictorSample = {
    path,
    schema,
    delimiter,
    types,
    dataStart,
    bytes,
    rows: Math.min(chunkRows, options.planRows ?? chunkRows),
  };
  const sample = () =>
    sampled ??= readFirstCsvChunk(path, schema, dataStart, bytes, predictorSample.rows, {
      delimiter,
      types,
    }).then((batch) => batch ?? { schema, columns: [], length: 0 });
  // End offset of each chunk handed out, for the share of the file written.
  const ends: number[] = [];
  let totalRows: number | undefined;
  async function* chunks(): AsyncGenerator<ChunkUnit> {
    let firstRow = 0;
    for await (const range of cut.ranges) {
      ends.push(range.end);
      yield {
        csv: {
          path,
          range: { start: range.start, end: range.end },
          firstRow,
          rows: range.rows,
          delimiter,
          types,
        },
      };
      firstRow += range.rows;
    }
    totalRows = firstRow;
  }
  return {
    schema: source.schema,
    chunks: chunks(),
    bytes,
    dialect: source.dialect ?? null,
    get totalRows() {
      return totalRows;
    },
    shareOfRows: (rows) => {
      if (rows === 0 || bytes <= dataStart) return rows === 0 ? 0 : 1;
      const end = ends[Math.ceil(rows / chunkRows) - 1];
      return end === undefined ? null : Math.min(1, (end - dataStart) / (bytes - dataStart));
    },
    sample,
    predictorSample,
    pool,
    close: () => pool.shutdown(),
  };
}

async function openParquetChunks(
  path: string,
  options: FreezeOptions & { chunkRows: number; threads: number },
): Promise<OpenedChunks> {
  const file: ParquetFile = {
    path,
    types: { ...options.types },
    batchRows: freezeBatchRows(options.chunkRows),
  };
  // Started first, so the Workers load and open the file while this thread reads
  // and plans the first chunk.
  const pool = freezePool(options.threads);
  for (let i = 0; i < pool.threads; i++) {
    const task: ParquetOpenTask = { kind: "parquet-open", file };
    pool.run(task).catch(() => {}); // a failure shows again on the first chunk
  }
  let windows: ChunkWindow[];
  let first: Batch | undefined;
  let ranges: ParquetRanges | undefined;
  try {
    // Loaded here, not with this module: only a Parquet source needs DuckDB's reader.
    const { openParquetRanges } = await import("../io/parquet.ts");
    ranges = await openParquetRanges(path, { types: file.types, batchRows: file.batchRows });
    windows = chunkWindows((await ranges.rowGroups()).rows, options.chunkRows, file.batchRows);
    if (windows.length > 0) first = await readChunk(ranges, windows[0]!, path);
  } catch (err) {
    await pool.shutdown();
    throw err;
  } finally {
    ranges?.close();
  }
  async function* chunks(): AsyncGenerator<ChunkUnit> {
    if (first) yield { batch: first };
    for (const window of windows.slice(1)) yield { window, file };
  }
  return {
    schema: ranges.schema,
    chunks: chunks(),
    bytes: ranges.bytes,
    totalRows: windows.reduce((n, w) => n + (w.end - w.start), 0),
    pool,
    close: () => pool.shutdown(),
  };
}
