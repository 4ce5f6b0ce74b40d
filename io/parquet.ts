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
 * - FLOAT → float32, DOUBLE → float64, both bit for bit; FLOAT that our writer recorded
 *   as float16 → float16 (DuckDB has no half type, and reads a Parquet FLOAT16 as FLOAT:
 *   a foreign half column arrives as float32, the same values); a FLOAT forced to
 *   float64 → float64 (exact); DECIMAL(p, s) → decimal(p, s), exactly (the
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
import type { DuckDBPreparedStatement } from "@duckdb/node-api";
import type { Batch, Schema } from "../format/column.ts";
import { type LockedDuckDB, openLockedDuckDB } from "./_duckdb.ts";
import { fileSize } from "./_file.ts";
import { type ColumnPlan, planForced, readFailed, recordedSchema } from "./_parquet_plan.ts";
import { parquetBatches } from "./_parquet_vectors.ts";
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

/** Where one row group's bytes lie in a Parquet file. */
export interface RowGroupSpan {
  /** Its rows. */
  rows: number;
  /** Offset of its first column chunk's first page. */
  start: number;
  /** One past its last column chunk's last byte. */
  end: number;
}

/**
 * Reads where each row group's bytes lie, from the footer alone (DuckDB's
 * `parquet_metadata` reads nothing else, so the file may be a sparse copy holding only
 * its footer: how a worker learns which ranges of an object to fetch).
 *
 * @param path The Parquet file.
 * @returns One span per row group, in file order.
 * @throws {IoError} READ_FAILED when the footer cannot be read.
 */
export async function parquetRowGroupSpans(path: string): Promise<RowGroupSpan[]> {
  const db = await openLockedDuckDB([path]);
  try {
    const r = await db.connection.runAndReadAll(
      `SELECT row_group_id, max(row_group_num_rows),
         min(CASE WHEN coalesce(dictionary_page_offset, 0) > 0
                  THEN least(dictionary_page_offset, data_page_offset)
                  ELSE data_page_offset END),
         max(coalesce(CASE WHEN coalesce(dictionary_page_offset, 0) > 0
                  THEN least(dictionary_page_offset, data_page_offset)
                  ELSE data_page_offset END, 0) + total_compressed_size)
       FROM parquet_metadata($1) GROUP BY row_group_id ORDER BY row_group_id`,
      [resolve(path)],
    );
    return r.getRows().map((row) => ({
      rows: Number(row[1] as bigint),
      start: Number(row[2] as bigint),
      end: Number(row[3] as bigint),
    }));
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
    plans = described.map(([name, duck]) => planForced(name, duck, types, recorded, path));
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
