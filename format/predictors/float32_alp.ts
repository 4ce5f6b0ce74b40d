/**
 * The `float32_alp` predictor (float32, lossless), after ALP (adaptive lossless
 * floating point, Afroozeh, Kuffó and Boncz, SIGMOD 2024): most real float32 columns
 * hold decimals — prices, readings with a fixed number of digits — that are an integer
 * `m` over a power of ten. For the block's best exponent `e` (0..10, chosen on a sample
 * of at most {@link SAMPLE} rows), every value `x` with `fround(m / 10^e) = x`
 * bit for bit, `m = round(x · 10^e)` an int32, is stored as `m`; the rest (NaN,
 * infinities, -0, values with more digits) are exceptions kept as their 32-bit pattern.
 * The integers go in as zigzag deltas, which a random walk keeps small, in as many byte
 * planes as the largest needs.
 *
 * A block declines (`encode` returns null) when under half of the sample is decimal at
 * any exponent; the per-block trial then picks another float32 predictor, and it also
 * picks one whenever this one is larger.
 *
 * Layout (FORMAT.md §4): `[varint n][u8 e ≤ 10][varint x][x × (varint row, 4 bytes:
 * the bit pattern, little-endian)][u8 width][width planes of zigzag(m[i] − m[i−1])]`,
 * m[−1] = 0, differences wrapping mod 2^32; an exception row's m is the previous row's.
 * Rows increase; width is 1..4 when n > 0, 0 when n = 0.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { Column, Field } from "../column.ts";
import { FormatError } from "../errors.ts";
import { checkDecodeField, openBlock } from "./_common.ts";
import { bitsOf, columnOfBits, readWordPlanes, writeWordPlanes } from "./_float_bits.ts";
import { varintSize, writeVarint } from "./_ints.ts";
import type { DecodeContext, Predictor } from "./predictor.ts";

const ID = "float32_alp";
/** Largest exponent: 10^10 is exact in a double, and m / 10^e one correctly rounded division. */
const MAX_EXPONENT = 10;
/** Rows sampled to choose the exponent. */
export const SAMPLE = 1024;
const POW10 = Array.from({ length: MAX_EXPONENT + 1 }, (_, e) => 10 ** e);

function matches(field: Field): boolean {
  return field.type === "float32";
}

/** The integer `x · 10^e` stands for, when `fround(m / 10^e)` gives `x` back exactly; else null. */
function decimalOf(x: number, p: number): number | null {
  if (x !== x || x === 0 && Object.is(x, -0)) return null;
  const m = Math.round(x * p);
  if (m > 2147483647 || m < -2147483648) return null;
  return Object.is(Math.fround(m / p), x) ? m | 0 : null;
}

/**
 * The exponent that makes the sample smallest: each exception costs its 4-byte pattern
 * and a row number, each decimal the bytes of its zigzag delta from the previous sampled
 * decimal (a larger exponent makes every integer longer, so the smallest exponent that
 * holds the digits wins, as ALP's sampling intends). Also returns the sample's hit count.
 */
function chooseExponent(values: Float32Array): { e: number; hits: number; tried: number } {
  const step = Math.max(1, Math.floor(values.length / SAMPLE));
  let best = { e: 0, hits: 0, tried: 0, cost: Infinity };
  for (let e = 0; e <= MAX_EXPONENT; e++) {
    const p = POW10[e]!;
    let hits = 0;
    let tried = 0;
    let cost = 0;
    let prev = 0;
    for (let i = 0; i < values.length; i += step) {
      tried++;
      const m = decimalOf(values[i]!, p);
      if (m === null) {
        cost += 6;
        continue;
      }
      hits++;
      const z = zigzag32((m - prev) | 0);
      cost += z < 0x100 ? 1 : z < 0x10000 ? 2 : z < 0x1000000 ? 3 : 4;
      prev = m;
    }
    if (cost < best.cost) best = { e, hits, tried, cost };
  }
  return best;
}

function zigzag32(d: number): number {
  return ((d << 1) ^ (d >> 31)) >>> 0;
}

