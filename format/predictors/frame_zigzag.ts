/**
 * The `frame_zigzag` predictor (int64, timestamp, date): frame of reference.
 * Each value minus the block's minimum, stored as byte planes. Suits integers
 * that jump around within a narrow range (ids, codes, random-looking values),
 * where deltas would be twice as wide as the values themselves.
 *
 * `v - min` is never negative, so unlike its siblings it needs no zigzag; the
 * id keeps the family name it was registered under.
 *
 * Layout (FORMAT.md §4):
 * `[varint n][i64 min, little-endian][u8 width][width byte planes of (v - min)]`,
 * the subtraction wrapping mod 2^64 (so the full int64 range fits in 8 planes).
 * An empty block stores min 0.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { Column, Field } from "../column.ts";
import {
  checkDecodeField,
  INT_TYPES,
  intColumn,
  intValues,
  openBlock,
  rowsToDecode,
} from "./_common.ts";
import { bigIntsFromWords, planesBlock, readPlanes, wordsOf } from "./_ints.ts";
import type { DecodeContext, Predictor } from "./predictor.ts";

const ID = "frame_zigzag";
const TWO_32 = 4294967296;

function matches(field: Field): boolean {
  return INT_TYPES.has(field.type);
}

function encode(column: Column): Uint8Array | null {
  const values = intValues(ID, column);
  if (values === null) return null;
  const src = wordsOf(values);
  let minLo = 0;
  let minHi = 0; // signed
  if (src.length > 0) {
    minLo = src[0]!;
    minHi = src[1]! | 0;
    for (let i = 2; i < src.length; i += 2) {
      const hi = src[i + 1]! | 0;
      const lo = src[i]!;
      if (hi < minHi || (hi === minHi && lo < minLo)) {
        minHi = hi;
        minLo = lo;
      }
    }
  }
  const out = new Uint32Array(src.length);
  for (let i = 0; i < src.length; i += 2) {
    const lo = src[i]!;
    out[i] = lo - minLo;
    out[i + 1] = src[i + 1]! - minHi - (lo < minLo ? 1 : 0);
  }
  const min = (BigInt(minHi) << 32n) | BigInt(minLo);
  return planesBlock(values.length, [min], out);
}

function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
  checkDecodeField(ID, context.field, matches(context.field));
  const reader = openBlock(ID, bytes, length, context.field);
  const min = BigInt.asUintN(64, reader.i64("frame minimum"));
  const words = readPlanes(reader, length, rowsToDecode(length, context.prefix));
  reader.end();
  addMinimum(words, Number(min & 0xffffffffn), Number(min >> 32n));
  return intColumn(context.field, bigIntsFromWords(words));
}

/**
 * Adds the frame minimum back to every (lo, hi) word pair, in place. Its own function
 * so that V8, which optimizes the loop in its middle (OSR), does not leave that code
 * at `decode`'s last line, which had not run yet (no feedback: a deopt a chunk).
 */
function addMinimum(words: Uint32Array, minLo: number, minHi: number): void {
  for (let i = 0; i < words.length; i += 2) {
    const s = words[i]! + minLo;
    words[i] = s;
    words[i + 1] = words[i + 1]! + minHi + (s >= TWO_32 ? 1 : 0);
  }
}

/**
 * Frame of reference (value minus the block minimum) + byte planes, for
 * integers that vary without a trend.
 *
 * @example Round-trip values in a narrow range
 * ```ts
 * import assert from "node:assert/strict";
 * import { frameZigzag } from "./frame_zigzag.ts";
 * const field = { name: "code", type: "int64", nullable: false } as const;
 * const column = { type: "int64", values: BigInt64Array.of(907n, 900n, 955n), validity: null } as const;
 * const bytes = frameZigzag.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(frameZigzag.decode(bytes, 3, { field, deps: [] }).values, column.values);
 * ```
 */
export const frameZigzag: Predictor = Object.freeze(
  { id: ID, lossy: false, usesDeps: false, matches, encode, decode } satisfies Predictor,
);
