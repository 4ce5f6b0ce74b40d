/**
 * Column type inference for the text sources (CSV, JSON lines) from a sample of cells.
 *
 * A column gets the narrowest type whose scanner (see `_parse.ts`) accepts every
 * non-null sampled cell, trying in order int64, float64, bool, date, timestamp, and
 * falling back to string. An all-null column is a string column. Timestamps count in
 * `us` unless a fraction is written with more than 6 digits (`ns`), and a column where
 * any cell carries `Z` or an offset gets timezone `UTC`.
 *
 * JSON lines add the `json` type: a column of nested values, of mixed kinds (numbers
 * and strings, …), of numbers that neither int64 nor float64 holds exactly (`1e400`,
 * 30-digit integers, `0.1000000000000000055`), or of strings UTF-8 cannot hold (lone
 * surrogates, kept as their `\uD800` escape) is a json column, holding each value's
 * source text, so it thaws as the same JSON value.
 *
 * Inference only sees the sample: the readers check every later cell with the same
 * scanners and throw `IoError` SCHEMA_MISMATCH when one does not fit.
 *
 * Pure: no I/O.
 *
 * @module
 */
import {
  type ColumnType,
  type Field,
  MAX_DECIMAL_PRECISION,
  type TimeUnit,
} from "../format/column.ts";
import {
  bigInt64Text,
  isNaNText,
  scanBool,
  scanDate,
  scanFloat,
  scanInt,
  scanTimestamp,
  timestampParts,
  timestampTicks,
} from "./_parse.ts";
import { IoError } from "./errors.ts";

/** An inferred (or forced) column type, with its parameters when it has some. */
export interface InferredType {
  /** The column type. */
  type: ColumnType;
  /** Tick unit, for timestamps, times and durations. */
  unit?: TimeUnit;
  /** `UTC` when timestamps carried offsets. */
  timezone?: string;
  /** Digits, for decimals. */
  precision?: number;
  /** Fraction digits, for decimals. */
  scale?: number;
}

/** A JSON cell as the JSON-lines reader saw it: its kind and its source text. */
export interface JsonCell {
  /** What the JSON value was. */
  kind: "string" | "number" | "bool" | "nested";
  /** A string's decoded value, or the raw source text of a number, bool or nested value. */
  text: string;
}

interface TimeStats {
  ok: boolean;
  maxFrac: number;
  offset: boolean;
  nsFits: boolean;
}

function timeStats(values: Iterable<string>): TimeStats {
  const parts = timestampParts();
  const st: TimeStats = { ok: true, maxFrac: 0, offset: false, nsFits: true };
  for (const v of values) {
    if (!scanTimestamp(v, 0, v.length, parts)) {
      st.ok = false;
      return st;
    }
    if (parts.fracDigits > st.maxFrac) st.maxFrac = parts.fracDigits;
    if (parts.offset) st.offset = true;
    if (st.nsFits && timestampTicks(parts, "ns") === null) st.nsFits = false;
  }
  return st;
}

function timestampType(st: TimeStats): InferredType | null {
  if (!st.ok) return null;
  if (st.maxFrac > 6 && !st.nsFits) return null;
  const out: InferredType = { type: "timestamp", unit: st.maxFrac > 6 ? "ns" : "us" };
  if (st.offset) out.timezone = "UTC";
  return out;
}

function* nonNull(values: readonly (string | null)[]): Generator<string> {
  for (const v of values) if (v !== null) yield v;
}

/**
 * Infers a column type from sampled text cells (`null` = null cell).
 *
 * @param values The sampled cells of one column.
 * @returns The narrowest type accepting every non-null cell.
 *
 * @example Zip codes with a leading zero stay strings
 * ```ts
 * import assert from "node:assert/strict";
 * import { inferTextType } from "./infer.ts";
 * assert.deepEqual(inferTextType(["1", "-2", null]), { type: "int64" });
 * assert.deepEqual(inferTextType(["02134", "10001"]), { type: "string" });
 * assert.deepEqual(inferTextType(["1.5", "2"]), { type: "float64" });
 * assert.deepEqual(inferTextType(["2024-01-02T03:04:05Z"]), {
 *   type: "timestamp",
 *   unit: "us",
 *   timezone: "UTC",
 * });
 * ```
 */
export function inferTextType(values: readonly (string | null)[]): InferredType {
  let canInt = true;
  let canFloat = true;
  let anyFinite = false;
  let canBool = true;
  let canDate = true;
  let any = false;
  for (const v of values) {
    if (v === null) continue;
    any = true;
    const n = v.length;
    if (canInt) {
      const x = scanInt(v, 0, n);
      if (x !== x || (x === Infinity && bigInt64Text(v) === null)) canInt = false;
    }
    if (canFloat) {
      const x = scanFloat(v, 0, n);
      if (x !== x) {
        if (!isNaNText(v, 0, n)) canFloat = false;
      } else if (x !== Infinity && x !== -Infinity) {
        anyFinite = true;
      }
    }
    if (canBool && scanBool(v, 0, n) < 0) canBool = false;
    if (canDate && Number.isNaN(scanDate(v, 0, n))) canDate = false;
    if (!canInt && !canFloat && !canBool && !canDate && n < 10) return { type: "string" };
  }
  if (!any) return { type: "string" };
  if (canInt) return { type: "int64" };
  if (canFloat && anyFinite) return { type: "float64" };
  if (canBool) return { type: "bool" };
  if (canDate) return { type: "date" };
  return timestampType(timeStats(nonNull(values))) ?? { type: "string" };
}

