/**
 * Partitioned datasets: `freezePartitioned(source, dir, {partitionBy})` writes
 * one archive per distinct combination of the partition columns' values, Hive
 * style, plus a small manifest; `readPartitioned` (`partition_read.ts`) reads a
 * directory back, opening only the partitions a `where` can match.
 *
 * Layout:
 * ```
 * <dir>/_manifest.json                       the manifest (written last, atomically)
 * <dir>/country=US/year=2001/part.pf         one archive per partition
 * ```
 * A path segment is `column=value` with the value percent-encoded (only
 * `A-Z a-z 0-9 - _ .` stay as they are; a leading `.` is encoded too); a null is
 * `__null__` and an empty string `__empty__`. The segments are for people and
 * other tools: readers find partitions through the manifest, which holds the
 * real values. Each archive keeps every column, the partition columns included
 * (constant in a chunk, they cost a few bytes), and records its values in the
 * header's `partition`. The manifest also keeps each partition's merged
 * min/max/null statistics of every column, so a `where` on any column can skip
 * whole partitions without opening them.
 *
 * Streaming: rows are routed to per-partition buffers that are cut into chunks
 * of `chunk_rows` and written as they fill, so memory is bounded by
 * (partitions × `chunk_rows`) rows; at most `MAX_PARTITIONS` partitions.
 *
 * Failure leaves nothing: a freeze that fails removes its partitions' temp files and
 * every `col=value` folder it made (and `dir` itself when it made it), so it can be
 * run again. A freeze that was killed leaves no manifest; the next freeze into the
 * same directory removes its stale temp files (`internal/temp_files.ts`) and the
 * `col=value` folders they leave empty, and refuses anything else.
 * Partitions are thawed in manifest order (order of first appearance), each in
 * its own row order. `dir` may be an object-storage prefix (`partition_upload.ts`).
 *
 * @module
 */
import { join } from "node:path";
import { codecById } from "../codecs/registry.ts";
import { encodeChunk } from "../format/chunk.ts";
import type { Batch, Field, Schema } from "../format/column.ts";
import { cellValue, concatBatches, sliceBatch } from "../format/column.ts";
import { valueText } from "../io/cell_text.ts";
import type { ColumnPlan, ColumnStats } from "../format/header.ts";
import { schemaToJson } from "../format/header.ts";
import { planColumns, planPredictors } from "../format/plan.ts";
import type { BlockPlan } from "../format/block_encode.ts";
import { BlockPool } from "../format/pool.ts";
import type { FormatWarning } from "../format/predictors/predictor.ts";
import { mergeStats } from "../format/stats.ts";
import { ArchiveWriter, type EncodedChunk } from "../format/writer.ts";
import { formatDate, formatFloat, TimestampFormatter } from "../io/_format.ts";
import { createTempBeside, removeStaleTemps } from "../internal/temp_files.ts";
import { OpsError } from "./errors.ts";
import {
  columnCodecsFor,
  type FreezeOptions,
  freezeSettings,
  type FreezeSource,
  type FreezeSummary,
} from "./freeze.ts";
import { openFreezeSource } from "./_freeze_source.ts";
import { PrimaryKeyCheck } from "./primary_key.ts";
import { chooseArchiveCodec, newArchiveHeader } from "../format/new_archive.ts";
import { takeRows } from "./_scan.ts";
import { MANIFEST_NAME, type PartitionEntry, type PartitionManifest } from "./partition_read.ts";
import { checkEmptyPrefix, uploadPartitioned } from "./partition_upload.ts";
import { isRemote } from "../storage/uri.ts";

/** Name of each partition's archive inside its folder. */
export const PART_NAME = "part.pf";

/** Most partitions one freeze may write (each holds an open file and a partial chunk). */
export const MAX_PARTITIONS = 1000;

