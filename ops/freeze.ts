/**
 * `freeze`: a source (a file, an Arrow table, or batches) → an archive on disk.
 *
 * Streams: the source is read in batches, cut into chunks of `chunk_rows`,
 * each chunk's column blocks are encoded in the Worker pool with a bounded
 * number of chunks in flight, and chunks are written in row order. Memory stays
 * bounded by the pool's capacity (threads × 3 chunks) whatever the source size.
 * A Parquet file frozen with Worker threads and no primary key is not decoded here:
 * this thread lays it out into chunk windows from its row count, reads and plans the
 * first chunk, and each Worker reads its own chunks' rows and encodes them
 * (`_parquet_chunks.ts`, `_freeze_worker.ts`), so decoding uses every core too; the
 * bytes are the streaming freeze's.
 *
 * `ops/` is the layer the map leaves implicit: the operations users call, which
 * join `io/` (sources, outputs) and `format/` (archives). `mod.ts` re-exports it.
 *
 * @module
 */
import { basename, join } from "node:path";
import { checkNoObject, fromSource, isRemote, uploadSink } from "./_remote.ts";
import type * as arrow from "apache-arrow";
import { CODEC_CHOICES } from "../codecs/registry.ts";
import { encodeChunk } from "../format/chunk.ts";
import type { Batch, Schema } from "../format/column.ts";
import { DEFAULT_CHUNK_ROWS, MAX_CHUNK_ROWS } from "../format/constants.ts";
import type { ColumnPlan } from "../format/header.ts";
import type { BlockPlan } from "../format/block_encode.ts";
import { planColumns, planPredictors, QUICK_SAMPLE_ROWS } from "../format/plan.ts";
import type { FormatWarning, Quantization } from "../format/predictors/predictor.ts";
import { QUANTIZATIONS } from "../format/predictors/predictor.ts";
import { ArchiveWriter, type ByteSink } from "../format/writer.ts";
import { type ChunkEncryption, headerBinding, withEncryption } from "../format/crypto.ts";
import { type EncryptionOptions, prepareEncryption } from "../format/key_provider.ts";
import { IoError } from "../io/errors.ts";
import { fallbackType, sourceFormatOf } from "../io/source.ts";
import type { CsvDialect } from "../io/csv_dialect.ts";
import type { ForcedType, SourceFormat } from "../io/types.ts";
import { codecById } from "../codecs/registry.ts";
import { type CodecChoiceName, OpsError } from "./errors.ts";
import { PrimaryKeyCheck } from "./primary_key.ts";
import type { ParquetChunkTask, ParquetFile } from "./_parquet_chunks.ts";
import type { CsvChunk, CsvChunkTask, CsvPlansNotice, CsvPredictorsTask } from "./_csv_chunks.ts";
import type { ChunkWindow } from "../io/chunk_window.ts";
import {
  chooseArchiveCodec,
  chooseColumnCodecs,
  CODEC_PROFILES,
  type CodecProfile,
  type CodecSpec,
  type ColumnCodecChoice,
  type ColumnCodecs,
  newArchiveHeader,
  parseCodecSpec,
} from "../format/new_archive.ts";
import { checkThreads } from "./threads.ts";
import { openChunks, shareRead } from "./_freeze_source.ts";
import { readInWorkers } from "./_freeze_pool.ts";

/** Rows `auto` samples to choose a codec. */
export { AUTO_SAMPLE_ROWS } from "../format/new_archive.ts";

/** Progress of a running freeze. */
export interface FreezeProgress {
  /** Rows. */
  rows: number;
  /** Raw (predicted, uncompressed) bytes encoded so far. */
  raw_bytes: number;
  /** Archive bytes written so far. */
  archive_bytes: number;
  /** Input size when known (file sources). */
  input_bytes: number | null;
  /**
   * Share of the source read so far, 0..1: bytes of a CSV or JSON-lines file, rows of
   * a Parquet file; null when the source cannot tell (Arrow tables, batch streams).
   */
  fraction: number | null;
  /** Wall-clock seconds. */
  seconds: number;
}

/**
 * Rows per chunk of a profile, when not given (a freeze without a profile keeps the
 * default). `balanced` and `max_compression` take ten times the default: their
 * adaptive predictors (`keyed_freq`) and codecs learn each chunk from nothing, so on
 * flights-3m 500,000-row chunks are 13% smaller than 50,000-row ones (`balanced`: 6.84
 * MB instead of 7.86 MB, within 3% of `max_compression` for a tenth of its CPU), and a
 * 10-row slice still reads one chunk (a larger one).
 */
