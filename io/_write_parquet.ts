/**
 * The Parquet writer behind `output.ts`, through a locked-down DuckDB: one
 * `COPY … TO … (FORMAT parquet, COMPRESSION zstd)` writes the file, with rows in order.
 * By default the `COPY` runs in a Worker of its own (this module is its script,
 * `serveCopy`), started before the first rows and fed as they come through a table
 * function (`rowsFunction`), so that DuckDB's loading and its Parquet encoding overlap
 * the thaw Workers' decoding; at most {@link IN_FLIGHT_BYTES} of rows are in flight to it,
 * so memory stays bounded whatever the row count. DuckDB's Parquet writer cuts its row
 * groups along its source's chunks, so the table function gives the chunks a scan of the
 * on-disk staging table of earlier versions gave (`ScanChunks`): the bytes are the same
 * (tests pin that staging table's SHA-256s). Rows come laid out in
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
import type {
  DuckDBAppender,
  DuckDBConnection,
  DuckDBDataChunk,
  DuckDBInstance,
  DuckDBTableFunction,
  DuckDBType,
  DuckDBUTinyIntVector,
} from "@duckdb/node-api";
import type { Batch, Field, Schema } from "../format/column.ts";
import {
  createDuckDB,
  type LockedDuckDB,
  openLockedDuckDB,
  PARQUET_SCHEMA_KEY,
  sqlIdent,
  sqlString,
} from "./_duckdb.ts";
import { DUCK_VECTOR_ROWS, type DuckImage, duckImageOf, duckWidth } from "./_duckdb_image.ts";
import { checkBatch } from "./_write_text.ts";
import { IoError } from "./errors.ts";

/** The DuckDB client's module, loaded by {@link loadDuck} where DuckDB runs. */
type DuckApi = typeof import("@duckdb/node-api");

/**
 * The DuckDB client, once {@link loadDuck} loaded it. Loading its native addon takes
 * ~0.1-0.2 s of the thread that loads it: a thaw's main thread never does (its
 * Worker writes the Parquet, {@link writeParquet}), SQL over archives does
 * ({@link appendTable}).
 */
let duck: DuckApi | null = null;

async function loadDuck(): Promise<DuckApi> {
  duck ??= await import("@duckdb/node-api");
  return duck;
}

/** The loaded client (every caller runs after {@link loadDuck}). */
function api(): DuckApi {
  if (duck === null) throw new Error("the DuckDB client is not loaded");
  return duck;
}

/** DuckDB's memory cap while writing: beyond it, it spills to disk. */
const WRITER_MEMORY = "1GB";

/**
 * Most bytes of laid-out rows moved to the writer's Worker and not yet taken by its
 * `COPY` (which holds at most one commit's rows and one image more). A few chunks'
 * worth: the `COPY`, one thread, is the longest path of a Parquet thaw, and the thaw
 * Workers held this close to it leave it more of the cores (flights-3m on 2 cores,
 * 6 alternations: wall median 1.16 s with 256 MB, 1.03 s with 12 MB, 1.05 s with
 * 6 MB; peak memory ~420 -> ~330 MB).
 */
const IN_FLIGHT_BYTES = 12 * 1024 * 1024;

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

/**
 * Refuses a column DuckDB cannot hold (a decimal past 38 digits), before any row is
 * read and without loading DuckDB.
 */
function checkTypes(schema: Schema): void {
  for (const f of schema) {
    if (f.type === "decimal" && (f.precision ?? 0) > MAX_PARQUET_DECIMAL_PRECISION) {
      throw new IoError(
        "WRITE_FAILED",
        `Cannot write column '${f.name}' to Parquet: it is a decimal of ${f.precision} digits, Parquet written through DuckDB holds at most ${MAX_PARQUET_DECIMAL_PRECISION}; thaw it to Arrow, CSV or JSON lines instead`,
        { column: f.name },
      );
    }
  }
}