/** Options of `freezePartitioned`: those of `freeze` plus the partition columns. */
export interface FreezePartitionedOptions extends FreezeOptions {
  /** Partition columns, outermost first. */
  partitionBy: string[];
}

/** What `freezePartitioned` did: `freeze`'s summary for the whole dataset, plus the partitions. */
export interface PartitionedSummary extends FreezeSummary {
  /** The manifest's partitions. */
  partitions: PartitionEntry[];
}

interface Part {
  entry: PartitionEntry;
  pending: Batch[];
  pendingRows: number;
  writer?: ArchiveWriter;
  plans?: Record<string, ColumnPlan>;
  /** What its blocks are encoded with: `plans`, under `max_speed` each with a fixed predictor. */
  blockPlans?: Record<string, BlockPlan>;
  codec: string;
  autoReason: string | null;
  stats: ColumnStats[][];
}

/**
 * Freezes a source into one archive per partition under `dir`, plus a manifest.
 *
 * @param source A file path, an Arrow table, or `{schema, batches}`.
 * @param dir Destination directory (created; must be missing or empty), or an
 * object-storage prefix (must hold nothing).
 * @param options `partitionBy` and every `freeze` option.
 * @returns A summary over all partitions, with the manifest's entries.
 * @throws {OpsError} BAD_OPTION for an unknown partition column, a non-empty
 * directory or too many partitions; PRIMARY_KEY as `freeze`.
 *
 * @example Freeze rows into one archive per country
 * ```ts
 * import assert from "node:assert/strict";
 * import { tableFromArrays } from "apache-arrow";
 * import { freezePartitioned } from "./partition.ts";
 * const dir = await Deno.makeTempDir();
 * const table = tableFromArrays({ country: ["US", "FR", "US"], n: Float64Array.of(1, 2, 3) });
 * const s = await freezePartitioned(table, `${dir}/out`, { partitionBy: ["country"], threads: 0 });
 * assert.deepEqual(s.partitions.map((p) => [p.path, p.rows]), [["country=US/part.pf", 2], ["country=FR/part.pf", 1]]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function freezePartitioned(
  source: FreezeSource,
  dir: string,
  options: FreezePartitionedOptions,
): Promise<PartitionedSummary> {
  if (isRemote(dir)) {
    await checkEmptyPrefix(dir);
    const local = await Deno.makeTempDir({ prefix: "permafrost-partitions-" });
    try {
      const summary = await freezePartitioned(source, join(local, "dataset"), options);
      await uploadPartitioned(
        join(local, "dataset"),
        dir,
        summary.partitions,
        options.storageClass,
      );
      return { ...summary, path: dir };
    } finally {
      await Deno.remove(local, { recursive: true }).catch(() => {});
    }
  }
  const started = performance.now();
  const by = options.partitionBy;
  if (!Array.isArray(by) || by.length === 0 || by.some((c) => typeof c !== "string" || c === "")) {
    throw new OpsError(
      "BAD_OPTION",
      "Partition by needs at least one column name, e.g. country,year",
    );
  }
  if (new Set(by).size !== by.length) {
    throw new OpsError("BAD_OPTION", `Partition columns repeat: ${by.join(", ")}`);
  }
  const { codec: codecName, chunkRows, threads, columns: codecChoice } = freezeSettings(options);
  if (options.encryption !== undefined) {
    // Never write plain partitions when encryption was asked for.
    throw new OpsError(
      "BAD_OPTION",
      "Cannot encrypt a partitioned freeze yet: freeze each partition separately, or drop the partitioning",
    );
  }
  const opened = await openFreezeSource(source, { ...options, chunkRows });
  const { schema } = opened;
  let keyIdx: number[];
  let madeDir: boolean;
  try {
    keyIdx = by.map((name) => {
      const i = schema.findIndex((f) => f.name === name);
      if (i < 0) {
        throw new OpsError(
          "BAD_OPTION",
          `Cannot partition by "${name}": the source has ${schema.map((f) => f.name).join(", ")}`,
        );
      }
      return i;
    });
    if (options.primaryKey !== undefined && !schema.some((f) => f.name === options.primaryKey)) {
      throw new OpsError("BAD_OPTION", `Primary key "${options.primaryKey}" is not a column`);
    }
    madeDir = await prepareDir(dir);
  } catch (err) {
    await opened.close();
    throw err;
  }
  // The `col=value` folders this freeze made directly under `dir`, removed on failure.
  const made = new Set<string>();
  const clearUp = async () => {
    for (const d of made) await Deno.remove(d, { recursive: true }).catch(() => {});
    if (madeDir) await Deno.remove(dir).catch(() => {});
  };
  const pool = threads > 0 ? new BlockPool(threads) : undefined;
  const window = pool?.capacity ?? 2;
  const quick = codecChoice?.profile === "max_speed";
  const keys = options.primaryKey === undefined
    ? null
    : new PrimaryKeyCheck(schema, options.primaryKey);
  const warnings: FormatWarning[] = [];
  const warn = (w: FormatWarning) => {
    warnings.push(w);
    options.onWarning?.(w);
  };
  const parts = new Map<string, Part>();
  const order: Part[] = [];
  const inflight: { part: Part; chunk: Promise<EncodedChunk> }[] = [];
  const formatters = by.map((_, k) => valueFormatter(schema[keyIdx[k]!]!));
  let rowsSeen = 0;
  let raw = 0;

  const drainOne = async () => {
    const { part, chunk } = inflight.shift()!;
    const done = await chunk;
    raw += done.blocks.reduce((n, b) => n + b.raw_length, 0);
    part.stats.push(done.stats);
    await part.writer!.writeChunk(done);
    options.onProgress?.({
      rows: rowsSeen,
      raw_bytes: raw,
      archive_bytes: 0,
      input_bytes: opened.bytes,
      fraction: opened.position && opened.bytes
        ? Math.min(1, opened.position() / opened.bytes)
        : null,
      seconds: (performance.now() - started) / 1000,
    });
  };
  const emit = async (part: Part, batch: Batch) => {
    if (!part.writer) {
      part.plans = planColumns(batch, {
        quantization: quantizationOf(schema, options.quantization),
        conditioning: options.conditioning,
        // As `freeze` plans under max_speed: a quick plan, each predictor fixed below.
        quick,
      });
      if (codecName === "auto") {
        const choice = await chooseArchiveCodec(batch, part.plans);
        part.codec = choice.codec;
        part.autoReason = choice.reason;
      }
      if (codecChoice) {
        const chosen = await columnCodecsFor(batch, part.plans, part.codec, codecChoice);
        part.plans = chosen.plans;
        part.autoReason = chosen.reason ?? part.autoReason;
      }
      codecById(part.codec);
      const segments = part.entry.path.split("/").slice(0, -1);
      made.add(join(dir, segments[0]!));
      await Deno.mkdir(join(dir, ...segments), { recursive: true });
      const h = newArchiveHeader(schema, part.codec, part.autoReason, part.plans, {
        chunkRows,
        primaryKey: options.primaryKey,
        metadata: options.metadata,
      });
      h.partition = Object.fromEntries(
        Object.entries(part.entry.values).map(([k, v]) => [k, v ?? "__null__"]),
      );
      part.plans = h.columns;
      part.codec = h.codec;
      part.blockPlans = quick ? planPredictors(batch, part.plans, part.codec) : part.plans;
      part.writer = await ArchiveWriter.create(join(dir, part.entry.path), h);
    }
    const pending = encodeChunk(batch, {
      plans: part.blockPlans!,
      codec: part.codec,
      encoder: pool,
      warn,
    });
    pending.catch(() => {});
    inflight.push({ part, chunk: pending });
    if (inflight.length >= window) await drainOne();
  };
  const flush = async (part: Part, final: boolean) => {
    while (part.pendingRows >= chunkRows || (final && part.pendingRows > 0)) {
      const all = concatBatches(schema, part.pending);
      const take = Math.min(chunkRows, all.length);
      const rest = sliceBatch(all, take, all.length);
      part.pending = rest.length > 0 ? [rest] : [];
      part.pendingRows = rest.length;
      await emit(part, sliceBatch(all, 0, take));
    }
  };

  try {
    for await (const batch of opened.batches) {
      keys?.add(batch, rowsSeen);
      rowsSeen += batch.length;
      const groups = new Map<string, number[]>();
      const keyCols = keyIdx.map((i) => batch.columns[i]!);
      for (let r = 0; r < batch.length; r++) {
        let key = "";
        for (let k = 0; k < keyCols.length; k++) {
          const v = cellValue(keyCols[k]!, r);
          key += (v === null ? "\u0000" : typeof v + ":" + String(v)) + "\u0001";
        }
        let list = groups.get(key);
        if (!list) groups.set(key, list = []);
        list.push(r);
      }
      for (const [key, rows] of groups) {
        let part = parts.get(key);
        if (!part) {
          if (parts.size >= MAX_PARTITIONS) {
            throw new OpsError(
              "BAD_OPTION",
              `Cannot partition by ${
                by.join(", ")
              }: more than ${MAX_PARTITIONS} distinct values; partition by coarser columns`,
            );
          }
          const r0 = rows[0]!;
          const values: Record<string, string | null> = {};
          const segments = by.map((name, k) => {
            const v = cellValue(keyCols[k]!, r0);
            const text = v === null ? null : formatters[k]!(v);
            values[name] = text;
            return `${name}=${pathSegment(text)}`;
          });
          part = {
            entry: {
              values,
              path: [...segments, PART_NAME].join("/"),
              rows: 0,
              chunks: 0,
              archive_bytes: 0,
              payload_sha256: "",
              stats: {},
            },
            pending: [],
            pendingRows: 0,
            codec: codecName === "auto" ? "zstd" : codecName,
            autoReason: null,
            stats: [],
          };
          parts.set(key, part);
          order.push(part);
        }
        const sub = takeRows(batch, Uint32Array.from(rows));
        part.pending.push(sub);
        part.pendingRows += sub.length;
        part.entry.rows += sub.length;
        await flush(part, false);
      }
    }
    for (const part of order) await flush(part, true);
    while (inflight.length > 0) await drainOne();
    let bytes = 0;
    let chunks = 0;
    for (const part of order) {
      const written = await part.writer!.finish();
      part.entry.chunks = written.chunks;
      part.entry.archive_bytes = written.bytes;
      part.entry.payload_sha256 = written.payload_sha256;
      part.entry.stats = Object.fromEntries(
        schema.map((f, i) => [f.name, mergeStats(f.type, part.stats.map((s) => s[i]!))]),
      );
      bytes += written.bytes;
      chunks += written.chunks;
    }
    const manifest: PartitionManifest = {
      format: "permafrost-partitioned",
      version: 1,
      partition_by: by,
      schema: schemaToJson(schema),
      rows: rowsSeen,
      partitions: order.map((p) => p.entry),
    };
    const manifestPath = join(dir, MANIFEST_NAME);
    const temp = await createTempBeside(manifestPath);
    try {
      try {
        await temp.file.write(new TextEncoder().encode(JSON.stringify(manifest, null, 1) + "\n"));
        await temp.file.sync();
      } finally {
        temp.file.close();
      }
      await Deno.rename(temp.path, manifestPath);
    } catch (err) {
      await Deno.remove(temp.path).catch(() => {});
      throw err;
    }
    const codecs = [...new Set(order.map((p) => p.codec))];
    return {
      path: dir,
      rows: rowsSeen,
      chunks,
      columns: schema.length,
      codec: codecs.length === 0 ? (codecName === "auto" ? "zstd" : codecName) : codecs.join(","),
      auto_reason: order.find((p) => p.autoReason)?.autoReason ?? null,
      input_bytes: opened.bytes,
      archive_bytes: bytes,
      ratio: opened.bytes === null || bytes === 0 ? null : opened.bytes / bytes,
      seconds: (performance.now() - started) / 1000,
      payload_sha256: "",
      widened_columns: [],
      csv_dialect: opened.dialect ?? null,
      warnings,
      partitions: manifest.partitions,
    };
  } catch (err) {
    for (const part of order) await part.writer?.abort();
    await Promise.allSettled(inflight.map((i) => i.chunk));
    await clearUp();
    throw err;
  } finally {
    pool?.close();
    await opened.close();
  }
}

/**
 * Makes sure `dir` is an empty directory: creates it when missing (returning true),
 * clears what a killed freeze left in it (see the module doc), and refuses anything else.
 */
