/**
 * The Parquet writer behind `output.ts`, through a locked-down DuckDB: one
 * `COPY … TO … (FORMAT parquet, COMPRESSION zstd)` writes the file, with rows in order.
 * Up to {@link FED_BYTES} of rows, the `COPY` reads them straight from the images we
 * hold, through a table function (`rowsFunction`); past that, they are appended as
 * data chunks into a staging table of an in-memory database, which spills to a
 * directory beside the output past its memory cap, so memory stays bounded whatever
 * the row count (`stageRows`). DuckDB's Parquet writer cuts its row groups along its
 * source's chunks, so both sources give the chunks a scan of the on-disk staging
 * table of earlier versions gave: the bytes are the same. Rows come laid out in
 * DuckDB's vector layout (`_duckdb_image.ts`: by the thaw Workers, or here from
 * batches), and each vector of a chunk is filled by a bulk copy or two, not value by
 * value: the Parquet holds the same values either way.
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
  DuckDBTableFunction,
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
import { DUCK_VECTOR_ROWS, type DuckImage, duckImageOf, duckWidth } from "./_duckdb_image.ts";
import { checkBatch } from "./_write_text.ts";
import { IoError } from "./errors.ts";

/** DuckDB's memory cap while staging: beyond it, the staging table spills to disk. */
const STAGING_MEMORY = "1GB";

/**
 * Most bytes of laid-out rows the writer holds to feed the `COPY` itself; past them,
 * it stages the rows in DuckDB instead, which spills to disk.
 */
const FED_BYTES = 256 * 1024 * 1024;

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

/** Rows `[from, from + n)` of one image: a chunk's rows come from one or two. */
interface Piece {
  image: DuckImage;
  from: number;
  n: number;
}

/**
 * Fills column `c`'s vector of a freshly reset chunk (every row present) with the
 * pieces' rows, `n` in all. One piece starting on a byte of the validity bitmap (the
 * appender's chunks, 2048 rows into an image) is copied in bulk as it is; rows from
 * two images (a staged scan's chunk across an image's end) go through `scratch`, and
 * their validity bit by bit.
 */
