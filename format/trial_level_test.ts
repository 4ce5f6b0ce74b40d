/**
 * The predictor trial's yardstick follows the block's codec: zstd 3 for zstd blocks,
 * zstd 19 for the strong codecs (lzma2, zpaq, zpaqwasm), which rank candidates as
 * those codecs do — a sorted float32 column of repeats is smaller as deltas under
 * them, while a fast zstd prefers its byte planes.
 */
import assert from "node:assert/strict";
import { codecById } from "../codecs/registry.ts";
import { encodeBlock, predictBlock, STRONG_TRIAL_LEVEL, TRIAL_LEVEL } from "./block_encode.ts";
import type { Column, Field } from "./column.ts";

/** Hours of the day in 1/12 steps, sorted, each repeated (like flights' departure times). */
function sortedTimes(rows: number): Column {
  let s = 11;
  const next = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  const values = new Float32Array(rows);
  let t = 0;
  for (let i = 0; i < rows; i++) {
    if (next() < 0.004) t += Math.ceil(next() * 3) / 12;
    values[i] = Math.fround(t);
  }
  return { type: "float32", values, validity: null };
}

const field: Field = { name: "time", type: "float32", nullable: false };
const plan = { deps: [], quantization: "QUANT_NONE" as const };

Deno.test("the trial sizes candidates with zstd 19 for a strong codec, zstd 3 otherwise", async () => {
  const column = sortedTimes(50_000);
  const fast = predictBlock(column, { field, plan, deps: [], trialLevel: TRIAL_LEVEL });
  const strong = predictBlock(column, { field, plan, deps: [], trialLevel: STRONG_TRIAL_LEVEL });
  assert.notEqual(fast.predictor.id, strong.predictor.id);
  // encodeBlock picks the level from the codec, and the strong choice is smaller there.
  const lzma2 = codecById("lzma2");
  const chosen = await encodeBlock(column, { field, plan, deps: [], codec: lzma2 });
  assert.equal(chosen.predictor, strong.predictor.id);
  const other = await lzma2.encode(fast.bytes);
  const mine = await lzma2.encode(strong.bytes);
  assert.ok(mine.length < other.length, `${mine.length} B vs ${other.length} B`);
  const zstd = await encodeBlock(column, { field, plan, deps: [], codec: codecById("zstd") });
  assert.equal(zstd.predictor, fast.predictor.id);
});
