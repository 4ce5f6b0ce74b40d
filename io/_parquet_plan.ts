/**
 * How each Parquet column is read (private to `parquet.ts`): DuckDB's type from
 * `DESCRIBE` → the column type that holds its values exactly, the SQL expression that
 * produces them and how to read the result vector; what our own writer's
 * `permafrost_schema` metadata gives back (units, durations, json); and the forced
 * types (`string`, `json` or the column's own type). See `parquet.ts` for the table.
 *
 * @module
 */
import type { Field, TimeUnit } from "../format/column.ts";
import { type LockedDuckDB, PARQUET_SCHEMA_KEY, sqlIdent } from "./_duckdb.ts";
import { resolve } from "node:path";
import { IoError } from "./errors.ts";
import type { ForcedType } from "./types.ts";

/** The error of a Parquet file DuckDB cannot read. */
export function readFailed(path: string, cause: unknown): IoError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new IoError("READ_FAILED", `Cannot read Parquet '${path}': ${why}`, { path, cause });
}

/** How one DuckDB column is read. */
export interface ColumnPlan {
  field: Field;
  /** SQL expression producing the value. */
  expr: string;
  /** How to read the result vector. */
  read:
    | "bigint"
    | "wide"
    | "double"
    | "float32"
    | "float16"
    | "bool"
    | "string"
    | "decimal"
    | "time";
  /** Divide read ticks by this (exactly) to restore a coarser unit. */
  divide?: bigint;
  /** Decoded short strings of a string column, by their bytes. */
  strings?: ShortStringCache;
}

const INT_TYPES = new Set([
  "TINYINT",
  "SMALLINT",
  "INTEGER",
  "BIGINT",
  "UTINYINT",
  "USMALLINT",
  "UINTEGER",
]);
const WIDE_INT_TYPES = new Set(["UBIGINT", "HUGEINT", "UHUGEINT"]);
const TIMESTAMP_TYPES: Record<string, { unit: TimeUnit; expr: (c: string) => string }> = {
  "TIMESTAMP_S": { unit: "s", expr: (c) => `epoch_ms(${c}) // 1000` },
  "TIMESTAMP_MS": { unit: "ms", expr: (c) => `epoch_ms(${c})` },
  "TIMESTAMP": { unit: "us", expr: (c) => `epoch_us(${c})` },
  "TIMESTAMP_NS": { unit: "ns", expr: (c) => `epoch_ns(${c})` },
  "TIMESTAMP WITH TIME ZONE": { unit: "us", expr: (c) => `epoch_us(${c})` },
};

/**
 * Doubles a leading U+FEFF: the DuckDB client decodes each VARCHAR with a default
 * `TextDecoder`, which drops one leading byte-order mark, so a string that starts with
 * one would lose it.
 */
function keepBom(expr: string): string {
  return `CASE WHEN starts_with(${expr}, chr(65279)) THEN chr(65279) || ${expr} ELSE ${expr} END`;
}

