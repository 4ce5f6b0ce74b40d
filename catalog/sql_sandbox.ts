/**
 * The `POST /sql` sandbox: runs one read-only SELECT over the catalog tables, with a
 * time limit and a row limit, and refuses everything else before DuckDB binds it.
 *
 * Layers, each enough on its own for the common attacks, together for the rest:
 * 1. **Parse, never bind, untrusted text first.** `json_serialize_sql` (DuckDB's
 *    own parser, no binding, so no file is touched) must yield exactly one
 *    statement, and it only serializes SELECTs: COPY, ATTACH, INSTALL, LOAD, SET,
 *    PRAGMA, CALL, EXPORT, DDL, DML and multi-statement input are refused here.
 * 2. **Walk the tree.** Every table reference must be a catalog table
 *    ({@link CATALOG_TABLES}, in schema `main`, no explicit database) or a CTE the
 *    query defines; table functions (`read_csv`, `query`, `glob`, `duckdb_*`, ...)
 *    and file scans (`FROM 'x.csv'`) are refused, and so are the scalar functions
 *    that read configuration or touch sequences ({@link REFUSED_FUNCTIONS}).
 * 3. **DuckDB's own checks.** The database was opened with
 *    `enable_external_access=false` and `lock_configuration=true` (see `_db.ts`), the
 *    prepared statement must report type SELECT, and it runs inside `BEGIN
 *    TRANSACTION READ ONLY`, rolled back afterwards.
 * 4. **Limits.** A timer interrupts the connection at `timeoutMs`; results are
 *    streamed and cut at `maxRows` (`truncated: true`).
 *
 * @module
 */
import { type DuckDBConnection, StatementType } from "@duckdb/node-api";
import { CatalogError } from "./errors.ts";
import { type Lane, message, toJsonValue } from "./_db.ts";
import type { SqlResult } from "./types.ts";
import { CATALOG_TABLES } from "./_schema.ts";

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

/** Longest query text accepted. */
export const MAX_QUERY_LENGTH = 100_000;

/** Limits of one query. */
export interface SqlLimits {
  /** Wall-time limit, after which the query is interrupted (default 5,000 ms). */
  timeoutMs?: number;
  /** Rows returned at most (default 10,000). */
  maxRows?: number;
  /** Tables the query may read (default {@link CATALOG_TABLES}). */
  tables?: readonly string[];
}

/**
 * Checks a query with DuckDB's parser and the tree walk, without binding it.
 *
 * @param connection A connection (only `json_serialize_sql` runs on it).
 * @param query The user's SQL.
 * @param tables Tables the query may read.
 * @throws {CatalogError} SQL_REFUSED naming what is not allowed; SQL_FAILED for a syntax error.
 */
export async function checkQuery(
  connection: DuckDBConnection,
  query: string,
  tables: readonly string[] = CATALOG_TABLES,
): Promise<void> {
  if (query.trim() === "") throw refused("the query is empty");
  if (query.length > MAX_QUERY_LENGTH) {
    throw refused(`the query is ${query.length} characters, the limit is ${MAX_QUERY_LENGTH}`);
  }
  if (query.includes("\0")) throw refused("the query contains a NUL character");
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
  const allowed = new Set(tables.map((t) => t.toLowerCase()));
  for (const cte of collectCteNames(tree.statements[0])) allowed.add(cte.toLowerCase());
  walk(tree.statements[0], allowed);
}

function collectCteNames(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) {
    for (const x of node) collectCteNames(x, out);
  } else if (node !== null && typeof node === "object") {
    const o = node as Record<string, unknown>;
    const map = (o.cte_map as { map?: { key?: unknown }[] } | undefined)?.map;
    if (Array.isArray(map)) { for (const e of map) if (typeof e.key === "string") out.push(e.key); }
    for (const v of Object.values(o)) collectCteNames(v, out);
  }
  return out;
}

