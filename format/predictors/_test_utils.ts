/**
 * Private helpers of the predictor unit tests: contexts, columns, and an
 * assertion that a call throws a `FormatError` with a given code.
 *
 * Test-only: imported by `*_test.ts` files, never by a predictor.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Column, ColumnType, Field } from "../column.ts";
import { FormatError, type FormatErrorCode } from "../errors.ts";
import type { FormatWarning, Predictor } from "./predictor.ts";

/** Smallest int64. */
export const INT64_MIN = -(2n ** 63n);
/** Largest int64. */
export const INT64_MAX = 2n ** 63n - 1n;

/**
 * A non-nullable field named `c`.
 *
 * @param type Its type.
 * @returns The field (timestamps in microseconds).
 */
export function fieldOf(type: ColumnType, precision = 18): Field {
  if (type === "decimal") return { name: "c", type, nullable: false, precision, scale: 2 };
  return type === "timestamp" || type === "time" || type === "duration"
    ? { name: "c", type, nullable: false, unit: "us" }
    : { name: "c", type, nullable: false };
}

/**
 * An integer-typed column.
 *
 * @param values Its values.
 * @param type `int64` (default), `timestamp` or `date`.
 * @returns The column.
 */
export function ints(
  values: readonly bigint[],
  type: "int64" | "timestamp" | "date" = "int64",
): Column {
  return { type, values: BigInt64Array.from(values), validity: null };
}

/**
 * A string column.
 *
 * @param values Its values.
 * @returns The column.
 */
export function strings(values: readonly string[]): Column {
  return { type: "string", values: [...values], validity: null };
}

/**
 * A float64 column.
 *
 * @param values Its values.
 * @returns The column.
 */
export function floats(values: readonly number[]): Column {
  return { type: "float64", values: Float64Array.from(values), validity: null };
}

/** What {@linkcode encodeWith} returns. */
export interface Encoded {
  /** The block (null when the predictor declined). */
  readonly bytes: Uint8Array | null;
  /** Warnings it emitted. */
  readonly warnings: FormatWarning[];
}

/**
 * Encodes a column, collecting warnings.
 *
 * @param predictor The predictor.
 * @param column The column.
 * @param deps Dependency columns.
 * @returns The block and the warnings.
 */
export function encodeWith(
  predictor: Predictor,
  column: Column,
  deps: readonly Column[] = [],
): Encoded {
  const warnings: FormatWarning[] = [];
  const bytes = predictor.encode(column, {
    field: fieldOf(column.type),
    deps,
    warn: (w) => warnings.push(w),
  });
  return { bytes, warnings };
}

/**
 * Encodes then decodes a column and returns the block and the decoded column.
 *
 * @param predictor The predictor.
 * @param column The column.
 * @param deps Dependency columns.
 * @returns The block and the decoded column.
 */
export function roundTrip(
  predictor: Predictor,
  column: Column,
  deps: readonly Column[] = [],
): { bytes: Uint8Array; decoded: Column } {
  const { bytes } = encodeWith(predictor, column, deps);
  assert.ok(bytes !== null, `${predictor.id} declined the column`);
  const decoded = predictor.decode(bytes, column.values.length, {
    field: fieldOf(column.type),
    deps,
  });
  assert.equal(decoded.type, column.type);
  assert.equal(decoded.validity, null);
  return { bytes, decoded };
}

/**
 * Asserts that `fn` throws a `FormatError` with `code`, and returns its message.
 *
 * @param fn The call.
 * @param code The expected code.
 * @param pattern A regular expression the message must match.
 */
export function assertFormatError(
  fn: () => unknown,
  code: FormatErrorCode,
  pattern?: RegExp,
): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof FormatError, `expected a FormatError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assert.match(err.message, /^Cannot /);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

/**
 * Returns the 64-bit patterns of floats as bigints, to compare bit for bit.
 *
 * @param values Floats.
 * @returns Their bits.
 */
export function floatBits(values: Float64Array): bigint[] {
  const end = values.byteOffset + values.byteLength;
  return [...new BigUint64Array(values.buffer.slice(values.byteOffset, end))];
}