export const PROFILE_CHUNK_ROWS: Readonly<Partial<Record<CodecProfile, number>>> = Object.freeze({
  balanced: 500_000,
  max_compression: 500_000,
});

/** Options of `freeze`. */
export interface FreezeOptions {
  /** `zstd` (default), `lzma2`, `zpaq`, or `auto` (samples 1,000 rows). */
  codec?: CodecChoiceName;
  /**
   * How each column's codec is chosen (instead of one `codec`): `max_speed` (zstd
   * level 3, a quick plan that conditions no column), `balanced` (zstd level 19, as
   * without a profile), `auto` (the smaller of zstd and lzma2 per column) or
   * `max_compression` (the smaller of lzma2 and zpaq per column). See
   * `format/new_archive.ts`.
   */
  profile?: CodecProfile;
  /** Codecs of named columns, `codec` or `codec:level` (`{ notes: "lzma2", id: "zstd:3" }`). */
  columnCodecs?: Record<string, string>;
  /** Rows per chunk (default 50,000; 500,000 under the `balanced` and `max_compression` profiles). */
  chunkRows?: number;
  /** Worker threads encoding blocks, and reading a Parquet file's rows (default: one per core; 0 encodes on the calling thread; at most 4 per core). */
  threads?: number;
  /** Float quantization: one level for every float column, or per column. Lossless by default. */
  quantization?: Quantization | Record<string, Quantization>;
  /** Primary-key column: recorded in the header; duplicates and nulls are refused. */
  primaryKey?: string;
  /** Source format, instead of guessing from the extension. */
  format?: SourceFormat;
  /** CSV field delimiter (default: told from the first lines among `,` tab `;` `|`). */
  delimiter?: string;
  /** Forced column types by name (e.g. `json` for a Parquet LIST column). */
  types?: Record<string, ForcedType>;
  /** Free-form metadata stored in the header. */
  metadata?: Record<string, string>;
  /**
   * Try conditioning columns on others (default true; under the `max_speed` profile,
   * false: its quick plan conditions only when this is `true`, see `format/plan.ts`).
   */
  conditioning?: boolean;
  /** Called after each chunk is written. */
  onProgress?: (progress: FreezeProgress) => void;
  /** Called with each predictor warning (e.g. non-monotonic timestamps). */
  onWarning?: (warning: FormatWarning) => void;
  /**
   * Encrypt every block with AES-256-GCM (archive version 1.4): a raw 32-byte `key`,
   * or a key `provider` that wraps a fresh data key per archive (envelope encryption).
   */
  encryption?: EncryptionOptions;
  /**
   * Whether an existing file at the archive path may be replaced (default true; the CLI
   * passes false unless `--force`). When false it is `DESTINATION_EXISTS`, and a file
   * that appears while freezing is never replaced either.
   */
  overwrite?: boolean;
  /**
   * Storage class of an archive written to object storage (S3: `STANDARD`,
   * `STANDARD_IA`, `GLACIER_IR`, `DEEP_ARCHIVE`, …); ignored for a local file.
   */
  storageClass?: string;
}

/** What `freeze` did. */
export interface FreezeSummary {
  /** The file this concerns. */
  path: string;
  /** Rows. */
  rows: number;
  /** Chunks. */
  chunks: number;
  /** Columns. */
  columns: number;
  /** Codec id of every block. */
  codec: string;
  /** Why `auto` chose the codec (null when the codec was given). */
  auto_reason: string | null;
  /** Size of the source file, when the source was a file. */
  input_bytes: number | null;
  /** Size of the archive file in bytes. */
  archive_bytes: number;
  /** input_bytes / archive_bytes, when the input size is known. */
  ratio: number | null;
  /** Wall-clock seconds. */
  seconds: number;
  /** SHA-256 (hex) of the payload. */
  payload_sha256: string;
  /** Columns forced to string because a value beyond the sample did not fit. */
  widened_columns: string[];
  /** How a CSV source was read (delimiter, told from the file or given; quoting); else null. */
  csv_dialect: CsvDialect | null;
  /** Warnings issued while encoding. */
  warnings: FormatWarning[];
}

/** What `freeze` accepts as a source. */
export type FreezeSource = string | arrow.Table | {
  schema: Schema;
  batches: AsyncIterable<Batch> | Iterable<Batch>;
};

