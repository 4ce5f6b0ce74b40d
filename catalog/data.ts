/**
 * A registered dataset's rows, served (`GET /datasets/{name}/rows`): the archive the
 * record names is opened where it lies (a local path or an object-storage URI, by ranged
 * reads), every hash checked as it is read, and the rows asked for — a row range,
 * some columns, a `--where` filter that skips chunks by their min/max — streamed as
 * CSV, JSON lines or an Arrow IPC stream, one chunk in memory at a time. Everything a
 * request can get wrong (a column, the filter, the range) is refused before the first
 * byte is sent, as a 400 naming it.
 *
 * And `POST /sql` over datasets' rows ({@link sqlOverDatasets}): each table name a
 * query reads is a dataset (`"name@version"` for another version than the newest); the
 * caller's resolver says which it may read and where each lies; only the columns the
 * query names are thawed (its `WHERE` skipping chunks by min/max), into a locked DuckDB
 * of the query's own, and the answer comes back in the shape of a query over the
 * catalog's tables.
 *
 * @module
 */
import type { Schema } from "../format/column.ts";
import { STREAM_FORMATS, type StreamFormat, writeToStream } from "../io/output.ts";
import { openArchive } from "../ops/_remote.ts";
import { newCounters, scanArchive, selectSchema, whereFor } from "../ops/_scan.ts";
import { OpsError } from "../ops/errors.ts";
import { SqlSession } from "../ops/sql.ts";
import { CatalogError } from "./errors.ts";
import type { SqlResult } from "./types.ts";
import { DEFAULT_SQL_MAX_BYTES, DEFAULT_SQL_MAX_ROWS, DEFAULT_SQL_TIMEOUT_MS } from "./limits.ts";
import type { QueryBackend } from "../ops/query_backends.ts";
import { runWasmSql } from "./_wasm_sql.ts";

export { STREAM_FORMATS as ROW_FORMATS };

/** The content type of each format served. */
export const ROW_CONTENT_TYPES: Readonly<Record<StreamFormat, string>> = Object.freeze({
  csv: "text/csv; charset=utf-8",
  jsonl: "application/x-ndjson",
  arrow: "application/vnd.apache.arrow.stream",
});

/** What a rows request asks for. */
export interface RowsRequest {
  /** Rows `[start, end)` (default all). */
  rows?: { start: number; end: number };
  /** Columns, in order (default all). */
  columns?: string[];
  /** A filter in the CLI's `--where` language. */
  where?: string;
  /** The format (default csv). */
  format?: StreamFormat;
}

/** Rows on their way out. */
export interface RowsResponse {
  /** The body. */
  body: ReadableStream<Uint8Array>;
  /** Its content type. */
  contentType: string;
  /** The columns sent. */
  schema: Schema;
}

/**
 * Opens an archive and starts streaming the rows asked for.
 *
 * @param path The archive's path or URI (already confined by the caller).
 * @param request Rows, columns, where, format.
 * @returns The body and its content type.
 * @throws {CatalogError} INVALID_ARGUMENT for a bad column, filter, range or format;
 * ARCHIVE_UNREADABLE when the archive cannot be opened or is encrypted.
 */
