/**
 * Encoding one column block: the predictor (the plan's, or the per-block trial's
 * choice), the validity bitmap, then the codec. `block.ts` owns the raw block layout
 * and decoding; this module is the writer's half, kept apart so that a reader loads
 * neither the trial nor every predictor (`predictors/trial.ts` loads them all).
 *
 * The predictor of an integer or timestamp block is chosen per block by trial:
 * every matching lossless predictor encodes the values, a fast zstd (level 3)
 * sizes each, the smallest wins (ties go to the earlier in the registry). The
 * choice depends only on the block's values, so a worker and a local freeze
 * pick the same one and the cluster's payload is byte-identical.
 *
 * No file I/O; codecs may spawn `zpaq`. Runs in the block pool's Workers.
 *
 * Implements FORMAT.md §5 (blocks).
 *
 * @module
 */
import type { Codec } from "../codecs/codec.ts";
import { zstdCompressedSize } from "../codecs/zstd.ts";
import { FLAG_VALIDITY } from "./block.ts";
import { type Column, type Field, isWideDecimal } from "./column.ts";
import type { ColumnPlan } from "./header.ts";
import { QUANTIZER_FOR } from "./predictors/float_quant.ts";
import { NARROW_QUANTIZER_FOR } from "./predictors/float_quant_narrow.ts";
import type { EncodeContext, FormatWarning, Predictor } from "./predictors/predictor.ts";
import { conditionersFor, PREDICTORS, predictorsFor } from "./predictors/trial.ts";

/** A block after predictor and codec. */
export interface EncodedBlock {
  /** Stored bytes. */
  bytes: Uint8Array;
  /** Length before the codec. */
  raw_length: number;
  /** Predictor id. */
  predictor: string;
  /** True once `bytes` are AES-256-GCM encrypted (FORMAT.md §4.4; see `crypto.ts`). */
  sealed?: boolean;
}

/**
 * A column's plan as the block encoder takes it: the header's, and optionally a
 * predictor chosen once for every block (`freeze --profile max_speed`, see
 * `plan.ts`'s `planPredictors`). It is never stored: each block names its own
 * predictor, so an archive reads the same whichever way its blocks were chosen.
 */
export interface BlockPlan extends ColumnPlan {
  /**
   * Predictor id every block of the column is encoded with, without a trial; a block
   * it declines (e.g. more values than `category_u8` holds) goes through the trial.
   */
  predictor?: string;
}

/** What `encodeBlock` needs besides the column. */
export interface EncodeBlockOptions {
  field: Field;
  plan: BlockPlan;
  /** Dependency columns named by `plan.deps`, same length. */
  deps: readonly Column[];
  codec: Codec;
  /** The codec's level (default: the codec's). */
  level?: number;
  warn?: (warning: FormatWarning) => void;
  /**
   * zstd level of the predictor trial's yardstick (default {@link TRIAL_LEVEL});
   * {@link encodeBlock} sets {@link STRONG_TRIAL_LEVEL} for a strong codec.
   */
  trialLevel?: number;
  /**
   * How much larger (a fraction of the smallest) a candidate may be and still win
   * when it comes earlier in the registry, whose first predictors are its cheapest
   * transforms (default 0: only an exact tie goes to the earlier). `planPredictors`
   * sets {@link NEAR_TIE} for the one choice `max_speed` encodes every block with.
   */
  nearTie?: number;
}

/**
 * The near tie of `max_speed`'s predictor choice: on flights-3m `freq_rank` is 0.6%
 * smaller than `frame_zigzag` on the delay column, at six times its encoding time.
 */
export const NEAR_TIE = 0.02;

/** zstd level that sizes the trial's candidates: fast, and right for a zstd block. */
export const TRIAL_LEVEL = 3;

/**
 * zstd level of the trial for a block a strong codec (lzma2, zpaq, zpaqwasm) will
 * compress: those model what a fast zstd misses (a sorted float column's deltas are
 * 3.4 kB under zpaqwasm where its byte planes are 4.5 kB, yet zstd 3 prefers the
 * planes); zstd 19 ranks the candidates as they do, at a cost the user of such a
 * codec has chosen to pay.
 */
