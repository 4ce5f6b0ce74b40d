/**
 * Parquet sources, read through a locked-down DuckDB (`_duckdb.ts`): schema from
 * `DESCRIBE`, rows streamed chunk by chunk into typed batches, plus the row-group
 * layout ({@link parquetRowGroups}) and row-range reads that the cluster splitter and
 * the local freeze's Workers use: {@link openParquetRanges} opens the file once and
 * reads any row range from it; {@link openParquet} (a {@link Source}) is built on it.
 *
 * Type mapping (DuckDB → column):
 * - TINYINT…BIGINT, UTINYINT…UINTEGER → int64; UBIGINT, HUGEINT, UHUGEINT → int64 when
 *   every value fits (else SCHEMA_MISMATCH naming the column: read it as `string`)
 * - FLOAT, DOUBLE → float64 (exact); DECIMAL(p, s) → decimal(p, s), exactly (the
 *   unscaled integers, never through a double)
 * - BOOLEAN → bool; DATE → date; TIME → time (us); TIME_NS → time (ns)
 * - TIMESTAMP_S / _MS / TIMESTAMP / _NS → timestamp in s / ms / us / ns;
 *   TIMESTAMP WITH TIME ZONE → timestamp (us, timezone `UTC`)
 * - VARCHAR and ENUM → string; JSON → json
 * - anything else (INTERVAL, UUID, BLOB, BIT, TIME WITH TIME ZONE, LIST, ARRAY, STRUCT,
 *   MAP, UNION, …) has no exact column type: UNSUPPORTED_TYPE naming the column and
 *   its type, unless the caller forces it to `string` (DuckDB's text form of each
 *   value) or `json` (DuckDB's `to_json`), a conversion it then asked for.
 *
 * Our own writer's `permafrost_schema` metadata gives columns back what Parquet cannot
 * say: a timestamp's or time's unit and timezone name, a duration (stored as BIGINT)
 * and a json column (stored as VARCHAR).
 *
 * DuckDB's infinite timestamps read as null (s/ms/us) or as the int64 extremes (ns), and
 * infinite dates as ±2147483647 days. Paths with glob characters (`*`, `?`, `[`) are
 * globbed by DuckDB, but the lockdown keeps the glob to the named file.
 *
 * @module
 */
import type {
  DuckDBBigIntVector,
  DuckDBBooleanVector,
  DuckDBDataChunk,
  DuckDBDoubleVector,
  DuckDBPreparedStatement,
  DuckDBResult,
  DuckDBVarCharVector,
} from "@duckdb/node-api";
import type { Batch, Field, Schema, TimeUnit } from "../format/column.ts";
import { BatchBuilder, type ColumnBuilder } from "./_builder.ts";
import { type LockedDuckDB, openLockedDuckDB, PARQUET_SCHEMA_KEY, sqlIdent } from "./_duckdb.ts";
import { fileSize } from "./_file.ts";
import { fitsInt64 } from "./_parse.ts";
import { resolve } from "node:path";
import { IoError } from "./errors.ts";
import {
  DEFAULT_BATCH_ROWS,
  type ForcedType,
  type OpenSourceOptions,
  type Source,
} from "./types.ts";

/** Options of {@link openParquet}. */
export interface OpenParquetOptions extends OpenSourceOptions {
  /** Read only rows `[start, end)` (0-based, in file order). */
  rows?: { start: number; end: number };
}

/** The row-group layout of a Parquet file. */
export interface ParquetRowGroups {
  /** Total rows. */
  rows: number;
  /** Rows in each row group, in file order. */
  rowGroups: number[];
}

/** How one DuckDB column is read. */
interface ColumnPlan {
  field: Field;
  /** SQL expression producing the value. */
  expr: string;
  /** How to read the result vector. */
  read: "bigint" | "wide" | "double" | "bool" | "string" | "decimal" | "time";
  /** Divide read ticks by this (exactly) to restore a coarser unit. */
  divide?: bigint;
  /** Decoded short strings of a string column, by their bytes. */
  strings?: ShortStringCache;
}

