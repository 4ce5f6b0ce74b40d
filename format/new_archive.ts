/**
 * What a new archive is, decided before its first chunk is written: its header
 * ({@link newArchiveHeader}) and, for `codec: "auto"`, its codec
 * ({@link chooseArchiveCodec}: the first {@link AUTO_SAMPLE_ROWS} rows, predicted as
 * they will be stored, sized under every codec by `codecs/auto.ts`); with a codec
 * profile or per-column codecs, each column's codec and level
 * ({@link chooseColumnCodecs}). The local freeze, `append` and the cluster's master all
 * call these, so their archives agree byte for byte. Implements FORMAT.md §3 (header).
 *
 * Profiles (`--profile`): `max_speed` is zstd at level 3 for every column (and a quick
 * plan without conditioning, `plan.ts`); `balanced`
 * zstd at level 19 (as a freeze without a profile, in larger chunks: `ops/freeze.ts`); `auto` the smaller of zstd
 * and lzma2 for each column on its first 1,000 rows; `max_compression` the smallest of
 * zstd, lzma2 and zpaqwasm (zpaq in process) for each column on its first 50,000. A column's own
 * codec (`--column-codec name=lzma2[:level]`) wins over the profile. When every column
 * ends up with one codec the header names it (the file is what it was before profiles
 * existed); otherwise the header's codec is `mixed` and each column's plan names its
 * own (format 1.6).
 *
 * @module
 */
import { type Codec, levelFor } from "../codecs/codec.ts";
import { codecById } from "../codecs/registry.ts";
import { predictBlock } from "./block_encode.ts";
import { type Batch, type Schema, sliceBatch } from "./column.ts";
import { MIXED_CODEC } from "./constants.ts";
import { type ArchiveHeader, archiveVersion, type ColumnPlan, schemaToJson } from "./header.ts";

/**
 * `codecs/auto.ts`, loaded by the choices that compare codecs only: it loads lzma2's
 * module and with it `node:zlib` (~15-20 ms of CPU), which a freeze with one codec
 * would load before its Workers start.
 */
async function chooseCodec(
  ...args: Parameters<typeof import("../codecs/auto.ts").chooseCodec>
): ReturnType<typeof import("../codecs/auto.ts").chooseCodec> {
  return await (await import("../codecs/auto.ts")).chooseCodec(...args);
}

/** Rows `auto` samples to choose a codec. */
export const AUTO_SAMPLE_ROWS = 1000;

/**
 * Rows `max_compression` samples to choose each column's codec. Context mixing pays
 * its model and its learning up front, so 1,000 rows misjudge it: on flights-3m every
 * column went to lzma2 on 1,000 rows, yet zpaqwasm is 1-13% smaller on each of its
 * 500,000-row blocks (6.65 MB instead of 6.78 MB).
 */
export const MAX_COMPRESSION_SAMPLE_ROWS = 50_000;

/**
 * Builds the header of a new, unencrypted archive (`withEncryption` adds encryption):
 * the one place a local freeze, an append and the cluster's master make a header, so
 * they write the same bytes.
 *
 * @param schema The columns.
 * @param codec The codec id of every block.
 * @param autoReason Why `auto` chose it, or null.
 * @param plans The prediction plan of every column.
 * @param options Chunk size, primary key and free-form metadata.
 * @returns The header, its `version` the lowest that describes it.
 */
export function newArchiveHeader(
  schema: Schema,
  codec: string,
  autoReason: string | null,
  plans: Record<string, ColumnPlan>,
  options: { chunkRows: number; primaryKey?: string; metadata?: Record<string, string> },
): ArchiveHeader {
  const stored = storedCodecs(codec, plans);
  return {
    format: "permafrost",
    version: archiveVersion({
      schema: schemaToJson(schema),
      encryption: null,
      codec: stored.codec,
      columns: stored.plans,
    }),
    schema: schemaToJson(schema),
    codec: stored.codec,
    auto_reason: autoReason,
    chunk_rows: options.chunkRows,
    columns: stored.plans,
    lossy_columns: schema.filter((f) =>
      f.type === "float64" && plans[f.name]!.quantization !== "QUANT_NONE"
    )
      .map((f) => f.name),
    primary_key: options.primaryKey ?? null,
    partition: null,
    encryption: null,
    metadata: options.metadata ?? {},
  };
}

/**
 * Chooses a codec from the first `AUTO_SAMPLE_ROWS` rows, predicted as they will be stored.
 *
 * @param first The first chunk.
 * @param plans The plan chosen for it.
 * @returns Codec id and the reason.
 */
