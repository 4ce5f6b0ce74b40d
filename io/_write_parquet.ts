/**
 * The Parquet writer behind `output.ts`, through a locked-down DuckDB: batches are
 * appended as data chunks into a staging table of a temporary on-disk database (so
 * memory stays bounded whatever the row count; DuckDB spills to that file), then one
 * `COPY … TO … (FORMAT parquet, COMPRESSION zstd)` writes the file, with rows in order.
 * Rows come laid out in DuckDB's vector layout (`_duckdb_image.ts`: by the thaw
 * Workers, or here from batches), and each vector of a chunk is filled by a bulk copy
 * or two, not value by value: the staging table, hence the Parquet, holds the same
 * values either way.
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
  DuckDBBlobValue,
  DuckDBBlobVector,
  type DuckDBConnection,
  DuckDBDataChunk,
  type DuckDBType,
  DuckDBUTinyIntVector,
  FLOAT,
  TIME,
  TIME_NS,
  TIMESTAMP,
  TIMESTAMP_NS,
  TIMESTAMPTZ,
  VARCHAR,
} from "@duckdb/node-api";
import type { Batch, Field, Schema } from "../format/column.ts";
import { openLockedDuckDB, PARQUET_SCHEMA_KEY, sqlIdent, sqlString } from "./_duckdb.ts";
import { removeQuietly } from "./_file.ts";
import {
  DUCK_VECTOR_ROWS,
  type DuckColumnImage,
  type DuckImage,
  duckImageOf,
  duckWidth,
} from "./_duckdb_image.ts";
import { checkBatch } from "./_write_text.ts";
import { IoError } from "./errors.ts";

/** DuckDB's memory cap while staging: beyond it, the staging table lives in its file. */
const STAGING_MEMORY = "1GB";

/**
 * The staging database's settings: its strings are stored without dictionary or FSST
 * compression, whose analysis of every string was the costliest part of appending
 * (on this thread), for a file deleted after one scan. Compression changes how a
 * column's segments are stored, not its values, row groups or scan order: the Parquet
 * is the same (pinned in `_duckdb_image_test.ts`).
 */
const STAGING_SETTINGS = { disabled_compression_methods: "fsst,dictionary" };

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

/**
 * The client's own vector classes, used only to reach its bulk copies
 * (`copy_data_to_vector`, `copy_data_to_vector_validity`,
 * `vector_assign_string_element_len`), which the package does not export: a
 * UTINYINT vector's `flush()` copies its bytes into the raw vector it is given, and
 * a BLOB vector's assigns the strings set on it; both then copy the validity.
 */
type RawVector = ConstructorParameters<typeof DuckDBUTinyIntVector>[2];
type Validity = ConstructorParameters<typeof DuckDBUTinyIntVector>[1];

/**
 * One column's vector of the data chunk the writer reuses: the raw vector (stable for
 * the chunk's life) and the vector object's validity, whose private field `data` (the
 * words its flush copies) is set per fill.
 */
interface VectorSlot {
  raw: RawVector;
  validity: Validity;
}

function vectorSlot(chunk: DuckDBDataChunk, c: number): VectorSlot {
  const vector = chunk.getColumnVector(c) as unknown as { vector: RawVector; validity: Validity };
  return { raw: vector.vector, validity: vector.validity };
}

/**
 * Fills one vector of a freshly reset chunk (every row present) with rows
 * `[at, at + n)` of a column image (`at` a multiple of 2048).
 */
function fillVector(slot: VectorSlot, col: DuckColumnImage, at: number, n: number) {
  const { raw, validity } = slot;
  let words: BigUint64Array | null = null;
  if (col.validity !== null) {
    words = new BigUint64Array(Math.ceil(n / 64));
    new Uint8Array(words.buffer).set(
      col.validity.subarray(at >> 3, (at >> 3) + words.byteLength),
    );
  }
  (validity as unknown as { data: BigUint64Array | null }).data = words;
  const bytes = col.data.subarray(at * col.width, (at + n) * col.width);
  new DuckDBUTinyIntVector(bytes, validity, raw).flush();
  const long = col.long;
  if (long === null) return;
  // Strings past 12 bytes live in the vector's own heap: DuckDB copies each in.
  const strings = new DuckDBBlobVector(new DataView(new ArrayBuffer(0)), validity, raw, 0, n);
  let k = lowerBound(long.rows, at);
  let any = false;
  for (; k < long.rows.length && long.rows[k]! < at + n; k++) {
    const bytes = long.bytes.subarray(long.offsets[k], long.offsets[k + 1]);
    strings.setItem(long.rows[k]! - at, new DuckDBBlobValue(bytes));
    any = true;
  }
  if (any) strings.flush();
}

/** The first index of sorted `xs` whose value is at least `x`. */
function lowerBound(xs: Int32Array, x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
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
  batches: AsyncIterable<Batch | DuckImage> | Iterable<Batch | DuckImage>,
): Promise<number> {
  const types = schema.map(duckType);
  const cols = schema.map((f, i) => `${sqlIdent(f.name)} ${types[i]}`).join(", ");
  await conn.run(`CREATE TABLE ${sqlIdent(table)} (${cols})`);
  const appender = await conn.createAppender(table);
  // One chunk, reset before each fill (every row present again, its string heap
  // dropped): the appender copies what it is given, and reused vectors spare a fresh
  // allocation (and its page faults) per 2048 rows.
  const chunk = DuckDBDataChunk.create(types, DUCK_VECTOR_ROWS);
  const slots = schema.map((_, c) => vectorSlot(chunk, c));
  let rows = 0;
  try {
    for await (const item of batches) {
      const image = "duckImage" in item ? checkImage(schema, item) : imageOf(schema, item);
      for (let at = 0; at < image.length; at += DUCK_VECTOR_ROWS) {
        const n = Math.min(DUCK_VECTOR_ROWS, image.length - at);
        chunk.reset();
        chunk.rowCount = n;
        for (let c = 0; c < schema.length; c++) {
          fillVector(slots[c]!, image.columns[c] as DuckColumnImage, at, n);
        }
        appender.appendDataChunk(chunk);
      }
      rows += image.length;
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  return rows;
}

function imageOf(schema: Schema, batch: Batch): DuckImage {
  checkBatch(schema, batch);
  return duckImageOf(schema, batch);
}

/** Refuses an image a Worker laid out for another schema (a bug, never a user's error). */
function checkImage(schema: Schema, image: DuckImage): DuckImage {
  const fits = schema.every((f, c) => {
    const col = image.columns[c];
    return col !== undefined && col.width === duckWidth(f) &&
      col.data.length === col.width * image.length;
  });
  if (image.columns.length !== schema.length || !fits) {
    throw new IoError(
      "SCHEMA_MISMATCH",
      `Cannot write rows laid out for ${image.columns.length} DuckDB columns: the output schema has ${schema.length}`,
    );
  }
  return image;
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
  batches: AsyncIterable<Batch | DuckImage> | Iterable<Batch | DuckImage>,
): Promise<number> {
  checkNames(schema, path);
  const dbPath = `${path}.duckdb`;
  const db = await openLockedDuckDB([path], dbPath, STAGING_MEMORY, STAGING_SETTINGS);
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
