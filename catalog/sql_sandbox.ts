/**
 * The `POST /sql` sandbox: runs one read-only SELECT over the catalog tables, with a
 * time limit, a row limit and a byte limit, and refuses everything else.
 *
 * Layers, each enough on its own for the common attacks, together for the rest:
 * 1. **Parse, never bind, untrusted text first.** `json_serialize_sql` (DuckDB's
 *    own parser, no binding, so no file is touched) must yield exactly one
 *    statement, and it only serializes SELECTs: COPY, ATTACH, INSTALL, LOAD, SET,
 *    PRAGMA, CALL, EXPORT, DDL, DML and multi-statement input are refused here.
 * 2. **Walk the tree, names resolved per scope.** Every table reference must be a
 *    catalog table ({@link CATALOG_TABLES}, in schema `main`, no explicit database)
 *    or a CTE visible where it is used (a CTE is visible inside the query that
 *    defines it, never beside it); table functions (`read_csv`, `query`, `glob`,
 *    `duckdb_*`, ...) and file scans (`FROM 'x.csv'`) are refused, and so are the
 *    scalar functions that read configuration or touch sequences
 *    ({@link REFUSED_FUNCTIONS}).
 * 3. **Check what DuckDB binds.** `json_serialize_plan` binds the query (binding
 *    reads no file: the text passed 1 and 2) and gives its logical plan: every scan
 *    in it must be a `seq_scan` of a catalog table in this database's `main` schema,
 *    or `unnest` (the `chunk_stats` view). This is what a name means to DuckDB, so
 *    a CTE, alias or view named after a system table cannot slip past it.
 * 4. **DuckDB's own checks.** The database was opened with
 *    `enable_external_access=false` and `lock_configuration=true` (see `_db.ts`), the
 *    prepared statement must report type SELECT, and it runs inside `BEGIN
 *    TRANSACTION READ ONLY`, rolled back afterwards.
 * 5. **Limits.** Each query runs on a connection of its own ({@link SandboxPool}).
 *    At `timeoutMs` the connection is interrupted and the caller gets `SQL_TIMEOUT`
 *    at once, whether or not DuckDB has stopped yet (it checks for an interrupt
 *    between pieces of work; the connection stays out of the pool until it has).
 *    The result is read one chunk at a time and cut at `maxRows` rows or `maxBytes`
 *    bytes of JSON, whichever comes first (`truncated: true`), so memory stays
 *    bounded by the limits, not by what the query could produce.
 *
 * @module
 */
import {
  type DuckDBConnection,
  type DuckDBDataChunk,
  type DuckDBResult,
  StatementType,
} from "@duckdb/node-api";
import { openLockedDuckDB, sqlString } from "../io/_duckdb.ts";
import type { Logger } from "../internal/log.ts";
import { CatalogError } from "./errors.ts";
import { DEFAULT_SQL_MAX_BYTES, DEFAULT_SQL_MAX_ROWS, DEFAULT_SQL_TIMEOUT_MS } from "./limits.ts";
import { message, type SandboxPool, toJsonValue } from "./_db.ts";
import { checkText, cleanDuckError, jsonBytes, refused } from "./_sql_text.ts";

export { checkText, cleanDuckError, jsonBytes };
import type { SqlResult } from "./types.ts";
import { CATALOG_TABLES } from "./_tables.ts";

/** Scalar functions user SQL may not call: they read settings or write sequences. */
export const REFUSED_FUNCTIONS: ReadonlySet<string> = new Set([
  "current_setting",
  "getvariable",
  "nextval",
  "currval",
  "setseed",
]);

/** Table-reference node types that are fine as long as their children are. */
const ALLOWED_REFS = new Set([
  "JOIN",
  "SUBQUERY",
  "EXPRESSION_LIST",
  "EMPTY",
  "EMPTY_FROM",
  "SHOW_REF",
]);