async function prepareDir(dir: string): Promise<boolean> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(dir);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    await Deno.mkdir(dir, { recursive: true });
    return true;
  }
  if (!info.isDirectory) {
    throw new OpsError(
      "BAD_OPTION",
      `Cannot write partitions to '${dir}': it is a file, not a directory`,
    );
  }
  const entries = await listDir(dir);
  if (entries.length > 0 && !entries.some((e) => e.name === MANIFEST_NAME)) {
    for (const e of entries) {
      if (e.isDirectory && e.name.includes("=")) await clearLeftovers(join(dir, e.name));
    }
    await removeStaleTemps(join(dir, MANIFEST_NAME));
  }
  if ((await listDir(dir)).length > 0) {
    throw new OpsError(
      "BAD_OPTION",
      `Cannot write partitions to '${dir}': the directory is not empty (remove it or pick a new one)`,
    );
  }
  return false;
}

async function listDir(dir: string): Promise<Deno.DirEntry[]> {
  const out: Deno.DirEntry[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e);
  return out;
}

/**
 * Removes a killed freeze's stale part temp files under a `col=value` folder, and the
 * folders that leaves empty.
 */
async function clearLeftovers(folder: string): Promise<void> {
  await removeStaleTemps(join(folder, PART_NAME));
  for (const e of await listDir(folder)) {
    if (e.isDirectory && e.name.includes("=")) await clearLeftovers(join(folder, e.name));
  }
  await Deno.remove(folder).catch(() => {}); // only when empty: anything else stays
}