/** Plans how to read one column of DuckDB type `duck`, with an optional forced type. */
function planColumn(
  name: string,
  duck: string,
  forced: ForcedType | undefined,
  path: string,
): ColumnPlan {
  const c = sqlIdent(name);
  let plan: ColumnPlan | null;
  if (INT_TYPES.has(duck)) {
    plan = {
      field: { name, type: "int64", nullable: true },
      expr: `CAST(${c} AS BIGINT)`,
      read: "bigint",
    };
  } else if (WIDE_INT_TYPES.has(duck)) {
    plan = { field: { name, type: "int64", nullable: true }, expr: c, read: "wide" };
  } else if (duck === "FLOAT") {
    plan = { field: { name, type: "float32", nullable: true }, expr: c, read: "float32" };
  } else if (duck === "DOUBLE") {
    plan = { field: { name, type: "float64", nullable: true }, expr: c, read: "double" };
  } else if (DECIMAL_TYPE.test(duck)) {
    const [, p, sc] = DECIMAL_TYPE.exec(duck)!;
    plan = {
      field: { name, type: "decimal", nullable: true, precision: Number(p), scale: Number(sc) },
      expr: c,
      read: "decimal",
    };
  } else if (duck === "TIME" || duck === "TIME_NS") {
    plan = {
      field: { name, type: "time", nullable: true, unit: duck === "TIME" ? "us" : "ns" },
      expr: c,
      read: "time",
    };
  } else if (duck === "JSON") {
    plan = { field: { name, type: "json", nullable: true }, expr: keepBom(c), read: "string" };
  } else if (duck === "BOOLEAN") {
    plan = { field: { name, type: "bool", nullable: true }, expr: c, read: "bool" };
  } else if (duck === "DATE") {
    plan = {
      field: { name, type: "date", nullable: true },
      expr: `CAST(${c} - DATE '1970-01-01' AS BIGINT)`,
      read: "bigint",
    };
  } else if (Object.hasOwn(TIMESTAMP_TYPES, duck)) {
    const t = TIMESTAMP_TYPES[duck] as { unit: TimeUnit; expr: (c: string) => string };
    const field: Field = duck === "TIMESTAMP WITH TIME ZONE"
      ? { name, type: "timestamp", nullable: true, unit: t.unit, timezone: "UTC" }
      : { name, type: "timestamp", nullable: true, unit: t.unit };
    plan = { field, expr: t.expr(c), read: "bigint" };
  } else if (duck === "VARCHAR" || duck.startsWith("ENUM(")) {
    plan = { field: { name, type: "string", nullable: true }, expr: keepBom(c), read: "string" };
  } else {
    plan = null;
  }
  const forcedName = typeof forced === "string" ? forced : forced?.type;
  if (forced === undefined || (plan !== null && forcedName === plan.field.type)) {
    if (plan === null) {
      throw new IoError(
        "UNSUPPORTED_TYPE",
        `Cannot store column '${name}' of Parquet '${path}': its type ${duck} has no exact column type (Permafrost stores integers, floats, booleans, text, JSON, dates, timestamps, times, durations and decimals); force the column to json (each value as JSON text) or string (a text form) to store it converted`,
        { path, column: name },
      );
    }
    return plan;
  }
  if (forcedName === "string") {
    return {
      field: { name, type: "string", nullable: true },
      expr: keepBom(`CAST(${c} AS VARCHAR)`),
      read: "string",
    };
  }
  if (forcedName === "json") {
    return {
      field: { name, type: "json", nullable: true },
      expr: keepBom(`CAST(to_json(${c}) AS VARCHAR)`),
      read: "string",
    };
  }
  throw new IoError(
    "INVALID_OPTION",
    `Cannot read column '${name}' of Parquet '${path}' as ${forcedName}: it is ${duck}; only string, json${
      plan ? ` or ${plan.field.type}` : ""
    } are possible`,
    { path, column: name },
  );
}

const DECIMAL_TYPE = /^DECIMAL\((\d+),\s*(\d+)\)$/;

/**
 * Gives columns back what our writer recorded in the `permafrost_schema` key-value
 * metadata and Parquet cannot say: a timestamp's unit and timezone name (Parquet has
 * no seconds unit, DuckDB widens milliseconds and keeps no timezone name), a time's
 * unit, a duration (written as BIGINT) and a json column (written as VARCHAR). Only
 * applied where the DuckDB type is the one our writer produces for that field.
 */
function restoreField(plan: ColumnPlan, duck: string, meta: Field | undefined): ColumnPlan {
  if (meta === undefined) return plan;
  const name = plan.field.name;
  const unit = meta.unit ?? "us";
  if (meta.type === "timestamp" && plan.field.type === "timestamp") {
    const tz = meta.timezone;
    const expected = unit === "ns"
      ? "TIMESTAMP_NS"
      : tz !== undefined
      ? "TIMESTAMP WITH TIME ZONE"
      : "TIMESTAMP";
    if (duck !== expected || !UNITS.has(unit)) return plan;
    const field: Field = typeof tz === "string"
      ? { name, type: "timestamp", nullable: true, unit, timezone: tz }
      : { name, type: "timestamp", nullable: true, unit };
    return { ...plan, field, divide: coarser(unit) };
  }
  if (meta.type === "time" && duck === "TIME" && (unit === "s" || unit === "ms")) {
    return { ...plan, field: { name, type: "time", nullable: true, unit }, divide: coarser(unit) };
  }
  if (meta.type === "duration" && duck === "BIGINT" && UNITS.has(unit)) {
    return { ...plan, field: { name, type: "duration", nullable: true, unit } };
  }
  if (meta.type === "float16" && duck === "FLOAT") {
    return { ...plan, field: { name, type: "float16", nullable: true }, read: "float16" };
  }
  if (meta.type === "json" && duck === "VARCHAR") {
    return { ...plan, field: { name, type: "json", nullable: true } };
  }
  return plan;
}