function encode(column: Column): Uint8Array | null {
  const bits = bitsOf(ID, column, "float32") as Uint32Array;
  const values = column.values as Float32Array;
  const n = values.length;
  const { e, hits, tried } = chooseExponent(values);
  if (n > 0 && hits * 2 < tried) return null;
  const p = POW10[e]!;
  const deltas = new Uint32Array(n);
  const exceptions: number[] = [];
  let prev = 0;
  let max = 0;
  for (let i = 0; i < n; i++) {
    const m = decimalOf(values[i]!, p);
    if (m === null) {
      exceptions.push(i); // delta 0: m stays the previous row's
      continue;
    }
    const z = zigzag32((m - prev) | 0);
    deltas[i] = z;
    if (z > max) max = z;
    prev = m;
  }
  const width = n === 0 ? 0 : max < 0x100 ? 1 : max < 0x10000 ? 2 : max < 0x1000000 ? 3 : 4;
  let size = varintSize(n) + 1 + varintSize(exceptions.length) + 1 + width * n +
    4 * exceptions.length;
  for (const row of exceptions) size += varintSize(row);
  const out = new Uint8Array(size);
  let at = writeVarint(out, 0, n);
  out[at++] = e;
  at = writeVarint(out, at, exceptions.length);
  for (const row of exceptions) {
    at = writeVarint(out, at, row);
    const b = bits[row]!;
    out[at++] = b & 0xff;
    out[at++] = (b >>> 8) & 0xff;
    out[at++] = (b >>> 16) & 0xff;
    out[at++] = b >>> 24;
  }
  out[at++] = width;
  writeWordPlanes(deltas, width, out, at);
  return out;
}

function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
  const field = context.field;
  checkDecodeField(ID, field, matches(field));
  const corrupt = (what: string, offset: number) =>
    new FormatError("CORRUPT", `Cannot decode ${ID} block of column '${field.name}': ${what}`, {
      column: field.name,
      offset,
    });
  const reader = openBlock(ID, bytes, length, field);
  const eAt = reader.offset;
  const e = reader.u8("exponent");
  if (e > MAX_EXPONENT) {
    throw corrupt(`expected an exponent from 0 to ${MAX_EXPONENT}, found ${e}`, eAt);
  }
  const countAt = reader.offset;
  const count = reader.varint("exception count");
  if (count > length) {
    throw corrupt(`expected at most ${length} exceptions, found ${count}`, countAt);
  }
  const rows = new Uint32Array(count);
  const patterns = new Uint32Array(count);
  let previous = -1;
  for (let x = 0; x < count; x++) {
    const rowAt = reader.offset;
    const row = reader.varint("exception row");
    if (row <= previous || row >= length) {
      throw corrupt(
        `expected an exception row from ${previous + 1} to ${length - 1}, found ${row}`,
        rowAt,
      );
    }
    previous = row;
    const b = reader.bytes(4, "exception bits");
    rows[x] = row;
    patterns[x] = (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
  }
  const widthAt = reader.offset;
  const width = reader.u8("plane width");
  if (length > 0 ? width < 1 || width > 4 : width !== 0) {
    throw corrupt(
      `expected a plane width of ${length > 0 ? "1 to 4" : "0"}, found ${width}`,
      widthAt,
    );
  }
  const planes = reader.bytes(width * length, `${width} byte planes`);
  reader.end();
  const deltas = new Uint32Array(length);
  readWordPlanes(planes, width, deltas);
  const p = POW10[e]!;
  const out = new Float32Array(length);
  const outBits = new Uint32Array(out.buffer);
  let m = 0;
  for (let i = 0; i < length; i++) {
    const z = deltas[i]!;
    m = (m + ((z >>> 1) ^ -(z & 1))) | 0;
    out[i] = m / p; // rounds to the float32 the encoder checked
  }
  for (let x = 0; x < count; x++) outBits[rows[x]!] = patterns[x]!;
  return columnOfBits("float32", outBits);
}

/**
 * ALP-style decimal encoding of float32 columns, with exceptions.
 *
 * @example Prices in cents come back bit for bit
 * ```ts
 * import assert from "node:assert/strict";
 * import { float32Alp } from "./float32_alp.ts";
 * const field = { name: "x", type: "float32", nullable: false } as const;
 * const column = { type: "float32", values: Float32Array.of(19.99, 20.05, NaN, -0), validity: null } as const;
 * const bytes = float32Alp.encode(column, { field, deps: [], warn: () => {} })!;
 * const back = float32Alp.decode(bytes, 4, { field, deps: [] }).values as Float32Array;
 * assert.deepEqual(new Uint32Array(back.buffer), new Uint32Array(column.values.buffer));
 * ```
 */
export const float32Alp: Predictor = Object.freeze(
  { id: ID, lossy: false, usesDeps: false, matches, encode, decode } satisfies Predictor,
);
