/**
 * The Parquet writer behind `output.ts`, through a locked-down DuckDB: batches are
 * appended as data chunks into a staging table of a temporary on-disk database (so
 * memory stays bounded whatever the row count; DuckDB spills to that file), then one
 * `COPY … TO … (FORMAT parquet, COMPRESSION zstd)` writes the file, with rows in order.
 *
 * Types: int64 → BIGINT, float64 → DOUBLE (bits kept), float32 → FLOAT (bits kept), float16
 * → FLOAT (its exact float32, restored as float16 from the schema metadata on read), bool → BOOLEAN, date → DATE,
 * string → VARCHAR, timestamp → TIMESTAMP_NS (ns), TIMESTAMPTZ (a timezone and s/ms/us)
 * or TIMESTAMP (s/ms/us), time → TIME_NS (ns) or TIME (s/ms/us), decimal → DECIMAL(p, s)
 * (up to 38 digits, Parquet through DuckDB holds no more: wider ones are refused),
 * duration → BIGINT of its ticks, json → VARCHAR of its text (DuckDB's JSON type
 * refuses lone-surrogate escapes, which a json column may hold). Parquet has no
 * seconds unit and no duration, and DuckDB widens ms, so the exact schema (units,
 * timezone names, duration, json) also goes into the key-value metadata
 * `permafrost_schema`, which `parquet.ts` uses to give the columns back their types.
 * Column names that differ only in the case of ASCII letters (`a`, `A`) are refused:
 * DuckDB would rename one.
 *
 * @module
 */
import {
  BIGINT,
  BOOLEAN,
  DATE,
  DECIMAL,
  DOUBLE,
  type DuckDBBigIntVector,
  type DuckDBBooleanVector,
  type DuckDBConnection,
  DuckDBDataChunk,
  DuckDBDateValue,
  type DuckDBDateVector,
  DuckDBDecimalValue,
  type DuckDBDoubleVector,
  type DuckDBFloatVector,
  DuckDBTimeNSValue,
  type DuckDBTimeNSVector,
  DuckDBTimestampNanosecondsValue,
  type DuckDBTimestampNanosecondsVector,
  DuckDBTimestampTZValue,
  type DuckDBTimestampTZVector,
  DuckDBTimestampValue,
  type DuckDBTimestampVector,
  DuckDBTimeValue,
  type DuckDBTimeVector,
  type DuckDBType,
  type DuckDBVarCharVector,
  FLOAT,
  TIME,
  TIME_NS,
  TIMESTAMP,
  TIMESTAMP_NS,
  TIMESTAMPTZ,
  VARCHAR,
} from "@duckdb/node-api";
import type { Batch, Column, Field, Schema } from "../format/column.ts";
import { float16BitsToFloat32Bits } from "../format/float16.ts";
import { openLockedDuckDB, PARQUET_SCHEMA_KEY, sqlIdent, sqlString } from "./_duckdb.ts";
import { removeQuietly } from "./_file.ts";
import { TICKS_PER_SECOND } from "./_parse.ts";
import { checkBatch } from "./_write_text.ts";
import { IoError } from "./errors.ts";

const VECTOR_ROWS = 2048;
/** DuckDB's memory cap while staging: beyond it, the staging table lives in its file. */
const STAGING_MEMORY = "1GB";

/** Most digits a Parquet decimal written through DuckDB may have. */
const MAX_PARQUET_DECIMAL_PRECISION = 38;

function duckType(f: Field): DuckDBType {
  switch (f.type) {
    case "int64":
    case "duration":
      return BIGINT;
    case "time":
      return f.unit === "ns" ? TIME_NS : TIME;
    case "decimal":
      if ((f.precision ?? 0) > MAX_PARQUET_DECIMAL_PRECISION) {
        throw new IoError(
          "WRITE_FAILED",
          `Cannot write column '${f.name}' to Parquet: it is a decimal of ${f.precision} digits, Parquet written through DuckDB holds at most ${MAX_PARQUET_DECIMAL_PRECISION}; thaw it to Arrow, CSV or JSON lines instead`,
          { column: f.name },
        );
      }
      return DECIMAL(f.precision, f.scale);
    case "json":
      return VARCHAR;
    case "float64":
      return DOUBLE;
    case "float32":
    case "float16": // DuckDB has no half type: FLOAT holds every half exactly
      return FLOAT;
    case "bool":
      return BOOLEAN;
    case "date":
      return DATE;
    case "string":
      return VARCHAR;
    case "timestamp":
      if (f.unit === "ns") return TIMESTAMP_NS;
      return f.timezone !== undefined ? TIMESTAMPTZ : TIMESTAMP;
  }
}

