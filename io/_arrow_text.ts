/**
 * Text and JSON forms of Arrow values and columns (private to `io/`): a column forced to
 * `string` holds the CSV text form of each value (`_format.ts`), one forced to `json`
 * the value as JSON (bigints as exact digits). Pure: no I/O.
 *
 * @module
 */
import { cellValue, type Column, type Field, FLOAT_TYPES } from "../format/column.ts";
import { float16ToNumber } from "../format/float16.ts";
import { formatDecimal } from "../format/decimal_value.ts";
import {
  formatDate,
  formatDuration,
  formatFloat,
  formatFloat16,
  formatFloat32,
  formatTime,
  TimestampFormatter,
} from "./_format.ts";

function jsonText(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x)) ?? "null";
}

/** A text form of any Arrow value (for types without a column type of their own). */
export function valueText(v: unknown): string {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) {
    return Array.from(v, (b) => b.toString(16).padStart(2, "0")).join("");
  }
  if (typeof v === "object" && v !== null) {
    const j = (v as { toJSON?: () => unknown }).toJSON;
    return jsonText(typeof j === "function" ? j.call(v) : v);
  }
  return String(v);
}

/**
 * A value of any Arrow type as JSON text: bigints as their digits (exact), non-finite
 * floats as the strings `"NaN"`/`"Infinity"`, bytes as hex strings, rows, structs and
 * maps (`toJSON`) as objects, lists as arrays.
 */
export function valueJson(v: unknown): string {
  if (v === null || v === undefined) return "null";
  switch (typeof v) {
    case "bigint":
      return v.toString();
    case "number":
      return Number.isFinite(v) ? JSON.stringify(v) : JSON.stringify(String(v));
    case "boolean":
    case "string":
      return JSON.stringify(v);
  }
  if (v instanceof Uint8Array) return JSON.stringify(valueText(v));
  if (typeof (v as { toJSON?: unknown }).toJSON === "function") {
    const plain = (v as { toJSON: () => unknown }).toJSON();
    if (plain !== v) return valueJson(plain);
  }
  if (v instanceof Map) {
    return "{" + [...v].map(([k, x]) => JSON.stringify(String(k)) + ":" + valueJson(x)).join(",") +
      "}";
  }
  if (typeof (v as Iterable<unknown>)[Symbol.iterator] === "function") {
    return "[" + Array.from(v as Iterable<unknown>, valueJson).join(",") + "]";
  }
  return "{" + Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => JSON.stringify(k) + ":" + valueJson(x)).join(",") +
    "}";
}

/**
 * Renders any column as a string column, using the CSV text forms (see `_format.ts`).
 *
 * @param col The column.
 * @param field Its field (for the timestamp unit and timezone).
 * @returns A string column with the same nulls.
 */
export function columnToText(col: Column, field: Field): Column {
  if (col.type === "string") return col;
  if (col.type === "json") return { type: "string", values: col.values, validity: col.validity };
  const n = col.values.length;
  const out = new Array<string>(n);
  const v = col.validity;
  const ts = new TimestampFormatter(field.unit ?? "us", false, field.timezone !== undefined);
  const unit = field.unit ?? "us";
  for (let i = 0; i < n; i++) {
    if (v !== null && v[i] === 0) {
      out[i] = "";
      continue;
    }
    switch (col.type) {
      case "int64":
        out[i] = String(col.values[i]);
        break;
      case "float64":
        out[i] = formatFloat(col.values[i] as number, false);
        break;
      case "float32":
        out[i] = formatFloat32(col.values[i] as number, false);
        break;
      case "float16": {
        const bits = col.values[i] as number;
        out[i] = formatFloat16(float16ToNumber(bits), bits, false);
        break;
      }
      case "bool":
        out[i] = col.values[i] ? "true" : "false";
        break;
      case "date":
        out[i] = formatDate(Number(col.values[i]));
        break;
      case "timestamp":
        out[i] = ts.format(col.values[i] as bigint);
        break;
      case "time":
        out[i] = formatTime(col.values[i] as bigint, unit);
        break;
      case "duration":
        out[i] = formatDuration(col.values[i] as bigint, unit);
        break;
      case "decimal":
        out[i] = formatDecimal(col.values[i] as bigint, field.scale ?? 0);
        break;
    }
  }
  return { type: "string", values: out, validity: v };
}

/**
 * Renders any column as a json column: numbers, booleans and decimals as JSON
 * numbers or literals (non-finite floats as strings), everything else as JSON
 * strings of its text form.
 */
export function columnToJson(col: Column, field: Field): Column {
  if (col.type === "json") return col;
  const text = columnToText(col, field);
  const values = text.values as string[];
  const float = FLOAT_TYPES.has(col.type);
  const bare = col.type === "int64" || col.type === "bool" || col.type === "decimal";
  const out = values.map((s, i) => {
    if (text.validity !== null && text.validity[i] === 0) return "";
    if (float) {
      const x = cellValue(col, i) as number;
      return Number.isFinite(x) ? String(Number(s)) : JSON.stringify(s);
    }
    return bare ? s : JSON.stringify(s);
  });
  return { type: "json", values: out, validity: col.validity };
}
