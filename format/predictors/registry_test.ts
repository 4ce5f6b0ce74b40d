/**
 * Tests of `registry.ts` and `trial.ts`: what is registered, lookups that fail, and
 * the writer's candidates.
 *
 * @module
 */
import assert from "node:assert/strict";
import { FormatError } from "../errors.ts";
import { fieldOf } from "./_test_utils.ts";
import { QUANTIZER_FOR } from "./float_quant.ts";
import { NARROW_QUANTIZER_FOR } from "./float_quant_narrow.ts";
import { loadPredictors, PREDICTOR_IDS, predictorById } from "./registry.ts";
import { PREDICTORS, predictorsFor } from "./trial.ts";

/** Ids are written into archives: this list only ever grows, at the end. */
const PINNED_IDS = [
  "delta_zigzag",
  "lag1_zigzag",
  "frame_zigzag",
  "ts_delta_s",
  "category_u8",
  "raw_text",
  "float64_planes",
  "float_quant_high",
  "float_quant_medium",
  "float_quant_low",
  "bool_bits",
  "keyed_rank",
  "decimal_frame",
  "decimal_delta",
  "wide_zigzag",
  "float32_planes",
  "float32_xor",
  "float16_planes",
  "float16_xor",
  "keyed_freq",
  "float_quant_medium_f32",
  "float_quant_low_f16",
  "float32_alp",
  "freq_rank",
  "float32_delta",
  "float16_delta",
  "json_schema_v2",
  "decimal_dms",
  "text_lines",
  "text_within",
];

Deno.test("PREDICTORS lists every predictor once, with its pinned id", () => {
  assert.deepEqual(PREDICTORS.map((p) => p.id), PINNED_IDS);
  assert.deepEqual(PREDICTOR_IDS, PINNED_IDS);
  assert.equal(new Set(PREDICTORS).size, PREDICTORS.length);
  assert.equal(new Set(PREDICTOR_IDS).size, PREDICTOR_IDS.length);
  for (const id of PREDICTOR_IDS) assert.match(id, /^[a-z][a-z0-9_]*$/);
});

Deno.test("PREDICTORS is frozen, and so is each predictor", () => {
  assert.ok(Object.isFrozen(PREDICTORS));
  assert.ok(Object.isFrozen(PREDICTOR_IDS));
  assert.throws(() => (PREDICTORS as unknown as unknown[]).push(PREDICTORS[0]), TypeError);
  for (const p of PREDICTORS) assert.ok(Object.isFrozen(p), p.id);
});

Deno.test("PREDICTORS holds every quantizer of QUANTIZER_FOR", () => {
  for (const q of [...Object.values(QUANTIZER_FOR), ...Object.values(NARROW_QUANTIZER_FOR)]) {
    if (q !== null) assert.ok(PREDICTORS.includes(q), q.id);
  }
});

Deno.test("predictorById() returns each registered predictor", async () => {
  for (const p of PREDICTORS) assert.equal(await predictorById(p.id), p);
  assert.deepEqual(await loadPredictors(), PREDICTORS);
});

Deno.test("predictorById() rejects UNKNOWN_PREDICTOR naming the id and the known ones", async () => {
  await assert.rejects(predictorById("gorilla"), (err: unknown) => {
    assert.ok(err instanceof FormatError);
    assert.equal(err.code, "UNKNOWN_PREDICTOR");
    assert.equal(
      err.message,
      `Cannot find predictor 'gorilla': known predictors are ${
        PINNED_IDS.map((id) => `'${id}'`).join(", ")
      }`,
    );
    return true;
  });
  for (const id of ["", "RAW_TEXT", "toString", "__proto__", "constructor"]) {
    await assert.rejects(predictorById(id), { name: "FormatError", code: "UNKNOWN_PREDICTOR" });
  }
});

Deno.test("predictorsFor() returns the lossless, self-contained candidates of each type", () => {
  const ids = (type: Parameters<typeof fieldOf>[0]) =>
    predictorsFor(fieldOf(type)).map((p) => p.id);
  assert.deepEqual(ids("int64"), ["delta_zigzag", "lag1_zigzag", "frame_zigzag", "freq_rank"]);
  assert.deepEqual(ids("date"), ["delta_zigzag", "lag1_zigzag", "frame_zigzag", "freq_rank"]);
  assert.deepEqual(ids("timestamp"), ["delta_zigzag", "lag1_zigzag", "frame_zigzag", "ts_delta_s"]);
  assert.deepEqual(ids("string"), [
    "category_u8",
    "raw_text",
    "freq_rank",
    "json_schema_v2",
    "text_lines",
  ]);
  assert.deepEqual(ids("float64"), [
    "float64_planes",
    "decimal_frame",
    "decimal_delta",
    "decimal_dms",
  ]);
  assert.deepEqual(ids("bool"), ["bool_bits"]);
  assert.deepEqual(ids("time"), ["delta_zigzag", "lag1_zigzag", "frame_zigzag"]);
  assert.deepEqual(ids("duration"), ["delta_zigzag", "lag1_zigzag", "frame_zigzag"]);
  assert.deepEqual(ids("decimal"), ["delta_zigzag", "lag1_zigzag", "frame_zigzag"]);
  assert.deepEqual(
    predictorsFor(fieldOf("decimal", 38)).map((p) => p.id),
    ["delta_zigzag", "lag1_zigzag", "frame_zigzag", "wide_zigzag"],
  );
  assert.deepEqual(ids("json"), ["category_u8", "raw_text", "json_schema_v2", "text_lines"]);
});

Deno.test("_all.ts imports every file the registry loads, and nothing else", async () => {
  // The registry imports by computed specifiers; _all.ts is what puts those files in
  // deno compile's and a library user's module graph, so a file missing there would
  // be missing from a compiled binary.
  const text = (name: string) => Deno.readTextFile(new URL(name, import.meta.url));
  const loaded = [...(await text("./registry.ts")).matchAll(/new URL\("(\.\/[^"]+)"/g)]
    .map((m) => m[1]!).filter((f) => f !== "./_all.ts");
  const all = [...(await text("./_all.ts")).matchAll(/^import "(\.\/[^"]+)";$/gm)].map((m) =>
    m[1]!
  );
  assert.deepEqual([...new Set(loaded)].sort(), all.toSorted());
  assert.equal(all.length, new Set(all).size);
});
