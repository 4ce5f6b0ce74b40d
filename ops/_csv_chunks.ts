/**
 * The pool jobs of a local freeze that parses a CSV file where it encodes it
 * (`_freeze_worker.ts`): the file is cut into byte ranges of one chunk's rows each
 * (`csvRowBoundaries`, the cut the cluster's tasks use), and each Worker parses its
 * range with the schema and dialect this thread settled, so parsing uses every core.
 * The chunks, and so the archive, are the ones a read on this thread makes.
 *
 * @module
 */
import type { Batch, Schema } from "../format/column.ts";
import { concatBatches } from "../format/column.ts";
import type { ChunkEncryption } from "../format/crypto.ts";
import type { BlockPlan } from "../format/block_encode.ts";
import { planPredictors } from "../format/plan.ts";
import { csvRowBoundaries, readCsvRange } from "../io/csv.ts";
import { IoError } from "../io/errors.ts";
import { forgetLastDate } from "../io/_parse.ts";
import { readFailed } from "../io/_file.ts";
import type { ForcedType } from "../io/types.ts";

/** One chunk of a CSV file: its byte range and where it sits. */
export interface CsvChunk {
  /** The file. */
  path: string;
  /** Bytes `[start, end)` holding the chunk's rows. */
  range: { start: number; end: number };
  /** Data rows before the chunk. */
  firstRow: number;
  /** Data rows in the chunk. */
  rows: number;
  /** The delimiter the freeze read the file with. */
  delimiter: string;
  /** Forced column types, as the freeze opened the file. */
  types: Record<string, ForcedType>;
}

/** A pool job: parse one chunk of a CSV file, then encode it (see `_freeze_worker.ts`). */
export interface CsvChunkTask {
  /** Tells this job from others. */
  kind: "csv-chunk";
  /** The chunk. */
  chunk: CsvChunk;
  /** The schema the freeze planned. */
  schema: Schema;
  /**
   * Per-column plans by name (with a fixed predictor under `max_speed`) and the codec
   * id; absent in a chunk handed out while the freeze still plans: the Worker parses
   * its rows, then waits for the {@link CsvPlansNotice}.
   */
  encoding?: ChunkEncoding;
  /** Block encryption, with the chunk's first row. */
  encryption?: ChunkEncryption;
}

/** How a freeze's chunks are encoded. */
export interface ChunkEncoding {
  /** Per-column plans by name. */
  plans: Record<string, BlockPlan>;
  /** Codec id. */
  codec: string;
}

/** Where a CSV file's first rows are, the sample a `max_speed` freeze plans on. */
export interface PredictorSample {
  /** The file. */
  path: string;
  /** The file's schema. */
  schema: Schema;
  /** The delimiter the freeze read the file with. */
  delimiter: string;
  /** Forced column types, as the freeze opened the file. */
  types: Record<string, ForcedType>;
  /** Byte offset of the file's first data row. */
  dataStart: number;
  /** The file's size. */
  bytes: number;
  /** Rows to read from there (fewer when the file has fewer). */
  rows: number;
}

/**
 * A pool job: read the rows a `max_speed` freeze fixes each column's predictor on (the
 * file's first rows, as `readFirstCsvChunk` reads them on the freeze's thread) and fix
 * them (`planPredictors`). Its header needs no rows (no conditioning: every column zstd
 * level 3), so it is written before any is read, and one Worker makes the plan while
 * the others parse their first chunks, rather than the freeze's thread, which would
 * parse the rows and run the trials cold for nothing else (~60-80 ms of its CPU while
 * the Workers waited). The plan is the one that thread would make: the same rows, the
 * same trials.
 */
export interface CsvPredictorsTask extends PredictorSample {
  /** Tells this job from others. */
  kind: "csv-predictors";
  /** The header's plans (without predictors) and codec. */
  encoding: ChunkEncoding;
}

/**
 * A notice to every Worker of a freeze's pool (`BlockPool.notify`): the encoding of the
 * chunks handed out before it was known, or that there is none (the plan failed: those
 * chunks are dropped).
 */
export interface CsvPlansNotice {
  /** Tells this notice from others. */
  kind: "csv-plans";
  /** The encoding; null when the freeze failed before it had one. */
  encoding: ChunkEncoding | null;
}

