/**
 * Column type inference for the text sources (CSV, JSON lines) from a sample of cells.
 *
 * A column gets the narrowest type whose scanner (see `_parse.ts`) accepts every
 * non-null sampled cell, trying in order int64, float64, bool, date, timestamp, and
 * falling back to string. An all-null column is a string column. Timestamps count in
 * `us` unless a fraction is written with more than 6 digits (`ns`), and a column where
 * any cell carries `Z` or an offset gets timezone `UTC`.
 *
 * Inference only sees the sample: the readers check every later cell with the same
 * scanners and throw `IoError` SCHEMA_MISMATCH when one does not fit.
 *
 * Pure: no I/O.
 *
 * @module
 */
import type { ColumnType, Field, TimeUnit } from "../format/column.ts";
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

/** An inferred column type, with the timestamp details when it is one. */
export interface InferredType {
  /** The column type. */
  type: ColumnType;
  /** Tick unit, for timestamps. */
  unit?: TimeUnit;
  /** `UTC` when timestamps carried offsets. */
  timezone?: string;
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
    else if (kind !== v.kind) return { type: "string" };
  }
  if (kind === null || kind === "nested") return { type: "string" };
  if (kind === "bool") return { type: "bool" };
  if (kind === "number") {
    const texts = values.flatMap((v) => (v === null ? [] : [v.text]));
    const asText = inferTextType(texts);
    return asText.type === "int64" || asText.type === "float64" ? asText : { type: "string" };
  }
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
  if (t.type !== "timestamp") return { name, type: t.type, nullable: true };
  const f: {
    name: string;
    type: ColumnType;
    nullable: boolean;
    unit: TimeUnit;
    timezone?: string;
  } = {
    name,
    type: "timestamp",
    nullable: true,
    unit: t.unit ?? "us",
  };
  if (t.timezone !== undefined) f.timezone = t.timezone;
  return f;
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
