/**
 * The lossy float quantizers `float_quant_high`, `float_quant_medium` and
 * `float_quant_low` (float64, `lossy: true`), used only when a column asks for
 * `QUANT_HIGH`, `QUANT_MEDIUM` or `QUANT_LOW`; {@linkcode QUANTIZER_FOR} maps
 * each level to its predictor.
 *
 * Each rounds the 52-bit mantissa of every value to its nearest value with
 * 36, 23 or 10 mantissa bits (round half to even, on the bit pattern), then
 * stores the byte planes the way `float64_planes` does, minus the low planes
 * that rounding left all zero. Rounding may carry into the exponent (1.999…
 * becomes 2), as IEEE rounding does.
 *
 * Error bounds, for a finite value `x` and its decoded `y`:
 * - normal `x`: `|y - x| ≤ 2^-(k+1) · |x|` with `k` kept mantissa bits, that is
 *   2^-37 ≈ 7.3e-12 (high), 2^-24 ≈ 6.0e-8 (medium, like float32),
 *   2^-11 ≈ 4.9e-4 (low, like float16);
 * - within half a quantum of `Number.MAX_VALUE`, where rounding up would give
 *   Infinity, the value is rounded down instead: `|y - x| < 2^-k · |x|`;
 * - subnormal `x`: `|y - x| ≤ 2^(52 - k - 1075)` (half a quantum).
 * NaN (payload included), ±Infinity, +0 and -0 are stored bit for bit.
 * {@linkcode maxQuantizationError} returns the bound for any value.
 *
 * Layout (FORMAT.md §4): `[varint n][planes p..7 of the rounded bit patterns]
 * [varint e][e × (varint row, p bytes: planes 0..p-1 of that row)]`, where
 * `p = floor((52 - k) / 8)`: planes 2..7 (high), 3..7 (medium), 5..7 (low).
 * Rounding zeroes planes 0..p-1 of every value but a NaN, which keeps its
 * payload: the `e` rows (in increasing order) whose skipped planes are not
 * zero carry those bytes on the side, so the payload survives.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { Column, Field, FloatColumn } from "../column.ts";
import { FormatError } from "../errors.ts";
import { checkDecodeField, expectColumn, openBlock } from "./_common.ts";
import {
  floatsFromWords,
  readPlaneRange,
  varintSize,
  wordsOf,
  writePlaneRange,
  writeVarint,
} from "./_ints.ts";
import type { DecodeContext, Predictor, Quantization } from "./predictor.ts";

const FLOAT: ReadonlySet<Field["type"]> = new Set(["float64"]);
const TWO_32 = 4294967296;

/** Mantissa bits each quantization level keeps (`QUANT_NONE` keeps all 52). */
export const QUANT_MANTISSA_BITS: Readonly<Record<Quantization, number>> = Object.freeze({
  QUANT_NONE: 52,
  QUANT_HIGH: 36,
  QUANT_MEDIUM: 23,
  QUANT_LOW: 10,
});

/**
 * Largest relative error of each level on normal values: `2^-(k+1)` (0 for
 * `QUANT_NONE`). See {@linkcode maxQuantizationError} for the exceptions.
 */
export const QUANT_MAX_RELATIVE_ERROR: Readonly<Record<Quantization, number>> = Object.freeze({
  QUANT_NONE: 0,
  QUANT_HIGH: 2 ** -37,
  QUANT_MEDIUM: 2 ** -24,
  QUANT_LOW: 2 ** -11,
});

/**
 * Returns the largest absolute error a level may add to `x`.
 *
 * @param quantization The level.
 * @param x A value.
 * @returns 0 for non-finite values, zeros and `QUANT_NONE`; else the bound from the module doc.
 *
 * @example Bound of 1000 at medium quantization
 * ```ts
 * import assert from "node:assert/strict";
 * import { maxQuantizationError } from "./float_quant.ts";
 * assert.equal(maxQuantizationError("QUANT_MEDIUM", 1000), 1000 * 2 ** -24);
 * ```
 */
