/**
 * The quantizers that store into narrower floats (1.7): `float_quant_medium_f32` for
 * `QUANT_MEDIUM` and `float_quant_low_f16` for `QUANT_LOW` (float64 columns, `lossy:
 * true`). Each rounds exactly as `float_quant_medium` / `float_quant_low` do
 * ({@linkcode quantizedWords}) — the column still reads back as float64 values, bit
 * for bit the ones those predictors give, so the error bounds of `float_quant.ts` hold
 * unchanged — but stores each rounded value as the float32 or float16 that holds it:
 * 4 or 2 bytes a row instead of 5 or 3.
 *
 * A float16 has 5 exponent bits, too few for most columns' magnitudes, so each block
 * stores its halves scaled by a power of two `2^k`, `k` placing the halves' 30 normal
 * binades where they cover most of the block's values (a block spanning at most 30
 * binades fits whole; outliers become exceptions). A float32 block is not scaled.
 *
 * A value the narrow float does not hold exactly (every NaN, a magnitude out of range,
 * a subnormal that loses bits) is an exception: its row and its rounded float64
 * bits go on the side, so NaN payloads survive as before. With more than one
 * exception in {@link MAX_EXCEPTION_SHARE} rows, `encode` declines (returns null) and
 * the writer falls back to the wide quantizer of the level.
 *
 * Layout (FORMAT.md §4): `[varint n]` then, for f16 only, `[varint zigzag(k)]`, then
 * `[w byte planes of the narrow bit patterns (exception rows hold 0)][varint e]
 * [e × (varint row, 8 bytes: the float64 bit pattern, little-endian)]`, rows increasing.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { Column, Field, FloatColumn } from "../column.ts";
import { FormatError } from "../errors.ts";
import { float16ToNumber, numberToFloat16 } from "../float16.ts";
import { checkDecodeField, expectColumn, openBlock } from "./_common.ts";
import { readWordPlanes, writeWordPlanes } from "./_float_bits.ts";
import { floatsFromWords, varintSize, writeVarint } from "./_ints.ts";
import { quantizedWords } from "./float_quant.ts";
import type { DecodeContext, Predictor, Quantization } from "./predictor.ts";

const FLOAT: ReadonlySet<Field["type"]> = new Set(["float64"]);

/** A block declines when more than one row in this many is an exception. */
export const MAX_EXCEPTION_SHARE = 8;

/** Smallest and largest scale exponent of a float16 block (2^k stays a normal double). */
const MIN_SCALE = -1022;
const MAX_SCALE = 1008;

/** Exponent of the binade of a positive finite double. */
function binade(a: number): number {
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  return e;
}

/** Binades a float16 holds as normal numbers (2^-14 up to 2^15). */
const HALF_BINADES = 30;

/**
 * The scale exponent of a float16 block: the 30-binade window of the halves' normal
 * numbers placed where it covers the most finite non-zero values (the highest such
 * window on a tie), so a few outliers become exceptions instead of pushing every other
 * value out of range.
 */
function halfScale(values: Float64Array): number {
  const OFFSET = 1074; // binade -1074 (the least subnormal double) is bin 0
  const counts = new Uint32Array(OFFSET + 1024);
  let any = false;
  for (let i = 0; i < values.length; i++) {
    const a = Math.abs(values[i]!);
    if (a === 0 || a === Infinity || a !== a) continue;
    counts[binade(a) + OFFSET]!++;
    any = true;
  }
  if (!any) return 0;
  let window = 0;
  let best = -1;
  let top = 0;
  for (let b = 0; b < counts.length; b++) {
    window += counts[b]!;
    if (b >= HALF_BINADES) window -= counts[b - HALF_BINADES]!;
    if (window >= best && counts[b]! > 0) {
      best = window;
      top = b - OFFSET;
    }
  }
  return Math.min(MAX_SCALE, Math.max(MIN_SCALE, top - 15));
}

function zigzag(k: number): number {
  return k < 0 ? -2 * k - 1 : 2 * k;
}

function unzigzag(z: number): number {
  return z % 2 === 1 ? -(z + 1) / 2 : z / 2;
}