/**
 * Fills in the timestamp unit and timezone of a column whose type is forced to
 * `timestamp`, from whatever sampled cells parse as timestamps.
 *
 * @param values The sampled cells of one column.
 * @returns A timestamp type (`us` when nothing in the sample says otherwise).
 */
export function forcedTimestampType(values: readonly (string | null)[]): InferredType {
  const parts = timestampParts();
  let maxFrac = 0;
  let offset = false;
  for (const v of values) {
    if (v === null || !scanTimestamp(v, 0, v.length, parts)) continue;
    if (parts.fracDigits > maxFrac) maxFrac = parts.fracDigits;
    if (parts.offset) offset = true;
  }
  const out: InferredType = { type: "timestamp", unit: maxFrac > 6 ? "ns" : "us" };
  if (offset) out.timezone = "UTC";
  return out;
}

/**
 * Infers a column type from sampled JSON cells (`null` = JSON null or missing key).
 * Numbers become int64 or float64, `true`/`false` bool, strings that all read as
 * dates or timestamps a date or timestamp column; anything mixed is a string column.
 *
 * @param values The sampled cells of one column.
 * @returns The inferred type.
 */
export function inferJsonType(values: readonly (JsonCell | null)[]): InferredType {
  let kind: JsonCell["kind"] | "mixed" | null = null;
  for (const v of values) {
    if (v === null) continue;
    if (kind === null) kind = v.kind;
    else if (kind !== v.kind) return { type: "json" };
  }
  if (kind === null) return { type: "string" };
  if (kind === "nested") return { type: "json" };
  if (kind === "bool") return { type: "bool" };
  if (kind === "number") {
    const texts = values.flatMap((v) => (v === null ? [] : [v.text]));
    const asText = inferTextType(texts);
    return asText.type === "int64" || asText.type === "float64" ? asText : { type: "json" };
  }
  if (values.some((v) => v !== null && !v.text.isWellFormed())) return { type: "json" };
  let canDate = true;
  let any = false;
  for (const v of values) {
    if (v === null) continue;
    any = true;
    if (Number.isNaN(scanDate(v.text, 0, v.text.length))) {
      canDate = false;
      break;
    }
  }
  if (!any) return { type: "string" };
  if (canDate) return { type: "date" };
  const strings = values.flatMap((v) => (v === null ? [] : [v.text]));
  return timestampType(timeStats(strings)) ?? { type: "string" };
}

/**
 * Builds a nullable field from a name and an inferred type.
 *
 * @param name Column name.
 * @param t Inferred type.
 * @returns The field.
 */
export function fieldOf(name: string, t: InferredType): Field {
  switch (t.type) {
    case "timestamp":
      return t.timezone === undefined
        ? { name, type: "timestamp", nullable: true, unit: t.unit ?? "us" }
        : { name, type: "timestamp", nullable: true, unit: t.unit ?? "us", timezone: t.timezone };
    case "time":
    case "duration":
      return { name, type: t.type, nullable: true, unit: t.unit ?? "us" };
    case "decimal":
      return { name, type: "decimal", nullable: true, precision: t.precision, scale: t.scale };
    default:
      return { name, type: t.type, nullable: true };
  }
}

/**
 * Checks a forced type's parameters (a decimal needs its precision and scale, a unit
 * must be one of s, ms, us, ns) and returns it as an {@link InferredType}.
 *
 * @param name Column name, for messages.
 * @param forced A type name or a field's type.
 * @returns The type with its parameters.
 * @throws {IoError} INVALID_OPTION naming the column and what to give.
 */
export function forcedType(
  name: string,
  forced: ColumnType | Omit<Field, "name" | "nullable">,
): InferredType {
  const t: InferredType = typeof forced === "string" ? { type: forced } : { ...forced };
  if (t.unit !== undefined && !["s", "ms", "us", "ns"].includes(t.unit)) {
    throw new IoError(
      "INVALID_OPTION",
      `Cannot force column '${name}' to ${t.type} in unit '${t.unit}': the unit is one of s, ms, us, ns`,
      { column: name },
    );
  }
  if (t.type === "decimal") {
    const p = t.precision;
    const s = t.scale;
    if (
      p === undefined || s === undefined || !Number.isSafeInteger(p) || !Number.isSafeInteger(s) ||
      p < 1 || p > MAX_DECIMAL_PRECISION || s < 0 || s > p
    ) {
      throw new IoError(
        "INVALID_OPTION",
        `Cannot force column '${name}' to decimal: give its precision (1..${MAX_DECIMAL_PRECISION}) and scale (0..precision), e.g. {type: "decimal", precision: 18, scale: 2}`,
        { column: name },
      );
    }
  }
  return t;
}

/**
 * Says why a column has its type: given by the caller (`types`), or inferred.
 *
 * @param types Forced types by column name.
 * @param inferred The text for an inferred column.
 * @returns The describer.
 */
export function typeOrigin(
  types: Record<string, unknown> | undefined,
  inferred: string,
): (column: string) => string {
  return (column) =>
    types !== undefined && Object.hasOwn(types, column)
      ? " (the column's type was given, not inferred)"
      : inferred;
}