export const STRONG_TRIAL_LEVEL = 19;

/** Codecs whose blocks are sized with {@link STRONG_TRIAL_LEVEL} in the trial. */
const STRONG_CODECS: ReadonlySet<string> = new Set(["lzma2", "zpaq", "zpaqwasm"]);

/**
 * The zstd level the trial sizes candidates with for a block of this codec.
 *
 * @param codec The block's codec id.
 * @returns {@link STRONG_TRIAL_LEVEL} for a strong codec, else {@link TRIAL_LEVEL}.
 */
export function trialLevelFor(codec: string): number {
  return STRONG_CODECS.has(codec) ? STRONG_TRIAL_LEVEL : TRIAL_LEVEL;
}

/**
 * Encodes one column into a stored block.
 *
 * @param column The column's values for one chunk.
 * @param options Field, plan, dependency columns and codec.
 * @returns The stored bytes, raw length and predictor id.
 */
export async function encodeBlock(
  column: Column,
  options: EncodeBlockOptions,
): Promise<EncodedBlock> {
  const trialLevel = options.trialLevel ?? trialLevelFor(options.codec.id);
  const { predictor, bytes } = predictBlock(column, { ...options, trialLevel });
  const raw = frameRaw(column, bytes);
  const stored = await options.codec.encode(raw, options.level);
  return { bytes: stored, raw_length: raw.length, predictor: predictor.id };
}

/**
 * Runs the plan's predictor (or the trial) on a column without the codec.
 *
 * @param column The column.
 * @param options Field, plan, deps.
 * @returns The chosen predictor and its bytes.
 */
export function predictBlock(
  column: Column,
  options: Omit<EncodeBlockOptions, "codec">,
): { predictor: Predictor; bytes: Uint8Array } {
  const { field, plan, deps } = options;
  const warn = options.warn ?? (() => {});
  const level = options.trialLevel ?? TRIAL_LEVEL;
  const nearTie = options.nearTie ?? 0;
  const values = narrowDecimal(field, column.validity ? zeroNulls(column) : column);
  // A warning is about the data (e.g. timestamps going backwards), so it is
  // issued whichever predictor wins the trial — once per code.
  const warned = new Set<string>();
  const onWarning = (w: FormatWarning) => {
    if (warned.has(w.code)) return;
    warned.add(w.code);
    warn(w);
  };
  const fixed = plan.predictor === undefined ? undefined : predictorById(plan.predictor);
  if (fixed && (!fixed.usesDeps || deps.length > 0)) {
    const context = { field, deps: fixed.usesDeps ? deps : [], warn: onWarning };
    const only = smallest([fixed], values, context, level, 0);
    if (only) return only;
  }
  if (plan.deps.length > 0) {
    const conditioned = smallest(
      conditionersFor(field),
      values,
      { field, deps, warn },
      level,
      nearTie,
    );
    if (conditioned) return conditioned;
  }
  // A quantized column: the narrow quantizer of the level (float32/float16 storage) and
  // the wide one decode to the same values, so the trial keeps the smaller (the wide
  // one alone when the narrow one declines, too many values it cannot hold).
  const quantizers = [NARROW_QUANTIZER_FOR[plan.quantization], QUANTIZER_FOR[plan.quantization]]
    .filter((q): q is Predictor => q !== null);
  if (field.type === "float64" && quantizers.length > 0) {
    const quantized = smallest(quantizers, values, { field, deps: [], warn }, level, nearTie);
    if (quantized) return quantized;
  }
  const best = smallest(
    predictorsFor(field),
    values,
    { field, deps: [], warn: onWarning },
    level,
    nearTie,
  );
  if (!best) throw new Error(`No predictor encodes column "${field.name}" of type ${field.type}`);
  return best;
}

/** The predictor of an id, among those the trial knows; undefined for any other. */
function predictorById(id: string): Predictor | undefined {
  return PREDICTORS.find((p) => p.id === id && !p.lossy);
}

/**
 * The trial: every candidate encodes the block and the smallest under
 * {@link trialSize} wins (ties to the earlier; with `nearTie`, near ties too); null
 * when none encodes it.
 */