/**
 * A pool job: cut the file into byte ranges of `everyRows` rows (`csvRowBoundaries`),
 * run by a Worker while this thread reads and plans the first chunk.
 */
export interface CsvCutTask {
  /** Tells this job from others. */
  kind: "csv-cut";
  /** The file. */
  path: string;
  /** Rows per range: the chunk size. */
  everyRows: number;
  /** The delimiter the freeze reads the file with. */
  delimiter: string;
}

/** What a {@link CsvCutTask} finds. */
export interface CsvCut {
  /** `[dataStart, …, bytes]`, as `csvRowBoundaries` gives them. */
  offsets: Float64Array;
  /** Data rows in the file. */
  rows: number;
}

/**
 * Runs a {@link CsvCutTask}.
 *
 * @param task The file and chunk size.
 * @returns The cut, its offsets in a buffer to move back rather than copy.
 */
export async function cutCsv(
  task: CsvCutTask,
): Promise<{ value: CsvCut; transfer: ArrayBuffer[] }> {
  const cut = await csvRowBoundaries(task.path, task.everyRows, { delimiter: task.delimiter });
  const offsets = Float64Array.from(cut.offsets);
  return { value: { offsets, rows: cut.rows }, transfer: [offsets.buffer] };
}

/** Largest chunk {@link readCsvChunk} reads in one piece (a larger one streams). */
const WHOLE_READ_BYTES = 64 << 20;

/**
 * The buffer {@link readWhole} reads into, kept from chunk to chunk (a Worker parses one
 * chunk at a time, and its rows never point into the bytes: they are decoded to text
 * first): a fresh one per chunk costs its allocation, zeroing and page faults, and the
 * garbage collections its external memory brings on.
 */
let scratch = new Uint8Array(0);

/** Fills `buf` from byte `start` of an open file; fewer bytes when it ends sooner. */
async function readAt(file: Deno.FsFile, start: number, buf: Uint8Array): Promise<number> {
  let filled = 0;
  await file.seek(start, Deno.SeekMode.Start);
  while (filled < buf.length) {
    const n = await file.read(buf.subarray(filled));
    if (n === null) break;
    filled += n;
  }
  return filled;
}

/** Bytes `[start, end)` of an open file (fewer when it ends sooner), in {@link scratch}. */
async function readWhole(
  file: Deno.FsFile,
  path: string,
  start: number,
  end: number,
): Promise<Uint8Array> {
  if (scratch.length < end - start) scratch = new Uint8Array(end - start + (end - start >> 3));
  const buf = scratch.subarray(0, end - start);
  let filled: number;
  try {
    filled = await readAt(file, start, buf);
  } catch (cause) {
    throw readFailed(path, cause);
  }
  return filled === buf.length ? buf : buf.subarray(0, filled);
}

/**
 * Parses the first `rows` data rows of a CSV file, from where its data starts, before
 * the file is cut (so the freeze plans while a Worker cuts it, see {@link CsvCutTask}).
 *
 * @param path The file.
 * @param schema Its schema.
 * @param dataStart Byte offset of its first data row.
 * @param bytes Its size.
 * @param rows Rows to read: the chunk size.
 * @param options The delimiter and forced types, as the freeze opened the file; `file`,
 * the file already open (left open), else it is opened and closed here.
 * @returns The rows (fewer when the file has fewer), as one batch; null for none.
 * @throws {IoError} PARSE_FAILED or SCHEMA_MISMATCH naming the data row, as a whole-file read does.
 */
export async function readFirstCsvChunk(
  path: string,
  schema: Schema,
  dataStart: number,
  bytes: number,
  rows: number,
  options: { delimiter: string; types: Record<string, ForcedType>; file?: Deno.FsFile },
): Promise<Batch | null> {
  const batches = readCsvRange(path, schema, { start: dataStart, end: bytes }, {
    delimiter: options.delimiter,
    batchRows: rows,
    origin: { firstRow: 0, types: options.types },
    ...(options.file ? { file: options.file } : {}),
  });
  for await (const batch of batches) return batch; // leaving the loop closes the file
  return null;
}

