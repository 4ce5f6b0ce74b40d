/**
 * The per-archive prediction plan: which columns are conditioned on which
 * (`keyed_rank`, `keyed_freq`, `text_within`), and which floats are quantized. Chosen once from the first
 * chunk's rows and recorded in the header, so every chunk — local or from any
 * cluster worker — is encoded the same way.
 *
 * Why conditioning: in real tables one column often follows from others (a
 * flight's distance from its origin and destination). Ranking a value among
 * those already seen under the same key costs almost nothing when the relation
 * holds, and the trial below keeps it only when it measurably wins.
 *
 * Pure. Implements FORMAT.md §4.3 (plans).
 *
 * @module
 */
import {
  type BlockPlan,
  NEAR_TIE,
  predictBlock,
  trialLevelFor,
  trialSize,
} from "./block_encode.ts";
import { type Batch, type Column, sliceBatch, TEXT_TYPES } from "./column.ts";
import type { ColumnPlan } from "./header.ts";
import { conditionersFor } from "./predictors/trial.ts";
import type { Quantization } from "./predictors/predictor.ts";

/** Most distinct values (in the sample) a column may have to serve as a key. */
export const MAX_KEY_CARDINALITY = 1024;
/** Most key columns considered (the trial grows with their pairs). */
const MAX_KEY_CANDIDATES = 6;
/** Most text columns considered as the source of another's words, whatever their cardinality. */
const MAX_TEXT_SOURCES = 8;
/** The conditioner that takes a text column of any cardinality as its dependency. */
const WORDS = "text_within";
/** A conditioned encoding must be at most this fraction of the plain one to be kept. */
const MIN_GAIN = 0.9;
/** Below this fraction on the sample, a conditioning is tried again on more rows. */
const NEAR_MISS = 1.1;
/** Most rows of the first chunk a near miss is tried again on. */
const CONFIRM_ROWS = 131_072;
/**
 * Rows of the sample the trials run on. The plan is chosen before any chunk can be
 * encoded, so its time is serial in every freeze, local or on the cluster; a third of
 * a default chunk decides as well as the whole of it (the relations it looks for hold
 * row by row) at a third of the cost.
 */
export const PLAN_SAMPLE_ROWS = 16_384;

/** Options of `planColumns`. */
export interface PlanOptions {
  /** Float quantization by column name (default QUANT_NONE everywhere). */
  quantization?: Record<string, Quantization>;
  /**
   * Try conditioning columns on others (default true, but false for a quick plan: see
   * {@link PlanOptions.quick}).
   */
  conditioning?: boolean;
  /**
   * A quick plan (`freeze --profile max_speed`, whose plan is serial time before any
   * block is encoded): no conditioning unless `conditioning` is `true`; when it is,
   * trials on the first {@link QUICK_SAMPLE_ROWS} rows, keys of at most
   * {@link QUICK_KEY_CARDINALITY} values, the conditioners of {@link QUICK_CONDITIONERS}
   * only, and no second look at a near miss.
   *
   * Why no conditioning by default: on flights-3m its trials were ~60 ms of this
   * thread's CPU while the Workers waited for the plan, and `keyed_rank` (distance on
   * origin and destination) costs every chunk more CPU to encode than its zstd saves;
   * without it a max_speed freeze took ~12% less CPU (user + system median 2.67 -> 2.35 s
   * over 5 alternating runs), for an archive of 12.18 MB instead of 8.04 MB (DuckDB's
   * Parquet of the same CSV: 13.78 MB).
   */
  quick?: boolean;
}

/** Rows a quick plan's trials run on (see {@link PlanOptions.quick}). */
export const QUICK_SAMPLE_ROWS = 4096;

/**
 * Most distinct values a key may have in a quick plan's sample: as many per row as
 * {@link MAX_KEY_CARDINALITY} in {@link PLAN_SAMPLE_ROWS} (256 in 4,096 rows). In fewer
 * rows fewer values show, so the full limit would take far more columns as keys (every
 * column of flights-3m, whose 4,096 first rows hold at most 930 distinct values of any),
 * and the trial of every key set is most of a plan's time.
 */
export const QUICK_KEY_CARDINALITY = MAX_KEY_CARDINALITY * QUICK_SAMPLE_ROWS / PLAN_SAMPLE_ROWS;

/**
 * The conditioners a quick plan tries: `keyed_rank` (the cheapest to encode: a rank in
 * a short list per key), and `text_within` for text columns; `keyed_freq` learns
 * frequencies as a block goes, which a few thousand rows cannot show.
 */