function fillVector(
  slot: VectorSlot,
  c: number,
  pieces: readonly Piece[],
  n: number,
  scratch: Uint8Array,
): void {
  const { raw, validity } = slot;
  const first = pieces[0]!;
  const width = first.image.columns[c]!.width;
  let words: BigUint64Array | null = null;
  if (pieces.some((p) => p.image.columns[c]!.validity !== null)) {
    words = new BigUint64Array(Math.ceil(n / 64));
    const wordBytes = new Uint8Array(words.buffer);
    const bits = first.image.columns[c]!.validity;
    if (pieces.length === 1 && bits !== null && (first.from & 7) === 0) {
      wordBytes.set(bits.subarray(first.from >> 3, (first.from >> 3) + words.byteLength));
    } else {
      wordBytes.fill(0xff);
      let row = 0;
      for (const { image, from, n: take } of pieces) {
        const v = image.columns[c]!.validity;
        for (let i = 0; v !== null && i < take; i++) {
          const src = from + i;
          if (((v[src >> 3]! >> (src & 7)) & 1) === 0) {
            wordBytes[(row + i) >> 3] = wordBytes[(row + i) >> 3]! & ~(1 << ((row + i) & 7));
          }
        }
        row += take;
      }
    }
  }
  (validity as unknown as { data: BigUint64Array | null }).data = words;
  let bytes: Uint8Array;
  if (pieces.length === 1) {
    bytes = first.image.columns[c]!.data.subarray(first.from * width, (first.from + n) * width);
  } else {
    bytes = scratch.subarray(0, n * width);
    let row = 0;
    for (const { image, from, n: take } of pieces) {
      bytes.set(image.columns[c]!.data.subarray(from * width, (from + take) * width), row * width);
      row += take;
    }
  }
  new DuckDBUTinyIntVector(bytes, validity, raw).flush();
  // Strings past 12 bytes live in the vector's own heap: DuckDB copies each in.
  let strings: DuckDBBlobVector | null = null;
  let row = 0;
  for (const { image, from, n: take } of pieces) {
    const long = image.columns[c]!.long;
    for (let k = long ? lowerBound(long.rows, from) : 0; long && k < long.rows.length; k++) {
      const at = long.rows[k]!;
      if (at >= from + take) break;
      strings ??= new DuckDBBlobVector(new DataView(new ArrayBuffer(0)), validity, raw, 0, n);
      const value = long.bytes.subarray(long.offsets[k], long.offsets[k + 1]);
      strings.setItem(row + at - from, new DuckDBBlobValue(value));
    }
    row += take;
  }
  strings?.flush();
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

/** The images of batches (laid out here) or of Workers' images (checked), in order. */
async function* imagesOf(
  schema: Schema,
  batches: AsyncIterable<Batch | DuckImage> | Iterable<Batch | DuckImage>,
): AsyncGenerator<DuckImage> {
  for await (const item of batches) {
    yield "duckImage" in item ? checkImage(schema, item) : imageOf(schema, item);
  }
}

/** An image's data chunks: 2048 rows each from its first, as the appender takes them. */
function* chunksOf(image: DuckImage): Generator<Piece> {
  for (let from = 0; from < image.length; from += DUCK_VECTOR_ROWS) {
    yield { image, from, n: Math.min(DUCK_VECTOR_ROWS, image.length - from) };
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
): (appender: DuckDBAppender, chunk: Piece) => void {
  const chunk = DuckDBDataChunk.create(types, DUCK_VECTOR_ROWS);
  const slots = schema.map((_, c) => vectorSlot(chunk, c));
  const none = new Uint8Array(0);
  return function appendChunk(appender, piece) {
    chunk.reset();
    chunk.rowCount = piece.n;
    for (let c = 0; c < slots.length; c++) fillVector(slots[c]!, c, [piece], piece.n, none);
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
 * The sizes of the data chunks a scan of the staging table gave, in order, for images
 * of these lengths: the appender's commits (each at the end of the chunk that brings
 * it to 204,800 rows, the rest at close), each commit cut into row groups of 122,880
 * rows (its last one shorter), each row group read in vectors of 2048 rows (its last
 * one shorter). See {@link stageRows} for why each commit starts a row group.
 *
 * @param lengths The images' row counts, in order.
 * @returns Rows of each chunk.
 */
export function stagedScanChunks(lengths: readonly number[]): number[] {
  const commits: number[] = [];
  let open = 0;
  for (const length of lengths) {
    for (let from = 0; from < length; from += DUCK_VECTOR_ROWS) {
      open += Math.min(DUCK_VECTOR_ROWS, length - from);
      if (open >= APPENDER_FLUSH_ROWS) {
        commits.push(open);
        open = 0;
      }
    }
  }
  if (open > 0) commits.push(open);
  const sizes: number[] = [];
  for (const commit of commits) {
    for (let group = 0; group < commit; group += ROW_GROUP_ROWS) {
      const rows = Math.min(ROW_GROUP_ROWS, commit - group);
      for (let at = 0; at < rows; at += DUCK_VECTOR_ROWS) {
        sizes.push(Math.min(DUCK_VECTOR_ROWS, rows - at));
      }
    }
  }
  return sizes;
}

/** The name under which {@link rowsFunction} is registered on the writer's connection. */
const ROWS_FUNCTION = "permafrost_rows";

/**
 * A table function giving the images' rows in the data chunks a scan of the staging
 * table gave ({@link stagedScanChunks}), on one thread, in order. DuckDB's Parquet
 * writer fed by it ends a row group at the first chunk that brings it to 122,880 rows,
 * which on the staging table's chunks are the very places where it cut the staging
 * table's scan (122,880 and 124,224 rows, …): the same row groups of the same chunks,
 * hence the same bytes, without appending the rows into a table and scanning them back.
 * The function runs on this thread, called from DuckDB's; the images stay referenced
 * until it ends.
 */
function rowsFunction(
  schema: Schema,
  types: DuckDBType[],
  images: DuckImage[],
): DuckDBTableFunction {
  const sizes = stagedScanChunks(images.map((image) => image.length));
  const scratch = new Uint8Array(DUCK_VECTOR_ROWS * Math.max(16, ...schema.map(duckWidth)));
  let next = 0;
  let image = 0;
  let from = 0;
  return DuckDBTableFunction.create({
    name: ROWS_FUNCTION,
    bindFunction(info) {
      schema.forEach((f, c) => info.addResultColumn(f.name, types[c]!));
    },
    initFunction(info) {
      info.setMaxThreads(1);
    },
    mainFunction(info, out) {
      try {
        const n = next < sizes.length ? sizes[next++]! : 0;
        out.rowCount = n;
        if (n === 0) return;
        const pieces: Piece[] = [];
        for (let left = n; left > 0;) {
          const at = images[image]!;
          const take = Math.min(left, at.length - from);
          if (take > 0) pieces.push({ image: at, from, n: take });
          left -= take;
          from += take;
          if (from === at.length) {
            images[image] = EMPTY_IMAGE; // read: let it go
            image++;
            from = 0;
          }
        }
        for (let c = 0; c < schema.length; c++) {
          fillVector(vectorSlot(out, c), c, pieces, n, scratch);
        }
      } catch (err) {
        info.setError(err instanceof Error ? err.message : String(err));
      }
    },
  });
}

const EMPTY_IMAGE: DuckImage = { duckImage: true, length: 0, columns: [] };

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
  images: AsyncIterable<DuckImage>,
): Promise<{ rows: number; source: string }> {
  const types = schema.map(duckType);
  await createTable(conn, "staging", schema, types);
  const append = chunkAppender(schema, types);
  let waiting: Piece[] = [];
  let waitingRows = 0;
  let committed = 0;
  const appender = await conn.createAppender("staging");
  try {
    for await (const image of images) {
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

/** Bytes an image holds. */
function imageBytes(image: DuckImage): number {
  let bytes = 0;
  for (const col of image.columns) {
    bytes += col.data.byteLength + (col.validity?.byteLength ?? 0);
    if (col.long) bytes += col.long.bytes.byteLength + 8 * col.long.rows.length;
  }
  return bytes;
}

/**
 * Feeds the `COPY` the rows itself ({@link rowsFunction}) when their images come to at
 * most `fedBytes`, and otherwise stages them ({@link stageRows}), starting with
 * the images read so far.
 *
 * @returns Rows, and the `COPY` source.
 */
async function rowsSource(
  conn: DuckDBConnection,
  schema: Schema,
  batches: AsyncIterable<Batch | DuckImage> | Iterable<Batch | DuckImage>,
  fedBytes: number,
): Promise<{ rows: number; source: string }> {
  // Types first: a column DuckDB cannot hold fails before any row is read.
  const types = schema.map(duckType);
  const images = imagesOf(schema, batches);
  const held: DuckImage[] = [];
  let bytes = 0;
  let rows = 0;
  for (;;) {
    const step = await images.next();
    if (step.done) {
      conn.registerTableFunction(rowsFunction(schema, types, held));
      return { rows, source: `${ROWS_FUNCTION}()` };
    }
    held.push(step.value);
    rows += step.value.length;
    bytes += imageBytes(step.value);
    if (bytes > fedBytes) break;
  }
  return await stageRows(
    conn,
    schema,
    (async function* () {
      while (held.length > 0) yield held.shift()!;
      yield* images;
    })(),
  );
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
 * @param fedBytes Most bytes of rows fed to the `COPY` directly, past which they are
 * staged ({@link FED_BYTES}; tests pass 0 to stage every row).
 * @returns Rows written.
 */
export async function writeParquet(
  path: string,
  schema: Schema,
  batches: AsyncIterable<Batch | DuckImage> | Iterable<Batch | DuckImage>,
  fedBytes: number = FED_BYTES,
): Promise<number> {
  checkNames(schema, path);
  // The spill directory keeps the name the on-disk staging database's had, which the
  // stale temp files' sweep (`internal/temp_files.ts`) knows.
  const spill = `${path}.duckdb.tmp`;
  const db = await openLockedDuckDB([path], ":memory:", STAGING_MEMORY, {
    temp_directory: spill,
    // DuckDB's own default (one per core) rather than the one thread of an in-memory
    // instance: the COPY of a staging table encodes row groups in parallel, in the
    // same order and bytes.
    threads: String(navigator.hardwareConcurrency),
  });
  let rows = 0;
  try {
    const conn = db.connection;
    if (schema.length === 0) {
      throw new IoError("WRITE_FAILED", "Cannot write a Parquet file without columns", { path });
    }
    const fed = await rowsSource(conn, schema, batches, fedBytes);
    rows = fed.rows;
    const meta = sqlString(JSON.stringify(schema));
    // Into `path` itself, not a sibling DuckDB renames: `path` is the caller's locked temp file.
    await conn.run(
      `COPY (SELECT * FROM ${fed.source}) TO ${
        sqlString(path)
      } (FORMAT parquet, COMPRESSION zstd, USE_TMP_FILE false, KV_METADATA {${PARQUET_SCHEMA_KEY}: ${meta}})`,
    );
  } finally {
    db.close();
    await removeQuietly(spill);
  }
  return rows;
}