/** Table functions a bound plan may use: in memory only (the `chunk_stats` view unnests). */
const PLAN_TABLE_FUNCTIONS: ReadonlySet<string> = new Set(["unnest"]);

/** `json_serialize_plan` error types that are the user's query being wrong, not refused. */
const QUERY_ERROR_TYPES: ReadonlySet<string> = new Set(["binder", "catalog", "parser"]);

export { MAX_QUERY_LENGTH } from "./_sql_text.ts";

export { DEFAULT_SQL_MAX_BYTES, DEFAULT_SQL_MAX_ROWS, DEFAULT_SQL_TIMEOUT_MS } from "./limits.ts";

/** Limits of one query. */
export interface SqlLimits {
  /** Wall-time limit, after which the query is interrupted (default 5,000 ms). */
  timeoutMs?: number;
  /** Rows returned at most (default 10,000). */
  maxRows?: number;
  /** Bytes of the rows' JSON at most (default 32 MiB). */
  maxBytes?: number;
  /** Tables the query may read (default {@link CATALOG_TABLES}). */
  tables?: readonly string[];
  /** Where a query that runs past its limit is reported (default: nowhere). */
  logger?: Logger;
}

/**
 * Checks a query: DuckDB's parser and the scoped tree walk, then the tables and
 * functions of the plan DuckDB binds it to.
 *
 * @param connection A connection (only `json_serialize_sql` and `json_serialize_plan` run on it).
 * @param query The user's SQL.
 * @param tables Tables the query may read.
 * @throws {CatalogError} SQL_REFUSED naming what is not allowed; SQL_FAILED for a
 * syntax or binder error.
 */
export async function checkQuery(
  connection: DuckDBConnection,
  query: string,
  tables: readonly string[] = CATALOG_TABLES,
): Promise<void> {
  await checkSyntax(connection, query, tables);
  await checkPlan(connection, query, tables);
}

/**
 * The parser and tree-walk layers of {@link checkQuery} alone (one SELECT; every table
 * one of `tables` or a CTE; no table function, file scan or refused function), for a
 * query that runs where `tables` exist but this connection does not have them (a query
 * over datasets' rows, run in a DuckDB of its own).
 *
 * @param connection Any connection (only the parser runs on it).
 * @param query The user's SQL.
 * @param tables Tables the query may read.
 * @throws {CatalogError} SQL_REFUSED naming what is not allowed; SQL_FAILED for a syntax error.
 */
export async function checkSyntax(
  connection: DuckDBConnection,
  query: string,
  tables: readonly string[],
): Promise<void> {
  checkText(query);
  const extracted = await connection.extractStatements(query).catch((cause) => {
    throw new CatalogError("SQL_FAILED", `Cannot parse query: ${cleanDuckError(cause)}`, { cause });
  });
  if (extracted.count !== 1) {
    throw refused(`expected exactly one statement, got ${extracted.count}`);
  }
  const reader = await connection.runAndReadAll("SELECT json_serialize_sql($1::VARCHAR)", [query]);
  const tree = JSON.parse(String(reader.getRowsJS()[0]?.[0])) as {
    error?: boolean;
    error_message?: string;
    statements?: unknown[];
  };
  if (tree.error) {
    const why = tree.error_message ?? "";
    if (/only SELECT statements/i.test(why) || /not implemented/i.test(why)) {
      throw refused("only a SELECT statement may run here");
    }
    throw refused(`only a SELECT statement may run here (${why})`);
  }
  if (!Array.isArray(tree.statements) || tree.statements.length !== 1) {
    throw refused(`expected exactly one statement, got ${tree.statements?.length ?? 0}`);
  }
  walk(tree.statements[0], new Set(tables.map((t) => t.toLowerCase())));
}

/**
 * Checks the logical plan DuckDB binds a query to: every scan reads a catalog
 * table of this database, or is `unnest`.
 *
 * @param connection A connection of the catalog's database.
 * @param query SQL that already passed the parser checks (binding it must not touch files).
 * @param tables Tables (not views) the plan may scan.
 * @throws {CatalogError} SQL_REFUSED naming the table or function; SQL_FAILED for a binder error.
 */