/**
 * Parses one chunk's rows, as one batch.
 *
 * @param chunk The chunk.
 * @param schema The file's schema.
 * @param file The file, already open (a Worker keeps it open from chunk to chunk);
 * else it is opened and closed here.
 * @returns Its rows.
 * @throws {IoError} PARSE_FAILED or SCHEMA_MISMATCH naming the data row as a whole-file
 * read does; READ_FAILED when the range no longer holds the rows it held when the
 * file was cut (the file changed while it was frozen).
 */
export async function readCsvChunk(
  chunk: CsvChunk,
  schema: Schema,
  file?: Deno.FsFile,
): Promise<Batch> {
  const parts: Batch[] = [];
  const { start, end } = chunk.range;
  // A chunk of a few MB is read whole, in one read, and decoded once.
  const bytes = file && end - start <= WHOLE_READ_BYTES
    ? await readWhole(file, chunk.path, start, end)
    : undefined;
  const rows = readCsvRange(chunk.path, schema, chunk.range, {
    delimiter: chunk.delimiter,
    batchRows: Math.max(1, chunk.rows),
    origin: { firstRow: chunk.firstRow, types: chunk.types },
    ...(bytes ? { bytes } : file ? { file } : {}),
  });
  for await (const batch of rows) parts.push(batch);
  const batch = parts.length === 1 ? parts[0]! : concatBatches(schema, parts);
  if (batch.length !== chunk.rows) {
    throw new IoError(
      "READ_FAILED",
      `Cannot read '${chunk.path}': bytes ${chunk.range.start}..${chunk.range.end} held ${chunk.rows} rows when the file was cut into chunks and hold ${batch.length} now; was it changed while it was frozen?`,
      { path: chunk.path },
    );
  }
  return batch;
}

/**
 * Runs a {@link CsvPredictorsTask}.
 *
 * @param task The rows and the header's plans.
 * @param file The file, open (left open).
 * @returns The plans, each with the predictor its column's trial picked.
 * @throws {IoError} PARSE_FAILED or SCHEMA_MISMATCH naming the data row, as a whole-file read does.
 */
export async function fixPredictors(
  task: CsvPredictorsTask,
  file: Deno.FsFile,
): Promise<{ value: Record<string, BlockPlan>; transfer: ArrayBuffer[] }> {
  const { schema, encoding } = task;
  const head = await sampleFromHead(task, file);
  const rows = head !== undefined ? head : await readFirstCsvChunk(
    task.path,
    schema,
    task.dataStart,
    task.bytes,
    task.rows,
    { delimiter: task.delimiter, types: task.types, file },
  );
  const sample = rows ?? { schema, columns: [], length: 0 };
  return { value: planPredictors(sample, encoding.plans, encoding.codec), transfer: [] };
}

/** Bytes of a file's data {@link sampleFromHead} reads: a sample's rows, for most files. */
const SAMPLE_HEAD_BYTES = 1 << 20;

/**
 * A {@link PredictorSample}'s rows read from the file's first bytes, read whole (as a
 * chunk is: the rows read as bytes, in the parse the Worker's chunks take, rather than
 * in one of its own, the text's, on a cold path); undefined when those bytes hold fewer
 * complete rows than the sample, or fail to parse, short of the file's end: the caller
 * then reads the rows as text, which finds their end (or the error) wherever it is.
 */
async function sampleFromHead(
  task: PredictorSample,
  file: Deno.FsFile,
): Promise<Batch | null | undefined> {
  const head = new Uint8Array(
    Math.max(0, Math.min(SAMPLE_HEAD_BYTES, task.bytes - task.dataStart)),
  );
  let filled: number;
  try {
    filled = await readAt(file, task.dataStart, head);
  } catch {
    return undefined; // the read as text reports it
  }
  // The bytes reach the file's end: the rows they hold are the file's. Else they end
  // at their last LF, and hold whole records, or a quoted field that does not end
  // (whose error sends the caller to the text).
  const whole = task.dataStart + filled >= task.bytes;
  if (!whole) filled = head.lastIndexOf(10, filled - 1) + 1;
  if (filled === 0 && !whole) return undefined;
  const batches = readCsvRange(task.path, task.schema, {
    start: task.dataStart,
    end: task.dataStart + filled,
  }, {
    delimiter: task.delimiter,
    batchRows: task.rows,
    origin: { firstRow: 0, types: task.types },
    bytes: head.subarray(0, filled),
  });
  try {
    for await (const batch of batches) {
      return batch.length === task.rows || whole ? batch : undefined;
    }
  } catch (err) {
    if (whole) throw err;
    return undefined;
  }
  return whole ? null : undefined;
}

