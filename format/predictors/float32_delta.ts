/**
 * The `float32_delta` predictor (float32, lossless): the zigzag of each value's IEEE 754 bit pattern
 * minus the previous row's, as integers wrapping mod 2^32, split into byte planes.
 * Among values of one sign the bit pattern orders like the value, so a smooth series
 * (a sensor's walk, a price) makes small differences — smaller than its XORs where a
 * carry flips many low bits at once.
 *
 * Bit-exact: NaN payloads, -0, subnormals and infinities all round-trip.
 *
 * Layout (FORMAT.md §4): `[varint n][4 planes of zigzag(b[i] − b[i−1])]`, b[−1] = 0.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import { planesPredictor } from "./_float_bits.ts";
import type { Predictor } from "./predictor.ts";

/**
 * Lossless byte planes of the zigzag differences of float32 bit patterns.
 *
 * @example Round-trip a float32 column bit for bit
 * ```ts
 * import assert from "node:assert/strict";
 * import { float32Delta } from "./float32_delta.ts";
 * const field = { name: "x", type: "float32", nullable: false } as const;
 * const column = { type: "float32", values: Float32Array.of(20.5, 20.25, -0, NaN), validity: null } as const;
 * const bytes = float32Delta.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(float32Delta.decode(bytes, 4, { field, deps: [] }).values, column.values);
 * ```
 */
export const float32Delta: Predictor = planesPredictor("float32_delta", "float32", "delta");
