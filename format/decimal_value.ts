/**
 * Exact decimal values as the column model holds them: an unscaled integer and the
 * field's scale (value = unscaled / 10^scale). Text in and out, precision checks, and
 * the two's-complement little-endian words Arrow's Decimal128/256 store.
 *
 * Pure: no I/O, no floating point anywhere (a decimal never passes through a double).
 *
 * @module
 */
import { MAX_DECIMAL_PRECISION } from "./column.ts";

/**
 * 10^k for k = 0..MAX_DECIMAL_PRECISION, as bigints, each made on first use: the
 * CSV writer loads this module for every thaw, and building the whole table when it
 * loads cost a 10-row slice ~0.1 ms, mostly for columns that are not decimals.
 */
const POW10: bigint[] = [];

/**
 * 10^k as a bigint.
 *
 * @param k 0..76.
 * @returns 10^k.
 */
export function pow10(k: number): bigint {
  if (!Number.isInteger(k) || k < 0 || k > MAX_DECIMAL_PRECISION) return 10n ** BigInt(k);
  return POW10[k] ??= 10n ** BigInt(k);
}

/**
 * Whether an unscaled value fits `precision` digits.
 *
 * @param unscaled The unscaled integer.
 * @param precision Total digits.
 * @returns True when |unscaled| < 10^precision.
 */
export function fitsPrecision(unscaled: bigint, precision: number): boolean {
  const limit = pow10(precision);
  return unscaled < limit && unscaled > -limit;
}

/**
 * Formats an unscaled decimal as plain text: `-12.30` for (-1230, 2), `0.05` for
 * (5, 2), `123` for (123, 0). Every fraction digit of the scale is written, so the
 * text names the value and its scale.
 *
 * @param unscaled The unscaled integer.
 * @param scale Digits after the point (≥ 0).
 * @returns The decimal text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatDecimal } from "./decimal_value.ts";
 * assert.equal(formatDecimal(123456789012345678n, 2), "1234567890123456.78");
 * assert.equal(formatDecimal(-5n, 3), "-0.005");
 * ```
 */
export function formatDecimal(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString();
  if (scale === 0) return negative ? "-" + digits : digits;
  const padded = digits.length <= scale ? "0".repeat(scale - digits.length + 1) + digits : digits;
  const point = padded.length - scale;
  return (negative ? "-" : "") + padded.slice(0, point) + "." + padded.slice(point);
}

const DECIMAL_TEXT = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * Parses decimal text to an unscaled integer of `scale`, exactly: `"12.3"` at scale 2
 * is 1230n. Accepts an optional sign, digits with an optional point and an optional
 * exponent (`1.5e3`). Returns null when the text is not a number or has more fraction
 * digits than `scale` allows (other than trailing zeros), so nothing is ever rounded.
 *
 * @param text The text.
 * @param scale The target scale (≥ 0).
 * @returns The unscaled value, or null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDecimal } from "./decimal_value.ts";
 * assert.equal(parseDecimal("-0.50", 2), -50n);
 * assert.equal(parseDecimal("0.125", 2), null);
 * ```
 */
export function parseDecimal(text: string, scale: number): bigint | null {
  const m = DECIMAL_TEXT.exec(text.trim());
  if (m === null) return null;
  const [, sign, whole = "", fraction = "", exponent] = m;
  if (whole === "" && fraction === "") return null;
  const exp = exponent === undefined ? 0 : Number(exponent);
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 10_000) return null;
  // digits × 10^(exp - fraction.length) must be a multiple of 10^-scale.
  let digits = (whole + fraction).replace(/^0+(?=\d)/, "");
  let shift = exp - fraction.length + scale;
  if (shift < 0) {
    const drop = digits.slice(shift);
    if (!/^0*$/.test(drop)) return null;
    digits = digits.slice(0, shift) || "0";
    shift = 0;
  }
  if (digits.length + shift > 10_000) return null;
  const value = BigInt(digits) * pow10(shift);
  return sign === "-" ? -value : value;
}

/**
 * Compares two decimals given with their scales, exactly.
 *
 * @param a Unscaled value of the first.
 * @param aScale Its scale.
 * @param b Unscaled value of the second.
 * @param bScale Its scale.
 * @returns Negative, zero or positive.
 */
export function compareDecimal(a: bigint, aScale: number, b: bigint, bScale: number): number {
  const x = aScale < bScale ? a * pow10(bScale - aScale) : a;
  const y = bScale < aScale ? b * pow10(aScale - bScale) : b;
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Reads one two's-complement little-endian integer of `words` 32-bit words (Arrow's
 * Decimal128: 4 words, Decimal256: 8).
 *
 * @param data The words.
 * @param index Value index.
 * @param words Words per value.
 * @returns The signed integer.
 */
export function readWords(data: Uint32Array, index: number, words: number): bigint {
  const base = index * words;
  let v = 0n;
  for (let w = words - 1; w >= 0; w--) v = (v << 32n) | BigInt(data[base + w] ?? 0);
  return BigInt.asIntN(words * 32, v);
}

/**
 * Writes one signed integer as `words` two's-complement little-endian 32-bit words.
 *
 * @param data The words.
 * @param index Value index.
 * @param words Words per value.
 * @param value The integer (must fit `words * 32` bits).
 */
export function writeWords(data: Uint32Array, index: number, words: number, value: bigint): void {
  let v = BigInt.asUintN(words * 32, value);
  const base = index * words;
  for (let w = 0; w < words; w++) {
    data[base + w] = Number(v & 0xffffffffn);
    v >>= 32n;
  }
}
