/**
 * Tests of how `peek` and `audit` show float32 and float16 values: the shortest text
 * that reads back as the stored value, not the double expansion of its bits.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Field } from "../format/column.ts";
import { displayCell, statValue } from "./inspect.ts";

const F32: Field = { name: "x", type: "float32", nullable: true };
const F16: Field = { name: "h", type: "float16", nullable: true };

Deno.test("displayCell() shows a float32 or float16 by its shortest text's number", () => {
  assert.equal(displayCell(Math.fround(0.1), F32), 0.1);
  assert.equal(displayCell(Math.fround(100.03), F32), 100.03);
  assert.equal(displayCell(0.0999755859375, F16), 0.1); // the float16 nearest 0.1
  assert.ok(Object.is(displayCell(-0, F32), -0));
  assert.equal(displayCell(Infinity, F32), "Infinity");
  assert.equal(displayCell(null, F16), null);
  // float64 stays its own shortest form.
  assert.equal(displayCell(Math.fround(0.1), { ...F32, type: "float64" }), 0.10000000149011612);
});

Deno.test("statValue() shows float32 and float16 statistics the same way", () => {
  assert.equal(statValue(F32, Math.fround(47.35)), 47.35);
  assert.equal(statValue(F16, 65504), 65500);
  assert.equal(statValue(F32, "Infinity"), "Infinity");
});
