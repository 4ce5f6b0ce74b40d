/**
 * Private helpers of the float32 and float16 predictors: a column's values as their
 * bit patterns (a `Uint32Array` view of a float32 column, a float16 column's own
 * `Uint16Array`), and back; and the shape the byte-plane predictors share, with or
 * without XOR against the previous row (FORMAT.md §4).
 *
 * Bits are moved as integers and never read as numbers, so NaN payloads (signalling
 * ones too), -0, subnormals and infinities all round-trip.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { Column, Field } from "../column.ts";
import { checkDecodeField, expectColumn, openBlock } from "./_common.ts";
import { varintSize, writeVarint } from "./_ints.ts";
import type { DecodeContext, Predictor } from "./predictor.ts";

/** The float column types narrower than float64. */
export type NarrowFloatType = "float32" | "float16";

/** Bytes of one value of a narrow float type. */
export const WIDTH: Readonly<Record<NarrowFloatType, 4 | 2>> = Object.freeze({
  float32: 4,
  float16: 2,
});

/**
 * The bit patterns of a float32 or float16 column (a view, not a copy).
 *
 * @param id Predictor id, for the error.
 * @param column The column.
 * @param type The type the predictor handles.
 * @returns One pattern per row.
 * @throws {FormatError} `BAD_ARGUMENT` for another column type.
 */
export function bitsOf(
  id: string,
  column: Column,
  type: NarrowFloatType,
): Uint32Array | Uint16Array {
  const c = expectColumn(id, column, new Set([type]));
  if (c.type === "float32") {
    return new Uint32Array(c.values.buffer, c.values.byteOffset, c.values.length);
  }
  return c.values as Uint16Array;
}

/**
 * Builds a column of `type` over decoded bit patterns.
 *
 * @param type float32 or float16.
 * @param bits One pattern per row (a `Uint32Array` for float32, `Uint16Array` for float16).
 * @returns The column, without validity.
 */
export function columnOfBits(type: NarrowFloatType, bits: Uint32Array | Uint16Array): Column {
  return type === "float32"
    ? { type, values: new Float32Array(bits.buffer, bits.byteOffset, bits.length), validity: null }
    : { type, values: bits as Uint16Array, validity: null };
}

/**
 * Writes the bytes of `words` (each `width` bytes wide) as `width` planes: byte 0 of
 * every word, then byte 1, and so on.
 */
export function writeWordPlanes(
  words: Uint32Array | Uint16Array,
  width: number,
  out: Uint8Array,
  at: number,
): number {
  const n = words.length;
  for (let p = 0; p < width; p++) {
    const shift = 8 * p;
    const base = at + p * n;
    for (let i = 0; i < n; i++) out[base + i] = (words[i]! >>> shift) & 0xff;
  }
  return at + width * n;
}

/** Reads `width` planes of `n` bytes into `words` (the inverse of {@linkcode writeWordPlanes}). */
export function readWordPlanes(
  planes: Uint8Array,
  width: number,
  words: Uint32Array | Uint16Array,
): void {
  const n = words.length;
  for (let p = 0; p < width; p++) {
    const shift = 8 * p;
    const base = p * n;
    for (let i = 0; i < n; i++) words[i] = (words[i]! | (planes[base + i]! << shift)) >>> 0;
  }
}

/** What a plane predictor stores of each row's bit pattern `b[i]` (`b[-1] = 0`). */
export type PlaneWord = "bits" | "xor" | "delta";

/**
 * A byte-plane predictor of one narrow float type: `[varint n][plane 0]…[plane w-1]`,
 * plane `p` holding byte `p` (least significant first) of each row's word. The word is
 * the bit pattern itself (`bits`); or the pattern XOR the previous row's (`xor`), as
 * Gorilla and Chimp do before their bit-level coding: a slowly changing series keeps its
 * sign, exponent and top mantissa bits, so the high planes of the XOR are mostly zero;
 * or the zigzag of the patterns' integer difference, wrapping mod 2^w (`delta`): among
 * same-signed values the pattern orders like the value, so a smooth series makes small
 * differences even where a carry flips many low bits of the XOR. The codec after the
 * predictor does the entropy coding.
 *
 * @param id The predictor id.
 * @param type The column type it handles.
 * @param word What each row stores (see above).
 * @returns The predictor.
 */
export function planesPredictor(id: string, type: NarrowFloatType, word: PlaneWord): Predictor {
  const width = WIDTH[type];
  const matches = (field: Field) => field.type === type;
  function encode(column: Column): Uint8Array {
    const bits = bitsOf(id, column, type);
    const n = bits.length;
    let words = bits;
    if (word !== "bits") {
      words = type === "float32" ? new Uint32Array(n) : new Uint16Array(n);
      const shift = 32 - 8 * width; // a float16 difference sign-extended from 16 bits
      let prev = 0;
      for (let i = 0; i < n; i++) {
        const b = bits[i]!;
        if (word === "xor") words[i] = b ^ prev;
        else {
          const d = ((b - prev) << shift) >> shift;
          words[i] = ((d << 1) ^ (d >> 31)) >>> 0;
        }
        prev = b;
      }
    }
    const out = new Uint8Array(varintSize(n) + width * n);
    writeWordPlanes(words, width, out, writeVarint(out, 0, n));
    return out;
  }
  function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
    checkDecodeField(id, context.field, matches(context.field));
    const reader = openBlock(id, bytes, length, context.field);
    const planes = reader.bytes(width * length, `${width} byte planes`);
    reader.end();
    const bits = type === "float32" ? new Uint32Array(length) : new Uint16Array(length);
    readWordPlanes(planes, width, bits);
    if (word === "xor") { for (let i = 1; i < length; i++) bits[i] = bits[i]! ^ bits[i - 1]!; }
    if (word === "delta") {
      let prev = 0;
      for (let i = 0; i < length; i++) {
        const z = bits[i]!;
        prev = (prev + ((z >>> 1) ^ -(z & 1))) | 0;
        bits[i] = prev; // a typed array keeps the low 32 or 16 bits
      }
    }
    return columnOfBits(type, bits);
  }
  return Object.freeze(
    { id, lossy: false, usesDeps: false, matches, encode, decode } satisfies Predictor,
  );
}
