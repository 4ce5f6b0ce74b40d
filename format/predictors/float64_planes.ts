/**
 * The `float64_planes` predictor (float64, lossless): the 8 bytes of each
 * value's IEEE 754 bit pattern, transposed into 8 byte planes. Sign,
 * exponent and top mantissa bytes of real-world series repeat across rows,
 * so their planes compress far better than interleaved doubles do.
 *
 * No XOR with the previous value first: on 50,000-row test series (random
 * walks, sensor curves, counts, coordinates; zstd level 19) XOR won on one of
 * seven by under 3% and lost up to 20% elsewhere.
 *
 * Bit-exact: the bits are moved as integers and never read as numbers, so
 * NaN payloads, -0.0, subnormals and ±Infinity all round-trip.
 *
 * Layout (FORMAT.md §4): `[varint n][plane 0: byte 0 (least significant) of
 * every value]…[plane 7: byte 7 (sign and exponent) of every value]`.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { Column, Field, FloatColumn } from "../column.ts";
import { checkDecodeField, expectColumn, openBlock } from "./_common.ts";
import {
  floatsFromWords,
  readPlaneRange,
  varintSize,
  wordsOf,
  writePlaneRange,
  writeVarint,
} from "./_ints.ts";
import type { DecodeContext, Predictor } from "./predictor.ts";

const ID = "float64_planes";
const FLOAT: ReadonlySet<Field["type"]> = new Set(["float64"]);
const ALL_PLANES = [0, 8] as const;

function matches(field: Field): boolean {
  return field.type === "float64";
}

function encode(column: Column): Uint8Array {
  const { values } = expectColumn(ID, column, FLOAT) as FloatColumn;
  const n = values.length;
  const out = new Uint8Array(varintSize(n) + 8 * n);
  writePlaneRange(wordsOf(values), ALL_PLANES, out, writeVarint(out, 0, n));
  return out;
}

function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
  checkDecodeField(ID, context.field, matches(context.field));
  const reader = openBlock(ID, bytes, length, context.field);
  const planes = reader.bytes(8 * length, "8 byte planes");
  reader.end();
  const words = new Uint32Array(2 * length);
  readPlaneRange(planes, ALL_PLANES, words);
  return { type: "float64", values: floatsFromWords(words), validity: null };
}

/**
 * Lossless byte-plane transpose of float64 bit patterns.
 *
 * @example Round-trip floats bit for bit
 * ```ts
 * import assert from "node:assert/strict";
 * import { float64Planes } from "./float64_planes.ts";
 * const field = { name: "x", type: "float64", nullable: false } as const;
 * const column = { type: "float64", values: Float64Array.of(1.5, -0, Infinity), validity: null } as const;
 * const bytes = float64Planes.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.ok(Object.is(float64Planes.decode(bytes, 3, { field, deps: [] }).values[1], -0));
 * ```
 */
export const float64Planes: Predictor = Object.freeze(
  { id: ID, lossy: false, usesDeps: false, matches, encode, decode } satisfies Predictor,
);
