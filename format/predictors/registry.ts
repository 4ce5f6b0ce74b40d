/**
 * The predictor registry: every predictor an archive may name, by id, and the module
 * that defines it, loaded the first time a block needs it.
 *
 * A predictor is registered by one entry in `ENTRIES` (its id and a literal dynamic
 * import of its file), nothing else: no self-registration on import, no mutable
 * global but the cache of loaded modules. Their order is the order in which the
 * writer's trial (`trial.ts`) offers candidates. A reader decodes only the
 * predictors its blocks name, so `audit`, `verify` and `peek` of a small archive
 * never load the rest: a literal `import("./x.ts")` is in the module graph Deno
 * builds before the first line runs (so `deno compile` and a narrow `--allow-read`
 * need nothing more), but its module is compiled and evaluated only when it runs.
 * An id that is not here is a `FormatError` `UNKNOWN_PREDICTOR` naming the known ones.
 *
 * Implements FORMAT.md §4 (predictors).
 *
 * @module
 */
import { FormatError } from "../errors.ts";
import type { Predictor } from "./predictor.ts";

/** One registered predictor: its id, and how to load it. */
interface Entry {
  readonly id: string;
  readonly load: () => Promise<Predictor>;
}

/** Every registered predictor, in trial order. Ids are written into archives. */
const ENTRIES: readonly Entry[] = [
  { id: "delta_zigzag", load: async () => (await import("./delta_zigzag.ts")).deltaZigzag },
  { id: "lag1_zigzag", load: async () => (await import("./lag1_zigzag.ts")).lag1Zigzag },
  { id: "frame_zigzag", load: async () => (await import("./frame_zigzag.ts")).frameZigzag },
  { id: "ts_delta_s", load: async () => (await import("./ts_delta_s.ts")).tsDeltaS },
  { id: "category_u8", load: async () => (await import("./category_u8.ts")).categoryU8 },
  { id: "raw_text", load: async () => (await import("./raw_text.ts")).rawText },
  { id: "float64_planes", load: async () => (await import("./float64_planes.ts")).float64Planes },
  { id: "float_quant_high", load: async () => (await import("./float_quant.ts")).floatQuantHigh },
  {
    id: "float_quant_medium",
    load: async () => (await import("./float_quant.ts")).floatQuantMedium,
  },
  { id: "float_quant_low", load: async () => (await import("./float_quant.ts")).floatQuantLow },
  { id: "bool_bits", load: async () => (await import("./bool_bits.ts")).boolBits },
  { id: "keyed_rank", load: async () => (await import("./keyed_rank.ts")).keyedRank },
  { id: "decimal_frame", load: async () => (await import("./decimal.ts")).decimalFrame },
  { id: "decimal_delta", load: async () => (await import("./decimal.ts")).decimalDelta },
  { id: "wide_zigzag", load: async () => (await import("./wide_zigzag.ts")).wideZigzag },
  { id: "float32_planes", load: async () => (await import("./float32_planes.ts")).float32Planes },
  { id: "float32_xor", load: async () => (await import("./float32_xor.ts")).float32Xor },
  { id: "float16_planes", load: async () => (await import("./float16_planes.ts")).float16Planes },
  { id: "float16_xor", load: async () => (await import("./float16_xor.ts")).float16Xor },
  { id: "keyed_freq", load: async () => (await import("./keyed_freq.ts")).keyedFreq },
  {
    id: "float_quant_medium_f32",
    load: async () => (await import("./float_quant_narrow.ts")).floatQuantMediumF32,
  },
  {
    id: "float_quant_low_f16",
    load: async () => (await import("./float_quant_narrow.ts")).floatQuantLowF16,
  },
  { id: "float32_alp", load: async () => (await import("./float32_alp.ts")).float32Alp },
  { id: "freq_rank", load: async () => (await import("./keyed_freq.ts")).freqRank },
  { id: "float32_delta", load: async () => (await import("./float32_delta.ts")).float32Delta },
  { id: "float16_delta", load: async () => (await import("./float16_delta.ts")).float16Delta },
  { id: "json_schema_v2", load: async () => (await import("./json_shred.ts")).jsonSchemaV2 },
  { id: "decimal_dms", load: async () => (await import("./decimal_dms.ts")).decimalDms },
  { id: "text_lines", load: async () => (await import("./text_lines.ts")).textLines },
  { id: "text_within", load: async () => (await import("./text_within.ts")).textWithin },
];

/** The ids of every registered predictor, in trial order. Frozen. */
export const PREDICTOR_IDS: readonly string[] = Object.freeze(ENTRIES.map((e) => e.id));

const BY_ID: ReadonlyMap<string, Entry> = new Map(ENTRIES.map((e) => [e.id, e]));

/** Each predictor asked for so far (one load per id, however many blocks name it). */
const loaded = new Map<string, Promise<Predictor>>();

/**
 * Looks a predictor up by the id an archive footer records, loading its module the
 * first time.
 *
 * @param id A predictor id such as `delta_zigzag`.
 * @returns The registered predictor.
 * @throws {FormatError} `UNKNOWN_PREDICTOR` (as a rejection) if no predictor has this id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { predictorById } from "./registry.ts";
 * assert.equal((await predictorById("raw_text")).id, "raw_text");
 * await assert.rejects(predictorById("gorilla"), { code: "UNKNOWN_PREDICTOR" });
 * ```
 */
export function predictorById(id: string): Promise<Predictor> {
  const known = loaded.get(id);
  if (known) return known;
  const entry = BY_ID.get(id);
  if (entry === undefined) {
    return Promise.reject(
      new FormatError(
        "UNKNOWN_PREDICTOR",
        `Cannot find predictor '${id}': known predictors are ${
          PREDICTOR_IDS.map((name) => `'${name}'`).join(", ")
        }`,
      ),
    );
  }
  const predictor = entry.load().then((p) => {
    // A programmer error (an entry naming the wrong export), not a bad file.
    if (p.id !== id) throw new TypeError(`The registry entry '${id}' loads predictor '${p.id}'`);
    return p;
  });
  loaded.set(id, predictor);
  return predictor;
}

/**
 * Loads every registered predictor: what the writer's trial chooses among.
 *
 * @returns The predictors, in trial order (a frozen array).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadPredictors, PREDICTOR_IDS } from "./registry.ts";
 * assert.deepEqual((await loadPredictors()).map((p) => p.id), PREDICTOR_IDS);
 * ```
 */
export async function loadPredictors(): Promise<readonly Predictor[]> {
  return Object.freeze(await Promise.all(PREDICTOR_IDS.map(predictorById)));
}