export const QUICK_CONDITIONERS: ReadonlySet<string> = new Set(["keyed_rank", "text_within"]);

/**
 * Chooses the plan of every column from a sample of rows.
 *
 * @param firstChunk The first chunk's rows; the trials use its first {@link PLAN_SAMPLE_ROWS}.
 * @param options Quantization and whether to try conditioning.
 * @returns Plan by column name.
 */
export function planColumns(
  firstChunk: Batch,
  options: PlanOptions = {},
): Record<string, ColumnPlan> {
  const sampleRows = options.quick ? QUICK_SAMPLE_ROWS : PLAN_SAMPLE_ROWS;
  const sample = firstChunk.length > sampleRows
    ? sliceBatch(firstChunk, 0, sampleRows)
    : firstChunk;
  const { schema } = sample;
  const allowed = options.quick ? QUICK_CONDITIONERS : null;
  const plans: Record<string, ColumnPlan> = {};
  for (const f of schema) {
    plans[f.name] = { deps: [], quantization: options.quantization?.[f.name] ?? "QUANT_NONE" };
  }
  const conditioning = options.quick
    ? options.conditioning === true
    : options.conditioning !== false;
  if (!conditioning || sample.length < 2 || schema.length < 2) return plans;
  const maxDistinct = options.quick ? QUICK_KEY_CARDINALITY : MAX_KEY_CARDINALITY;
  const keys = schema
    .map((_f, i) => ({ i, distinct: distinctCount(sample.columns[i]!, maxDistinct + 1) }))
    // A quantized column cannot be a key: the reader would see its rounded values.
    .filter((k) => plans[schema[k.i]!.name]!.quantization === "QUANT_NONE")
    .filter((k) => k.distinct > 1 && k.distinct <= maxDistinct)
    .sort((a, b) => a.distinct - b.distinct || a.i - b.i)
    .slice(0, MAX_KEY_CANDIDATES)
    .map((k) => k.i);
  // Text columns of any cardinality may hold another's words (`text_within`).
  const texts = schema
    .map((f, i) => ({ f, i }))
    .filter(({ f }) => TEXT_TYPES.has(f.type))
    .slice(0, MAX_TEXT_SOURCES)
    .map(({ i }) => i);
  const proposals: { target: number; deps: number[]; gain: number }[] = [];
  // Rows a near miss is tried again on (see below), at most the first chunk's.
  const confirm = firstChunk.length > sample.length && !options.quick
    ? sliceBatch(firstChunk, 0, Math.min(firstChunk.length, CONFIRM_ROWS))
    : null;
  schema.forEach((field, t) => {
    if (!conditionersFor(field).some((c) => allowed === null || allowed.has(c.id))) return;
    const plain = plainSize(sample, t, plans[field.name]!);
    let best: { deps: number[]; only: string | null; size: number } | null = null;
    const others = keys.filter((k) => k !== t);
    const sets: { deps: number[]; only: string | null }[] = others.map((k) => ({
      deps: [k],
      only: null,
    }));
    for (let a = 0; a < others.length; a++) {
      for (let b = a + 1; b < others.length; b++) {
        sets.push({ deps: [others[a]!, others[b]!], only: null });
      }
    }
    // A text column of many values is tried as a source of words only: as a key it
    // would give every row a list of its own.
    if (TEXT_TYPES.has(field.type)) {
      for (const s of texts) {
        if (s !== t && !others.includes(s)) sets.push({ deps: [s], only: WORDS });
      }
    }
    for (const { deps, only } of sets) {
      const size = conditionedSize(sample, t, deps, only, allowed);
      if (size !== null && (!best || size < best.size)) best = { deps, only, size };
    }
    if (best && best.size < plain * MIN_GAIN) {
      proposals.push({ target: t, deps: best.deps, gain: plain - best.size });
    } else if (best && confirm !== null && best.size < plain * NEAR_MISS) {
      // Adaptive conditioning (keyed_freq) learns its key's values as it goes, so it
      // gains more on a whole chunk than on the sample: judge a near miss on up to
      // the chunk the blocks will really be.
      const wholePlain = plainSize(confirm, t, plans[field.name]!);
      const whole = conditionedSize(confirm, t, best.deps, best.only, allowed);
      if (whole !== null && whole < wholePlain * MIN_GAIN) {
        // Gains are compared across columns below: count this one per sample's rows.
        const gain = (wholePlain - whole) * sample.length / confirm.length;
        proposals.push({ target: t, deps: best.deps, gain });
      }
    }
  });
  // Accept the biggest wins first, skipping any that would close a cycle (a
  // column may be a key of one column and conditioned on another).
  proposals.sort((a, b) => b.gain - a.gain || a.target - b.target);
  const edges = new Map<number, number[]>();
  const reaches = (from: number, to: number): boolean =>
    from === to || (edges.get(from) ?? []).some((d) => reaches(d, to));
  for (const p of proposals) {
    if (p.deps.some((d) => reaches(d, p.target))) continue;
    edges.set(p.target, p.deps);
    plans[schema[p.target]!.name]!.deps = p.deps.map((d) => schema[d]!.name);
  }
  return plans;
}