export async function checkPlan(
  connection: DuckDBConnection,
  query: string,
  tables: readonly string[] = CATALOG_TABLES,
): Promise<void> {
  const reader = await connection.runAndReadAll(
    "SELECT json_serialize_plan($1::VARCHAR, optimize := false), current_database()",
    [query],
  );
  const [json, database] = reader.getRowsJS()[0] ?? [];
  const plan = JSON.parse(String(json)) as {
    error?: boolean;
    error_type?: string;
    error_message?: string;
    plans?: unknown[];
  };
  if (plan.error) {
    const why = String(plan.error_message ?? "").split("\n")[0];
    if (QUERY_ERROR_TYPES.has(String(plan.error_type))) {
      throw new CatalogError("SQL_FAILED", `Query failed: ${why}`);
    }
    throw refused(`cannot check what the query reads (${plan.error_type}: ${why})`);
  }
  const allowed = new Set(tables.map((t) => t.toLowerCase()));
  walkPlan(plan.plans, String(database), allowed);
}

function walkPlan(node: unknown, database: string, allowed: ReadonlySet<string>): void {
  if (Array.isArray(node)) {
    for (const x of node) walkPlan(x, database, allowed);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const o = node as Record<string, unknown>;
  if (o.type === "LOGICAL_GET") {
    const fn = String(o.name ?? "");
    if (fn === "seq_scan") {
      const data = (o.function_data ?? {}) as Record<string, unknown>;
      const [db, schema, table] = [data.catalog, data.schema, data.table].map((x) => String(x));
      if (db !== database || schema !== "main" || !allowed.has(table!.toLowerCase())) {
        throw refused(
          `table ${db}.${schema}.${table} is not a catalog table (allowed: ${
            CATALOG_TABLES.join(", ")
          })`,
        );
      }
    } else if (!PLAN_TABLE_FUNCTIONS.has(fn)) {
      throw refused(`the query reads ${fn}(), which is not a catalog table`);
    }
  }
  for (const v of Object.values(o)) walkPlan(v, database, allowed);
}

/** Names of the CTEs a query node defines (its `cte_map`). */
function cteNames(o: Record<string, unknown>): string[] {
  const map = (o.cte_map as { map?: { key?: unknown }[] } | undefined)?.map;
  if (!Array.isArray(map)) return [];
  return map.flatMap((e) => typeof e.key === "string" ? [e.key.toLowerCase()] : []);
}

/**
 * Walks the parse tree. `visible` holds the names a table reference may use here:
 * the catalog tables plus the CTEs of the enclosing query nodes, so a CTE defined in
 * a subquery does not make its name readable beside the subquery.
 */
function walk(node: unknown, visible: ReadonlySet<string>): void {
  if (Array.isArray(node)) {
    for (const x of node) walk(x, visible);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const o = node as Record<string, unknown>;
  const defined = cteNames(o);
  const scope = defined.length === 0 ? visible : new Set([...visible, ...defined]);
  const type = o.type;
  // Table references are the nodes with an alias and a sample clause (TableRef's
  // serialized fields); query nodes, modifiers and ORDER BY items have neither.
  if (typeof type === "string" && !("class" in o) && "alias" in o && "sample" in o) {
    checkRef(type, o, scope);
  }
  if (o.class === "FUNCTION" && typeof o.function_name === "string") {
    const fn = o.function_name.toLowerCase();
    if (REFUSED_FUNCTIONS.has(fn)) throw refused(`function ${fn}() is not allowed`);
  }
  for (const v of Object.values(o)) walk(v, scope);
}

function checkRef(type: string, o: Record<string, unknown>, visible: ReadonlySet<string>): void {
  if (ALLOWED_REFS.has(type)) return;
  if (type === "BASE_TABLE") {
    const table = String(o.table_name ?? "");
    const schema = String(o.schema_name ?? "");
    const catalog = String(o.catalog_name ?? "");
    if (catalog !== "" || (schema !== "" && schema.toLowerCase() !== "main")) {
      const full = [catalog, schema, table].filter((x) => x !== "").join(".");
      throw refused(`table ${full} is not a catalog table (allowed: ${CATALOG_TABLES.join(", ")})`);
    }
    if (!visible.has(table.toLowerCase())) {
      throw refused(
        `table '${table}' is not a catalog table (allowed: ${CATALOG_TABLES.join(", ")})`,
      );
    }
    return;
  }
  if (type === "TABLE_FUNCTION") {
    const fn = (o.function as { function_name?: unknown } | undefined)?.function_name;
    throw refused(`table function ${String(fn ?? "?")}() is not allowed: query the catalog tables`);
  }
  throw refused(`a ${type} table reference is not allowed`);
}

/**
 * Checks and runs one query in the sandbox, on a connection of its own.
 *
 * @param pool The sandbox connections.
 * @param query The user's SQL.
 * @param limits Time, row and byte limits.
 * @returns Columns, rows (JSON-safe) and whether the rows were cut.
 * @throws {CatalogError} SQL_REFUSED, SQL_FAILED, SQL_TOO_LARGE, or SQL_TIMEOUT (also
 * when no connection came free within the time limit).
 */
export async function runSandboxedSql(
  pool: SandboxPool,
  query: string,
  limits: SqlLimits = {},
): Promise<SqlResult> {
  const timeoutMs = limits.timeoutMs ?? DEFAULT_SQL_TIMEOUT_MS;
  const maxRows = limits.maxRows ?? DEFAULT_SQL_MAX_ROWS;
  const maxBytes = limits.maxBytes ?? DEFAULT_SQL_MAX_BYTES;
  const logger = limits.logger;
  const started = performance.now();
  checkText(query);
  const c = await pool.acquire(timeoutMs);
  if (c === null) {
    throw new CatalogError(
      "SQL_TIMEOUT",
      `Query not started: all ${pool.size} SQL connections stayed busy for the ${timeoutMs} ms limit (queries that ran past it are still being stopped); try again later`,
    );
  }
  let timedOut = false;
  const work = (async () => {
    try {
      logger?.debug("sql query running", { busy_connections: pool.busy });
      await checkQuery(c, query, limits.tables);
      return await execute(c, query, { maxRows, maxBytes, started });
    } catch (cause) {
      if (cause instanceof CatalogError) throw cause;
      if (timedOut || /interrupt/i.test(message(cause))) throw timeoutError(timeoutMs, cause);
      throw new CatalogError("SQL_FAILED", `Query failed: ${cleanDuckError(cause)}`, { cause });
    }
  })();
  // The connection goes back only once DuckDB has let go of it, however long after
  // the caller's answer that is.
  work.then(() => undefined, () => undefined).finally(() => {
    pool.release(c);
    if (timedOut) {
      logger?.info("an interrupted sql query has stopped; its connection is free again", {
        ms: Math.round(performance.now() - started),
      });
    }
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    const left = Math.max(0, timeoutMs - (performance.now() - started));
    timer = setTimeout(() => {
      timedOut = true;
      c.interrupt();
      logger?.warn("sql query ran past its time limit: interrupted", { timeout_ms: timeoutMs });
      reject(timeoutError(timeoutMs));
    }, left);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * An answer a query over datasets' rows left as a Parquet file (`SqlSession`, in its own
 * locked DuckDB), read back as `POST /sql` answers: the same columns and JSON values as
 * a query over the catalog tables, cut at `maxRows` rows or `maxBytes` bytes.
 *
 * @param path The answer's Parquet file.
 * @param limits Rows, bytes, and when the query started.
 * @returns The result.
 * @throws {CatalogError} SQL_TOO_LARGE when one row alone is over `maxBytes`.
 */
export async function resultFromParquet(
  path: string,
  limits: { maxRows?: number; maxBytes?: number; started: number },
): Promise<SqlResult> {
  const maxRows = limits.maxRows ?? DEFAULT_SQL_MAX_ROWS;
  const maxBytes = limits.maxBytes ?? DEFAULT_SQL_MAX_BYTES;
  const db = await openLockedDuckDB([path]);
  try {
    const result = await db.connection.stream(`SELECT * FROM read_parquet(${sqlString(path)})`);
    const columns = result.columnNames().map((name, i) => ({
      name,
      type: result.columnType(i).toString(),
    }));
    const { rows, truncated } = await readCapped(result, maxRows, maxBytes);
    return {
      columns,
      rows,
      row_count: rows.length,
      truncated,
      max_rows: maxRows,
      max_bytes: maxBytes,
      elapsed_ms: Math.round((performance.now() - limits.started) * 100) / 100,
    };
  } finally {
    db.close();
  }
}

async function execute(
  c: DuckDBConnection,
  query: string,
  limits: { maxRows: number; maxBytes: number; started: number },
): Promise<SqlResult> {
  await c.run("BEGIN TRANSACTION READ ONLY");
  try {
    const prepared = await c.prepare(query);
    if (prepared.statementType !== StatementType.SELECT) {
      throw refused("only a SELECT statement may run here");
    }
    const result = await prepared.stream();
    const columns = result.columnNames().map((name, i) => ({
      name,
      type: result.columnType(i).toString(),
    }));
    const { rows, truncated } = await readCapped(result, limits.maxRows, limits.maxBytes);
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
    await c.run("ROLLBACK").catch(() => undefined);
  }
}

/**
 * Reads a streaming result one chunk at a time, converting row by row, and stops at
 * `maxRows` rows or `maxBytes` bytes of the rows' JSON: what is held never grows
 * past the limits plus one row.
 */
async function readCapped(
  result: DuckDBResult,
  maxRows: number,
  maxBytes: number,
): Promise<{ rows: unknown[][]; truncated: boolean }> {
  const rows: unknown[][] = [];
  let bytes = 2; // the brackets of the rows array
  for (;;) {
    const chunk = await result.fetchChunk();
    if (chunk === null || chunk.rowCount === 0) return { rows, truncated: false };
    for (let i = 0; i < chunk.rowCount; i++) {
      if (rows.length >= maxRows) return { rows, truncated: true };
      const row = convertRow(chunk, i, maxBytes);
      const size = row === null ? Infinity : jsonBytes(row) + (rows.length > 0 ? 1 : 0);
      if (bytes + size > maxBytes) {
        if (rows.length === 0) {
          throw new CatalogError(
            "SQL_TOO_LARGE",
            `Query result too large: its first row alone is over the ${maxBytes}-byte limit of an answer (--sql-max-bytes); select fewer or shorter columns`,
          );
        }
        return { rows, truncated: true };
      }
      rows.push(row!);
      bytes += size;
    }
  }
}

/** One row as JSON values, or null when one of its strings alone is over `maxBytes`. */
function convertRow(chunk: DuckDBDataChunk, i: number, maxBytes: number): unknown[] | null {
  let row: unknown[];
  try {
    row = chunk.convertRowValues(i, toJsonValue);
  } catch (cause) {
    // A value longer than a JavaScript string can be.
    if (cause instanceof RangeError) return null;
    throw cause;
  }
  for (const v of row) if (typeof v === "string" && v.length > maxBytes) return null;
  return row;
}

function timeoutError(timeoutMs: number, cause?: unknown): CatalogError {
  return new CatalogError(
    "SQL_TIMEOUT",
    `Query stopped after the ${timeoutMs} ms limit (--sql-timeout-ms)`,
    cause === undefined ? {} : { cause },
  );
}
