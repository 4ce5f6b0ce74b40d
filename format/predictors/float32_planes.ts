/**
 * The `float32_planes` predictor (float32, lossless): the bytes of each value's IEEE 754 bit pattern, transposed into byte planes: sign, exponent and top mantissa bytes of real-world series repeat across rows, so their planes compress far better than interleaved values.
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
 * Lossless byte planes of float32 bit patterns.
 *
 * @example Round-trip a float32 column bit for bit
 * ```ts
 * import assert from "node:assert/strict";
 * import { float32Planes } from "./float32_planes.ts";
 * const field = { name: "x", type: "float32", nullable: false } as const;
 * const column = { type: "float32", values: Float32Array.of(1.5, -0, Infinity), validity: null } as const;
 * const bytes = float32Planes.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(float32Planes.decode(bytes, 3, { field, deps: [] }).values, column.values);
 * ```
 */
export const float32Planes: Predictor = planesPredictor("float32_planes", "float32", "bits");
