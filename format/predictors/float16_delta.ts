/**
 * The `float16_delta` predictor (float16, lossless): the zigzag of each value's IEEE 754 bit pattern
 * minus the previous row's, as integers wrapping mod 2^16, split into byte planes.
 * Among values of one sign the bit pattern orders like the value, so a smooth series
 * (a sensor's walk, a price) makes small differences — smaller than its XORs where a
 * carry flips many low bits at once.
 *
 * Bit-exact: NaN payloads, -0, subnormals and infinities all round-trip.
 *
 * Layout (FORMAT.md §4): `[varint n][2 planes of zigzag(b[i] − b[i−1])]`, b[−1] = 0.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import { planesPredictor } from "./_float_bits.ts";
import type { Predictor } from "./predictor.ts";

/**
 * Lossless byte planes of the zigzag differences of float16 bit patterns.
 *
 * @example Round-trip a float16 column bit for bit
 * ```ts
 * import assert from "node:assert/strict";
 * import { float16Delta } from "./float16_delta.ts";
 * const field = { name: "x", type: "float16", nullable: false } as const;
 * const column = { type: "float16", values: Uint16Array.of(0x4d00, 0x4cff, 0x8000, 0x7e01), validity: null } as const;
 * const bytes = float16Delta.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(float16Delta.decode(bytes, 4, { field, deps: [] }).values, column.values);
 * ```
 */
export const float16Delta: Predictor = planesPredictor("float16_delta", "float16", "delta");
