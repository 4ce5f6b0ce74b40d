/**
 * The predictor registry: every predictor an archive may name, by id, and the module
 * that defines it, loaded the first time a block needs it.
 *
 * A predictor is registered by one entry in `ENTRIES` (its id and a dynamic import of
 * its file) and its file's line in `_all.ts`, nothing else: no self-registration on
 * import, no mutable global but the cache of loaded modules. Their order is the order
 * in which the writer's trial (`trial.ts`) offers candidates. A reader decodes only
 * the predictors its blocks name, so `audit`, `verify` and `peek` of a small archive
 * never load the rest.
 *
 * The imports take computed specifiers (`new URL(...)`, made when the import runs):
 * Deno reads and analyses every module a literal `import("./x.ts")` names whenever it
 * loads the importer, so literal ones made every command that opens an archive read
 * the 26 files and their helpers (~250 kB) first, ~2-4 ms of a 10-row slice's ~35.
 * `_all.ts` names every file by a static import: the writer's trial loads it (one
 * module load instead of 26), and `cli/lazy.ts` (for `deno compile`) and `mod.ts` (for
 * a library user's module graph) name it. `registry_test.ts` checks that it and
 * `ENTRIES` name the same files. An id that is not here is a `FormatError`
 * `UNKNOWN_PREDICTOR` naming the known ones.
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
  {
    id: "delta_zigzag",
    load: async () =>
      ((await import(
        new URL("./delta_zigzag.ts", import.meta.url).href
      )) as typeof import("./delta_zigzag.ts")).deltaZigzag,
  },
  {
    id: "lag1_zigzag",
    load: async () =>
      ((await import(
        new URL("./lag1_zigzag.ts", import.meta.url).href
      )) as typeof import("./lag1_zigzag.ts")).lag1Zigzag,
  },
  {
    id: "frame_zigzag",
    load: async () =>
      ((await import(
        new URL("./frame_zigzag.ts", import.meta.url).href
      )) as typeof import("./frame_zigzag.ts")).frameZigzag,
  },
  {
    id: "ts_delta_s",
    load: async () =>
      ((await import(
        new URL("./ts_delta_s.ts", import.meta.url).href
      )) as typeof import("./ts_delta_s.ts")).tsDeltaS,
  },
  {
    id: "category_u8",
    load: async () =>
      ((await import(
        new URL("./category_u8.ts", import.meta.url).href
      )) as typeof import("./category_u8.ts")).categoryU8,
  },
  {
    id: "raw_text",
    load: async () =>
      ((await import(
        new URL("./raw_text.ts", import.meta.url).href
      )) as typeof import("./raw_text.ts")).rawText,
  },
  {
    id: "float64_planes",
    load: async () =>
      ((await import(
        new URL("./float64_planes.ts", import.meta.url).href
      )) as typeof import("./float64_planes.ts")).float64Planes,
  },
  {
    id: "float_quant_high",
    load: async () =>
      ((await import(
        new URL("./float_quant.ts", import.meta.url).href
      )) as typeof import("./float_quant.ts")).floatQuantHigh,
  },
  {
    id: "float_quant_medium",
    load: async () =>
      ((await import(
        new URL("./float_quant.ts", import.meta.url).href
      )) as typeof import("./float_quant.ts")).floatQuantMedium,
  },
  {
    id: "float_quant_low",
    load: async () =>
      ((await import(
        new URL("./float_quant.ts", import.meta.url).href
      )) as typeof import("./float_quant.ts")).floatQuantLow,
  },
  {
    id: "bool_bits",
    load: async () =>
      ((await import(
        new URL("./bool_bits.ts", import.meta.url).href
      )) as typeof import("./bool_bits.ts")).boolBits,
  },
  {
    id: "keyed_rank",
    load: async () =>
      ((await import(
        new URL("./keyed_rank.ts", import.meta.url).href
      )) as typeof import("./keyed_rank.ts")).keyedRank,
  },
  {
    id: "decimal_frame",
    load: async () =>
      ((await import(
        new URL("./decimal.ts", import.meta.url).href
      )) as typeof import("./decimal.ts")).decimalFrame,
  },
  {
    id: "decimal_delta",
    load: async () =>
      ((await import(
        new URL("./decimal.ts", import.meta.url).href
      )) as typeof import("./decimal.ts")).decimalDelta,
  },
  {
    id: "wide_zigzag",
    load: async () =>
      ((await import(
        new URL("./wide_zigzag.ts", import.meta.url).href
      )) as typeof import("./wide_zigzag.ts")).wideZigzag,
  },
  {
    id: "float32_planes",
    load: async () =>
      ((await import(
        new URL("./float32_planes.ts", import.meta.url).href
      )) as typeof import("./float32_planes.ts")).float32Planes,
  },
  {
    id: "float32_xor",
    load: async () =>
      ((await import(
        new URL("./float32_xor.ts", import.meta.url).href
      )) as typeof import("./float32_xor.ts")).float32Xor,
  },
  {
    id: "float16_planes",
    load: async () =>
      ((await import(
        new URL("./float16_planes.ts", import.meta.url).href
      )) as typeof import("./float16_planes.ts")).float16Planes,
  },
  {
    id: "float16_xor",
    load: async () =>
      ((await import(
        new URL("./float16_xor.ts", import.meta.url).href
      )) as typeof import("./float16_xor.ts")).float16Xor,
  },
  {
    id: "keyed_freq",
    load: async () =>
      ((await import(
        new URL("./keyed_freq.ts", import.meta.url).href
      )) as typeof import("./keyed_freq.ts")).keyedFreq,
  },
  {
    id: "float_quant_medium_f32",
    load: async () =>
      ((await import(
        new URL("./float_quant_narrow.ts", import.meta.url).href
      )) as typeof import("./float_quant_narrow.ts")).floatQuantMediumF32,
  },
  {
    id: "float_quant_low_f16",
    load: async () =>
      ((await import(
        new URL("./float_quant_narrow.ts", import.meta.url).href
      )) as typeof import("./float_quant_narrow.ts")).floatQuantLowF16,
  },
  {
    id: "float32_alp",
    load: async () =>
      ((await import(
        new URL("./float32_alp.ts", import.meta.url).href
      )) as typeof import("./float32_alp.ts")).float32Alp,
  },
  {
    id: "freq_rank",
    load: async () =>
      ((await import(
        new URL("./keyed_freq.ts", import.meta.url).href
      )) as typeof import("./keyed_freq.ts")).freqRank,
  },
  {
    id: "float32_delta",
    load: async () =>
      ((await import(
        new URL("./float32_delta.ts", import.meta.url).href
      )) as typeof import("./float32_delta.ts")).float32Delta,
  },
  {
    id: "float16_delta",
    load: async () =>
      ((await import(
        new URL("./float16_delta.ts", import.meta.url).href
      )) as typeof import("./float16_delta.ts")).float16Delta,
  },
  {
    id: "json_schema_v2",
    load: async () =>
      ((await import(
        new URL("./json_shred.ts", import.meta.url).href
      )) as typeof import("./json_shred.ts")).jsonSchemaV2,
  },
  {
    id: "decimal_dms",
    load: async () =>
      ((await import(
        new URL("./decimal_dms.ts", import.meta.url).href
      )) as typeof import("./decimal_dms.ts")).decimalDms,
  },
  {
    id: "text_lines",
    load: async () =>
      ((await import(
        new URL("./text_lines.ts", import.meta.url).href
      )) as typeof import("./text_lines.ts")).textLines,
  },
  {
    id: "text_within",
    load: async () =>
      ((await import(
        new URL("./text_within.ts", import.meta.url).href
      )) as typeof import("./text_within.ts")).textWithin,
  },
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
  // Every module in one load; each entry's import then finds its module loaded.
  await import(new URL("./_all.ts", import.meta.url).href);
  return Object.freeze(await Promise.all(PREDICTOR_IDS.map(predictorById)));
}