/** Microseconds per tick of a coarser unit, to divide read microseconds by. */
function coarser(unit: TimeUnit): bigint | undefined {
  return unit === "s" ? 1000000n : unit === "ms" ? 1000n : undefined;
}

const UNITS = new Set<unknown>(["s", "ms", "us", "ns"]);

/** Our writer's exact schema, from the file's `permafrost_schema` metadata (empty when absent). */
export async function recordedSchema(db: LockedDuckDB, path: string): Promise<Map<string, Field>> {
  const out = new Map<string, Field>();
  try {
    const r = await db.connection.runAndReadAll(
      `SELECT decode(value) FROM parquet_kv_metadata($1) WHERE decode(key) = $2`,
      [resolve(path), PARQUET_SCHEMA_KEY],
    );
    const text = r.getRows()[0]?.[0];
    if (typeof text !== "string") return out;
    const fields = JSON.parse(text) as unknown;
    if (!Array.isArray(fields)) return out;
    for (const f of fields) {
      if (f && typeof f === "object" && typeof f.name === "string") out.set(f.name, f as Field);
    }
  } catch {
    // No or unreadable metadata: the DuckDB types stand.
  }
  return out;
}

/**
 * The plan of one described column, with its forced type: `string` or `json` read the
 * column as text (also a type without an exact column type), its own type (after the
 * metadata restored it) keeps it; anything else is INVALID_OPTION.
 *
 * @param name Column name.
 * @param duck DuckDB's type.
 * @param types Forced types by name.
 * @param recorded Our writer's recorded fields by name.
 * @param path The file, for messages.
 * @returns The plan.
 * @throws {IoError} UNSUPPORTED_TYPE, INVALID_OPTION.
 */
export function planForced(
  name: string,
  duck: string,
  types: Readonly<Record<string, ForcedType>>,
  recorded: ReadonlyMap<string, Field>,
  path: string,
): ColumnPlan {
  const forced = Object.hasOwn(types, name) ? types[name] : undefined;
  const forcedName = typeof forced === "object" ? forced.type : forced;
  let natural: ColumnPlan | null = null;
  try {
    natural = restoreField(planColumn(name, duck, undefined, path), duck, recorded.get(name));
  } catch (err) {
    // A type without an exact column type may still be read as text when forced.
    const asText = forcedName === "string" || forcedName === "json";
    if (!(asText && err instanceof IoError && err.code === "UNSUPPORTED_TYPE")) throw err;
  }
  if (natural !== null && (forcedName === undefined || forcedName === natural.field.type)) {
    return natural;
  }
  if (forcedName === "string" || forcedName === "json") {
    return planColumn(name, duck, forcedName, path);
  }
  if (forcedName === "float64" && duck === "FLOAT") {
    // Widening is exact: every float32 (and half) is a double.
    const c = sqlIdent(name);
    return {
      field: { name, type: "float64", nullable: true },
      expr: `CAST(${c} AS DOUBLE)`,
      read: "double",
    };
  }
  throw new IoError(
    "INVALID_OPTION",
    `Cannot read column '${name}' of Parquet '${path}' as ${forcedName}: it is ${natural?.field.type}; only string, json or ${natural?.field.type} are possible`,
    { path, column: name },
  );
}

/** The short-string cache of one column (`_parquet_vectors.ts` `shortString`). */
export interface ShortStringCache {
  small: Map<number, string>;
  map: Map<number, Map<number, Map<number, string>>>;
  size: number;
}