export async function serveRows(path: string, request: RowsRequest): Promise<RowsResponse> {
  const format = request.format ?? "csv";
  if (!STREAM_FORMATS.includes(format)) {
    throw new CatalogError(
      "INVALID_ARGUMENT",
      `Cannot serve rows as '${format}': use ${STREAM_FORMATS.join(", ")}`,
    );
  }
  let reader;
  try {
    reader = await openArchive(path);
  } catch (cause) {
    throw new CatalogError(
      "ARCHIVE_UNREADABLE",
      `Cannot read the archive of this dataset (${path}): ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
      { path, cause },
    );
  }
  try {
    if (reader.index.header.encryption !== null) {
      throw new CatalogError(
        "ARCHIVE_UNREADABLE",
        `The archive of this dataset is encrypted: the catalog holds no key; thaw it with its key (permafrost thaw ${path} OUT --key-file …)`,
        { path },
      );
    }
    const total = reader.index.footer.rows;
    const rows = request.rows;
    if (rows && (rows.start < 0 || rows.end < rows.start)) {
      throw new CatalogError(
        "INVALID_ARGUMENT",
        `Cannot serve rows ${rows.start}:${rows.end}: give START:END with 0 <= START <= END (the dataset has ${total} rows)`,
      );
    }
    const schema = selectSchema(reader.index.schema, request.columns);
    // Compiled now, so a bad filter is a 400 and not a cut body.
    const where = await whereFor(request.where, reader.index.schema);
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const open = reader;
    const scan = scanArchive(open, { rows, columns: request.columns, where }, newCounters());
    writeToStream(writable, schema, scan, { format })
      .catch(() => {}) // the stream is aborted with the error: the client sees a cut body
      .finally(() => open.close());
    return { body: readable, contentType: ROW_CONTENT_TYPES[format], schema };
  } catch (err) {
    reader.close();
    if (err instanceof OpsError) {
      throw new CatalogError("INVALID_ARGUMENT", err.message, { cause: err });
    }
    throw err;
  }
}

/** A dataset a table name stands for: `name` or `name@version`. */
export function datasetOfTable(table: string): { name: string; version?: string } {
  const at = table.lastIndexOf("@");
  return at <= 0 ? { name: table } : { name: table.slice(0, at), version: table.slice(at + 1) };
}

/** Limits of {@link sqlOverDatasets}. */
export interface DataSqlLimits {
  /** Time limit (ms). */
  timeoutMs?: number;
  /** Most rows answered. */
  maxRows?: number;
  /** Most bytes of the rows' JSON answered. */
  maxBytes?: number;
}

/**
 * Answers one SELECT over datasets' rows.
 *
 * @param query The SELECT.
 * @param resolve The path or URI of the archive a table name stands for, or null when
 * the caller may not read it or there is none (DuckDB then says the table does not exist).
 * @param limits Time, rows, bytes.
 * @param engine `duckdb` (a locked DuckDB of the query's own, answer through Parquet)
 * or `duckdb-wasm` (the process's wasm engine, for a catalog without native code).
 * @returns Columns and rows, as `POST /sql` answers.
 * @throws {CatalogError} SQL_REFUSED, SQL_FAILED, SQL_TIMEOUT, SQL_TOO_LARGE.
 */
export async function sqlOverDatasets(
  query: string,
  resolve: (table: string) => Promise<string | null>,
  limits: DataSqlLimits = {},
  engine: QueryBackend = "duckdb",
): Promise<SqlResult> {
  const started = performance.now();
  const timeoutMs = limits.timeoutMs ?? DEFAULT_SQL_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  const session = new SqlSession({ resolve, backend: engine });
  try {
    if (engine === "duckdb-wasm") {
      return (await session.executeOnWasm(query, (conn, text) =>
        runWasmSql(conn, text, {
          deadline: started + timeoutMs,
          timeoutMs,
          maxRows: limits.maxRows ?? DEFAULT_SQL_MAX_ROWS,
          maxBytes: limits.maxBytes ?? DEFAULT_SQL_MAX_BYTES,
          started,
        }), { signal })).value;
    }
    // Loaded here: the DuckDB sandbox needs the native addon, which the wasm engine does not.
    const { resultFromParquet } = await import("./sql_sandbox.ts");
    return (await session.executeToParquet(
      query,
      (parquetPath) => resultFromParquet(parquetPath, { ...limits, started }),
      { signal },
    )).value;
  } catch (err) {
    if (err instanceof CatalogError) throw err;
    if (signal.aborted) {
      throw new CatalogError(
        "SQL_TIMEOUT",
        `Query stopped after the ${timeoutMs} ms limit (--sql-timeout-ms)`,
        { cause: err },
      );
    }
    if (err instanceof OpsError && (err.code === "SQL_REFUSED" || err.code === "SQL_FAILED")) {
      throw new CatalogError(err.code, err.message, { cause: err });
    }
    if (err instanceof OpsError) throw new CatalogError("SQL_FAILED", err.message, { cause: err });
    throw err;
  }
}
