/**
 * The in-memory column model every layer shares: a schema of typed fields and
 * batches of columns (typed arrays plus a byte-per-row validity array).
 *
 * Pure: no I/O. `io/` turns sources into `Batch`es and `Batch`es into outputs;
 * `format/` turns `Batch`es into archive chunks and back.
 *
 * Representation (chosen for exactness first, then speed):
 * - `int64`     → `BigInt64Array` (exact beyond 2^53)
 * - `timestamp` → `BigInt64Array` of ticks since the Unix epoch in `field.unit`
 * - `date`      → `BigInt64Array` of days since the Unix epoch (a calendar date,
 *   kept apart from `timestamp` so `2012-01-01` thaws back as `2012-01-01`)
 * - `time`      → `BigInt64Array` of ticks since midnight in `field.unit`
 * - `duration`  → `BigInt64Array` of ticks in `field.unit` (signed)
 * - `decimal`   → the unscaled integers (value = unscaled / 10^scale): a
 *   `BigInt64Array` when `field.precision` ≤ 18, else a `bigint[]` (up to 76 digits)
 * - `float64`   → `Float64Array` (bits preserved: NaN payloads, -0.0, subnormals)
 * - `float32`   → `Float32Array` (bits preserved as long as values move in bulk:
 *   `set`/`slice`/`subarray` copy bytes, while reading one element and writing it
 *   back quiets a signalling NaN, so code that moves float32 values copies arrays)
 * - `float16`   → `Uint16Array` of IEEE 754 binary16 bit patterns (as Arrow JS holds
 *   them); {@linkcode float16ToNumber} gives a value's number
 * - `bool`      → `Uint8Array` of 0/1
 * - `string`    → `string[]`
 * - `json`      → `string[]`, each the source text of one JSON value (kept verbatim:
 *   key order, escapes, numbers beyond int64 or float64 all survive)
 * A null slot holds the type's zero (`0n`, `0`, `""`) and has validity 0.
 * `validity` is `null` when the column has no nulls.
 *
 * @module
 */
import { float16ToNumber } from "./float16.ts";

/** The logical column types. */
export type ColumnType =
  | "int64"
  | "float64"
  | "float32"
  | "float16"
  | "bool"
  | "timestamp"
  | "date"
  | "time"
  | "duration"
  | "decimal"
  | "string"
  | "json";

/** Every column type, in the order above. Frozen. */
export const COLUMN_TYPES: readonly ColumnType[] = Object.freeze([
  "int64",
  "float64",
  "float32",
  "float16",
  "bool",
  "timestamp",
  "date",
  "time",
  "duration",
  "decimal",
  "string",
  "json",
]);

/** Units a timestamp, time or duration column can count in. */
export type TimeUnit = "s" | "ms" | "us" | "ns";

/** Most digits a decimal whose unscaled values are held in a `BigInt64Array` may have. */
export const MAX_NARROW_DECIMAL_PRECISION = 18;

/** Most digits a decimal column may have (Arrow's Decimal256). */
export const MAX_DECIMAL_PRECISION = 76;

/** One column of a schema. */
export interface Field {
  /** Column name, unique in its schema. */
  readonly name: string;
  /** Logical type. */
  readonly type: ColumnType;
  /** Whether the column may hold nulls. */
  readonly nullable: boolean;
  /** Tick unit, for `timestamp`, `time` and `duration` (default `us`). */
  readonly unit?: TimeUnit;
  /** IANA timezone or offset, for `timestamp` only, when the source had one. */
  readonly timezone?: string;
  /** Total significant digits, for `decimal` only (1..76). */
  readonly precision?: number;
  /** Digits after the decimal point, for `decimal` only (0..precision). */
  readonly scale?: number;
}

/** An ordered list of fields. */
export type Schema = readonly Field[];