export async function chooseArchiveCodec(
  first: Batch,
  plans: Record<string, ColumnPlan>,
): Promise<{ codec: string; reason: string }> {
  const sample = sliceBatch(first, 0, AUTO_SAMPLE_ROWS);
  if (sample.length === 0) {
    return { codec: "zstd", reason: "zstd: empty source, nothing to compare" };
  }
  const blocks = sample.schema.map((field, i) => {
    const plan = plans[field.name]!;
    const deps = plan.deps.map((d) =>
      sample.columns[sample.schema.findIndex((f) => f.name === d)]!
    );
    return predictBlock(sample.columns[i]!, { field, plan, deps }).bytes;
  });
  const choice = await chooseCodec(blocks, undefined, { rows: sample.length });
  return { codec: choice.codec.id, reason: choice.reason };
}

/** How each column's codec is chosen (`--profile`). */
export type CodecProfile = "max_speed" | "balanced" | "max_compression" | "auto";

/** The profiles, in order from fastest to smallest. */
export const CODEC_PROFILES: readonly CodecProfile[] = Object.freeze([
  "max_speed",
  "balanced",
  "auto",
  "max_compression",
]);

/** A column's codec as asked for: an id and, optionally, a level (`zstd:3`). */
export interface CodecSpec {
  /** Codec id (`zstd`, `lzma2`, `zpaq`). */
  codec: string;
  /** Its level (default: the codec's). */
  level?: number;
}

/**
 * Reads `codec[:level]`.
 *
 * @param text E.g. `lzma2` or `zstd:3`.
 * @returns The codec and level, checked against the registry and the codec's levels.
 * @throws {RangeError} Naming what is wrong: an unknown codec, or a level out of range.
 */
export function parseCodecSpec(text: string): CodecSpec {
  const [id, level, ...rest] = text.trim().split(":");
  let codec: Codec;
  try {
    codec = codecById(id ?? "");
  } catch (err) {
    throw new RangeError(err instanceof Error ? err.message : String(err));
  }
  if (rest.length > 0 || level === "") {
    throw new RangeError(`expected codec[:level], got '${text}'`);
  }
  if (level === undefined) return { codec: codec.id };
  return { codec: codec.id, level: levelFor(codec, Number(level)) };
}

/** Options of {@link chooseColumnCodecs}. */
export interface ColumnCodecChoice {
  /** The profile (default: none — every column uses `codec`). */
  profile?: CodecProfile;
  /** Each named column's codec, over the profile's choice. */
  columnCodecs?: Readonly<Record<string, CodecSpec>>;
}

/**
 * Each column's codec and level, decided from the first chunk (see the module doc):
 * the plans with `codec` set on every column, `level` where it is not the codec's
 * default, and `auto_reason` where the profile compared codecs.
 *
 * @param first The first chunk.
 * @param plans The prediction plans chosen for it.
 * @param codec The archive's codec, for columns neither the profile nor the user names.
 * @param choice Profile and per-column codecs.
 * @returns The plans with their codecs, and the archive's `auto_reason` when
 *   `max_compression` gave every column one codec.
 * @throws {RangeError} For a per-column codec naming no column of the schema.
 */
export async function chooseColumnCodecs(
  first: Batch,
  plans: Record<string, ColumnPlan>,
  codec: string,
  choice: ColumnCodecChoice,
): Promise<ColumnCodecs> {
  for (const name of Object.keys(choice.columnCodecs ?? {})) {
    if (!first.schema.some((f) => f.name === name)) {
      throw new RangeError(
        `--column-codec names '${name}', which is not a column (columns: ${
          first.schema.map((f) => f.name).join(", ")
        })`,
      );
    }
  }
  const sampleRows = choice.profile === "max_compression"
    ? MAX_COMPRESSION_SAMPLE_ROWS
    : AUTO_SAMPLE_ROWS;
  const sample = sliceBatch(first, 0, sampleRows);
  const candidates = profileCandidates(choice.profile);
  const out: Record<string, ColumnPlan> = {};
  const sizes: Record<string, Record<string, number>> = {};
  for (let i = 0; i < first.schema.length; i++) {
    const field = first.schema[i]!;
    const plan: ColumnPlan = { ...plans[field.name]! };
    const asked = choice.columnCodecs?.[field.name];
    if (asked) {
      plan.codec = asked.codec;
      if (asked.level !== undefined) plan.level = asked.level;
    } else if (choice.profile === "max_speed") {
      plan.codec = "zstd";
      plan.level = 3;
    } else if (candidates) {
      const deps = plan.deps.map((d) =>
        sample.columns[sample.schema.findIndex((f) => f.name === d)]!
      );
      const block = predictBlock(sample.columns[i]!, { field, plan, deps }).bytes;
      const picked = await chooseCodec([block], candidates.codecs, { rows: sample.length });
      plan.codec = picked.codec.id;
      plan.auto_reason = `${choice.profile}: ${picked.reason}${candidates.note}`;
      sizes[field.name] = picked.sizes;
    } else {
      plan.codec = choice.profile === "balanced" ? "zstd" : codec;
    }
    out[field.name] = plan;
  }
  if (choice.profile !== "max_compression" || Object.keys(choice.columnCodecs ?? {}).length > 0) {
    return { plans: out, reason: null };
  }
  return oneCodecIfSmaller(out, sizes, sample.length);
}