function readFailed(path: string, cause: unknown): IoError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new IoError("READ_FAILED", `Cannot read Parquet '${path}': ${why}`, { path, cause });
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
  } else if (duck === "FLOAT" || duck === "DOUBLE") {
    plan = {
      field: { name, type: "float64", nullable: true },
      expr: `CAST(${c} AS DOUBLE)`,
      read: "double",
    };
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

async function recordedSchema(db: LockedDuckDB, path: string): Promise<Map<string, Field>> {
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

/** Row-group layout of the file DuckDB has open. */
async function rowGroupsOf(db: LockedDuckDB, path: string): Promise<ParquetRowGroups> {
  const r = await db.connection.runAndReadAll(
    `SELECT row_group_id, max(row_group_num_rows) AS n FROM parquet_metadata($1)
     GROUP BY row_group_id ORDER BY row_group_id`,
    [resolve(path)],
  );
  const rowGroups = r.getRows().map((row) => Number(row[1] as bigint));
  return { rows: rowGroups.reduce((a, b) => a + b, 0), rowGroups };
}

/**
 * Reads the row-group layout of a Parquet file (for cutting it into tasks).
 *
 * @param path The Parquet file.
 * @returns Total rows and rows per row group.
 * @throws {IoError} READ_FAILED when the file is missing or not Parquet.
 */
export async function parquetRowGroups(path: string): Promise<ParquetRowGroups> {
  await fileSize(path);
  const db = await openLockedDuckDB([path]);
  try {
    return await rowGroupsOf(db, path);
  } catch (cause) {
    throw readFailed(path, cause);
  } finally {
    db.close();
  }
}

/** Options of {@link openParquetRanges}. */
export interface OpenParquetRangesOptions {
  /** Maximum rows per batch (default 65,536). */
  batchRows?: number;
  /** Forced column types by name: `"string"` (cells as text), `"json"` or the column's own type. */
  types?: Record<string, ForcedType>;
}

/** A row range: rows `[start, end)`, 0-based, in file order. */
export interface RowRange {
  /** First row. */
  start: number;
  /** One past the last row. */
  end: number;
}

/**
 * A Parquet file held open (one locked DuckDB, its schema planned once) to read any
 * number of row ranges. One read at a time: DuckDB streams one result per connection.
 */
export interface ParquetRanges {
  /** Column names and types. */
  readonly schema: Schema;
  /** File size in bytes. */
  readonly bytes: number;
  /** Total rows and rows per row group, from the file's metadata (no row is decoded). */
  rowGroups(): Promise<ParquetRowGroups>;
  /**
   * Reads rows `[start, end)` (all rows when omitted) in batches of at most `batchRows`
   * rows, cut from the range's first row. Throws `IoError` SCHEMA_MISMATCH (with
   * `column`) when a value does not fit its column.
   */
  read(rows?: RowRange): AsyncIterable<Batch>;
  /** Releases DuckDB (idempotent). */
  close(): void;
}

function checkBatchRows(batchRows: number): void {
  if (!Number.isSafeInteger(batchRows) || batchRows < 1) {
    throw new IoError(
      "INVALID_OPTION",
      `Cannot use batchRows '${batchRows}': it must be a positive integer`,
    );
  }
}

function checkRows(path: string, rows: RowRange | undefined): void {
  if (
    rows !== undefined &&
    (!Number.isSafeInteger(rows.start) || !Number.isSafeInteger(rows.end) || rows.start < 0 ||
      rows.end < rows.start)
  ) {
    throw new IoError("INVALID_OPTION", `Cannot read rows ${rows.start}:${rows.end} of '${path}'`, {
      path,
    });
  }
}

/**
 * Opens a Parquet file once to read row ranges from it: the type mapping, forced
 * types and batch size of {@link openParquet} (which is built on it), with DuckDB
 * started and the schema described only here. A range skips the row groups outside
 * it (DuckDB filters on `file_row_number`).
 *
 * @param path The Parquet file.
 * @param options Batch size and forced types.
 * @returns The open file; `close()` it to release DuckDB.
 * @throws {IoError} READ_FAILED when the file is missing or not Parquet, INVALID_OPTION
 * for a bad batch size or an impossible forced type.
 *
 * @example Read two ranges through one open file
 * ```ts ignore
 * const file = await openParquetRanges("flights.parquet", { batchRows: 10000 });
 * try {
 *   for await (const batch of file.read({ start: 0, end: 50000 })) console.log(batch.length);
 *   for await (const batch of file.read({ start: 50000, end: 100000 })) console.log(batch.length);
 * } finally {
 *   file.close();
 * }
 * ```
 */
export async function openParquetRanges(
  path: string,
  options: OpenParquetRangesOptions = {},
): Promise<ParquetRanges> {
  const batchRows = options.batchRows ?? DEFAULT_BATCH_ROWS;
  checkBatchRows(batchRows);
  const bytes = await fileSize(path);
  const db = await openLockedDuckDB([path]);
  let plans: ColumnPlan[];
  try {
    const d = await db.connection.runAndReadAll("DESCRIBE SELECT * FROM read_parquet($1)", [
      resolve(path),
    ]);
    const types = options.types ?? {};
    const described = d.getRows().map((r) => [String(r[0]), String(r[1])] as const);
    for (const name of Object.keys(types)) {
      if (!described.some(([n]) => n === name)) {
        throw new IoError(
          "INVALID_OPTION",
          `Cannot force the type of column '${name}': Parquet '${path}' has no such column`,
          { path, column: name },
        );
      }
    }
    const recorded = await recordedSchema(db, path);
    plans = described.map(([name, duck]) => {
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
      throw new IoError(
        "INVALID_OPTION",
        `Cannot read column '${name}' of Parquet '${path}' as ${forcedName}: it is ${natural?.field.type}; only string, json or ${natural?.field.type} are possible`,
        { path, column: name },
      );
    });
  } catch (cause) {
    db.close();
    if (cause instanceof IoError) throw cause;
    throw readFailed(path, cause);
  }
  const schema = plans.map((p) => p.field);
  const select = plans.length === 0 ? "*" : plans.map((p) => p.expr).join(", ");
  const whole = `SELECT ${select} FROM read_parquet($1)`;
  const ranged = `SELECT ${select} FROM read_parquet($1, file_row_number = true)
       WHERE file_row_number >= $2 AND file_row_number < $3`;
  const abs = resolve(path);
  let open = true;
  let prepared: Promise<DuckDBPreparedStatement> | undefined;
  let statement: DuckDBPreparedStatement | undefined;
  const closed = () =>
    new IoError("READ_FAILED", `Cannot read Parquet '${path}': the reader is closed`, { path });
  return {
    schema,
    bytes,
    async rowGroups() {
      if (!open) throw closed();
      try {
        return await rowGroupsOf(db, path);
      } catch (cause) {
        throw readFailed(path, cause);
      }
    },
    read(rows?: RowRange): AsyncIterable<Batch> {
      checkRows(path, rows);
      if (!open) throw closed();
      if (rows === undefined) {
        return parquetBatches(() => db.connection.stream(whole, [abs]), path, plans, batchRows, 0);
      }
      // Prepared once: a range read is often small, and parsing and planning the
      // statement again would be a good part of its cost.
      const query = async () => {
        prepared ??= db.connection.prepare(ranged).then((st) => statement = st);
        const st = await prepared;
        st.bind([abs, BigInt(rows.start), BigInt(rows.end)]);
        return await st.stream();
      };
      return parquetBatches(query, path, plans, batchRows, rows.start);
    },
    close() {
      if (open) statement?.destroySync();
      open = false;
      db.close();
    },
  };
}

/**
 * Opens a Parquet file as a {@link Source}, optionally limited to a row range.
 *
 * @param path The Parquet file.
 * @param options Batch size, forced types (`string` or the column's own type) and rows.
 * @returns The source; `close()` it to release DuckDB.
 * @throws {IoError} READ_FAILED when the file is missing or not Parquet, INVALID_OPTION
 * for an impossible forced type; SCHEMA_MISMATCH later, from the batch iterator, when an
 * unsigned or 128-bit integer does not fit int64.
 */
export async function openParquet(path: string, options: OpenParquetOptions = {}): Promise<Source> {
  checkBatchRows(options.batchRows ?? DEFAULT_BATCH_ROWS);
  const rows = options.rows;
  checkRows(path, rows);
  const file = await openParquetRanges(path, options);
  return {
    schema: file.schema,
    format: "parquet",
    bytes: file.bytes,
    batches: () => file.read(rows),
    close: () => Promise.resolve(file.close()),
  };
}

async function* parquetBatches(
  query: () => Promise<DuckDBResult>,
  path: string,
  plans: ColumnPlan[],
  batchRows: number,
  firstRow: number,
): AsyncGenerator<Batch> {
  if (plans.length === 0) return;
  const schema = plans.map((p) => p.field);
  let result;
  try {
    result = await query();
  } catch (cause) {
    throw readFailed(path, cause);
  }
  let b = new BatchBuilder(schema, batchRows);
  let row = 0;
  let rowsBefore = firstRow;
  for (;;) {
    let chunk: DuckDBDataChunk | null;
    try {
      chunk = await result.fetchChunk();
    } catch (cause) {
      throw readFailed(path, cause);
    }
    if (chunk === null || chunk.rowCount === 0) break;
    const n = chunk.rowCount;
    let at = 0;
    while (at < n) {
      const take = Math.min(n - at, batchRows - row);
      for (let c = 0; c < plans.length; c++) {
        copyVector(chunk, c, plans[c] as ColumnPlan, b.columns[c] as ColumnBuilder, at, take, row, {
          path,
          rowBase: rowsBefore + at,
        });
      }
      row += take;
      at += take;
      if (row === batchRows) {
        b.length = row;
        yield b.finish();
        b = new BatchBuilder(schema, batchRows);
        row = 0;
      }
    }
    rowsBefore += n;
  }
  if (row > 0) {
    b.length = row;
    yield b.finish();
  }
}

/** Copies `take` rows of column `c` of a chunk, from row `at`, into a builder at `row`. */
function copyVector(
  chunk: DuckDBDataChunk,
  c: number,
  plan: ColumnPlan,
  col: ColumnBuilder,
  at: number,
  take: number,
  row: number,
  where: { path: string; rowBase: number },
): void {
  const vector = chunk.getColumnVector(c);
  switch (plan.read) {
    case "bigint": {
      const v = vector as DuckDBBigIntVector;
      const div = plan.divide;
      for (let i = 0; i < take; i++) {
        const x = v.getItem(at + i);
        if (x === null) col.setNull(row + i);
        else if (div === undefined) col.big[row + i] = x;
        else if (x % div === 0n) col.big[row + i] = x / div;
        else {
          throw new IoError(
            "SCHEMA_MISMATCH",
            `Cannot read ${x} µs as ${plan.field.unit} in column '${plan.field.name}' at row ${
              where.rowBase + i
            } of Parquet '${where.path}': not a whole ${plan.field.unit}; read the column as string`,
            { path: where.path, column: plan.field.name },
          );
        }
      }
      return;
    }
    case "wide": {
      const v = vector as unknown as { getItem(i: number): bigint | null };
      for (let i = 0; i < take; i++) {
        const x = v.getItem(at + i);
        if (x === null) col.setNull(row + i);
        else if (fitsInt64(x)) col.big[row + i] = x;
        else {
          throw new IoError(
            "SCHEMA_MISMATCH",
            `Cannot read ${x} as int64 in column '${plan.field.name}' at row ${
              where.rowBase + i
            } of Parquet '${where.path}': it does not fit in 64 bits; read the column as string`,
            { path: where.path, column: plan.field.name },
          );
        }
      }
      return;
    }
    case "decimal": {
      // Decimal16/32 vectors give numbers, Decimal64/128 bigints: both exact integers.
      const v = vector as unknown as { getScaledValue(i: number): bigint | number | null };
      for (let i = 0; i < take; i++) {
        const x = v.getScaledValue(at + i);
        if (x === null) col.setNull(row + i);
        else col.setDecimal(row + i, BigInt(x));
      }
      return;
    }
    case "time": {
      // DuckDBTimeValue holds `micros`, DuckDBTimeNSValue `nanos`.
      const v = vector as unknown as {
        getItem(i: number): { micros?: bigint; nanos?: bigint } | null;
      };
      const div = plan.divide;
      for (let i = 0; i < take; i++) {
        const x = v.getItem(at + i);
        if (x === null) {
          col.setNull(row + i);
          continue;
        }
        const ticks = x.micros ?? x.nanos ?? 0n;
        if (div === undefined) col.big[row + i] = ticks;
        else if (ticks % div === 0n) col.big[row + i] = ticks / div;
        else {
          throw new IoError(
            "SCHEMA_MISMATCH",
            `Cannot read ${ticks} µs as ${plan.field.unit} in column '${plan.field.name}' at row ${
              where.rowBase + i
            } of Parquet '${where.path}': not a whole ${plan.field.unit}; read the column as string`,
            { path: where.path, column: plan.field.name },
          );
        }
      }
      return;
    }
    case "double": {
      const v = vector as DuckDBDoubleVector;
      for (let i = 0; i < take; i++) {
        const x = v.getItem(at + i);
        if (x === null) col.setNull(row + i);
        else col.f64[row + i] = x;
      }
      return;
    }
    case "bool": {
      const v = vector as DuckDBBooleanVector;
      for (let i = 0; i < take; i++) {
        const x = v.getItem(at + i);
        if (x === null) col.setNull(row + i);
        else col.u8[row + i] = x ? 1 : 0;
      }
      return;
    }
    case "string": {
      const v = vector as DuckDBVarCharVector;
      // The client's own fields (read-only use): its 16-byte string slots and validity.
      const { dataView: view, validity } = v as unknown as {
        dataView?: DataView;
        validity?: { itemValid(i: number): boolean };
      };
      const slots = view && new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
      const cache = plan.strings ??= { small: new Map(), map: new Map(), size: 0 };
      for (let i = 0; i < take; i++) {
        const short = slots && validity?.itemValid(at + i)
          ? shortString(slots, (at + i) * 16, cache)
          : undefined;
        const x = short ?? v.getItem(at + i);
        if (x === null) col.setNull(row + i);
        else col.str[row + i] = x;
      }
      return;
    }
  }
}

/** Most distinct short strings remembered per column. */
const SHORT_STRING_CACHE = 1 << 16;

/**
 * Reads a DuckDB string of at most 12 bytes (stored inline in its 16-byte slot:
 * u32 length, then the bytes) through a per-column cache keyed by its bytes, so
 * low-cardinality columns (codes, categories) skip UTF-8 decoding and allocate
 * one string per distinct value. Longer strings (and a full cache) return
 * undefined: the caller decodes them the usual way.
 */
function shortString(
  bytes: Uint8Array,
  offset: number,
  cache: ShortStringCache,
): string | undefined {
  const length = bytes[offset]! | (bytes[offset + 1]! << 8) | (bytes[offset + 2]! << 16) |
    (bytes[offset + 3]! << 24);
  if (length < 0 || length > 12) return undefined;
  // Only the string's own bytes form the key, so padding never matters.
  let w0 = 0;
  let w1 = 0;
  let w2 = 0;
  const at = offset + 4;
  for (let j = 0; j < length; j++) {
    const b = bytes[at + j]!;
    if (j < 4) w0 = w0 * 256 + b;
    else if (j < 8) w1 = w1 * 256 + b;
    else w2 = w2 * 256 + b;
  }
  const k0 = length * 4294967296 + w0;
  if (length <= 4) {
    // The common case (codes, short categories): one flat lookup.
    const hit = cache.small.get(k0);
    if (hit !== undefined) return hit;
  } else {
    const hit = cache.map.get(k0)?.get(w1)?.get(w2);
    if (hit !== undefined) return hit;
  }
  if (cache.size >= SHORT_STRING_CACHE) return undefined;
  const text = SHORT_DECODER.decode(bytes.subarray(at, at + length));
  if (length <= 4) cache.small.set(k0, text);
  else {
    let level1 = cache.map.get(k0);
    if (!level1) cache.map.set(k0, level1 = new Map());
    let level2 = level1.get(w1);
    if (!level2) level1.set(w1, level2 = new Map());
    level2.set(w2, text);
  }
  cache.size++;
  return text;
}

const SHORT_DECODER = new TextDecoder();

/** The short-string cache of one column (see {@link shortString}). */
interface ShortStringCache {
  small: Map<number, string>;
  map: Map<number, Map<number, Map<number, string>>>;
  size: number;
}

/**
 * Parquet files kept open across reads, so a reader of many row ranges (a cluster
 * worker's tasks, a local freeze's Workers) pays DuckDB's start-up for a file (an
 * instance, the schema, the metadata: ~40 ms, more than reading a 50,000-row range)
 * once instead of once per range. A file is reopened when its size or
 * modification time changes; at most `max` stay open, the least recently used closes
 * first. Callers read one range at a time, so an eviction never closes a reader in
 * use.
 */
export class ParquetReaders {
  #open = new Map<string, Promise<ParquetRanges>>();

  /** @param max Files kept open at most. */
  constructor(readonly max = 2) {}

  /**
   * The open reader of a file, opening it when needed.
   *
   * @param path The file.
   * @param types Forced column types.
   * @param batchRows Batch size of the reads.
   * @returns The reader.
   */
  async get(
    path: string,
    types: Record<string, ForcedType>,
    batchRows: number,
  ): Promise<ParquetRanges> {
    const stat = await Deno.stat(path).catch(() => null);
    const key = JSON.stringify([path, types, batchRows, stat?.size, stat?.mtime?.getTime()]);
    let reader = this.#open.get(key);
    if (reader) {
      this.#open.delete(key); // most recently used goes last
    } else {
      reader = openParquetRanges(path, { types: { ...types }, batchRows });
      reader.catch(() => this.#open.delete(key));
    }
    this.#open.set(key, reader);
    for (const [k, old] of this.#open) {
      if (this.#open.size <= this.max) break;
      this.#open.delete(k);
      old.then((r) => r.close(), () => {});
    }
    return await reader;
  }

  /** Closes every open file. */
  async close(): Promise<void> {
    const held = [...this.#open.values()];
    this.#open.clear();
    for (const reader of await Promise.allSettled(held)) {
      if (reader.status === "fulfilled") reader.value.close();
    }
  }
}
