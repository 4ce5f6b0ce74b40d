/**
 * The Parquet writer behind `output.ts`, through a locked-down DuckDB: batches are
 * appended as data chunks into a staging table of an in-memory database (which spills
 * to a directory beside the output past its memory cap, so memory stays bounded
 * whatever the row count), then one `COPY … TO … (FORMAT parquet, COMPRESSION zstd)`
 * writes the file, with rows in order. The staging table is given the row groups the
 * on-disk staging database of earlier versions held (see {@link stageRows}), since the
 * Parquet's row groups follow them: the bytes are the same. Rows come laid out in
 * DuckDB's vector layout (`_duckdb_image.ts`: by the thaw Workers, or here from
 * batches), and each vector of a chunk is filled by a bulk copy or two, not value by
 * value: the staging table, hence the Parquet, holds the same values either way.
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
  type DuckDBAppender,
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

/** DuckDB's memory cap while staging: beyond it, the staging table spills to disk. */
const STAGING_MEMORY = "1GB";

/**
 * Rows after which DuckDB's appender flushes what it holds into its table, in a commit
 * of its own (the C API appender's `flush_count`: 100 vectors); it flushes the rest
 * when closed.
 */
const APPENDER_FLUSH_ROWS = 100 * DUCK_VECTOR_ROWS;

/**
 * Rows of a DuckDB row group: a commit of at least this many rows (or into an empty
 * table) moves its row groups into the table as they are; a smaller one is appended
 * to the table's last row group.
 */
const ROW_GROUP_ROWS = 122_880;

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

/** Rows `[at, at + n)` of an image: one data chunk's worth (`at` a multiple of 2048). */
interface ImageChunk {
  image: DuckImage;
  at: number;
  n: number;
}

/** The images of batches (laid out here) or of Workers' images (checked), in order. */
async function* imagesOf(
  schema: Schema,
  batches: AsyncIterable<Batch | DuckImage> | Iterable<Batch | DuckImage>,
): AsyncGenerator<DuckImage> {
  for await (const item of batches) {
    yield "duckImage" in item ? checkImage(schema, item) : imageOf(schema, item);
  }
}

/** An image's data chunks. */
function* chunksOf(image: DuckImage): Generator<ImageChunk> {
  for (let at = 0; at < image.length; at += DUCK_VECTOR_ROWS) {
    yield { image, at, n: Math.min(DUCK_VECTOR_ROWS, image.length - at) };
  }
}

async function createTable(
  conn: DuckDBConnection,
  table: string,
  schema: Schema,
  types: DuckDBType[],
): Promise<void> {
  const cols = schema.map((f, i) => `${sqlIdent(f.name)} ${types[i]}`).join(", ");
  await conn.run(`CREATE TABLE ${sqlIdent(table)} (${cols})`);
}

/**
 * Returns a function appending one image chunk to an appender. One data chunk serves
 * every call, reset before each fill (every row present again, its string heap
 * dropped): the appender copies what it is given, and reused vectors spare a fresh
 * allocation (and its page faults) per 2048 rows.
 */
function chunkAppender(
  schema: Schema,
  types: DuckDBType[],
): (appender: DuckDBAppender, chunk: ImageChunk) => void {
  const chunk = DuckDBDataChunk.create(types, DUCK_VECTOR_ROWS);
  const slots = schema.map((_, c) => vectorSlot(chunk, c));
  return function appendChunk(appender, { image, at, n }) {
    chunk.reset();
    chunk.rowCount = n;
    for (let c = 0; c < slots.length; c++) {
      fillVector(slots[c]!, image.columns[c] as DuckColumnImage, at, n);
    }
    appender.appendDataChunk(chunk);
  };
}

