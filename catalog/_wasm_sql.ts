/**
 * One user query on a duckdb-wasm connection, answered as `POST /sql` answers
 * ({@link runWasmSql}): the catalog's KV store runs queries over its mirror with it, and
 * `POST /sql` over datasets' rows on the `duckdb-wasm` engine over the tables it loaded.
 *
 * The query runs in a read-only transaction, in steps with its deadline checked
 * between them (`streamQuery`); its answer is read batch by batch and cut at the row
 * and byte limits, so what is held never grows past them. Columns are named and typed
 * as DuckDB describes them (`DESCRIBE`), and the values DuckDB's JSON converter gives
 * as text on the native engine (temporal types, wide decimals, 128-bit integers,
 * UUIDs) are cast to text by DuckDB here too, so both engines answer alike.
 *
 * @module
 */
import * as arrow from "apache-arrow";
import { streamQuery, type WasmConnection } from "../ops/_duckdb_wasm.ts";
import { CatalogError } from "./errors.ts";
import { message } from "./errors.ts";
import { cleanDuckError, jsonBytes } from "./_sql_text.ts";
import { jsonValue, rowObjects } from "./_wasm_rows.ts";
import type { SqlResult } from "./types.ts";

/** Limits of {@link runWasmSql}. */
export interface WasmSqlLimits {
  /** `performance.now()` time past which the query is stopped. */
  deadline: number;
  /** The time limit, for the message. */
  timeoutMs: number;
  /** Most rows answered. */
  maxRows: number;
  /** Most bytes of the rows' JSON answered. */
  maxBytes: number;
  /** When the request started (`performance.now()`), for `elapsed_ms`. */
  started: number;
}

/**
 * Runs one SELECT (already checked to be one) and answers it as `POST /sql` does.
 *
 * @param conn A connection no other query uses meanwhile.
 * @param text The query.
 * @param limits Deadline, rows, bytes.
 * @returns Columns and rows.
 * @throws {CatalogError} SQL_REFUSED (a file, the network or an extension), SQL_FAILED,
 * SQL_TOO_LARGE, SQL_TIMEOUT.
 */
export async function runWasmSql(
  conn: WasmConnection,
  text: string,
  limits: WasmSqlLimits,
): Promise<SqlResult> {
  const timeout = () =>
    new CatalogError(
      "SQL_TIMEOUT",
      `Query stopped after the ${limits.timeoutMs} ms limit (--sql-timeout-ms)`,
    );
  if (performance.now() > limits.deadline) throw timeout();
  conn.query("BEGIN TRANSACTION READ ONLY");
  try {
    let described: Record<string, unknown>[];
    try {
      described = rowObjects(conn.query(`DESCRIBE (\n${text}\n)`) as arrow.Table);
    } catch (cause) {
      throw queryError(cause);
    }
    const columns = described.map((r) => ({
      name: String(r.column_name),
      type: String(r.column_type),
    }));
    const reader = await arrow.AsyncRecordBatchStreamReader.from(
      streamQuery(conn, answerText(text, columns), { deadline: limits.deadline, timeout }),
    );
    await reader.open();
    const rows: unknown[][] = [];
    let bytes = 2;
    let truncated = false;
    try {
      outer: for await (const batch of reader) {
        const vectors = batch.schema.fields.map((_: arrow.Field, j: number) =>
          batch.getChildAt(j)!
        );
        for (let i = 0; i < batch.numRows; i++) {
          if (rows.length >= limits.maxRows) {
            truncated = true;
            break outer;
          }
          const row = vectors.map((v, j) => typed(jsonValue(v.get(i), v.type), columns[j]!.type));
          const size = jsonBytes(row) + (rows.length > 0 ? 1 : 0);
          if (bytes + size > limits.maxBytes) {
            if (rows.length === 0) {
              throw new CatalogError(
                "SQL_TOO_LARGE",
                `Query result too large: its first row alone is over the ${limits.maxBytes}-byte limit of an answer (--sql-max-bytes); select fewer or shorter columns`,
              );
            }
            truncated = true;
            break outer;
          }
          rows.push(row);
          bytes += size;
        }
      }
    } catch (cause) {
      if (cause instanceof CatalogError) throw cause;
      throw queryError(cause);
    }
    return {
      columns,
      rows,
      row_count: rows.length,
      truncated,
      max_rows: limits.maxRows,
      max_bytes: limits.maxBytes,
      elapsed_ms: Math.round((performance.now() - limits.started) * 100) / 100,
    };
  } finally {
    try {
      conn.query("ROLLBACK");
    } catch {
      // a cancelled query may have ended the transaction already
    }
  }
}

/**
 * The user's query, wrapped so that values the DuckDB store answers as text (temporal
 * types, wide decimals, 128-bit integers, UUIDs, intervals) come out of DuckDB as that
 * text; when two columns share a name the query is left as it is.
 */
function answerText(text: string, columns: { name: string; type: string }[]): string {
  const names = new Set(columns.map((c) => c.name));
  if (names.size !== columns.length) return text;
  const cast = columns.filter((c) => asText(c.type));
  if (cast.length === 0) return text;
  const quote = (n: string) => `"${n.replaceAll('"', '""')}"`;
  const replace = cast.map((c) => `CAST(${quote(c.name)} AS VARCHAR) AS ${quote(c.name)}`);
  return `SELECT * REPLACE (${replace.join(", ")}) FROM (\n${text}\n)`;
}

/** Types DuckDB's JSON converter gives as text (and decimals, turned back below). */
function asText(type: string): boolean {
  return /^(TIMESTAMP|DATE|TIME|INTERVAL|UUID|HUGEINT|UHUGEINT|DECIMAL|BIT|VARINT|BIGNUM)/.test(
    type,
  );
}

/** A value cast to text by {@link answerText}, as the DuckDB store answers it. */
function typed(value: unknown, type: string): unknown {
  if (typeof value !== "string") return value;
  const decimal = /^DECIMAL\((\d+),/.exec(type);
  if (decimal) {
    if (Number(decimal[1]) > 15) return value;
    const n = Number(value);
    return Number.isFinite(n) ? n : value;
  }
  if (/^U?HUGEINT$/.test(type)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value;
  }
  return value;
}

/**
 * A failed user query: SQL_REFUSED when it reached for what the locked engine does not
 * give (a file, the network, an extension), else SQL_FAILED in DuckDB's words.
 */
function queryError(cause: unknown): CatalogError {
  const text = cleanDuckError(wasmMessage(cause));
  if (/^Permission Error|exists in the \w+ extension/.test(text)) {
    const what = /^Catalog Error: (.*?) is not in the catalog/.exec(text)?.[1];
    return new CatalogError(
      "SQL_REFUSED",
      `Query refused: ${
        what ? `${what} is not available` : text.replace(/^Permission Error: /, "")
      }: queries read the catalog tables only (no file, network or extension)`,
      { cause },
    );
  }
  return new CatalogError("SQL_FAILED", `Query failed: ${text}`, { cause });
}

/**
 * A duckdb-wasm error's text (it may come as a JSON object).
 *
 * @param cause What it threw.
 * @returns The text.
 */
export function wasmMessage(cause: unknown): string {
  const text = message(cause);
  try {
    const o = JSON.parse(text) as { exception_type?: string; exception_message?: string };
    if (o.exception_message) return `${o.exception_type ?? ""} Error: ${o.exception_message}`;
  } catch {
    // already text
  }
  return text;
}
