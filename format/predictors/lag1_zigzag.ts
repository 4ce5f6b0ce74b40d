/**
 * The `lag1_zigzag` predictor (int64, timestamp, date): second-order deltas,
 * zigzagged, stored as byte planes. A linear ramp (a counter with a fixed
 * step, a timestamp at a fixed rate) becomes almost all zeros, where
 * `delta_zigzag` would leave the step in every row.
 *
 * Layout (FORMAT.md §4):
 * `[varint n][u8 width][width byte planes of zigzag(d[i] - d[i-1])]` where
 * `d[i] = v[i] - v[i-1]`, `v[-1] = d[-1] = 0`, all wrapping mod 2^64.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { Column, Field } from "../column.ts";
import { checkDecodeField, INT_TYPES, intColumn, intValues, openBlock } from "./_common.ts";
import {
  bigIntsFromWords,
  deltasOf,
  planesBlock,
  prefixSumInPlace,
  readPlanes,
  unzigzagInPlace,
  wordsOf,
  zigzagInPlace,
} from "./_ints.ts";
import type { DecodeContext, Predictor } from "./predictor.ts";

const ID = "lag1_zigzag";

function matches(field: Field): boolean {
  return INT_TYPES.has(field.type);
}

function encode(column: Column): Uint8Array | null {
  const values = intValues(ID, column);
  if (values === null) return null;
  const words = deltasOf(deltasOf(wordsOf(values)));
  zigzagInPlace(words);
  return planesBlock(values.length, [], words);
}

function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
  checkDecodeField(ID, context.field, matches(context.field));
  const reader = openBlock(ID, bytes, length, context.field);
  const words = readPlanes(reader, length);
  reader.end();
  unzigzagInPlace(words);
  prefixSumInPlace(words);
  prefixSumInPlace(words);
  return intColumn(context.field, bigIntsFromWords(words));
}

/**
 * Second-order delta + zigzag + byte planes, for linear ramps.
 *
 * @example Round-trip a ramp
 * ```ts
 * import assert from "node:assert/strict";
 * import { lag1Zigzag } from "./lag1_zigzag.ts";
 * const field = { name: "n", type: "int64", nullable: false } as const;
 * const column = { type: "int64", values: BigInt64Array.of(10n, 20n, 30n, 40n), validity: null } as const;
 * const bytes = lag1Zigzag.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(lag1Zigzag.decode(bytes, 4, { field, deps: [] }).values, column.values);
 * ```
 */
export const lag1Zigzag: Predictor = Object.freeze(
  { id: ID, lossy: false, usesDeps: false, matches, encode, decode } satisfies Predictor,
);
