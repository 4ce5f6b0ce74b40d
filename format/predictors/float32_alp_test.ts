/**
 * Tests of `float32_alp.ts` beyond the shared float32 suite: the exponent it picks,
 * exceptions, its size against the plane predictors on decimal data, and damage.
 *
 * @module
 */
import assert from "node:assert/strict";
import { prng } from "../_test_utils.ts";
import { trialSize } from "../block_encode.ts";
import { encodeWith, fieldOf, roundTrip } from "./_test_utils.ts";
import { float32Alp } from "./float32_alp.ts";
import { float32Planes } from "./float32_planes.ts";
import { float32Xor } from "./float32_xor.ts";

function cents(n: number, seed: number): Float32Array {
  const rand = prng(seed);
  let walk = 100;
  return Float32Array.from({ length: n }, () => {
    walk += Math.round((rand() - 0.5) * 10) / 100;
    return Math.round(walk * 100) / 100;
  });
}

function bits(values: Float32Array): number[] {
  return [...new Uint32Array(values.slice().buffer)];
}

Deno.test("float32Alp.encode() stores cents with exponent 2, exceptions bit for bit", () => {
  const values = cents(2000, 1);
  const special = new Uint32Array(values.buffer);
  special[10] = 0x7fa00001; // signalling NaN with a payload
  special[11] = 0x80000000; // -0
  special[12] = 0x7f800000; // Infinity
  values[13] = Math.fround(Math.PI); // more digits than the rest
  const column = { type: "float32" as const, values, validity: null };
  const { bytes, decoded } = roundTrip(float32Alp, column);
  assert.equal(bytes[2], 2, "exponent byte after the 2-byte row count");
  assert.equal(bytes[3], 4, "four exceptions");
  assert.deepEqual(bits(decoded.values as Float32Array), bits(values));
});

Deno.test("float32Alp is smaller than the plane predictors on decimal data", () => {
  const column = { type: "float32" as const, values: cents(50_000, 2), validity: null };
  const alp = trialSize(encodeWith(float32Alp, column).bytes!);
  const planes = trialSize(encodeWith(float32Planes, column).bytes!);
  const xor = trialSize(encodeWith(float32Xor, column).bytes!);
  assert.ok(alp < planes && alp < xor, `alp ${alp}, planes ${planes}, xor ${xor}`);
});

Deno.test("float32Alp.encode() declines a block that is mostly not decimal", () => {
  const rand = prng(3);
  // Magnitudes past 2^31 at every exponent: no value is an int32 over a power of ten.
  const values = Float32Array.from({ length: 3000 }, () => (rand() + 1) * 1e12);
  const declined = encodeWith(float32Alp, { type: "float32", values, validity: null }).bytes;
  assert.ok(declined === null, "declined");
});

Deno.test("float32Alp.decode() refuses a bad exponent, width or exception row", () => {
  const field = fieldOf("float32");
  const values = Float32Array.of(1.5, NaN, 2.5, NaN);
  const { bytes } = roundTrip(float32Alp, { type: "float32", values, validity: null });
  // [n=4][e][x=2][row 1][4 B][row 3][4 B][width][planes]
  assert.deepEqual([bytes[0], bytes[2], bytes[3], bytes[8]], [4, 2, 1, 3]);
  const cases: [string, number, number][] = [
    ["exponent 11", 1, 11],
    ["too many exceptions", 2, 5],
    ["rows out of order", 8, 1],
    ["row past the end", 8, 4],
    ["width 5", 13, 5],
    ["width 0", 13, 0],
  ];
  for (const [label, at, value] of cases) {
    const bad = bytes.slice();
    bad[at] = value;
    assert.throws(() => float32Alp.decode(bad, 4, { field, deps: [] }), { code: "CORRUPT" }, label);
  }
});