/** A column of 64-bit integers, timestamps, dates, times of day or durations. */
export interface BigIntColumn {
  /** The column type. */
  readonly type: "int64" | "timestamp" | "date" | "time" | "duration";
  /** One value per row (the type's zero in null slots). */
  readonly values: BigInt64Array;
  /** One byte per row, 1 = present, 0 = null; `null` when no row is null. */
  readonly validity: Uint8Array | null;
}
/** A column of 64-bit floats. */
export interface FloatColumn {
  /** The column type. */
  readonly type: "float64";
  /** One value per row (the type's zero in null slots). */
  readonly values: Float64Array;
  /** One byte per row, 1 = present, 0 = null; `null` when no row is null. */
  readonly validity: Uint8Array | null;
}
/** A column of 32-bit floats (IEEE 754 binary32). */
export interface Float32Column {
  /** The column type. */
  readonly type: "float32";
  /** One value per row (0 in null slots). */
  readonly values: Float32Array;
  /** One byte per row, 1 = present, 0 = null; `null` when no row is null. */
  readonly validity: Uint8Array | null;
}
/** A column of 16-bit floats, held as their IEEE 754 binary16 bit patterns. */
export interface Float16Column {
  /** The column type. */
  readonly type: "float16";
  /** One bit pattern per row (0, that is +0, in null slots). */
  readonly values: Uint16Array;
  /** One byte per row, 1 = present, 0 = null; `null` when no row is null. */
  readonly validity: Uint8Array | null;
}
/** A column of booleans stored as 0/1 bytes. */
export interface BoolColumn {
  /** The column type. */
  readonly type: "bool";
  /** One value per row (the type's zero in null slots). */
  readonly values: Uint8Array;
  /** One byte per row, 1 = present, 0 = null; `null` when no row is null. */
  readonly validity: Uint8Array | null;
}
/**
 * A column of exact decimals: the unscaled integers (value = unscaled / 10^scale).
 * Held in a `BigInt64Array` when the field's precision is at most
 * {@link MAX_NARROW_DECIMAL_PRECISION}, else in a `bigint[]`.
 */
export interface DecimalColumn {
  /** The column type. */
  readonly type: "decimal";
  /** One unscaled value per row (`0n` in null slots). */
  readonly values: BigInt64Array | bigint[];
  /** One byte per row, 1 = present, 0 = null; `null` when no row is null. */
  readonly validity: Uint8Array | null;
}

/** A column of strings, or of JSON values as their source text. */
export interface StringColumn {
  /** The column type. */
  readonly type: "string" | "json";
  /** One value per row (the type's zero in null slots). */
  readonly values: string[];
  /** One byte per row, 1 = present, 0 = null; `null` when no row is null. */
  readonly validity: Uint8Array | null;
}

/** Any column. */
export type Column =
  | BigIntColumn
  | FloatColumn
  | Float32Column
  | Float16Column
  | BoolColumn
  | DecimalColumn
  | StringColumn;

/** A set of equally long columns with their schema. */
export interface Batch {
  /** The batch's schema. */
  readonly schema: Schema;
  /** Columns. */
  readonly columns: readonly Column[];
  /** Number of rows. */
  readonly length: number;
}

/** Column types held as a `BigInt64Array` of integers, ticks or days. */
export const BIGINT_TYPES: ReadonlySet<ColumnType> = new Set([
  "int64",
  "timestamp",
  "date",
  "time",
  "duration",
]);

/** Column types held as `string[]`. */
export const TEXT_TYPES: ReadonlySet<ColumnType> = new Set(["string", "json"]);

/**
 * Whether a decimal field's unscaled values are held in a `bigint[]` (more than
 * {@link MAX_NARROW_DECIMAL_PRECISION} digits) rather than a `BigInt64Array`.
 *
 * @param field A field.
 * @returns True for a decimal wider than 18 digits.
 */
export function isWideDecimal(field: Pick<Field, "type" | "precision">): boolean {
  return field.type === "decimal" && (field.precision ?? 0) > MAX_NARROW_DECIMAL_PRECISION;
}

/**
 * Creates an empty column of a field's type and the given length (all zeros, no nulls).
 *
 * @param field The field (its type, and for a decimal its precision).
 * @param length Number of rows.
 * @returns A zero-filled column.
 */
export function emptyColumn(field: Pick<Field, "type" | "precision">, length: number): Column {
  const type = field.type;
  switch (type) {
    case "int64":
    case "timestamp":
    case "date":
    case "time":
    case "duration":
      return { type, values: new BigInt64Array(length), validity: null };
    case "decimal":
      return {
        type,
        values: isWideDecimal(field)
          ? new Array<bigint>(length).fill(0n)
          : new BigInt64Array(length),
        validity: null,
      };
    case "float64":
      return { type, values: new Float64Array(length), validity: null };
    case "float32":
      return { type, values: new Float32Array(length), validity: null };
    case "float16":
      return { type, values: new Uint16Array(length), validity: null };
    case "bool":
      return { type, values: new Uint8Array(length), validity: null };
    case "string":
    case "json":
      return { type, values: new Array<string>(length).fill(""), validity: null };
  }
}

/**
 * Returns the length of a column.
 *
 * @param column Any column.
 * @returns Its number of rows.
 */
export function columnLength(column: Column): number {
  return column.values.length;
}

