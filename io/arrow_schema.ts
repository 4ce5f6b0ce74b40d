/**
 * Exact mapping between Arrow types and column fields (see `arrow_table.ts` for the
 * table): which Arrow type a column type is written as, and which column type holds
 * an Arrow field's values exactly — or none, then UNSUPPORTED_TYPE unless the caller
 * forces `string` or `json`. Pure: no I/O.
 *
 * @module
 */
import * as arrow from "apache-arrow";
import {
  type ColumnType,
  type Field,
  MAX_DECIMAL_PRECISION,
  type Schema,
  type TimeUnit,
} from "../format/column.ts";
import { IoError } from "./errors.ts";
import type { ForcedType } from "./types.ts";

const UNIT_FROM_ARROW: Record<number, TimeUnit> = {
  [arrow.TimeUnit.SECOND]: "s",
  [arrow.TimeUnit.MILLISECOND]: "ms",
  [arrow.TimeUnit.MICROSECOND]: "us",
  [arrow.TimeUnit.NANOSECOND]: "ns",
};
const UNIT_TO_ARROW: Record<TimeUnit, arrow.TimeUnit> = {
  s: arrow.TimeUnit.SECOND,
  ms: arrow.TimeUnit.MILLISECOND,
  us: arrow.TimeUnit.MICROSECOND,
  ns: arrow.TimeUnit.NANOSECOND,
};

/** Arrow's canonical extension name of JSON text in a Utf8 column. */
export const ARROW_JSON_EXTENSION = "arrow.json";
const EXTENSION_NAME = "ARROW:extension:name";

/** Whether an Arrow type holds strings (directly or as dictionary values). */
export function isStringType(t: arrow.DataType): boolean {
  if (
    arrow.DataType.isUtf8(t) || arrow.DataType.isLargeUtf8(t) || arrow.DataType.isUtf8View(t)
  ) return true;
  return arrow.DataType.isDictionary(t) &&
    (arrow.DataType.isUtf8(t.dictionary) || arrow.DataType.isLargeUtf8(t.dictionary));
}

/**
 * Maps one Arrow field to the column field that holds its values exactly, or null
 * when no column type does (nested, binary, interval and other types).
 *
 * @param f The Arrow field.
 * @returns The column field, or null.
 */
export function exactFieldFromArrow(f: arrow.Field): Field | null {
  const t = f.type;
  const nullable = f.nullable;
  const name = f.name;
  const base = (type: ColumnType): Field => ({ name, type, nullable });
  if (arrow.DataType.isInt(t)) return base("int64");
  if (arrow.DataType.isFloat(t)) {
    return base(
      t.precision === arrow.Precision.HALF
        ? "float16"
        : t.precision === arrow.Precision.SINGLE
        ? "float32"
        : "float64",
    );
  }
  if (arrow.DataType.isBool(t)) return base("bool");
  if (arrow.DataType.isDate(t)) return base("date");
  if (arrow.DataType.isTimestamp(t)) {
    const unit = UNIT_FROM_ARROW[t.unit] ?? "us";
    return t.timezone
      ? { name, type: "timestamp", nullable, unit, timezone: t.timezone }
      : { name, type: "timestamp", nullable, unit };
  }
  if (arrow.DataType.isTime(t)) {
    const unit = UNIT_FROM_ARROW[t.unit];
    return unit === undefined ? null : { name, type: "time", nullable, unit };
  }
  if (arrow.DataType.isDuration(t)) {
    const unit = UNIT_FROM_ARROW[t.unit];
    return unit === undefined ? null : { name, type: "duration", nullable, unit };
  }
  if (arrow.DataType.isDecimal(t)) {
    const ok = t.precision >= 1 && t.precision <= MAX_DECIMAL_PRECISION && t.scale >= 0 &&
      t.scale <= t.precision && t.bitWidth % 32 === 0 && t.bitWidth >= 32 && t.bitWidth <= 256;
    return ok ? { name, type: "decimal", nullable, precision: t.precision, scale: t.scale } : null;
  }
  if (isStringType(t)) {
    return base(f.metadata.get(EXTENSION_NAME) === ARROW_JSON_EXTENSION ? "json" : "string");
  }
  if (arrow.DataType.isNull(t)) return { name, type: "string", nullable: true };
  return null;
}

