/**
 * The `float16_xor` predictor (float16, lossless): each value's IEEE 754 bit pattern XOR the previous row's (Gorilla/Chimp's first step), split into byte planes: a series whose neighbours share sign, exponent and top mantissa bits leaves its high planes mostly zero.
 *
 * Bit-exact: NaN payloads, -0, subnormals and infinities all round-trip.
 *
 * Layout (FORMAT.md §4): `[varint n][plane 0: byte 0 (least significant) of every
 * word]…[plane 1: byte 1 of every word]`.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import { planesPredictor } from "./_float_bits.ts";
import type { Predictor } from "./predictor.ts";

/**
 * Lossless byte planes of float16 bit patterns, each XOR the previous row's.
 *
 * @example Round-trip a float16 column bit for bit
 * ```ts
 * import assert from "node:assert/strict";
 * import { float16Xor } from "./float16_xor.ts";
 * const field = { name: "x", type: "float16", nullable: false } as const;
 * const column = { type: "float16", values: Uint16Array.of(0x3e00, 0x8000, 0x7c00), validity: null } as const;
 * const bytes = float16Xor.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(float16Xor.decode(bytes, 3, { field, deps: [] }).values, column.values);
 * ```
 */
export const float16Xor: Predictor = planesPredictor("float16_xor", "float16", "xor");