/**
 * Returns rows `[start, end)` of a column (copies typed arrays' views, not data).
 *
 * @param column Any column.
 * @param start First row, inclusive.
 * @param end Last row, exclusive.
 * @returns The slice.
 */
export function sliceColumn(column: Column, start: number, end: number): Column {
  const validity = column.validity ? column.validity.subarray(start, end) : null;
  switch (column.type) {
    case "int64":
    case "timestamp":
    case "date":
    case "time":
    case "duration":
      return { type: column.type, values: column.values.subarray(start, end), validity };
    case "decimal":
      return {
        type: column.type,
        values: column.values instanceof BigInt64Array
          ? column.values.subarray(start, end)
          : column.values.slice(start, end),
        validity,
      };
    case "float64":
      return { type: column.type, values: column.values.subarray(start, end), validity };
    case "float32":
      return { type: column.type, values: column.values.subarray(start, end), validity };
    case "float16":
      return { type: column.type, values: column.values.subarray(start, end), validity };
    case "bool":
      return { type: column.type, values: column.values.subarray(start, end), validity };
    case "string":
    case "json":
      return { type: column.type, values: column.values.slice(start, end), validity };
  }
}

/**
 * Returns rows `[start, end)` of a batch.
 *
 * @param batch The batch.
 * @param start First row, inclusive.
 * @param end Last row, exclusive.
 * @returns A batch of `end - start` rows.
 */
export function sliceBatch(batch: Batch, start: number, end: number): Batch {
  const s = Math.max(0, Math.min(start, batch.length));
  const e = Math.max(s, Math.min(end, batch.length));
  return {
    schema: batch.schema,
    columns: batch.columns.map((c) => sliceColumn(c, s, e)),
    length: e - s,
  };
}

/**
 * Concatenates columns of one field into one column.
 *
 * @param field The shared field (its type, and for a decimal its precision).
 * @param parts Columns to join, in order.
 * @returns One column holding every row of `parts`.
 */
export function concatColumns(
  field: Pick<Field, "type" | "precision">,
  parts: readonly Column[],
): Column {
  const type = field.type;
  const length = parts.reduce((n, p) => n + p.values.length, 0);
  const anyNulls = parts.some((p) => p.validity !== null);
  let validity: Uint8Array | null = null;
  if (anyNulls) {
    validity = new Uint8Array(length);
    let at = 0;
    for (const p of parts) {
      if (p.validity) validity.set(p.validity, at);
      else validity.fill(1, at, at + p.values.length);
      at += p.values.length;
    }
  }
  if (type === "string" || type === "json" || isWideDecimal(field)) {
    const values: (string | bigint)[] = [];
    for (const p of parts) for (const v of p.values as (string | bigint)[]) values.push(v);
    return { type, values, validity } as Column;
  }
  const out = emptyColumn(field, length);
  let at = 0;
  for (const p of parts) {
    // Same-type `set` copies bytes, so float32 NaN payloads survive.
    (out.values as BigInt64Array | Float64Array | Float32Array | Uint16Array | Uint8Array).set(
      p.values as BigInt64Array & Float64Array & Float32Array & Uint16Array & Uint8Array,
      at,
    );
    at += p.values.length;
  }
  return { ...out, validity } as Column;
}

/**
 * Concatenates batches that share a schema.
 *
 * @param schema The shared schema.
 * @param batches Batches to join, in order.
 * @returns One batch.
 */
export function concatBatches(schema: Schema, batches: readonly Batch[]): Batch {
  if (batches.length === 1 && batches[0]) return batches[0];
  return {
    schema,
    columns: schema.map((f, i) => concatColumns(f, batches.map((b) => b.columns[i] as Column))),
    length: batches.reduce((n, b) => n + b.length, 0),
  };
}

/**
 * Reads one cell as a plain JS value (`bigint`, `number`, `boolean`, `string` or `null`).
 * A decimal cell is its unscaled integer (`bigint`); a JSON cell its source text.
 *
 * @param column Any column.
 * @param row Row index.
 * @returns The cell value, `null` when the slot is null.
 */
export function cellValue(column: Column, row: number): bigint | number | boolean | string | null {
  if (column.validity && column.validity[row] === 0) return null;
  if (column.type === "bool") return column.values[row] === 1;
  if (column.type === "float16") return float16ToNumber(column.values[row]!);
  return column.values[row] as bigint | number | string;
}

/** Column types of IEEE 754 floats: their cells are JS numbers. */
export const FLOAT_TYPES: ReadonlySet<ColumnType> = new Set(["float64", "float32", "float16"]);