/** Fills one vector with rows `[at, at + n)` of a column. */
function fillVector(
  chunk: DuckDBDataChunk,
  c: number,
  col: Column,
  field: Field,
  at: number,
  n: number,
): void {
  const v = col.validity;
  const vector = chunk.getColumnVector(c);
  const isNull = (i: number) => v !== null && v[at + i] === 0;
  switch (col.type) {
    case "int64":
    case "duration": {
      const vec = vector as DuckDBBigIntVector;
      for (let i = 0; i < n; i++) vec.setItem(i, isNull(i) ? null : (col.values[at + i] as bigint));
      break;
    }
    case "float64": {
      const vec = vector as DuckDBDoubleVector;
      for (let i = 0; i < n; i++) vec.setItem(i, isNull(i) ? null : (col.values[at + i] as number));
      break;
    }
    case "float32":
    case "float16": {
      const vec = vector as DuckDBFloatVector;
      for (let i = 0; i < n; i++) vec.setItem(i, isNull(i) ? null : 0);
      // Then the bit patterns, in bulk into the client's own array (read and written
      // one by one, a float32 loses a signalling NaN's bit): a half as the float32 of
      // the same value, NaN payload kept, so the reader gets the very bits back.
      const items = (vec as unknown as { items: Float32Array }).items;
      const bits = new Uint32Array(items.buffer, items.byteOffset, n);
      if (col.type === "float32") {
        bits.set(new Uint32Array(col.values.buffer, col.values.byteOffset + 4 * at, n));
      } else {
        for (let i = 0; i < n; i++) bits[i] = float16BitsToFloat32Bits(col.values[at + i]!);
      }
      for (let i = 0; i < n; i++) if (isNull(i)) bits[i] = 0;
      break;
    }
    case "bool": {
      const vec = vector as DuckDBBooleanVector;
      for (let i = 0; i < n; i++) vec.setItem(i, isNull(i) ? null : col.values[at + i] === 1);
      break;
    }
    case "time": {
      const unit = field.unit ?? "us";
      if (unit === "ns") {
        const vec = vector as DuckDBTimeNSVector;
        for (let i = 0; i < n; i++) {
          vec.setItem(i, isNull(i) ? null : new DuckDBTimeNSValue(col.values[at + i] as bigint));
        }
      } else {
        const scale = BigInt(1e6 / TICKS_PER_SECOND[unit]);
        const vec = vector as DuckDBTimeVector;
        for (let i = 0; i < n; i++) {
          vec.setItem(
            i,
            isNull(i) ? null : new DuckDBTimeValue((col.values[at + i] as bigint) * scale),
          );
        }
      }
      break;
    }
    case "decimal": {
      const vec = vector as unknown as { setItem(i: number, v: DuckDBDecimalValue | null): void };
      const width = field.precision ?? 18;
      const scale = field.scale ?? 0;
      for (let i = 0; i < n; i++) {
        vec.setItem(
          i,
          isNull(i) ? null : new DuckDBDecimalValue(col.values[at + i] as bigint, width, scale),
        );
      }
      break;
    }
    case "string":
    case "json": {
      const vec = vector as DuckDBVarCharVector;
      for (let i = 0; i < n; i++) {
        const s = col.values[at + i] as string;
        if (!isNull(i) && !s.isWellFormed()) {
          throw new IoError(
            "WRITE_FAILED",
            `Cannot write column '${field.name}' to Parquet: a string holds a lone surrogate, which UTF-8 cannot store`,
            { column: field.name },
          );
        }
        vec.setItem(i, isNull(i) ? null : s);
      }
      break;
    }
    case "date": {
      const vec = vector as DuckDBDateVector;
      for (let i = 0; i < n; i++) {
        if (isNull(i)) {
          vec.setItem(i, null);
          continue;
        }
        const d = col.values[at + i] as bigint;
        if (d < -2147483647n || d > 2147483646n) {
          throw new IoError(
            "WRITE_FAILED",
            `Cannot write date ${d} (days) in column '${field.name}' to Parquet: out of range`,
            { column: field.name },
          );
        }
        vec.setItem(i, new DuckDBDateValue(Number(d)));
      }
      break;
    }
    case "timestamp": {
      const unit = field.unit ?? "us";
      // s and ms are stored as microseconds (exact: a multiple).
      const scale = unit === "s" || unit === "ms" ? BigInt(1e6 / TICKS_PER_SECOND[unit]) : 1n;
      if (unit === "ns") {
        const vec = vector as DuckDBTimestampNanosecondsVector;
        for (let i = 0; i < n; i++) {
          vec.setItem(
            i,
            isNull(i) ? null : new DuckDBTimestampNanosecondsValue(col.values[at + i] as bigint),
          );
        }
      } else if (field.timezone !== undefined) {
        const vec = vector as DuckDBTimestampTZVector;
        for (let i = 0; i < n; i++) {
          vec.setItem(
            i,
            isNull(i)
              ? null
              : new DuckDBTimestampTZValue(micros(col.values[at + i] as bigint, scale, field)),
          );
        }
      } else {
        const vec = vector as DuckDBTimestampVector;
        for (let i = 0; i < n; i++) {
          vec.setItem(
            i,
            isNull(i)
              ? null
              : new DuckDBTimestampValue(micros(col.values[at + i] as bigint, scale, field)),
          );
        }
      }
      break;
    }
  }
  vector.flush();
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function micros(ticks: bigint, scale: bigint, field: Field): bigint {
  if (scale === 1n) return ticks;
  const v = ticks * scale;
  if (v < INT64_MIN || v > INT64_MAX) {
    throw new IoError(
      "WRITE_FAILED",
      `Cannot write timestamp ${ticks} (${field.unit}) in column '${field.name}' to Parquet: out of range in microseconds`,
      { column: field.name },
    );
  }
  return v;
}

/**
 * Refuses names DuckDB cannot tell apart: it compares column names ignoring the case
 * of ASCII letters, and would write the second of `a` and `A` as `A_1` (a silent
 * rename for every other reader of the file).
 */
function checkNames(schema: Schema, path: string): void {
  const seen = new Map<string, string>();
  for (const f of schema) {
    const key = f.name.replace(/[A-Z]/g, (c) => c.toLowerCase());
    const other = seen.get(key);
    if (other !== undefined) {
      throw new IoError(
        "WRITE_FAILED",
        `Cannot write columns "${other}" and "${f.name}" to Parquet: the writer (DuckDB) takes column names without regard to case and would rename one; thaw one of them (--columns), or pick another format (csv, jsonl, arrow)`,
        { path, column: f.name },
      );
    }
    seen.set(key, f.name);
  }
}

/**
 * Creates `table` with the schema's columns (as DuckDB types) and appends the batches
 * to it as data chunks, in order: the way our rows enter DuckDB, for a Parquet output
 * and for SQL over archives.
 *
 * @param conn An open connection.
 * @param table The table to create (must not exist).
 * @param schema The columns (names compared without regard to ASCII case).
 * @param batches The rows.
 * @returns Rows appended.
 * @throws {IoError} WRITE_FAILED for a column DuckDB cannot hold (a decimal past 38 digits).
 */
export async function appendTable(
  conn: DuckDBConnection,
  table: string,
  schema: Schema,
  batches: AsyncIterable<Batch> | Iterable<Batch>,
): Promise<number> {
  const types = schema.map(duckType);
  const cols = schema.map((f, i) => `${sqlIdent(f.name)} ${types[i]}`).join(", ");
  await conn.run(`CREATE TABLE ${sqlIdent(table)} (${cols})`);
  const appender = await conn.createAppender(table);
  let rows = 0;
  try {
    for await (const batch of batches) {
      checkBatch(schema, batch);
      for (let at = 0; at < batch.length; at += VECTOR_ROWS) {
        const n = Math.min(VECTOR_ROWS, batch.length - at);
        const chunk = DuckDBDataChunk.create(types, n);
        for (let c = 0; c < schema.length; c++) {
          fillVector(chunk, c, batch.columns[c] as Column, schema[c] as Field, at, n);
        }
        appender.appendDataChunk(chunk);
      }
      rows += batch.length;
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  return rows;
}

/**
 * Writes batches to a Parquet file at `path` (new, or an empty file the caller made).
 *
 * @param path The Parquet file to write (the caller's temp file, which it renames into place).
 * @param schema The schema.
 * @param batches The rows.
 * @returns Rows written.
 */
export async function writeParquet(
  path: string,
  schema: Schema,
  batches: AsyncIterable<Batch> | Iterable<Batch>,
): Promise<number> {
  checkNames(schema, path);
  const dbPath = `${path}.duckdb`;
  const db = await openLockedDuckDB([path], dbPath, STAGING_MEMORY);
  let rows = 0;
  try {
    const conn = db.connection;
    if (schema.length === 0) {
      throw new IoError("WRITE_FAILED", "Cannot write a Parquet file without columns", { path });
    }
    rows = await appendTable(conn, "staging", schema, batches);
    const meta = sqlString(JSON.stringify(schema));
    // Into `path` itself, not a sibling DuckDB renames: `path` is the caller's locked temp file.
    await conn.run(
      `COPY staging TO ${
        sqlString(path)
      } (FORMAT parquet, COMPRESSION zstd, USE_TMP_FILE false, KV_METADATA {${PARQUET_SCHEMA_KEY}: ${meta}})`,
    );
  } finally {
    db.close();
    await removeQuietly(dbPath);
    await removeQuietly(`${dbPath}.wal`);
    await removeQuietly(`${dbPath}.tmp`);
  }
  return rows;
}