/**
 * The codec, chunk size and thread count a freeze runs with: the options' or the
 * defaults, checked. Shared by `freeze` and the partitioned freeze.
 *
 * @param options What the caller gave.
 * @returns The settled values.
 * @throws {OpsError} BAD_OPTION naming the bad value.
 */
export function freezeSettings(
  options: Pick<FreezeOptions, "codec" | "chunkRows" | "threads" | "profile" | "columnCodecs">,
): {
  codec: CodecChoiceName;
  chunkRows: number;
  threads: number;
  columns: ColumnCodecChoice | null;
} {
  const codec = options.codec ?? "zstd";
  if (!CODEC_CHOICES.includes(codec)) {
    throw new OpsError("BAD_OPTION", `Unknown codec "${codec}": use ${CODEC_CHOICES.join(", ")}`);
  }
  const chunkRows = options.chunkRows ??
    (options.profile === undefined ? undefined : PROFILE_CHUNK_ROWS[options.profile]) ??
    DEFAULT_CHUNK_ROWS;
  if (!Number.isSafeInteger(chunkRows) || chunkRows < 1 || chunkRows > MAX_CHUNK_ROWS) {
    throw new OpsError(
      "BAD_OPTION",
      `Chunk rows must be an integer 1..${MAX_CHUNK_ROWS}, got ${chunkRows}`,
    );
  }
  return {
    codec,
    chunkRows,
    threads: checkThreads(options.threads),
    columns: columnCodecChoice(options),
  };
}

/** The profile and per-column codecs asked for, checked; null for neither. */
function columnCodecChoice(
  options: Pick<FreezeOptions, "codec" | "profile" | "columnCodecs">,
): ColumnCodecChoice | null {
  const { profile, columnCodecs } = options;
  if (profile === undefined && columnCodecs === undefined) return null;
  if (profile !== undefined && !CODEC_PROFILES.includes(profile)) {
    throw new OpsError(
      "BAD_OPTION",
      `Unknown profile "${profile}": use ${CODEC_PROFILES.join(", ")}`,
    );
  }
  if (profile !== undefined && options.codec !== undefined) {
    throw new OpsError(
      "BAD_OPTION",
      `Give a codec or a profile, not both (codec ${options.codec}, profile ${profile})`,
    );
  }
  const specs: Record<string, CodecSpec> = {};
  for (const [column, text] of Object.entries(columnCodecs ?? {})) {
    try {
      specs[column] = parseCodecSpec(text);
    } catch (err) {
      throw new OpsError(
        "BAD_OPTION",
        `Cannot use codec '${text}' for column '${column}': ${
          err instanceof Error ? err.message : err
        }`,
      );
    }
  }
  return { ...(profile ? { profile } : {}), columnCodecs: specs };
}

/**
 * Freezes a source into an archive.
 *
 * @param source A file path or URI (`.csv`, `.jsonl`, `.parquet`, `.arrow`), an Arrow table, or `{schema, batches}`.
 * @param archive Destination path or URI (`s3://bucket/key`); written to a temp file and
 * renamed (or uploaded) when complete.
 * @param options Codec, chunk size, threads, quantization, primary key, callbacks.
 * @returns A summary (rows, bytes, ratio, seconds, payload hash).
 * @throws {OpsError} BAD_OPTION for bad options; {FormatError}, {IoError}, {CodecError} from the layers below.
 */
