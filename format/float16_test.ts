/**
 * Tests of `float16.ts`: every binary16 pattern, to numbers and binary32 and back.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  float16BitsToFloat32Bits,
  float16ToNumber,
  float32BitsToFloat16Bits,
  numberToFloat16,
} from "./float16.ts";
import { prng } from "./_test_utils.ts";

const isNaNHalf = (h: number) => (h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0;

Deno.test("float16ToNumber() and numberToFloat16() invert each other on every pattern", () => {
  for (let h = 0; h < 0x10000; h++) {
    const x = float16ToNumber(h);
    if (isNaNHalf(h)) {
      assert.ok(Number.isNaN(x), `0x${h.toString(16)}`);
      continue;
    }
    assert.equal(numberToFloat16(x), h, `0x${h.toString(16)} = ${x}`);
  }
});

Deno.test("numberToFloat16() rounds like the platform's Float16Array", () => {
  const Half =
    (globalThis as unknown as { Float16Array?: new (n: number) => { [i: number]: number } })
      .Float16Array;
  if (Half === undefined) return; // no reference on this runtime
  const cell = new Half(1);
  const bits = new Uint16Array((cell as unknown as { buffer: ArrayBuffer }).buffer);
  const rand = prng(16);
  const cases = [65504, 65519.99, 65520, 6.103515625e-5, 5.960464477539063e-8, 2.98e-8, 1e-9];
  for (let i = 0; i < 20_000; i++) {
    const scale = 2 ** (Math.floor(rand() * 50) - 30);
    cases.push((rand() - 0.5) * scale);
  }
  for (let h = 0; h < 0x7c00; h += 7) {
    // Exactly halfway between two neighbours: ties to even.
    cases.push((float16ToNumber(h) + float16ToNumber(h + 1)) / 2);
  }
  for (const x of cases) {
    cell[0] = x;
    assert.equal(numberToFloat16(x), bits[0], `${x}`);
  }
});

Deno.test("float16BitsToFloat32Bits() keeps every pattern, NaN payloads included", () => {
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  for (let h = 0; h < 0x10000; h++) {
    const single = float16BitsToFloat32Bits(h);
    assert.equal(float32BitsToFloat16Bits(single), h, `0x${h.toString(16)}`);
    if (isNaNHalf(h)) continue;
    u[0] = single;
    assert.ok(Object.is(f[0], float16ToNumber(h)), `value of 0x${h.toString(16)}`);
  }
});

Deno.test("float32BitsToFloat16Bits() refuses a float32 that is not a half", () => {
  assert.equal(float32BitsToFloat16Bits(0x3f800001), -1); // 1 + 2^-23
  assert.equal(float32BitsToFloat16Bits(0x47800000), -1); // 65536
  assert.equal(float32BitsToFloat16Bits(0x33000000), -1); // 2^-25
  assert.equal(float32BitsToFloat16Bits(0x7f800001), -1); // a payload in the low 13 bits
  assert.equal(float32BitsToFloat16Bits(0x33800000), 0x0001); // 2^-24, the least half
});
