/**
 * `--where` on float32 and float16 columns: a literal is read as the column's own type,
 * as its values are read and shown, so `x = 0.1` finds the float32 0.1.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Batch, Schema } from "../format/column.ts";
import { compileWhere } from "./where.ts";

const SCHEMA: Schema = [
  { name: "x", type: "float32", nullable: true },
  { name: "h", type: "float16", nullable: false },
];

const BATCH: Batch = {
  schema: SCHEMA,
  columns: [
    {
      type: "float32",
      values: Float32Array.of(0.1, 100.51, NaN, -0, 2),
      validity: Uint8Array.of(1, 1, 1, 1, 0),
    },
    // 0.1, 100.5, NaN, -0, 2 as halves
    {
      type: "float16",
      values: Uint16Array.of(0x2e66, 0x5648, 0x7e00, 0x8000, 0x4000),
      validity: null,
    },
  ],
  length: 5,
};

function rows(where: string): number[] {
  const mask = compileWhere(where, SCHEMA).mask(BATCH);
  return [...mask.keys()].filter((i) => mask[i] === 1);
}

Deno.test("compileWhere() reads a literal as the float32 or float16 of its column", () => {
  assert.deepEqual(rows("x = 0.1"), [0]);
  assert.deepEqual(rows("x = 100.51"), [1]);
  assert.deepEqual(rows("x < 100.51"), [0, 3]);
  assert.deepEqual(rows("x >= 100.51"), [1]);
  assert.deepEqual(rows("x = 0"), [3], "-0 equals 0; NaN and nulls never match");
  assert.deepEqual(rows("h = 0.1"), [0]);
  assert.deepEqual(rows("h = 100.5"), [1]);
  assert.deepEqual(rows("h > 1"), [1, 4]);
});

Deno.test("compileWhere() prunes float32 chunks by their statistics", () => {
  const where = compileWhere("x = 0.1", SCHEMA);
  const stats = (min: number, max: number) => () => ({ min, max, null_count: 0 });
  assert.equal(where.mayMatch(stats(Math.fround(0.1), 5), 10), true);
  assert.equal(where.mayMatch(stats(0.2, 5), 10), false);
});
