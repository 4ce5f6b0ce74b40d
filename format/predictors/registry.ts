/**
 * The predictor registry: every predictor an archive may name, by id.
 *
 * A predictor is registered by one import and one entry in `PREDICTORS`,
 * nothing else: no self-registration on import, no mutable global. The list
 * is frozen when the module loads, and its order is the order in which
 * {@linkcode predictorsFor} offers candidates to the writer's per-block trial.
 * An id that is not here is a `FormatError` `UNKNOWN_PREDICTOR` naming the
 * known ones.
 *
 * Implements FORMAT.md §4 (predictors).
 *
 * @module
 */
import type { Field } from "../column.ts";
import { FormatError } from "../errors.ts";
import { boolBits } from "./bool_bits.ts";
import { categoryU8 } from "./category_u8.ts";
import { deltaZigzag } from "./delta_zigzag.ts";
import { float64Planes } from "./float64_planes.ts";
import { float32Planes } from "./float32_planes.ts";
import { float32Xor } from "./float32_xor.ts";
import { float32Alp } from "./float32_alp.ts";
import { float32Delta } from "./float32_delta.ts";
import { float16Delta } from "./float16_delta.ts";
import { float16Planes } from "./float16_planes.ts";
import { float16Xor } from "./float16_xor.ts";
import { floatQuantLowF16, floatQuantMediumF32 } from "./float_quant_narrow.ts";
import { floatQuantHigh, floatQuantLow, floatQuantMedium } from "./float_quant.ts";
import { frameZigzag } from "./frame_zigzag.ts";
import { decimalDelta, decimalFrame } from "./decimal.ts";
import { freqRank, keyedFreq } from "./keyed_freq.ts";
import { jsonSchemaV2 } from "./json_shred.ts";
import { keyedRank } from "./keyed_rank.ts";
import { lag1Zigzag } from "./lag1_zigzag.ts";
import type { Predictor } from "./predictor.ts";
import { rawText } from "./raw_text.ts";
import { tsDeltaS } from "./ts_delta_s.ts";
import { wideZigzag } from "./wide_zigzag.ts";

/** Every registered predictor, in trial order. Frozen. */
export const PREDICTORS: readonly Predictor[] = Object.freeze([
  deltaZigzag,
  lag1Zigzag,
  frameZigzag,
  tsDeltaS,
  categoryU8,
  rawText,
  float64Planes,
  floatQuantHigh,
  floatQuantMedium,
  floatQuantLow,
  boolBits,
  keyedRank,
  decimalFrame,
  decimalDelta,
  wideZigzag,
  float32Planes,
  float32Xor,
  float16Planes,
  float16Xor,
  keyedFreq,
  floatQuantMediumF32,
  floatQuantLowF16,
  float32Alp,
  freqRank,
  float32Delta,
  float16Delta,
  jsonSchemaV2,
]);

/** The ids of every registered predictor, in the order of {@linkcode PREDICTORS}. Frozen. */
export const PREDICTOR_IDS: readonly string[] = Object.freeze(PREDICTORS.map((p) => p.id));

const BY_ID: ReadonlyMap<string, Predictor> = new Map(PREDICTORS.map((p) => [p.id, p]));

/**
 * Looks a predictor up by the id an archive footer records.
 *
 * @param id A predictor id such as `delta_zigzag`.
 * @returns The registered predictor.
 * @throws {FormatError} `UNKNOWN_PREDICTOR` if no predictor has this id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { predictorById } from "./registry.ts";
 * assert.equal(predictorById("raw_text").id, "raw_text");
 * assert.throws(() => predictorById("gorilla"), { code: "UNKNOWN_PREDICTOR" });
 * ```
 */
export function predictorById(id: string): Predictor {
  const predictor = BY_ID.get(id);
  if (predictor === undefined) {
    throw new FormatError(
      "UNKNOWN_PREDICTOR",
      `Cannot find predictor '${id}': known predictors are ${
        PREDICTOR_IDS.map((known) => `'${known}'`).join(", ")
      }`,
    );
  }
  return predictor;
}

/**
 * Returns the lossless, self-contained predictors that can encode a field, in
 * registry order: the candidates of the writer's per-block trial. Quantizers
 * (chosen by the column's quantization level, see `QUANTIZER_FOR`) and
 * predictors that need dependency columns (chosen by the schema) are left out.
 *
 * @param field The column's field.
 * @returns The candidates (a new array; may be empty).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { predictorsFor } from "./registry.ts";
 * const ids = predictorsFor({ name: "s", type: "string", nullable: false }).map((p) => p.id);
 * assert.deepEqual(ids, ["category_u8", "raw_text", "freq_rank", "json_schema_v2"]);
 * ```
 */
export function predictorsFor(field: Field): Predictor[] {
  return PREDICTORS.filter((p) => !p.lossy && !p.usesDeps && p.matches(field));
}

/**
 * Returns the predictors that condition a field on other columns (`usesDeps`), in
 * registry order: the candidates when a plan names dependencies. The smallest
 * result under the trial's yardstick wins, as in {@linkcode predictorsFor}.
 *
 * @param field The column's field.
 * @returns The candidates (a new array; may be empty).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { conditionersFor } from "./registry.ts";
 * const ids = conditionersFor({ name: "s", type: "string", nullable: false }).map((p) => p.id);
 * assert.deepEqual(ids, ["keyed_rank", "keyed_freq"]);
 * ```
 */
export function conditionersFor(field: Field): Predictor[] {
  return PREDICTORS.filter((p) => !p.lossy && p.usesDeps && p.matches(field));
}
