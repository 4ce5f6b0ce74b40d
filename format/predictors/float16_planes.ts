/**
 * The `float16_planes` predictor (float16, lossless): the bytes of each value's IEEE 754 bit pattern, transposed into byte planes: sign, exponent and top mantissa bytes of real-world series repeat across rows, so their planes compress far better than interleaved values.
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
 * Lossless byte planes of float16 bit patterns.
 *
 * @example Round-trip a float16 column bit for bit
 * ```ts
 * import assert from "node:assert/strict";
 * import { float16Planes } from "./float16_planes.ts";
 * const field = { name: "x", type: "float16", nullable: false } as const;
 * const column = { type: "float16", values: Uint16Array.of(0x3e00, 0x8000, 0x7c00), validity: null } as const;
 * const bytes = float16Planes.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(float16Planes.decode(bytes, 3, { field, deps: [] }).values, column.values);
 * ```
 */
export const float16Planes: Predictor = planesPredictor("float16_planes", "float16", "bits");
