/**
 * The `float32_xor` predictor (float32, lossless): each value's IEEE 754 bit pattern XOR the previous row's (Gorilla/Chimp's first step), split into byte planes: a series whose neighbours share sign, exponent and top mantissa bits leaves its high planes mostly zero.
 *
 * Bit-exact: NaN payloads, -0, subnormals and infinities all round-trip.
 *
 * Layout (FORMAT.md §4): `[varint n][plane 0: byte 0 (least significant) of every
 * word]…[plane 3: byte 3 of every word]`.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import { planesPredictor } from "./_float_bits.ts";
import type { Predictor } from "./predictor.ts";

/**
 * Lossless byte planes of float32 bit patterns, each XOR the previous row's.
 *
 * @example Round-trip a float32 column bit for bit
 * ```ts
 * import assert from "node:assert/strict";
 * import { float32Xor } from "./float32_xor.ts";
 * const field = { name: "x", type: "float32", nullable: false } as const;
 * const column = { type: "float32", values: Float32Array.of(1.5, -0, Infinity), validity: null } as const;
 * const bytes = float32Xor.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(float32Xor.decode(bytes, 3, { field, deps: [] }).values, column.values);
 * ```
 */
export const float32Xor: Predictor = planesPredictor("float32_xor", "float32", "xor");