function unsupported(f: arrow.Field, source: string): IoError {
  return new IoError(
    "UNSUPPORTED_TYPE",
    `Cannot store column '${f.name}' of ${source}: its Arrow type ${f.type} has no exact column type (Permafrost stores integers, floats, booleans, text, JSON, dates, timestamps, times, durations and decimals); force the column to json (each value as JSON text) or string (a text form) to store it converted`,
    { column: f.name },
  );
}

/**
 * Maps one Arrow field to a column field.
 *
 * @param f The Arrow field.
 * @returns The column field.
 * @throws {IoError} UNSUPPORTED_TYPE when no column type holds its values exactly.
 */
export function fieldFromArrow(f: arrow.Field): Field {
  const field = exactFieldFromArrow(f);
  if (field === null) throw unsupported(f, "the Arrow table");
  return field;
}

/**
 * Maps an Arrow schema to a column schema, with forced column types: a column may be
 * forced to `string` (a text form of its values) or `json` (its values as JSON), or
 * to its own type.
 *
 * @param schema The Arrow schema.
 * @param types Forced column types by name.
 * @param source What the schema belongs to, for messages (a path).
 * @returns The column schema.
 * @throws {IoError} UNSUPPORTED_TYPE for a column no type holds exactly (unless forced);
 * INVALID_OPTION for a forced type that is impossible or names no column.
 */
export function schemaFromArrow(
  schema: arrow.Schema,
  types: Readonly<Record<string, ForcedType>> = {},
  source = "the Arrow table",
): Schema {
  for (const name of Object.keys(types)) {
    if (!schema.fields.some((f) => f.name === name)) {
      throw new IoError(
        "INVALID_OPTION",
        `Cannot force the type of column '${name}': ${source} has no such column`,
        { column: name },
      );
    }
  }
  return schema.fields.map((f) => {
    const exact = exactFieldFromArrow(f);
    const given = Object.hasOwn(types, f.name) ? types[f.name] : undefined;
    const forced = typeof given === "object" ? given.type : given;
    if (forced === undefined || forced === exact?.type) {
      if (exact === null) throw unsupported(f, source);
      return exact;
    }
    if (forced === "string" || forced === "json") {
      return { name: f.name, type: forced, nullable: f.nullable || arrow.DataType.isNull(f.type) };
    }
    if (forced === "float64" && (exact?.type === "float32" || exact?.type === "float16")) {
      // Widening is exact (every float32 and float16 is a float64): what 1.6 stored.
      return { name: f.name, type: forced, nullable: f.nullable };
    }
    throw new IoError(
      "INVALID_OPTION",
      `Cannot read column '${f.name}' of ${source} as ${forced}: only string, json${
        exact ? ` or ${exact.type}` : ""
      } are possible`,
      { column: f.name },
    );
  });
}

/**
 * Maps a column field to an Arrow field.
 *
 * @param f The column field.
 * @returns The Arrow field.
 */
export function fieldToArrow(f: Field): arrow.Field {
  const metadata = f.type === "json"
    ? new Map([[EXTENSION_NAME, ARROW_JSON_EXTENSION], ["ARROW:extension:metadata", ""]])
    : undefined;
  return new arrow.Field(f.name, arrowType(f), f.nullable, metadata);
}

/** The Arrow type a field is written as. */
export function arrowType(f: Field): arrow.DataType {
  const unit = UNIT_TO_ARROW[f.unit ?? "us"];
  switch (f.type) {
    case "int64":
      return new arrow.Int64();
    case "float64":
      return new arrow.Float64();
    case "float32":
      return new arrow.Float32();
    case "float16":
      return new arrow.Float16();
    case "bool":
      return new arrow.Bool();
    case "date":
      return new arrow.DateDay();
    case "timestamp":
      return new arrow.Timestamp(unit, f.timezone ?? null);
    case "time":
      return new arrow.Time(unit, f.unit === "s" || f.unit === "ms" ? 32 : 64);
    case "duration":
      return new arrow.Duration(unit);
    case "decimal":
      return new arrow.Decimal(f.scale ?? 0, f.precision ?? 38, decimalBits(f));
    case "string":
    case "json":
      return new arrow.Utf8();
  }
}

/** Bits of the Arrow decimal a field is written as: 128 up to 38 digits, else 256. */
export function decimalBits(f: Field): 128 | 256 {
  return (f.precision ?? 38) <= 38 ? 128 : 256;
}

/**
 * Maps a column schema to an Arrow schema.
 *
 * @param schema The column schema.
 * @returns The Arrow schema.
 */
export function schemaToArrow(schema: Schema): arrow.Schema {
  return new arrow.Schema(schema.map(fieldToArrow));
}