function quantizationOf(schema: Schema, q: FreezeOptions["quantization"]) {
  if (q === undefined) return {};
  if (typeof q === "string") {
    return Object.fromEntries(schema.filter((f) => f.type === "float64").map((f) => [f.name, q]));
  }
  return q;
}

/** Text of a partition value, in the forms the CSV writer uses. */
function valueFormatter(field: Field): (v: bigint | number | boolean | string) => string {
  switch (field.type) {
    case "date":
      return (v) => formatDate(Number(v));
    case "timestamp": {
      const f = new TimestampFormatter(field.unit ?? "us", true, true);
      return (v) => f.format(v as bigint);
    }
    case "float64":
      return (v) => formatFloat(v as number, true);
    case "float32":
    case "float16":
      return (v) => valueText(v, field);
    case "decimal":
    case "time":
    case "duration":
      return (v) => valueText(v, field);
    default:
      return (v) => String(v);
  }
}

/**
 * Encodes a partition value as one path segment.
 *
 * @param text The value's text, or null.
 * @returns A segment safe on every common file system.
 */
export function pathSegment(text: string | null): string {
  if (text === null) return "__null__";
  if (text === "") return "__empty__";
  let out = "";
  for (const byte of new TextEncoder().encode(text)) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9_.-]/.test(c) && !(c === "." && out === "")
      ? c
      : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  if (out === "__null__" || out === "__empty__") out = out.replaceAll("_", "%5F");
  return out;
}
