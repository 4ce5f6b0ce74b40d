/**
 * Tests of `float64_planes.ts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { float64Planes } from "./float64_planes.ts";
import {
  assertFormatError,
  encodeWith,
  fieldOf,
  floatBits,
  floats,
  roundTrip,
} from "./_test_utils.ts";

function fromBits(bits: bigint[]): Float64Array {
  return new Float64Array(BigUint64Array.from(bits).buffer);
}

Deno.test("float64Planes.decode() returns the encoded bits", async (t) => {
  const special = fromBits([
    0x7ff8000000000001n, // quiet NaN with a payload
    0x7ff0000000000001n, // signalling NaN
    0xfff8000000000000n, // negative NaN
    0x8000000000000000n, // -0
    0x0000000000000001n, // smallest subnormal
    0x800fffffffffffffn, // largest negative subnormal
  ]);
  const cases: [string, Float64Array][] = [
    ["no rows", new Float64Array(0)],
    ["one row", Float64Array.of(1.5)],
    [
      "specials",
      Float64Array.of(0, -0, Infinity, -Infinity, NaN, Number.MAX_VALUE, Number.MIN_VALUE),
    ],
    ["NaN payloads, -0 and subnormals", special],
    ["a smooth series", Float64Array.from({ length: 1000 }, (_, i) => 20 + Math.sin(i / 50))],
  ];
  for (const [label, values] of cases) {
    await t.step(label, () => {
      const column = { type: "float64" as const, values, validity: null };
      const { decoded } = roundTrip(float64Planes, column);
      assert.deepEqual(floatBits(decoded.values as Float64Array), floatBits(values));
    });
  }
});

Deno.test("float64Planes.encode() puts the sign and exponent byte in the last plane", () => {
  const { bytes } = encodeWith(float64Planes, floats([1, -2]));
  // 1 = 0x3ff0000000000000, -2 = 0xc000000000000000
  assert.deepEqual([...bytes!], [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0, 0x3f, 0xc0]);
});

Deno.test("float64Planes.decode() throws CORRUPT when a plane is short", () => {
  const field = fieldOf("float64");
  const { bytes } = encodeWith(float64Planes, floats([1, 2]));
  assertFormatError(
    () => float64Planes.decode(bytes!.subarray(0, 16), 2, { field, deps: [] }),
    "CORRUPT",
    /need 16 bytes .* 15 left/,
  );
  assertFormatError(
    () => float64Planes.decode(bytes!, 1, { field, deps: [] }),
    "CORRUPT",
    /expected 1 rows, found 2/,
  );
});
