/**
 * The `delta_zigzag` predictor (int64, timestamp, date): each value minus the
 * one before it, zigzagged, stored as byte planes. Sorted or slowly moving
 * integers become small unsigned numbers whose high planes are all zero.
 *
 * Layout (FORMAT.md §4):
 * `[varint n][u8 width][width byte planes of zigzag(v[i] - v[i-1])]`, with
 * `v[-1] = 0` and the subtraction wrapping mod 2^64, so every int64 (INT64_MIN
 * and INT64_MAX included) round-trips.
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

const ID = "delta_zigzag";

function matches(field: Field): boolean {
  return INT_TYPES.has(field.type);
}

function encode(column: Column): Uint8Array | null {
  const values = intValues(ID, column);
  if (values === null) return null;
  const words = deltasOf(wordsOf(values));
  zigzagInPlace(words);
  return planesBlock(values.length, [], words);
}

function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
  checkDecodeField(ID, context.field, matches(context.field));
  const reader = openBlock(ID, bytes, length, context.field);
  const words = readPlanes(reader, length, rowsToDecode(length, context.prefix));
  reader.end();
  unzigzagInPlace(words);
  prefixSumInPlace(words);
  return intColumn(context.field, bigIntsFromWords(words));
}

/**
 * Delta + zigzag + byte planes, for sorted or slowly changing integers.
 *
 * @example Round-trip a sorted column
 * ```ts
 * import assert from "node:assert/strict";
 * import { deltaZigzag } from "./delta_zigzag.ts";
 * const field = { name: "id", type: "int64", nullable: false } as const;
 * const column = { type: "int64", values: BigInt64Array.of(100n, 101n, 103n), validity: null } as const;
 * const bytes = deltaZigzag.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(deltaZigzag.decode(bytes, 3, { field, deps: [] }).values, column.values);
 * ```
 */
export const deltaZigzag: Predictor = Object.freeze(
  { id: ID, lossy: false, usesDeps: false, matches, encode, decode } satisfies Predictor,
);