/** What {@link chooseColumnCodecs} decided. */
export interface ColumnCodecs {
  /** Every column's plan, with its codec. */
  plans: Record<string, ColumnPlan>;
  /** Why the archive has one codec, when a profile decided that for all columns; else null. */
  reason: string | null;
}

/**
 * `max_compression` keeps the smallest archive, and the header is part of it: naming a
 * codec and its reason in every column's plan costs ~100 bytes a column, more than the
 * per-column choice saves on a small table (seattle-weather: 6,765 B mixed, 6,111 B in
 * zstd alone). When one codec for every column is smaller on the sample, counting those
 * bytes, every column takes it, and one reason in the header says why.
 */
function oneCodecIfSmaller(
  plans: Record<string, ColumnPlan>,
  sizes: Record<string, Record<string, number>>,
  rows: number,
): ColumnCodecs {
  const names = Object.keys(sizes);
  let mixed = 0;
  for (const name of names) {
    const { auto_reason, codec } = plans[name]!;
    mixed += Math.min(...Object.values(sizes[name]!)) +
      JSON.stringify({ auto_reason, codec }).length;
  }
  let best: { codec: string; total: number } | null = null;
  for (const codec of Object.keys(sizes[names[0] ?? ""] ?? {})) {
    const total = names.reduce((sum, name) => sum + sizes[name]![codec]!, 0);
    if (best === null || total < best.total) best = { codec, total };
  }
  if (best === null) return { plans, reason: null };
  // Short: it is stored in the header, whose size is the point.
  const reason = `max_compression: ${best.codec} for all, ${best.total} B vs ${mixed} B ` +
    `per column with the plans' records (${rows}-row sample)`;
  if (best.total + reason.length >= mixed) return { plans, reason: null };
  const out: Record<string, ColumnPlan> = {};
  for (const [name, plan] of Object.entries(plans)) {
    const { auto_reason: _, ...rest } = plan;
    out[name] = { ...rest, codec: best.codec };
  }
  return { plans: out, reason };
}

/** The codecs a comparing profile tries, or null for one that does not compare. */
function profileCandidates(
  profile: CodecProfile | undefined,
): { codecs: Codec[]; note: string } | null {
  if (profile === "auto") return { codecs: [codecById("zstd"), codecById("lzma2")], note: "" };
  if (profile !== "max_compression") return null;
  // zpaqwasm, not the zpaq binary: the same context mixing without the binary's
  // journaling archive, so always about 1 KB smaller a block (the binary never won a
  // column on the 1,000-row samples), and no program to install. zstd too: on a small
  // column its few bytes of framing beat the others' models (seattle-weather was 7.1 kB
  // under lzma2 and zpaqwasm, 6.1 kB in zstd alone).
  return {
    codecs: [codecById("zstd"), codecById("lzma2"), codecById("zpaqwasm")],
    note: "",
  };
}

/**
 * The header codec and plans as stored: one codec for every column is named by the
 * header alone (plans without `codec`, as before per-column codecs existed); several
 * make the header's `mixed` and stay in the plans. A level equal to the codec's
 * default is dropped.
 */
function storedCodecs(
  codec: string,
  plans: Record<string, ColumnPlan>,
): { codec: string; plans: Record<string, ColumnPlan> } {
  const used = new Set(Object.values(plans).map((p) => p.codec ?? codec));
  const single = used.size <= 1 ? [...used][0] ?? codec : null;
  const out: Record<string, ColumnPlan> = {};
  for (const [name, plan] of Object.entries(plans)) {
    const { codec: own, level, ...rest } = plan;
    const id = own ?? codec;
    const p: ColumnPlan = single === null ? { ...rest, codec: id } : { ...rest };
    if (level !== undefined && level !== codecById(id).levels.default) p.level = level;
    out[name] = p;
  }
  return { codec: single ?? MIXED_CODEC, plans: out };
}