function smallest(
  candidates: readonly Predictor[],
  values: Column,
  context: EncodeContext,
  level: number,
  nearTie: number,
): { predictor: Predictor; bytes: Uint8Array } | null {
  if (nearTie > 0) return nearSmallest(candidates, values, context, level, nearTie);
  let best: { predictor: Predictor; bytes: Uint8Array; size: number } | null = null;
  for (const predictor of candidates) {
    const bytes = predictor.encode(values, context);
    if (!bytes) continue;
    const size = candidates.length === 1 ? 0 : trialSize(bytes, level);
    if (!best || size < best.size) best = { predictor, bytes, size };
  }
  return best && { predictor: best.predictor, bytes: best.bytes };
}

/**
 * {@link smallest} with near ties: the earliest candidate at most `nearTie` larger than
 * the smallest. It keeps every candidate's bytes until the end, so it serves the plan's
 * sample, not whole blocks.
 */
function nearSmallest(
  candidates: readonly Predictor[],
  values: Column,
  context: EncodeContext,
  level: number,
  nearTie: number,
): { predictor: Predictor; bytes: Uint8Array } | null {
  const tried: { predictor: Predictor; bytes: Uint8Array; size: number }[] = [];
  for (const predictor of candidates) {
    const bytes = predictor.encode(values, context);
    if (bytes) tried.push({ predictor, bytes, size: trialSize(bytes, level) });
  }
  const least = Math.min(...tried.map((t) => t.size));
  const best = tried.find((t) => t.size <= least * (1 + nearTie));
  return best ? { predictor: best.predictor, bytes: best.bytes } : null;
}

/** Size of `bytes` under zstd at `level` (default a fast 3): the yardstick of predictor trials. */
export function trialSize(bytes: Uint8Array, level: number = TRIAL_LEVEL): number {
  if (bytes.length < 64) return bytes.length;
  // The size pledged up front lets zstd size its tables to the input: without it
  // level 19 sets up its largest ones on every call (~200 ms), level 3 ~2 ms.
  return zstdCompressedSize(bytes, level);
}

/**
 * A wide decimal's values as a `BigInt64Array` when every one fits 64 bits, so the
 * integer predictors can take the block; otherwise (or for any other column) the
 * column as it is. `decodeBlock` widens the values back.
 */
function narrowDecimal(field: Field, column: Column): Column {
  if (column.type !== "decimal" || column.values instanceof BigInt64Array) return column;
  const wide = column.values;
  const narrow = new BigInt64Array(wide.length);
  for (let i = 0; i < wide.length; i++) {
    const v = wide[i]!;
    if (v !== BigInt.asIntN(64, v)) return column;
    narrow[i] = v;
  }
  return isWideDecimal(field)
    ? { type: "decimal", values: narrow, validity: column.validity }
    : column;
}

function zeroNulls(column: Column): Column {
  const validity = column.validity as Uint8Array;
  const values = column.values.slice() as typeof column.values;
  const zero = column.type === "string" || column.type === "json"
    ? ""
    : column.type === "float64" || column.type === "float32" || column.type === "float16" ||
        column.type === "bool"
    ? 0
    : 0n;
  for (let i = 0; i < validity.length; i++) {
    if (validity[i] === 0) (values as unknown[])[i] = zero;
  }
  return { type: column.type, values, validity: null } as Column;
}

function frameRaw(column: Column, predicted: Uint8Array): Uint8Array {
  const validity = column.validity;
  if (!validity) {
    const raw = new Uint8Array(1 + predicted.length);
    raw[0] = 0;
    raw.set(predicted, 1);
    return raw;
  }
  const bitmapLength = (validity.length + 7) >> 3;
  const raw = new Uint8Array(1 + bitmapLength + predicted.length);
  raw[0] = FLAG_VALIDITY;
  for (let i = 0; i < validity.length; i++) {
    if (validity[i]) raw[1 + (i >> 3)]! |= 1 << (i & 7);
  }
  raw.set(predicted, 1 + bitmapLength);
  return raw;
}
