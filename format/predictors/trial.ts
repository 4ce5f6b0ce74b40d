/**
 * The writer's side of the predictor registry: every predictor, loaded, and the
 * candidates the per-block trial and the plan choose among.
 *
 * The registry (`registry.ts`) loads a predictor's module when a block names it, so
 * a reader loads only what its archive uses. Encoding tries every candidate, so this
 * module loads them all once, when it is first imported (a top-level `await`), and
 * offers them synchronously from then on. Only the encoder (`block_encode.ts`) and the
 * plan import it, never the reader.
 *
 * Implements FORMAT.md §4 (predictors).
 *
 * @module
 */
import type { Field } from "../column.ts";
import type { Predictor } from "./predictor.ts";
import { loadPredictors } from "./registry.ts";

/** Every registered predictor, in trial order (the registry's). Frozen. */
export const PREDICTORS: readonly Predictor[] = await loadPredictors();

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
 * import { predictorsFor } from "./trial.ts";
 * const ids = predictorsFor({ name: "s", type: "string", nullable: false }).map((p) => p.id);
 * assert.deepEqual(ids, ["category_u8", "raw_text", "freq_rank", "json_schema_v2", "text_lines"]);
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
 * import { conditionersFor } from "./trial.ts";
 * const ids = conditionersFor({ name: "s", type: "string", nullable: false }).map((p) => p.id);
 * assert.deepEqual(ids, ["keyed_rank", "keyed_freq", "text_within"]);
 * ```
 */
export function conditionersFor(field: Field): Predictor[] {
  return PREDICTORS.filter((p) => !p.lossy && p.usesDeps && p.matches(field));
}