export function maxQuantizationError(quantization: Quantization, x: number): number {
  const k = QUANT_MANTISSA_BITS[quantization];
  const a = Math.abs(x);
  if (k === 52 || !Number.isFinite(x) || a === 0) return 0;
  if (a < 2 ** -1022) return 2 ** (52 - k - 1075);
  const nearMax = a > Number.MAX_VALUE - 2 ** (1023 - k - 1);
  return a * 2 ** -(k + (nearMax ? 0 : 1));
}

/**
 * The bit patterns (two little-endian 32-bit words per value) of `values` rounded the
 * way `quantization`'s predictor rounds them: what every quantizer of that level must
 * decode to, whatever it stores (`float_quant_narrow.ts` stores them as float32/float16).
 *
 * @param values The values.
 * @param quantization A lossy level (`QUANT_NONE` returns the bits unchanged).
 * @returns A new array of `2 · values.length` words.
 */
export function quantizedWords(values: Float64Array, quantization: Quantization): Uint32Array {
  const words = wordsOf(values).slice();
  const drop = 52 - QUANT_MANTISSA_BITS[quantization];
  if (drop > 0) quantizeInPlace(words, drop);
  return words;
}

/**
 * Rounds every finite value's mantissa to its top `52 - drop` bits, half to
 * even, in place. `drop` must be in 1..31 or 33..51.
 */
function quantizeInPlace(words: Uint32Array, drop: number): void {
  if (drop < 32) {
    const unit = 2 ** drop;
    const half = unit / 2;
    for (let i = 0; i < words.length; i += 2) {
      const hi = words[i + 1]!;
      if ((hi & 0x7ff00000) === 0x7ff00000) continue; // NaN, ±Infinity
      const lo = words[i]!;
      const rem = lo % unit;
      const down = lo - rem;
      if (rem > half || (rem === half && (down / unit) % 2 === 1)) {
        let up = down + unit;
        let upHi = hi;
        if (up >= TWO_32) {
          up -= TWO_32;
          upHi = hi + 1;
        }
        // Rounding up into the all-ones exponent would make Infinity: round down.
        if ((upHi & 0x7ff00000) !== 0x7ff00000) {
          words[i] = up;
          words[i + 1] = upHi;
          continue;
        }
      }
      words[i] = down;
    }
  } else {
    const unit = 2 ** (drop - 32);
    const half = unit / 2;
    for (let i = 0; i < words.length; i += 2) {
      const hi = words[i + 1]!;
      if ((hi & 0x7ff00000) === 0x7ff00000) continue;
      const lo = words[i]!;
      const rem = hi % unit; // the sign bit is above the dropped bits
      const down = hi - rem;
      words[i] = 0;
      words[i + 1] = down;
      if (rem > half || (rem === half && (lo !== 0 || (down / unit) % 2 === 1))) {
        const up = down + unit;
        if ((up & 0x7ff00000) !== 0x7ff00000) words[i + 1] = up;
      }
    }
  }
}