/**
 * Rows of a Worker's first chunk it parses and encodes on their own, then throws away,
 * {@link WARM_UP_ROUNDS} times, before it reads the whole chunk: see
 * {@link warmUpCsvChunk}.
 */
export const WARM_UP_ROWS = 64;

/** Times a Worker parses and encodes its {@link WARM_UP_ROWS} rows. */
export const WARM_UP_ROUNDS = 10;

/** Bytes read from a chunk's start to find its first {@link WARM_UP_ROWS} rows. */
const WARM_UP_BYTES = 64 << 10;

/**
 * Parses a chunk's first `rows` lines `rounds` times, as a warm-up: a fresh Worker's
 * code has no type feedback yet, and V8 gives a function a place to keep it only after
 * a few calls (lazy feedback allocation). The functions called once or twice a chunk
 * (per column, per batch) then run their first chunks without it, and the optimized
 * code of their hot loops stops at the first line after a loop that had none, to be
 * compiled again: a Worker's first chunks cost several times a warm one. A few rounds
 * on a few rows give every function of the path its feedback at a small cost, before
 * the whole chunk is read. The rows are returned for {@link warmUpEncoding}; nothing
 * read here reaches the archive.
 *
 * @param chunk The chunk.
 * @param schema The file's schema.
 * @param file The file, open.
 * @param rows Lines to parse (rows unless a quoted field holds a line end).
 * @param rounds Times to parse them.
 * @returns The rows parsed; null when the chunk's start holds fewer lines, or they do
 * not parse on their own (the chunk's own read then reports any error).
 */
export async function warmUpCsvChunk(
  chunk: CsvChunk,
  schema: Schema,
  file: Deno.FsFile,
  rows: number = WARM_UP_ROWS,
  rounds: number = WARM_UP_ROUNDS,
): Promise<Batch | null> {
  const { start, end } = chunk.range;
  const head = new Uint8Array(Math.min(WARM_UP_BYTES, end - start));
  let filled: number;
  try {
    filled = await readAt(file, start, head);
  } catch {
    return null; // the chunk's own read reports it
  }
  let past = 0;
  for (let r = 0; r < rows; r++) {
    const lf = head.indexOf(10, past);
    if (lf < 0 || lf >= filled) return null;
    past = lf + 1;
  }
  const bytes = head.subarray(0, past);
  let batch: Batch | null = null;
  try {
    for (let round = 0; round < rounds; round++) {
      forgetLastDate(); // each round's first timestamp scans its date
      const parts = readCsvRange(chunk.path, schema, { start, end: start + past }, {
        delimiter: chunk.delimiter,
        batchRows: rows,
        origin: { firstRow: chunk.firstRow, types: chunk.types },
        bytes,
      });
      for await (const part of parts) batch = part;
    }
  } catch {
    return null;
  }
  return batch;
}

/**
 * Encodes the rows {@link warmUpCsvChunk} parsed `rounds` times, as a warm-up of the
 * encoding (see there), throwing the blocks away: only on zstd (whose encoder runs in
 * this thread; another codec may start a process per block).
 *
 * @param batch The warm-up rows.
 * @param encoding The chunks' plans and codec.
 * @param encode The chunk encoder.
 * @param rounds Times to encode them.
 */
export async function warmUpEncoding(
  batch: Batch,
  encoding: ChunkEncoding,
  encode: (
    job: { batch: Batch; plans: Record<string, BlockPlan>; codec: string },
  ) => Promise<unknown>,
  rounds: number = WARM_UP_ROUNDS,
): Promise<void> {
  const { plans, codec } = encoding;
  if (Object.values(plans).some((p) => (p.codec ?? codec) !== "zstd")) return;
  try {
    for (let round = 0; round < rounds; round++) await encode({ batch, plans, codec });
  } catch {
    // the chunk's own encoding reports any error
  }
}
