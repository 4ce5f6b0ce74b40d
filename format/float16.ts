/**
 * IEEE 754 binary16 ("half") values, held as their 16-bit patterns: to and from
 * numbers, and to and from binary32 patterns bit for bit (NaN payloads included), so
 * a float16 column can travel through a float32 container (Parquet written by DuckDB,
 * which has no half type) and come back the same bits. Implements the float16
 * column type of FORMAT.md §3.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */

/**
 * The number an IEEE 754 binary16 bit pattern stands for (exact: every half is a double).
 *
 * @param bits A 16-bit pattern.
 * @returns Its value (NaN for every NaN pattern).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { float16ToNumber } from "./float16.ts";
 * assert.equal(float16ToNumber(0x3c00), 1);
 * assert.equal(float16ToNumber(0xfbff), -65504);
 * ```
 */
export function float16ToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant === 0 ? sign * Infinity : NaN;
  return sign * (1024 + mant) * 2 ** (exp - 25);
}

/**
 * The binary16 bit pattern nearest to a number (round half to even; overflow to
 * ±Infinity; NaN becomes the quiet NaN `0x7e00`).
 *
 * @param x A number.
 * @returns Its 16-bit pattern.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { numberToFloat16 } from "./float16.ts";
 * assert.equal(numberToFloat16(1), 0x3c00);
 * assert.equal(numberToFloat16(-0), 0x8000);
 * assert.equal(numberToFloat16(65520), 0x7c00);
 * ```
 */
export function numberToFloat16(x: number): number {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a === Infinity) return sign | 0x7c00;
  // Quanta: 2^-24 below 2^-14 (subnormals), else 2^(e-10) for a in [2^e, 2^(e+1)).
  const e = a < 2 ** -14 ? -14 : Math.floor(Math.log2(a));
  const exp = a >= 2 ** (e + 1) ? e + 1 : a < 2 ** e ? e - 1 : e; // log2 rounding guard
  const quantum = 2 ** (Math.max(exp, -14) - 10);
  const q = a / quantum; // exact: a power-of-two division
  let m = Math.floor(q);
  const rest = q - m;
  if (rest > 0.5 || (rest === 0.5 && (m & 1) === 1)) m += 1;
  // m counts quanta of `quantum`: the result is m · quantum, re-normalized.
  const value = m * quantum;
  if (value >= 65520 || value > 65504) return sign | 0x7c00;
  if (value < 2 ** -14) return sign | m; // subnormal (m < 1024) or rounded up to 2^-14 (m = 1024)
  const ve = Math.floor(Math.log2(value));
  const exact = value >= 2 ** (ve + 1) ? ve + 1 : value < 2 ** ve ? ve - 1 : ve;
  return sign | ((exact + 15) << 10) | (value / 2 ** (exact - 10) - 1024);
}

/**
 * The binary32 pattern of the same value as a binary16 pattern, bit for bit: a NaN keeps
 * its quiet bit and payload (shifted into the top of the binary32 payload).
 *
 * @param half A 16-bit pattern.
 * @returns The 32-bit pattern (as an unsigned number).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { float16BitsToFloat32Bits } from "./float16.ts";
 * assert.equal(float16BitsToFloat32Bits(0x3c00), 0x3f800000);
 * assert.equal(float16BitsToFloat32Bits(0x7e01), 0x7fc02000);
 * ```
 */
export function float16BitsToFloat32Bits(half: number): number {
  const sign = (half & 0x8000) << 16;
  const exp = (half >> 10) & 0x1f;
  const mant = half & 0x3ff;
  if (exp === 0x1f) return (sign | 0x7f800000 | (mant << 13)) >>> 0;
  if (exp !== 0) return (sign | ((exp + 112) << 23) | (mant << 13)) >>> 0;
  if (mant === 0) return sign >>> 0;
  // Subnormal half: normal in binary32.
  let e = 113;
  let m = mant;
  while ((m & 0x400) === 0) {
    m <<= 1;
    e--;
  }
  return (sign | (e << 23) | ((m & 0x3ff) << 13)) >>> 0;
}

/**
 * The binary16 pattern whose {@linkcode float16BitsToFloat32Bits} is `single`, or -1
 * when there is none (the float32 is not exactly a float16, NaN payload included).
 *
 * @param single A 32-bit pattern.
 * @returns The 16-bit pattern, or -1.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { float32BitsToFloat16Bits } from "./float16.ts";
 * assert.equal(float32BitsToFloat16Bits(0x3f800000), 0x3c00);
 * assert.equal(float32BitsToFloat16Bits(0x3f800001), -1);
 * ```
 */
export function float32BitsToFloat16Bits(single: number): number {
  const sign = (single >>> 16) & 0x8000;
  const exp = (single >>> 23) & 0xff;
  const mant = single & 0x7fffff;
  let half: number;
  if (exp === 0xff) half = sign | 0x7c00 | (mant >>> 13);
  else if (exp === 0 && mant === 0) half = sign;
  else if (exp >= 113 && exp <= 142) half = sign | ((exp - 112) << 10) | (mant >>> 13);
  else if (exp >= 103 && exp < 113) half = sign | ((0x400 | (mant >>> 13)) >>> (113 - exp));
  else return -1;
  return float16BitsToFloat32Bits(half) === single >>> 0 ? half : -1;
}