export async function freeze(
  source: FreezeSource,
  archive: string,
  options: FreezeOptions = {},
): Promise<FreezeSummary> {
  // Object storage: a source is downloaded and an archive uploaded (see `_remote.ts`).
  if (typeof source === "string" && isRemote(source)) {
    return await fromSource(source, (local) => freeze(local, archive, options));
  }
  if (isRemote(archive)) {
    // The archive goes up while it is written: every byte the writer puts in its local
    // file is also part of a multipart upload, completed once the archive is whole (an
    // attempt that starts over, or fails, aborts its upload).
    await checkNoObject(archive, options.overwrite);
    const dir = await Deno.makeTempDir({ prefix: "permafrost-upload-" });
    try {
      const summary = await freezeWith(
        source,
        join(dir, basename(archive)),
        { ...options, overwrite: true },
        () => uploadSink(archive, options.storageClass),
      );
      return { ...summary, path: archive };
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
  return await freezeWith(source, archive, options, undefined);
}

/** `freeze` to a local path, each attempt's archive also sent to `mirror` when given. */
async function freezeWith(
  source: FreezeSource,
  archive: string,
  options: FreezeOptions,
  mirror: (() => ByteSink) | undefined,
): Promise<FreezeSummary> {
  const { codec: codecName, chunkRows, threads, columns: codecChoice } = freezeSettings(options);
  const types = { ...options.types };
  const widened: string[] = [];
  const fallback = typeof source === "string"
    ? fallbackType(options.format ?? sourceFormatOf(source))
    : "string";
  // A value beyond the type-inference sample that does not fit its column makes
  // the reader throw SCHEMA_MISMATCH naming the column: freeze again with that
  // column read as text or JSON text (the safe fallback), never with a wrong value.
  for (;;) {
    try {
      const summary = await freezeOnce(source, archive, {
        ...options,
        codec: codecName,
        chunkRows,
        threads,
        types,
        mirror,
        codecChoice,
      });
      return { ...summary, widened_columns: widened };
    } catch (err) {
      if (
        typeof source === "string" && err instanceof IoError && err.code === "SCHEMA_MISMATCH" &&
        err.column &&
        types[err.column] !== fallback
      ) {
        types[err.column] = fallback;
        widened.push(err.column);
        continue;
      }
      throw err;
    }
  }
}

async function freezeOnce(
  source: FreezeSource,
  archive: string,
  options: FreezeOptions & {
    codec: CodecChoiceName;
    chunkRows: number;
    threads: number;
    mirror?: () => ByteSink;
    codecChoice: ColumnCodecChoice | null;
  },
): Promise<Omit<FreezeSummary, "widened_columns">> {
  const { codecChoice } = options;
  const started = performance.now();
  // max_speed plans on the first QUICK_SAMPLE_ROWS rows only: a CSV source reads just
  // those before the Workers start on the chunks.
  const quick = codecChoice?.profile === "max_speed";
  // Whether a Worker fixes the predictors (`at` below: a CSV file the Workers parse, no
  // conditioning), and not this thread.
  const workerPlans = quick && options.conditioning !== true &&
    readInWorkers(source, options) === "csv";
  // Called first: it starts the Worker pool before its first wait, so the Workers load
  // while this thread reads the file (and loads node:zlib below).
  const opening = openChunks(source, {
    ...options,
    ...(quick ? { planRows: QUICK_SAMPLE_ROWS } : {}),
  });
  // The quick plan measures zstd's output (`zstdCompressedSize`), which loads node:zlib
  // synchronously: begun now, the load can fill this thread's waits on the file. When a
  // Worker makes the plan, this thread needs zstd only for the footer: node:zlib is
  // loaded once the Workers have their first jobs (`planned`), not on the way to them
  // (~10-15 ms of this thread's CPU before it hands them out).
  if (quick && !workerPlans) loadZlib();
  const opened = await opening;
  const { schema, pool } = opened;
  let writer: ArchiveWriter | undefined;
  let noticeOwed = false;
  try {
    const quantization = quantizationByColumn(schema, options.quantization);
    if (options.primaryKey !== undefined && !schema.some((f) => f.name === options.primaryKey)) {
      throw new OpsError(
        "BAD_OPTION",
        `Primary key "${options.primaryKey}" is not a column: the source has ${
          schema.map((f) => f.name).join(", ")
        }`,
      );
    }
    const warnings: FormatWarning[] = [];
    const warn = (w: FormatWarning) => {
      warnings.push(w);
      options.onWarning?.(w);
    };
    const keys = options.primaryKey === undefined
      ? null
      : new PrimaryKeyCheck(schema, options.primaryKey);
    let plans: Record<string, ColumnPlan> | undefined;
    // What the blocks are encoded with: the header's plans, under `max_speed` each with
    // the predictor its first chunk's trial chose (`planPredictors`).
    let blockPlans: Record<string, BlockPlan> | undefined;
    let codec = options.codec === "auto" ? "zstd" : options.codec;
    let autoReason: string | null = null;
    const inflight: Promise<Awaited<ReturnType<typeof encodeChunk>>>[] = [];
    const window = pool?.capacity ?? 2;
    let raw = 0;
    let rowsSeen = 0;
    let sealing: Omit<ChunkEncryption, "rowStart"> | undefined;
    const progress = () =>
      options.onProgress?.({
        rows: writer?.rows ?? 0,
        raw_bytes: raw,
        archive_bytes: 0,
        input_bytes: opened.bytes,
        fraction: shareRead(opened, writer?.rows ?? 0),
        seconds: (performance.now() - started) / 1000,
      });
    const drainOne = async () => {
      const chunk = await inflight.shift()!;
      raw += chunk.blocks.reduce((n, b) => n + b.raw_length, 0);
      await writer!.writeChunk(chunk);
      progress();
    };
    const start = async (first: Batch) => {
      plans = planColumns(first, {
        quantization,
        conditioning: options.conditioning,
        // max_speed's plan is serial time before any block is encoded: a quick one.
        quick,
      });
      if (options.codec === "auto") {
        const choice = await chooseArchiveCodec(first, plans);
        codec = choice.codec;
        autoReason = choice.reason;
      }
      if (codecChoice) {
        const chosen = await columnCodecsFor(first, plans, codec, codecChoice);
        plans = chosen.plans;
        autoReason = chosen.reason ?? autoReason;
      }
      codecById(codec); // fails early (e.g. zpaq binary) before any work
      const enc = options.encryption ? await prepareEncryption(options.encryption) : null;
      const h = withEncryption(
        newArchiveHeader(schema, codec, autoReason, plans, options),
        enc?.header ?? null,
      );
      // Blocks are encoded as the header says (one codec, or each column's own).
      plans = h.columns;
      codec = h.codec;
      blockPlans = codecChoice?.profile === "max_speed"
        ? planPredictors(first, plans, codec)
        : plans;
      writer = await ArchiveWriter.create(archive, h, {
        replace: options.overwrite ?? true,
        mirror: options.mirror?.(),
        // max_speed's footer is serial time after the last chunk: a quick zstd level.
        quickFooter: codecChoice?.profile === "max_speed",
      });
      if (enc) sealing = { dataKey: enc.dataKey, headerBinding: headerBinding(h) };
    };
    const parquetTask = (
      unit: { window: ChunkWindow; file: ParquetFile },
      encryption: ChunkEncryption | undefined,
    ) => {
      const task: ParquetChunkTask = {
        kind: "parquet-chunk",
        file: unit.file,
        schema,
        window: unit.window,
        plans: blockPlans!,
        codec,
      };
      if (encryption) task.encryption = encryption;
      return task;
    };
    const csvTask = (chunk: CsvChunk, encryption: ChunkEncryption | undefined) => {
      const task: CsvChunkTask = { kind: "csv-chunk", chunk, schema };
      // Not while the first chunks are handed out before the plan (`early` below).
      if (blockPlans && early === 0) task.encoding = { plans: blockPlans, codec };
      if (encryption) task.encryption = encryption;
      return task;
    };
    // max_speed on a CSV file, unconditioned: the header needs no rows (every column
    // zstd level 3, no dependencies), so it is made first, and the last Worker fixes the
    // predictors on the file's first rows (`CsvPredictorsTask`) while the others parse
    // their first chunks: this thread neither parses nor runs the trials (cold code it
    // runs for nothing else).
    const at = quick && options.conditioning !== true && pool ? opened.predictorSample : undefined;
    let fixing: Promise<Record<string, BlockPlan>> | undefined;
    if (at) {
      await start({ schema, columns: [], length: 0 });
      const task: CsvPredictorsTask = {
        kind: "csv-predictors",
        ...at,
        encoding: { plans: blockPlans!, codec },
      };
      fixing = pool!.run<Record<string, BlockPlan>>(task, [], pool!.threads - 1);
      fixing.catch(() => {}); // awaited by `planned` below; this only marks it handled
    }
    // Planned on a sample (max_speed): each Worker is handed its first chunk (but the
    // one fixing the predictors) before the sample is read and the plan made, and
    // parses it (cold, its slowest) meanwhile; the encoding follows as a notice
    // (`CsvPlansNotice`). Without `fixing`, this thread plans, not with encryption.
    let early = !opened.sample || !pool
      ? 0
      : fixing
      ? Math.max(1, pool.threads - 1)
      : options.encryption
      ? 0
      : pool.threads;
    // Whether chunks handed out may still wait for the notice (told null on failure).
    noticeOwed = early > 0;
    const planned = async (sample: () => Promise<Batch>) => {
      early = 0;
      if (workerPlans) loadZlib(); // for the footer, while the plan is made
      if (fixing) blockPlans = await fixing;
      else await start(await sample());
      noticeOwed = false;
      const encoding = { plans: blockPlans!, codec };
      pool!.notify({ kind: "csv-plans", encoding } satisfies CsvPlansNotice);
    };
    if (opened.sample && early === 0) await start(await opened.sample());
    for await (const unit of opened.chunks) {
      if (early > 0 && !("csv" in unit)) await planned(opened.sample!);
      if ("batch" in unit) {
        if (!writer) await start(unit.batch);
        keys?.add(unit.batch, rowsSeen);
      }
      const rows = "batch" in unit
        ? unit.batch.length
        : "csv" in unit
        ? unit.csv.rows
        : unit.window.rows;
      const encryption = sealing && { ...sealing, rowStart: rowsSeen };
      rowsSeen += rows;
      const pending = "batch" in unit
        ? encodeChunk(unit.batch, { plans: blockPlans!, codec, encoder: pool, warn, encryption })
        : pool!.run("csv" in unit ? csvTask(unit.csv, encryption) : parquetTask(unit, encryption))
          .then(({ chunk, warnings }) => {
            for (const w of warnings) warn(w);
            return chunk;
          });
      pending.catch(() => {}); // awaited in order below; this only marks it handled
      inflight.push(pending);
      if (early > 0 && --early === 0) await planned(opened.sample!);
      if (inflight.length >= window) await drainOne();
    }
    if (early > 0) await planned(opened.sample!); // fewer chunks than Workers
    if (!writer) await start({ schema, columns: [], length: 0 });
    while (inflight.length > 0) await drainOne();
    // Every chunk is in: the Workers stop (close their files, exit) while this thread
    // writes and syncs the footer, rather than after it (`opened.close()` below then
    // finds the pool stopped).
    const stopping = pool?.shutdown();
    let written: Awaited<ReturnType<ArchiveWriter["finish"]>>;
    try {
      written = await writer!.finish();
    } finally {
      await stopping;
    }
    const seconds = (performance.now() - started) / 1000;
    return {
      path: archive,
      rows: written.rows,
      chunks: written.chunks,
      columns: schema.length,
      codec,
      auto_reason: autoReason,
      input_bytes: opened.bytes,
      archive_bytes: written.bytes,
      ratio: opened.bytes === null ? null : opened.bytes / written.bytes,
      seconds,
      payload_sha256: written.payload_sha256,
      csv_dialect: opened.dialect ?? null,
      warnings,
    };
  } catch (err) {
    // Chunks handed out before the plan would wait for it, and the pool's shutdown with them.
    if (noticeOwed) pool?.notify({ kind: "csv-plans", encoding: null } satisfies CsvPlansNotice);
    await writer?.abort();
    throw err;
  } finally {
    await opened.close();
  }
}

/** Starts loading node:zlib (zstd), whose first use would otherwise load it synchronously. */
function loadZlib(): void {
  import("node:zlib").catch(() => {}); // a failure shows again where zstd loads it
}

function quantizationByColumn(
  schema: Schema,
  q: FreezeOptions["quantization"],
): Record<string, Quantization> {
  const out: Record<string, Quantization> = {};
  if (q === undefined) return out;
  if (typeof q === "string") {
    if (!QUANTIZATIONS.includes(q)) {
      throw new OpsError(
        "BAD_OPTION",
        `Unknown quantization "${q}": use ${QUANTIZATIONS.join(", ")}`,
      );
    }
    for (const f of schema) if (f.type === "float64") out[f.name] = q;
    return out;
  }
  for (const [name, level] of Object.entries(q)) {
    const field = schema.find((f) => f.name === name);
    if (!field) throw new OpsError("BAD_OPTION", `Cannot quantize "${name}": no such column`);
    if (field.type !== "float64" && level !== "QUANT_NONE") {
      throw new OpsError(
        "BAD_OPTION",
        `Cannot quantize "${name}": it is ${field.type}, only float64 columns quantize`,
      );
    }
    if (!QUANTIZATIONS.includes(level)) {
      throw new OpsError(
        "BAD_OPTION",
        `Unknown quantization "${level}": use ${QUANTIZATIONS.join(", ")}`,
      );
    }
    out[name] = level;
  }
  return out;
}

/**
 * Each column's codec from the profile and per-column choices (`new_archive.ts`), a
 * column that is not there being BAD_OPTION.
 *
 * @param first The first chunk.
 * @param plans Its prediction plans.
 * @param codec The archive's codec.
 * @param choice Profile and per-column codecs.
 * @returns The plans with their codecs, and the archive's reason when a profile chose one codec.
 */
export async function columnCodecsFor(
  first: Batch,
  plans: Record<string, ColumnPlan>,
  codec: string,
  choice: ColumnCodecChoice,
): Promise<ColumnCodecs> {
  try {
    return await chooseColumnCodecs(first, plans, codec, choice);
  } catch (err) {
    if (err instanceof RangeError) throw new OpsError("BAD_OPTION", err.message);
    throw err;
  }
}