/**
 * Each column's plan with the predictor the per-block trial picks on a quick plan's
 * sample (the first {@link QUICK_SAMPLE_ROWS} rows), a near tie (`NEAR_TIE`) going to the earlier and
 * cheaper predictor, to encode every later block with it and no trial (`freeze --profile max_speed`: the trial sizes every candidate with zstd, most
 * of a block's encoding time). Left to the trial per block: a quantized column (its
 * quantizers are chosen by their own trial), and a timestamp column unless
 * `ts_delta_s` wins, the one predictor whose check warns of timestamps going
 * backwards (each block's trial runs it, so every block still warns).
 *
 * @param firstChunk The first chunk's rows.
 * @param plans Every column's plan (from {@link planColumns}).
 * @param codec The archive's codec (a column's plan may name its own).
 * @returns The plans, each with `predictor` where one was fixed.
 */
export function planPredictors(
  firstChunk: Batch,
  plans: Readonly<Record<string, ColumnPlan>>,
  codec: string,
): Record<string, BlockPlan> {
  const sample = firstChunk.length > QUICK_SAMPLE_ROWS
    ? sliceBatch(firstChunk, 0, QUICK_SAMPLE_ROWS)
    : firstChunk;
  const { schema } = sample;
  const out: Record<string, BlockPlan> = {};
  schema.forEach((field, i) => {
    const plan = plans[field.name]!;
    out[field.name] = plan;
    if (plan.quantization !== "QUANT_NONE" || sample.length === 0) return;
    const deps = plan.deps.map((d) => sample.columns[schema.findIndex((f) => f.name === d)]!);
    const trialLevel = trialLevelFor(plan.codec ?? codec);
    const { predictor } = predictBlock(sample.columns[i]!, {
      field,
      plan,
      deps,
      trialLevel,
      nearTie: NEAR_TIE,
    });
    if (field.type === "timestamp" && predictor.id !== TIMESTAMP_WARNER) return;
    out[field.name] = { ...plan, predictor: predictor.id };
  });
  return out;
}

/** The predictor that warns when a timestamp column goes backwards (see {@link planPredictors}). */
const TIMESTAMP_WARNER = "ts_delta_s";

/** Trial size of column `t` of `batch` under its plan, unconditioned. */
function plainSize(batch: Batch, t: number, plan: ColumnPlan): number {
  const field = batch.schema[t]!;
  return trialSize(predictBlock(batch.columns[t]!, { field, plan, deps: [] }).bytes);
}

/**
 * Smallest trial size of column `t` conditioned on `deps`, over every conditioner (or
 * only the one named `only`; only those of `allowed` when given).
 */
function conditionedSize(
  batch: Batch,
  t: number,
  deps: readonly number[],
  only: string | null,
  allowed: ReadonlySet<string> | null,
): number | null {
  const field = batch.schema[t]!;
  const context = { field, deps: deps.map((d) => batch.columns[d]!), warn: () => {} };
  let best: number | null = null;
  for (const conditioner of conditionersFor(field)) {
    if (only !== null && conditioner.id !== only) continue;
    if (allowed !== null && !allowed.has(conditioner.id)) continue;
    const bytes = conditioner.encode(batch.columns[t]!, context);
    if (!bytes) continue;
    const size = trialSize(bytes);
    if (best === null || size < best) best = size;
  }
  return best;
}

function distinctCount(column: Column, limit: number): number {
  const seen = new Set<unknown>();
  const values = column.values as ArrayLike<unknown>;
  for (let i = 0; i < values.length; i++) {
    seen.add(values[i]);
    if (seen.size >= limit) break;
  }
  return seen.size;
}