/**
 * Creates `table` with the schema's columns (as DuckDB types) and appends the batches
 * to it as data chunks, in order: the way our rows enter DuckDB for SQL over archives.
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
  await createTable(conn, table, schema, types);
  const appender = await conn.createAppender(table);
  const append = chunkAppender(schema, types);
  let rows = 0;
  try {
    for await (const image of imagesOf(schema, batches)) {
      for (const chunk of chunksOf(image)) append(appender, chunk);
      rows += image.length;
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  return rows;
}

/**
 * Appends the rows to `staging` of an in-memory database with the row groups they had
 * in the staging table of an on-disk one, and returns the rows and the SQL source the
 * `COPY` reads (DuckDB's Parquet writer cuts its row groups along the source's, so
 * other row groups would give other bytes).
 *
 * The appender commits every 204,800 rows (at the chunk that reaches them) and the
 * rest when closed. Each full commit becomes row groups of its own either way. The
 * last, smaller commit does not: on disk, the table's last row group had already been
 * written to the file (DuckDB writes a large commit's row groups out early) and the
 * appended rows started a new one; in memory they would fill that row group up. So
 * when that last commit is under one row group (and not the table's first), its rows
 * go into a table of their own, `staging_tail`, and the `COPY` reads `staging` then
 * `staging_tail`: the same row groups in the same order. Since only the end tells
 * which commit is the last, the chunks of an unfinished commit (under 204,800 rows,
 * views of the images) wait here until it completes or the rows end.
 *
 * @returns Rows staged, and the `COPY` source.
 */
async function stageRows(
  conn: DuckDBConnection,
  schema: Schema,
  batches: AsyncIterable<Batch | DuckImage> | Iterable<Batch | DuckImage>,
): Promise<{ rows: number; source: string }> {
  const types = schema.map(duckType);
  await createTable(conn, "staging", schema, types);
  const append = chunkAppender(schema, types);
  let waiting: ImageChunk[] = [];
  let waitingRows = 0;
  let committed = 0;
  const appender = await conn.createAppender("staging");
  try {
    for await (const image of imagesOf(schema, batches)) {
      for (const chunk of chunksOf(image)) {
        waiting.push(chunk);
        waitingRows += chunk.n;
        if (waitingRows < APPENDER_FLUSH_ROWS) continue;
        // A full commit: the appender flushes it at its last chunk, as it always did.
        for (const c of waiting) append(appender, c);
        committed += waitingRows;
        waiting = [];
        waitingRows = 0;
      }
    }
    if (waitingRows === 0 || committed === 0 || waitingRows >= ROW_GROUP_ROWS) {
      for (const c of waiting) append(appender, c);
      appender.flushSync();
      return { rows: committed + waitingRows, source: "staging" };
    }
  } finally {
    appender.closeSync();
  }
  await createTable(conn, "staging_tail", schema, types);
  const tail = await conn.createAppender("staging_tail");
  try {
    for (const c of waiting) append(tail, c);
    tail.flushSync();
  } finally {
    tail.closeSync();
  }
  return {
    rows: committed + waitingRows,
    source: "(SELECT * FROM staging UNION ALL SELECT * FROM staging_tail)",
  };
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
  // The spill directory keeps the name the on-disk staging database's had, which the
  // stale temp files' sweep (`internal/temp_files.ts`) knows.
  const spill = `${path}.duckdb.tmp`;
  const db = await openLockedDuckDB([path], ":memory:", STAGING_MEMORY, {
    temp_directory: spill,
    // DuckDB's own default (one per core) rather than the one thread of an in-memory
    // instance: the COPY encodes row groups in parallel, in the same order and bytes.
    threads: String(navigator.hardwareConcurrency),
  });
  let rows = 0;
  try {
    const conn = db.connection;
    if (schema.length === 0) {
      throw new IoError("WRITE_FAILED", "Cannot write a Parquet file without columns", { path });
    }
    const staged = await stageRows(conn, schema, batches);
    rows = staged.rows;
    const meta = sqlString(JSON.stringify(schema));
    // Into `path` itself, not a sibling DuckDB renames: `path` is the caller's locked temp file.
    await conn.run(
      `COPY ${staged.source} TO ${
        sqlString(path)
      } (FORMAT parquet, COMPRESSION zstd, USE_TMP_FILE false, KV_METADATA {${PARQUET_SCHEMA_KEY}: ${meta}})`,
    );
  } finally {
    db.close();
    await removeQuietly(spill);
  }
  return rows;
}