function makeNarrowQuantizer(
  id: string,
  quantization: Quantization,
  width: 4 | 2,
): Predictor {
  const half = width === 2;
  const matches = (field: Field) => field.type === "float64";

  function encode(column: Column): Uint8Array | null {
    const { values } = expectColumn(id, column, FLOAT) as FloatColumn;
    const n = values.length;
    const words = quantizedWords(values, quantization);
    const rounded = floatsFromWords(words);
    const k = half ? halfScale(rounded) : 0;
    const scale = 2 ** k;
    const narrow = half ? new Uint16Array(n) : new Uint32Array(n);
    const single = new Float32Array(1);
    const singleBits = new Uint32Array(single.buffer);
    const exceptions: number[] = [];
    for (let i = 0; i < n; i++) {
      const y = rounded[i]!;
      let bits = -1;
      if (y !== y) {
        // NaN: always an exception, so its payload survives.
      } else if (half) {
        const h = numberToFloat16(y / scale);
        if (Object.is(float16ToNumber(h) * scale, y)) bits = h;
      } else if (Object.is(Math.fround(y), y)) {
        single[0] = y; // not NaN: no payload to lose
        bits = singleBits[0]!;
      }
      if (bits < 0) exceptions.push(i);
      else narrow[i] = bits;
    }
    if (exceptions.length * MAX_EXCEPTION_SHARE > n) return null;
    let size = varintSize(n) + (half ? varintSize(zigzag(k)) : 0) + width * n +
      varintSize(exceptions.length) + 8 * exceptions.length;
    for (const row of exceptions) size += varintSize(row);
    const out = new Uint8Array(size);
    let at = writeVarint(out, 0, n);
    if (half) at = writeVarint(out, at, zigzag(k));
    at = writeWordPlanes(narrow, width, out, at);
    at = writeVarint(out, at, exceptions.length);
    for (const row of exceptions) {
      at = writeVarint(out, at, row);
      for (let b = 0; b < 8; b++) out[at++] = words[2 * row + (b >> 2)]! >>> ((b & 3) * 8);
    }
    return out;
  }

  function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
    const field = context.field;
    checkDecodeField(id, field, matches(field));
    const corrupt = (what: string, offset: number) =>
      new FormatError("CORRUPT", `Cannot decode ${id} block of column '${field.name}': ${what}`, {
        column: field.name,
        offset,
      });
    const reader = openBlock(id, bytes, length, field);
    let k = 0;
    if (half) {
      const kAt = reader.offset;
      k = unzigzag(reader.varint("scale exponent"));
      if (k < MIN_SCALE || k > MAX_SCALE) {
        throw corrupt(
          `expected a scale exponent from ${MIN_SCALE} to ${MAX_SCALE}, found ${k}`,
          kAt,
        );
      }
    }
    const planes = reader.bytes(width * length, `${width} byte planes`);
    const narrow = half ? new Uint16Array(length) : new Uint32Array(length);
    readWordPlanes(planes, width, narrow);
    const values = new Float64Array(length);
    if (half) {
      const scale = 2 ** k;
      for (let i = 0; i < length; i++) values[i] = float16ToNumber(narrow[i]!) * scale;
    } else {
      // float32 → float64 widening is exact; a NaN pattern here is damage, and any
      // NaN it gives is still a float64 NaN of the column.
      values.set(new Float32Array(narrow.buffer, 0, length));
    }
    const words = new Uint32Array(values.buffer);
    const countAt = reader.offset;
    const count = reader.varint("exception count");
    if (count > length) {
      throw corrupt(`expected at most ${length} exceptions, found ${count}`, countAt);
    }
    let previous = -1;
    for (let e = 0; e < count; e++) {
      const rowAt = reader.offset;
      const row = reader.varint("exception row");
      if (row <= previous || row >= length) {
        throw corrupt(
          `expected an exception row from ${previous + 1} to ${length - 1}, found ${row}`,
          rowAt,
        );
      }
      previous = row;
      const b = reader.bytes(8, "exception bits");
      words[2 * row] = (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
      words[2 * row + 1] = (b[4]! | (b[5]! << 8) | (b[6]! << 16) | (b[7]! << 24)) >>> 0;
    }
    reader.end();
    return { type: "float64", values, validity: null };
  }

  return Object.freeze(
    { id, lossy: true, usesDeps: false, matches, encode, decode } satisfies Predictor,
  );
}

/**
 * `QUANT_MEDIUM` stored as float32: the values `float_quant_medium` gives, 4 bytes a row.
 *
 * @example Quantize into float32 and read back the rounded value
 * ```ts
 * import assert from "node:assert/strict";
 * import { floatQuantMediumF32 } from "./float_quant_narrow.ts";
 * const field = { name: "x", type: "float64", nullable: false } as const;
 * const column = { type: "float64", values: Float64Array.of(0.1, 2.5), validity: null } as const;
 * const bytes = floatQuantMediumF32.encode(column, { field, deps: [], warn: () => {} })!;
 * const back = floatQuantMediumF32.decode(bytes, 2, { field, deps: [] }).values;
 * assert.deepEqual([...back], [Math.fround(0.1), 2.5]);
 * ```
 */
export const floatQuantMediumF32: Predictor = makeNarrowQuantizer(
  "float_quant_medium_f32",
  "QUANT_MEDIUM",
  4,
);

/** `QUANT_LOW` stored as scaled float16: the values `float_quant_low` gives, 2 bytes a row. */
export const floatQuantLowF16: Predictor = makeNarrowQuantizer(
  "float_quant_low_f16",
  "QUANT_LOW",
  2,
);

/**
 * The narrow quantizer each level tries first (`null` where there is none); the writer
 * falls back to `QUANTIZER_FOR` when it declines.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { NARROW_QUANTIZER_FOR } from "./float_quant_narrow.ts";
 * assert.equal(NARROW_QUANTIZER_FOR.QUANT_LOW?.id, "float_quant_low_f16");
 * assert.equal(NARROW_QUANTIZER_FOR.QUANT_HIGH, null);
 * ```
 */
export const NARROW_QUANTIZER_FOR: Readonly<Record<Quantization, Predictor | null>> = Object
  .freeze({
    QUANT_NONE: null,
    QUANT_HIGH: null,
    QUANT_MEDIUM: floatQuantMediumF32,
    QUANT_LOW: floatQuantLowF16,
  });