function duckType(f: Field): DuckDBType {
  const d = api();
  switch (f.type) {
    case "int64":
    case "duration":
      return d.BIGINT;
    case "time":
      return f.unit === "ns" ? d.TIME_NS : d.TIME;
    case "decimal":
      return d.DECIMAL(f.precision, f.scale);
    case "json":
      return d.VARCHAR;
    case "float64":
      return d.DOUBLE;
    case "float32":
    case "float16": // DuckDB has no half type: FLOAT holds every half exactly
      return d.FLOAT;
    case "bool":
      return d.BOOLEAN;
    case "date":
      return d.DATE;
    case "string":
      return d.VARCHAR;
    case "timestamp":
      if (f.unit === "ns") return d.TIMESTAMP_NS;
      return f.timezone !== undefined ? d.TIMESTAMPTZ : d.TIMESTAMP;
  }
}

/** The schema's DuckDB types, checked first. */
function duckTypes(schema: Schema): DuckDBType[] {
  checkTypes(schema);
  return schema.map(duckType);
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
  new (api().DuckDBUTinyIntVector)(bytes, validity, raw).flush();
  // Strings past 12 bytes live in the vector's own heap: DuckDB copies each in.
  let strings: InstanceType<DuckApi["DuckDBBlobVector"]> | null = null;
  let row = 0;
  for (const { image, from, n: take } of pieces) {
    const long = image.columns[c]!.long;
    for (let k = long ? lowerBound(long.rows, from) : 0; long && k < long.rows.length; k++) {
      const at = long.rows[k]!;
      if (at >= from + take) break;
      strings ??= new (api().DuckDBBlobVector)(
        new DataView(new ArrayBuffer(0)),
        validity,
        raw,
        0,
        n,
      );
      const value = long.bytes.subarray(long.offsets[k], long.offsets[k + 1]);
      strings.setItem(row + at - from, new (api().DuckDBBlobValue)(value));
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
  const chunk = api().DuckDBDataChunk.create(types, DUCK_VECTOR_ROWS);
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
  await loadDuck();
  const types = duckTypes(schema);
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
 * The data chunks a scan of the staging table gave, worked out as images come: the
 * appender's commits (each at the end of the chunk that brings it to 204,800 rows,
 * the rest at close), each commit cut into row groups of 122,880 rows (its last one
 * shorter), each row group read in vectors of 2048 rows (its last one shorter). Each
 * commit started a row group of its own, the last, smaller one too: on disk, the
 * table's last row group had already been written to the file when it came (DuckDB
 * writes a large commit's row groups out early). A commit's chunks are known once it
 * is complete, the last one's at the end: at most 204,800 rows wait.
 */
class ScanChunks {
  /** Rows of each chunk known so far, not yet taken. */
  readonly ready: number[] = [];
  #open = 0;

  /** Counts an image of `length` rows, appended 2048 rows at a time from its first. */
  add(length: number): void {
    for (let from = 0; from < length; from += DUCK_VECTOR_ROWS) {
      this.#open += Math.min(DUCK_VECTOR_ROWS, length - from);
      if (this.#open >= APPENDER_FLUSH_ROWS) this.#commit();
    }
  }

  /** The rows ended: the last commit, if any. */
  end(): void {
    if (this.#open > 0) this.#commit();
  }

  #commit(): void {
    const commit = this.#open;
    this.#open = 0;
    for (let group = 0; group < commit; group += ROW_GROUP_ROWS) {
      const rows = Math.min(ROW_GROUP_ROWS, commit - group);
      for (let at = 0; at < rows; at += DUCK_VECTOR_ROWS) {
        this.ready.push(Math.min(DUCK_VECTOR_ROWS, rows - at));
      }
    }
  }
}

/**
 * The sizes of the data chunks a scan of the staging table gave, in order, for images
 * of these lengths ({@link ScanChunks}).
 *
 * @param lengths The images' row counts, in order.
 * @returns Rows of each chunk.
 */
export function stagedScanChunks(lengths: readonly number[]): number[] {
  const chunks = new ScanChunks();
  for (const length of lengths) chunks.add(length);
  chunks.end();
  return chunks.ready;
}

/** The name under which {@link rowsFunction} is registered on the writer's connection. */
const ROWS_FUNCTION = "permafrost_rows";

/**
 * A table function giving the images' rows in the data chunks a scan of the staging
 * table gave ({@link ScanChunks}), on one thread, in order. DuckDB's Parquet writer
 * fed by it ends a row group at the first chunk that brings it to 122,880 rows, which
 * on the staging table's chunks are the very places where it cut the staging table's
 * scan (122,880 and 124,224 rows, …): the same row groups of the same chunks, hence the
 * same bytes, without appending the rows into a table and scanning them back.
 *
 * The node-api client runs the function on the JS thread that registered it, while
 * DuckDB's thread waits for it (a thread-safe function call): `next` may block that
 * JS thread (the Parquet Worker waits there for the main thread's next image), never
 * return a promise.
 *
 * @param next The next image, or null at the end (called only when no chunk is ready,
 * so that the images waiting here hold at most one commit's rows and one image).
 */
function rowsFunction(
  schema: Schema,
  types: DuckDBType[],
  next: () => DuckImage | null,
): DuckDBTableFunction {
  const chunks = new ScanChunks();
  const queue: DuckImage[] = [];
  let ended = false;
  let taken = 0;
  const scratch = new Uint8Array(DUCK_VECTOR_ROWS * Math.max(16, ...schema.map(duckWidth)));
  let from = 0;
  return api().DuckDBTableFunction.create({
    name: ROWS_FUNCTION,
    bindFunction(info) {
      schema.forEach((f, c) => info.addResultColumn(f.name, types[c]!));
    },
    initFunction(info) {
      info.setMaxThreads(1);
    },
    mainFunction(info, out) {
      try {
        while (taken === chunks.ready.length && !ended) {
          const image = next();
          if (image === null) {
            chunks.end();
            ended = true;
          } else {
            queue.push(image);
            chunks.add(image.length);
          }
        }
        const n = taken < chunks.ready.length ? chunks.ready[taken++]! : 0;
        if (n === 0) {
          out.rowCount = 0;
          return;
        }
        // The vectors before the row count: the client copies a vector's rows out of
        // DuckDB when it wraps it (2048 x 16 bytes of a VARCHAR, for nothing here),
        // and the output chunk arrives empty.
        const slots = schema.map((_, c) => vectorSlot(out, c));
        out.rowCount = n;
        const pieces: Piece[] = [];
        for (let left = n; left > 0;) {
          const at = queue[0]!;
          const take = Math.min(left, at.length - from);
          if (take > 0) pieces.push({ image: at, from, n: take });
          left -= take;
          from += take;
          if (from === at.length) {
            queue.shift();
            from = 0;
          }
        }
        for (let c = 0; c < schema.length; c++) fillVector(slots[c]!, c, pieces, n, scratch);
      } catch (err) {
        info.setError(err instanceof Error ? err.message : String(err));
      }
    },
  });
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

/** Where the {@link writeParquet} Worker's control words sit in its shared buffer. */
const POSTED = 0; // messages the main thread posted (images, then the end or an abort)
const TAKEN = 1; // images the Worker has received

/**
 * The name the {@link writeParquet} Worker runs this module under (`output.ts` spawns
 * it by this name too, before it loads this module).
 */
export const PARQUET_WORKER = "permafrost-parquet-copy";

/** A Worker of this module spawned by a caller, with the errors it raised meanwhile. */
export interface SpawnedParquetWorker {
  /** `new Worker(<this module>, { type: "module", name: PARQUET_WORKER })`. */
  worker: Worker;
  /** Messages of the errors it raised before {@link parquetWorker} took it. */
  errors: string[];
}

/** What the main thread tells the Worker first. */
interface CopyStart {
  path: string;
  schema: Schema;
  spill: string;
  port: MessagePort;
  control: SharedArrayBuffer;
}

/** What the main thread posts next, in order, on the port. */
type CopyFeed = { image: PackedImage } | { end: true } | { abort: true };

/**
 * An image as ArrayBuffers and numbers only: `receiveMessageOnPort` (Deno 2.9) takes
 * hundreds of milliseconds to read a message of a few typed arrays (a 2.8 MB image:
 * 0.2-0.5 s), and no time for the same bytes as ArrayBuffers.
 */
interface PackedImage {
  length: number;
  widths: number[];
  buffers: ArrayBuffer[];
  /**
   * Per column, five arrays (data, validity, long rows, long offsets, long bytes),
   * each as three numbers: buffer index (-1 for none), byte offset, element count.
   */
  views: number[];
}

/** Packs an image for the port; its buffers are the transfer list. */
function packImage(image: DuckImage): PackedImage {
  const buffers: ArrayBuffer[] = [];
  const index = new Map<ArrayBuffer, number>();
  const views: number[] = [];
  const put = (a: ArrayBufferView & { length: number } | null | undefined) => {
    if (a === null || a === undefined) {
      views.push(-1, 0, 0);
      return;
    }
    const buffer = a.buffer as ArrayBuffer;
    let at = index.get(buffer);
    if (at === undefined) {
      at = buffers.push(buffer) - 1;
      index.set(buffer, at);
    }
    views.push(at, a.byteOffset, a.length);
  };
  for (const c of image.columns) {
    put(c.data);
    put(c.validity);
    put(c.long?.rows);
    put(c.long?.offsets);
    put(c.long?.bytes);
  }
  return { length: image.length, widths: image.columns.map((c) => c.width), buffers, views };
}

/** The image {@link packImage} packed. */
function unpackImage(packed: PackedImage): DuckImage {
  const { buffers, views } = packed;
  let v = 0;
  const u8 = () => {
    const [at, offset, n] = [views[v]!, views[v + 1]!, views[v + 2]!];
    v += 3;
    return at < 0 ? null : new Uint8Array(buffers[at]!, offset, n);
  };
  const i32 = () => {
    const [at, offset, n] = [views[v]!, views[v + 1]!, views[v + 2]!];
    v += 3;
    return at < 0 ? null : new Int32Array(buffers[at]!, offset, n);
  };
  const columns = packed.widths.map((width) => {
    const data = u8()!;
    const validity = u8();
    const rows = i32();
    const offsets = i32();
    const bytes = u8();
    const long = rows && offsets && bytes ? { rows, offsets, bytes } : null;
    return { width, data, validity, long };
  });
  return { duckImage: true, length: packed.length, columns };
}

/** The Worker's one answer. */
type CopyAnswer = { ok: true } | { ok: false; message: string };

/** The `COPY` statement writing `source` to `path` with our schema as metadata. */
function copyStatement(path: string, source: string, schema: Schema): string {
  const meta = sqlString(JSON.stringify(schema));
  // Into `path` itself, not a sibling DuckDB renames: `path` is the caller's locked temp file.
  return `COPY (SELECT * FROM ${source}) TO ${
    sqlString(path)
  } (FORMAT parquet, COMPRESSION zstd, USE_TMP_FILE false, KV_METADATA {${PARQUET_SCHEMA_KEY}: ${meta}})`;
}

/**
 * Opens the writer's DuckDB: in memory, spilling to `spill`, on one thread
 * (`created`: the instance made ahead, see {@link openLockedDuckDB}).
 */
function openWriterDuckDB(
  path: string,
  spill: string,
  created: DuckDBInstance,
): Promise<LockedDuckDB> {
  // The spill directory keeps the name the on-disk staging database's had, which the
  // stale temp files' sweep (`internal/temp_files.ts`) knows.
  const settings = {
    temp_directory: spill,
    // One thread: the table function feeds one pipeline, which DuckDB's client thread
    // runs itself; with more, it spins in its task loop (~0.1-0.2 s of CPU in a
    // flights-3m thaw) while another thread waits for rows in it.
    threads: "1",
  };
  return openLockedDuckDB([path], ":memory:", WRITER_MEMORY, settings, created);
}

/** Options of {@link writeParquet}. */
export interface WriteParquetOptions {
  /** Most bytes of images moved to the Worker and not yet taken ({@link IN_FLIGHT_BYTES}). */
  inFlightBytes?: number;
  /** The Worker to write with ({@link parquetWorker}), else one started now. */
  worker?: ParquetWorker;
}

/**
 * Writes batches to a Parquet file at `path` (new, or an empty file the caller made).
 *
 * By default the `COPY` runs in a Worker of its own ({@link parquetWorker}), from the
 * first rows on: this thread lays out batches (or checks the thaw Workers' images)
 * and moves each image to it as it comes, while DuckDB, loaded and started there
 * meanwhile, encodes the rows already in. So the Parquet encoding (~0.5 s of CPU for
 * 3M rows) overlaps the decoding instead of following it, and loading DuckDB's native
 * addon (~0.1-0.2 s) blocks no thread that reads or hands out chunks. The Worker's
 * table function ({@link rowsFunction}) waits there for the next image (`Atomics.wait`
 * on a shared word, then `receiveMessageOnPort`), which blocks only that Worker's own
 * JS thread, idle otherwise, and the DuckDB thread that called it. At most
 * {@link IN_FLIGHT_BYTES} of images are in flight: past them this thread waits for the
 * Worker to take some (it takes one only when its `COPY` needs rows), so memory stays
 * bounded whatever the row count, with no staging table. The chunks are those of
 * {@link ScanChunks}: the bytes are those of every earlier writer.
 *
 * @param path The Parquet file to write (the caller's temp file, which it renames into place).
 * @param schema The schema.
 * @param batches The rows. Images are moved to the Worker: their buffers are detached here.
 * @param options The Worker to write with, and how many bytes may be in flight to it.
 * @returns Rows written.
 * @throws {IoError} WRITE_FAILED for a column DuckDB cannot hold, before any row is
 * read; SCHEMA_MISMATCH for an image of another schema. DuckDB's own failures and
 * the rows' errors propagate as they are.
 */
export async function writeParquet(
  path: string,
  schema: Schema,
  batches: AsyncIterable<Batch | DuckImage> | Iterable<Batch | DuckImage>,
  options: WriteParquetOptions = {},
): Promise<number> {
  const worker = options.worker ?? parquetWorker();
  try {
    checkNames(schema, path);
    if (schema.length === 0) {
      throw new IoError("WRITE_FAILED", "Cannot write a Parquet file without columns", { path });
    }
    // A column DuckDB cannot hold fails before any row is read.
    checkTypes(schema);
    return await worker.write(path, schema, batches, options.inFlightBytes ?? IN_FLIGHT_BYTES);
  } finally {
    worker.close();
  }
}

/** A Worker that writes one Parquet file ({@link parquetWorker}). */
export interface ParquetWorker {
  /** Writes the rows to `path` (see {@link writeParquet}); once. */
  write(
    path: string,
    schema: Schema,
    batches: AsyncIterable<Batch | DuckImage> | Iterable<Batch | DuckImage>,
    inFlightBytes: number,
  ): Promise<number>;
  /** Stops the Worker (idempotent); a write in progress fails. */
  close(): void;
}

/**
 * Starts the Worker of a Parquet write, or takes one the caller spawned: it loads
 * DuckDB at once, so that a caller that starts it ahead (`output.ts`, from the start
 * of a thaw) has DuckDB ready sooner. Close it when done, written or not.
 *
 * @param spawned A Worker of this module the caller spawned (it need not load this
 * module to start it), else one is spawned now.
 * @returns The Worker's handle.
 */
export function parquetWorker(spawned?: SpawnedParquetWorker): ParquetWorker {
  const worker = spawned?.worker ??
    new Worker(import.meta.url, { type: "module", name: PARQUET_WORKER });
  const answer = new Promise<void>((resolve, reject) => {
    const failed = spawned?.errors[0];
    if (failed !== undefined) reject(new Error(failed));
    worker.onmessage = (event: MessageEvent<CopyAnswer>) => {
      if (event.data.ok) resolve();
      else reject(new Error(event.data.message));
    };
    worker.onerror = (event) => {
      event.preventDefault();
      reject(new Error(event.message));
    };
  });
  // Awaited by write(), if called; a failure seen early stops it reading rows.
  let failed = false;
  answer.catch(() => {
    failed = true;
  });
  let closed = false;
  const spills: string[] = [];
  return {
    async write(path, schema, batches, inFlightBytes) {
      const spill = `${path}.duckdb.tmp`;
      spills.push(spill);
      const { port1, port2 } = new MessageChannel();
      const control = new Int32Array(new SharedArrayBuffer(8));
      const post = (feed: CopyFeed, transfer: ArrayBuffer[] = []) => {
        port1.postMessage(feed, transfer);
        Atomics.add(control, POSTED, 1);
        Atomics.notify(control, POSTED);
      };
      try {
        const start: CopyStart = {
          path,
          schema,
          spill,
          port: port2,
          control: control.buffer as SharedArrayBuffer,
        };
        worker.postMessage(start, [port2 as unknown as Transferable]);
        const sizes: number[] = [];
        let taken = 0;
        let inFlight = 0;
        let rows = 0;
        try {
          for await (const image of imagesOf(schema, batches)) {
            if (failed) break; // the COPY failed: its error, below, rather than more rows
            for (;;) {
              const now = Atomics.load(control, TAKEN);
              while (taken < now) inFlight -= sizes[taken++]!;
              if (inFlight <= inFlightBytes) break;
              const wait = Atomics.waitAsync(control, TAKEN, now);
              if (wait.async) await Promise.race([wait.value, answer]);
            }
            const bytes = imageBytes(image);
            sizes.push(bytes);
            inFlight += bytes;
            rows += image.length;
            const packed = packImage(image);
            post({ image: packed }, packed.buffers);
          }
          post({ end: true });
        } catch (err) {
          // The COPY fails on this, and DuckDB lets the file go, before the error goes on.
          post({ abort: true });
          await answer.catch(() => {});
          throw err;
        }
        await answer;
        return rows;
      } finally {
        port1.close();
      }
    },
    close() {
      if (closed) return;
      closed = true;
      worker.terminate();
      for (const spill of spills) removeQuietlySync(spill);
    },
  };
}

/** Removes a spill directory DuckDB may have made (it makes none unless it spills). */
function removeQuietlySync(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch {
    // Not there (the usual case), or already gone.
  }
}

/** The {@link writeParquet} Worker: runs one `COPY` fed by the main thread's images. */
function serveCopy(): void {
  // DuckDB loads, and its instance starts, while the main thread makes its temp file
  // and reads the first chunks; locked once the path is known, before any statement.
  const loading = loadDuck().then(() => createDuckDB());
  loading.catch(() => {}); // awaited when the rows come
  const scope = self as unknown as {
    onmessage: ((event: MessageEvent<CopyStart>) => void) | null;
    postMessage(answer: CopyAnswer): void;
  };
  scope.onmessage = async (event) => {
    scope.onmessage = null;
    const { path, schema, spill, port, control } = event.data;
    const words = new Int32Array(control);
    try {
      // Node's worker_threads (for its synchronous receive) only here: the main
      // thread of a thaw starts no Node compatibility for it.
      const { receiveMessageOnPort } = await import("node:worker_threads");
      const created = await loading;
      const types = duckTypes(schema);
      const db = await openWriterDuckDB(path, spill, created);
      try {
        const next = (): DuckImage | null => {
          for (;;) {
            const seen = Atomics.load(words, POSTED);
            const got = receiveMessageOnPort(
              port as unknown as Parameters<typeof receiveMessageOnPort>[0],
            );
            if (got !== undefined) {
              const feed = got.message as CopyFeed;
              if ("image" in feed) {
                // Counted as taken now: the table function holds it until its rows
                // are in chunks, at most one commit's worth.
                Atomics.add(words, TAKEN, 1);
                Atomics.notify(words, TAKEN);
                return unpackImage(feed.image);
              }
              if ("end" in feed) return null;
              throw new Error("the rows stopped: their source failed");
            }
            // Woken by the next post; the timeout only guards a message counted before
            // it could be received.
            Atomics.wait(words, POSTED, seen, 20);
          }
        };
        const conn = db.connection;
        conn.registerTableFunction(rowsFunction(schema, types, next));
        await conn.run(copyStatement(path, `${ROWS_FUNCTION}()`, schema));
      } finally {
        db.close();
      }
      scope.postMessage({ ok: true });
    } catch (err) {
      scope.postMessage({ ok: false, message: err instanceof Error ? err.message : String(err) });
    }
  };
}

// This module is also the script of the writer's Worker.
if ((self as { name?: string }).name === PARQUET_WORKER) serveCopy();