function makeQuantizer(id: string, quantization: Quantization): Predictor {
  const drop = 52 - QUANT_MANTISSA_BITS[quantization];
  const skipped = Math.floor(drop / 8);
  const planes = [skipped, 8] as const;
  const planeCount = planes[1] - planes[0];
  // Bits of the skipped planes, in the low and high words.
  const lowMask = skipped >= 4 ? 0xffffffff : 2 ** (8 * skipped) - 1;
  const highMask = skipped > 4 ? 2 ** (8 * (skipped - 4)) - 1 : 0;

  function matches(field: Field): boolean {
    return field.type === "float64";
  }

  function encode(column: Column): Uint8Array {
    const { values } = expectColumn(id, column, FLOAT) as FloatColumn;
    const n = values.length;
    const words = wordsOf(values).slice();
    quantizeInPlace(words, drop);
    // Rows whose skipped planes are not zero: NaNs with a low payload.
    const exceptions: number[] = [];
    for (let i = 0; i < n; i++) {
      if (((words[2 * i]! & lowMask) | (words[2 * i + 1]! & highMask)) !== 0) exceptions.push(i);
    }
    let size = varintSize(n) + planeCount * n + varintSize(exceptions.length);
    for (const row of exceptions) size += varintSize(row) + skipped;
    const out = new Uint8Array(size);
    let at = writePlaneRange(words, planes, out, writeVarint(out, 0, n));
    at = writeVarint(out, at, exceptions.length);
    for (const row of exceptions) {
      at = writeVarint(out, at, row);
      for (let p = 0; p < skipped; p++) {
        out[at++] = words[2 * row + (p < 4 ? 0 : 1)]! >>> ((p & 3) * 8);
      }
    }
    return out;
  }

  function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
    checkDecodeField(id, context.field, matches(context.field));
    const reader = openBlock(id, bytes, length, context.field);
    const src = reader.bytes(planeCount * length, `${planeCount} byte planes`);
    const words = new Uint32Array(2 * length);
    readPlaneRange(src, planes, words);
    const countAt = reader.offset;
    const count = reader.varint("NaN payload count");
    if (count > length) {
      throw new FormatError(
        "CORRUPT",
        `Cannot decode ${id} block of column '${context.field.name}': expected at most ${length} NaN payloads, found ${count}`,
        { column: context.field.name, offset: countAt },
      );
    }
    let previous = -1;
    for (let e = 0; e < count; e++) {
      const rowAt = reader.offset;
      const row = reader.varint("NaN payload row");
      if (row <= previous || row >= length) {
        throw new FormatError(
          "CORRUPT",
          `Cannot decode ${id} block of column '${context.field.name}': expected a NaN payload row from ${
            previous + 1
          } to ${length - 1}, found ${row}`,
          { column: context.field.name, offset: rowAt },
        );
      }
      previous = row;
      const low = reader.bytes(skipped, "NaN payload");
      for (let p = 0; p < skipped; p++) {
        words[2 * row + (p < 4 ? 0 : 1)]! |= low[p]! << ((p & 3) * 8);
      }
    }
    reader.end();
    return { type: "float64", values: floatsFromWords(words), validity: null };
  }

  return Object.freeze(
    { id, lossy: true, usesDeps: false, matches, encode, decode } satisfies Predictor,
  );
}

/**
 * Keeps 36 mantissa bits: relative error ≤ 2^-37 ≈ 7.3e-12 on normal values.
 *
 * @example Quantize and restore
 * ```ts
 * import assert from "node:assert/strict";
 * import { floatQuantHigh } from "./float_quant.ts";
 * const field = { name: "x", type: "float64", nullable: false } as const;
 * const column = { type: "float64", values: Float64Array.of(Math.PI), validity: null } as const;
 * const bytes = floatQuantHigh.encode(column, { field, deps: [], warn: () => {} })!;
 * const y = floatQuantHigh.decode(bytes, 1, { field, deps: [] }).values[0] as number;
 * assert.ok(Math.abs(y - Math.PI) <= Math.PI * 2 ** -37);
 * ```
 */
export const floatQuantHigh: Predictor = makeQuantizer("float_quant_high", "QUANT_HIGH");

/**
 * Keeps 23 mantissa bits (float32 precision): relative error ≤ 2^-24 ≈ 6.0e-8
 * on normal values.
 */
export const floatQuantMedium: Predictor = makeQuantizer("float_quant_medium", "QUANT_MEDIUM");

/**
 * Keeps 10 mantissa bits (float16 precision): relative error ≤ 2^-11 ≈ 4.9e-4
 * on normal values.
 */
export const floatQuantLow: Predictor = makeQuantizer("float_quant_low", "QUANT_LOW");

/**
 * The predictor each quantization level uses; `null` for `QUANT_NONE` (the
 * writer then trials the lossless float predictors).
 *
 * @example Pick the quantizer of a level
 * ```ts
 * import assert from "node:assert/strict";
 * import { QUANTIZER_FOR } from "./float_quant.ts";
 * assert.equal(QUANTIZER_FOR.QUANT_MEDIUM?.id, "float_quant_medium");
 * assert.equal(QUANTIZER_FOR.QUANT_NONE, null);
 * ```
 */
export const QUANTIZER_FOR: Readonly<Record<Quantization, Predictor | null>> = Object.freeze({
  QUANT_NONE: null,
  QUANT_HIGH: floatQuantHigh,
  QUANT_MEDIUM: floatQuantMedium,
  QUANT_LOW: floatQuantLow,
});