function walk(node: unknown, allowed: Set<string>): void {
  if (Array.isArray(node)) {
    for (const x of node) walk(x, allowed);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const o = node as Record<string, unknown>;
  const type = o.type;
  // Table references are the nodes with an alias and a sample clause (TableRef's
  // serialized fields); query nodes, modifiers and ORDER BY items have neither.
  if (typeof type === "string" && !("class" in o) && "alias" in o && "sample" in o) {
    checkRef(type, o, allowed);
  }
  if (o.class === "FUNCTION" && typeof o.function_name === "string") {
    const fn = o.function_name.toLowerCase();
    if (REFUSED_FUNCTIONS.has(fn)) throw refused(`function ${fn}() is not allowed`);
  }
  for (const v of Object.values(o)) walk(v, allowed);
}

function checkRef(type: string, o: Record<string, unknown>, allowed: Set<string>): void {
  if (ALLOWED_REFS.has(type)) return;
  if (type === "BASE_TABLE") {
    const table = String(o.table_name ?? "");
    const schema = String(o.schema_name ?? "");
    const catalog = String(o.catalog_name ?? "");
    if (catalog !== "" || (schema !== "" && schema.toLowerCase() !== "main")) {
      const full = [catalog, schema, table].filter((x) => x !== "").join(".");
      throw refused(`table ${full} is not a catalog table (allowed: ${CATALOG_TABLES.join(", ")})`);
    }
    if (!allowed.has(table.toLowerCase())) {
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
 * Checks and runs one query in the sandbox.
 *
 * @param lane The sandbox connection's lane.
 * @param query The user's SQL.
 * @param limits Time and row limits.
 * @returns Columns, rows (JSON-safe) and whether the rows were cut.
 * @throws {CatalogError} SQL_REFUSED, SQL_FAILED or SQL_TIMEOUT.
 */
export function runSandboxedSql(
  lane: Lane,
  query: string,
  limits: SqlLimits = {},
): Promise<SqlResult> {
  const timeoutMs = limits.timeoutMs ?? 5_000;
  const maxRows = limits.maxRows ?? 10_000;
  return lane.run(async (c) => {
    const started = performance.now();
    await checkQuery(c, query, limits.tables);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      c.interrupt();
    }, timeoutMs);
    await c.run("BEGIN TRANSACTION READ ONLY");
    try {
      const prepared = await c.prepare(query);
      if (prepared.statementType !== StatementType.SELECT) {
        throw refused("only a SELECT statement may run here");
      }
      const reader = await prepared.streamAndReadUntil(maxRows + 1);
      const columns = reader.columnNames().map((name, i) => ({
        name,
        type: reader.columnType(i).toString(),
      }));
      let rows = reader.convertRows(toJsonValue) as unknown[][];
      const truncated = rows.length > maxRows;
      if (truncated) rows = rows.slice(0, maxRows);
      return {
        columns,
        rows,
        row_count: rows.length,
        truncated,
        max_rows: maxRows,
        elapsed_ms: Math.round((performance.now() - started) * 100) / 100,
      };
    } catch (cause) {
      if (cause instanceof CatalogError) throw cause;
      if (timedOut || /interrupt/i.test(message(cause))) {
        throw new CatalogError("SQL_TIMEOUT", `Query stopped after the ${timeoutMs} ms limit`, {
          cause,
        });
      }
      throw new CatalogError("SQL_FAILED", `Query failed: ${cleanDuckError(cause)}`, { cause });
    } finally {
      clearTimeout(timer);
      await c.run("ROLLBACK").catch(() => undefined);
    }
  });
}

function refused(why: string): CatalogError {
  return new CatalogError("SQL_REFUSED", `Query refused: ${why}`);
}

/** DuckDB's message without the caret diagram, on one line. */
function cleanDuckError(err: unknown): string {
  return message(err).split("\n\nLINE")[0]!.replace(/\s+/g, " ").trim();
}
