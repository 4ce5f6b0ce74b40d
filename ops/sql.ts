/**
 * SQL over archives: `register(alias, archive)` names an archive (or a partitioned
 * dataset directory), `query(sql)` answers a `SELECT` over the registered names with
 * DuckDB, as an Arrow table.
 *
 * How a query runs: DuckDB parses it first (`json_serialize_sql`), which refuses
 * anything but one `SELECT`; the names it reads tell which registered archives it uses
 * and which of their columns (all of them for a `*`). Only those columns are thawed,
 * into tables of a fresh, locked-down DuckDB (no file access but its own temp files,
 * no extensions, configuration locked), and the query runs there; its answer is
 * written to a temp Parquet file and read back with our Parquet reader, so every
 * column comes back as exactly the type DuckDB answered.
 *
 * Pruning: when the query reads one archive once, from its top-level `FROM`, the
 * `AND`-ed conditions of its `WHERE` that compare a column with constants (`=`, `<`,
 * `BETWEEN`, `IN`, `IS NULL`) become a `--where` filter: chunks whose min/max cannot
 * match are not read, and rows that cannot match are not loaded. Only columns whose
 * order DuckDB and the statistics agree on take part (integers, decimals, dates,
 * timestamps without a time zone, times, durations, booleans): text compares by
 * different code units and floats by a different NaN rule, so those are never used
 * to skip anything.
 *
 * @module
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { join } from "node:path";
import * as arrow from "apache-arrow";
import type { Batch, Field, Schema } from "../format/column.ts";
import type { KeyRing } from "../format/key_provider.ts";
import { isRemote, openArchive } from "./_remote.ts";
import { openLockedDuckDB, sqlIdent, sqlString } from "../io/_duckdb.ts";
import { batchesToTable, batchFromArrow } from "../io/arrow_table.ts";
import { schemaFromArrow } from "../io/arrow_schema.ts";
import { writeArrow } from "../io/_write_arrow.ts";
import { openParquet } from "../io/parquet.ts";
import { OpsError } from "./errors.ts";
import type { WasmConnection } from "./_duckdb_wasm.ts";
import { QUERY_BACKENDS, type QueryBackend } from "./query_backends.ts";
import { isPartitionedDir, readManifest, readPartitioned } from "./partition_read.ts";
import { newCounters, scanArchive } from "./_scan.ts";
import { compileWhere, type WhereLiteral, type WhereNode, type WhereOp } from "./where.ts";

/** What an alias may look like: an SQL identifier that needs no quotes. */
const ALIAS = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Column types whose order DuckDB and the footer statistics agree on (see the module doc). */
const PRUNABLE = new Set(["int64", "decimal", "date", "timestamp", "time", "duration", "bool"]);

/** One registered archive. */
export interface RegisteredArchive {
  /** The name queries use. */
  readonly alias: string;
  /** The archive file or partitioned dataset directory. */
  readonly path: string;
  /** Its rows. */
  readonly rows: number;
  /** Its columns. */
  readonly columns: readonly string[];
}

/** What a query read of one registered archive. */
export interface QueryScan {
  /** The alias. */
  alias: string;
  /** Columns thawed. */
  columns: string[];
  /** The filter taken from the query's WHERE to skip chunks and rows, if any. */
  pruned_by: string | null;
  /** Chunks considered. */
  chunks_total: number;
  /** Chunks skipped by their min/max, unread. */
  chunks_pruned: number;
  /** Chunks read. */
  chunks_read: number;
  /** Payload bytes read. */
  bytes_read: number;
  /** Payload bytes of the archive. */
  payload_bytes: number;
  /** Rows loaded into the query engine. */
  rows_loaded: number;
}

/** The answer of a query, streamed. */
export interface QueryAnswer {
  /** Its columns. */
  schema: Schema;
  /** Its rows (read once). */
  batches: AsyncIterable<Batch>;
  /**
   * The answer as the Parquet file DuckDB wrote (removed once `use` returns); absent on
   * the `duckdb-wasm` backend, which writes no file.
   */
  parquetPath?: string;
}

export { QUERY_BACKENDS } from "./query_backends.ts";
export type { QueryBackend } from "./query_backends.ts";

let defaultBackend: QueryBackend = "duckdb";

/**
 * Sets the engine of sessions made without a `backend` option (and of `query`).
 *
 * @param backend `duckdb` or `duckdb-wasm`.
 * @throws {OpsError} BAD_OPTION for another name.
 */
export function setQueryBackend(backend: QueryBackend): void {
  if (!QUERY_BACKENDS.includes(backend)) {
    throw new OpsError(
      "BAD_OPTION",
      `Unknown query backend '${backend}': use ${QUERY_BACKENDS.join(" or ")}`,
    );
  }
  defaultBackend = backend;
}

/**
 * The engine sessions use when made without a `backend` option.
 *
 * @returns It.
 */
export function queryBackend(): QueryBackend {
  return defaultBackend;
}

/**
 * Finds the archive a table name the query reads stands for, when it is not
 * registered (the catalog's datasets): its path or URI, or null for none.
 */
export type TableResolver = (table: string) => Promise<string | null>;

/** Options of {@link SqlSession}. */
export interface SqlSessionOptions {
  /** Names the query reads that are not registered are looked up here. */
  resolve?: TableResolver;
  /** The engine (default: {@link queryBackend}). */
  backend?: QueryBackend;
}

/** Options of {@link SqlSession.execute}. */
export interface ExecuteOptions {
  /** Stops the query (thawing and DuckDB alike) when aborted. */
  signal?: AbortSignal;
}

/** Options of {@link SqlSession.register}. */
export interface RegisterAliasOptions {
  /** Keys of an encrypted archive. */
  keys?: KeyRing;
}

interface Entry extends RegisteredArchive {
  readonly schema: Schema;
  readonly partitioned: boolean;
  readonly keys?: KeyRing;
}

/**
 * Registered archives and the queries over them.
 *
 * @example Count rows by a column
 * ```ts ignore
 * import { SqlSession } from "./sql.ts";
 * const sql = new SqlSession();
 * await sql.register("flights", "data/flights.pf");
 * const table = await sql.query("SELECT origin, count(*) AS n FROM flights GROUP BY 1");
 * console.log(table.toArray());
 * ```
 */
export class SqlSession {
  readonly #entries = new Map<string, Entry>();
  readonly #resolve: TableResolver | undefined;
  readonly #backendOption: QueryBackend | undefined;

  /**
   * Creates a session with nothing registered.
   *
   * @param options A resolver for names the query reads that are not registered.
   */
  constructor(options: SqlSessionOptions = {}) {
    this.#resolve = options.resolve;
    if (options.backend !== undefined && !QUERY_BACKENDS.includes(options.backend)) {
      setQueryBackend(options.backend); // throws, naming the choices
    }
    this.#backendOption = options.backend;
  }

  /** The engine this session's queries run on. */
  get backend(): QueryBackend {
    return this.#backendOption ?? defaultBackend;
  }

  /**
   * Registers an archive (or a partitioned dataset directory) under an alias,
   * replacing what the alias named before. Reads its header and footer only.
   *
   * @param alias A name queries use: letters, digits and `_`, not starting with a digit.
   * @param path The archive: a path, a partitioned dataset's directory, or a URI (`s3://…`).
   * @param options Keys of an encrypted archive.
   * @returns What was registered.
   * @throws {OpsError} BAD_OPTION for a bad alias; {FormatError} for a file that is not an archive.
   */
  async register(
    alias: string,
    path: string,
    options: RegisterAliasOptions = {},
  ): Promise<RegisteredArchive> {
    if (!ALIAS.test(alias)) {
      throw new OpsError(
        "BAD_OPTION",
        `Cannot register '${alias}': an alias is letters, digits and _ (not starting with a digit), e.g. flights or trips_2024`,
      );
    }
    return await this.#register(alias, path, options);
  }

  /** Registers under any name a query can write (quoted when it must be). */
  async #register(
    alias: string,
    path: string,
    options: RegisterAliasOptions,
  ): Promise<RegisteredArchive> {
    let schema: Schema;
    let rows: number;
    const partitioned = !isRemote(path) && await isPartitionedDir(path);
    if (partitioned) {
      const { manifest, schema: s } = await readManifest(path);
      schema = s;
      rows = manifest.partitions.reduce((n, p) => n + p.rows, 0);
    } else {
      const reader = await openArchive(path, { keys: options.keys });
      try {
        schema = reader.index.schema;
        rows = reader.index.footer.rows;
      } finally {
        reader.close();
      }
    }
    const entry: Entry = {
      alias,
      path,
      rows,
      columns: schema.map((f) => f.name),
      schema,
      partitioned,
      ...(options.keys ? { keys: options.keys } : {}),
    };
    this.#entries.set(alias.toLowerCase(), entry);
    return { alias, path, rows, columns: entry.columns };
  }

  /**
   * Forgets an alias.
   *
   * @param alias The alias.
   * @returns Whether it was registered.
   */
  unregister(alias: string): boolean {
    return this.#entries.delete(alias.toLowerCase());
  }

  /**
   * The registered archives, by alias.
   *
   * @returns Them.
   */
  registered(): RegisteredArchive[] {
    return [...this.#entries.values()]
      .map(({ alias, path, rows, columns }) => ({ alias, path, rows, columns }))
      .sort((a, b) => a.alias.localeCompare(b.alias));
  }

  /**
   * Answers a query as an Arrow table (held in memory: for big answers use
   * {@link SqlSession.execute}).
   *
   * @param sql One `SELECT` over registered aliases.
   * @returns The answer.
   * @throws {OpsError} SQL_REFUSED for anything but one SELECT, SQL_FAILED for a query
   * DuckDB cannot answer (an unknown table or column, a type error), with its reason.
   */
  async query(sql: string): Promise<arrow.Table> {
    return (await this.execute(sql, async ({ schema, batches }) => {
      const all: Batch[] = [];
      for await (const b of batches) all.push(b);
      return batchesToTable(schema, all);
    })).value;
  }

  /**
   * Runs a query and hands its answer, streamed, to `use`.
   *
   * @param sql One `SELECT` over registered aliases.
   * @param use Consumes the answer (before the temp files go).
   * @returns What `use` returned, and what the query read of each archive.
   * @throws {OpsError} SQL_REFUSED, SQL_FAILED (see {@link SqlSession.query}).
   */
  async execute<T>(
    sql: string,
    use: (answer: QueryAnswer) => Promise<T>,
    options: ExecuteOptions = {},
  ): Promise<{ value: T; scans: QueryScan[] }> {
    if (this.backend === "duckdb-wasm") return await this.#executeWasm(sql, use, options);
    return await this.executeToParquet(sql, async (parquetPath) => {
      const answer = await openParquet(parquetPath);
      try {
        return await use({ schema: answer.schema, batches: answer.batches(), parquetPath });
      } finally {
        await answer.close();
      }
    }, options);
  }

  /**
   * The `duckdb-wasm` engine: the answer of {@link SqlSession.executeOnWasm} read back
   * as our batches.
   */
  async #executeWasm<T>(
    sql: string,
    use: (answer: QueryAnswer) => Promise<T>,
    options: ExecuteOptions,
  ): Promise<{ value: T; scans: QueryScan[] }> {
    return await this.executeOnWasm(sql, async (conn, text) => {
      let ipc: Uint8Array;
      try {
        ipc = conn.useUnsafe((bindings, id) => bindings.runQuery(id, text));
      } catch (cause) {
        throw sqlFailed(wasmError(cause), this.registered());
      }
      const answer = arrow.tableFromIPC(ipc);
      const schema = schemaFromArrow(answer.schema, {}, "the query's answer");
      const batches = (async function* () {
        for (const rb of answer.batches) yield batchFromArrow(rb, schema);
      })();
      return await use({ schema, batches });
    }, options);
  }

  /**
   * Loads what a query reads into the process's `duckdb-wasm` engine and hands the
   * engine and the query to `run`, which runs it and reads the answer its own way (the
   * catalog streams it into JSON rows). The registered tables — and the names the
   * resolver knows among the query's words — are made (empty) so DuckDB can name the
   * ones the query reads; those are filled with the columns the query's words name
   * (all of them for a `*`), thawed as usual, as Arrow IPC. Without the parser's tree
   * (its `json` extension is not in the wasm build), no `WHERE` pruning here: DuckDB
   * filters what was loaded. The tables are dropped when `run` is done.
   *
   * @param sql One `SELECT`.
   * @param run Runs the query text on the engine.
   * @param options A stop signal (checked between loading steps).
   * @returns What `run` returned, and what the query read of each archive.
   * @throws {OpsError} SQL_REFUSED, SQL_FAILED.
   */
  async executeOnWasm<T>(
    sql: string,
    run: (conn: WasmConnection, text: string) => Promise<T>,
    options: ExecuteOptions = {},
  ): Promise<{ value: T; scans: QueryScan[] }> {
    const text = checkOneSelect(sql);
    if (this.#resolve) {
      for (const word of identifiers(text, true)) {
        if (this.#entries.has(word.toLowerCase())) continue;
        options.signal?.throwIfAborted();
        const path = await this.#resolve(word);
        if (path !== null) await this.#register(word, path, {});
      }
    }
    const { withWasmDuckDB } = await import("./_duckdb_wasm.ts");
    const entries = [...this.#entries.values()];
    return await withWasmDuckDB(async (conn) => {
      const made: string[] = [];
      const table = (alias: string) => sqlIdent(alias);
      try {
        for (const e of entries) {
          conn.insertArrowFromIPCStream(await arrowStream(e.schema, []), {
            name: e.alias,
            create: true,
          });
          made.push(e.alias);
        }
        let names: string[];
        try {
          names = conn.getTableNames(text).map((n) => n.toLowerCase());
        } catch (cause) {
          throw sqlFailed(wasmError(cause), this.registered());
        }
        const words = identifiers(text);
        const star = /\*/.test(text.replace(/count\s*\(\s*\*\s*\)/gi, ""));
        const scans: QueryScan[] = [];
        for (const e of entries.filter((x) => names.includes(x.alias.toLowerCase()))) {
          options.signal?.throwIfAborted();
          conn.query(`DROP TABLE ${table(e.alias)}`);
          let columns = star
            ? e.schema.map((f) => f.name)
            : e.schema.filter((f) => words.has(f.name.toLowerCase())).map((f) => f.name);
          if (columns.length === 0) columns = [e.schema[0]!.name];
          let first = true;
          scans.push(
            await load({ entry: e, columns, where: null }, async (alias, schema, batches) => {
              let rows = 0;
              for await (const batch of batches) {
                conn.insertArrowFromIPCStream(await arrowStream(schema, [batch]), {
                  name: alias,
                  create: first,
                });
                first = false;
                rows += batch.length;
              }
              if (first) {
                conn.insertArrowFromIPCStream(await arrowStream(schema, []), {
                  name: alias,
                  create: true,
                });
              }
              return rows;
            }),
          );
        }
        options.signal?.throwIfAborted();
        return { value: await run(conn, text), scans };
      } finally {
        for (const alias of made) {
          try {
            conn.query(`DROP TABLE IF EXISTS ${table(alias)}`);
          } catch {
            // gone already
          }
        }
      }
    });
  }

  /**
   * Runs a query and hands `use` its answer as the Parquet file DuckDB wrote (any type
   * DuckDB answers with, read back by whoever reads the file; removed once `use` returns).
   *
   * @param sql One `SELECT` over registered (or resolved) names.
   * @param use Reads the answer's file.
   * @param options A stop signal.
   * @returns What `use` returned, and what the query read of each archive.
   * @throws {OpsError} SQL_REFUSED, SQL_FAILED (see {@link SqlSession.query}); the
   * signal's reason when it aborts.
   */
  async executeToParquet<T>(
    sql: string,
    use: (parquetPath: string) => Promise<T>,
    options: ExecuteOptions = {},
  ): Promise<{ value: T; scans: QueryScan[] }> {
    if (this.backend !== "duckdb") {
      throw new OpsError("BAD_OPTION", "An answer as a Parquet file needs the duckdb backend");
    }
    const { signal } = options;
    signal?.throwIfAborted();
    const text = sql.trim().replace(/;\s*$/, "");
    const dir = await Deno.makeTempDir({ prefix: "permafrost-sql-" });
    const answerPath = join(dir, "answer.parquet");
    const db = await openLockedDuckDB([answerPath], join(dir, "query.duckdb"), "1GB");
    const interrupt = () => db.connection.interrupt();
    signal?.addEventListener("abort", interrupt, { once: true });
    try {
      const conn = db.connection;
      const tree = await serialize(conn, text);
      if (this.#resolve) {
        for (const table of baseTables(tree)) {
          if (this.#entries.has(table.toLowerCase())) continue;
          const path = await this.#resolve(table);
          if (path !== null) await this.#register(table, path, {});
        }
      }
      const plan = analyze(tree, this.#entries);
      const { appendTable } = await import("../io/_write_parquet.ts");
      const scans: QueryScan[] = [];
      for (const use of plan) {
        signal?.throwIfAborted();
        scans.push(
          await load(use, (table, schema, batches) => appendTable(conn, table, schema, batches)),
        );
      }
      signal?.throwIfAborted();
      try {
        const exact = await exactAnswer(conn, text);
        await conn.run(
          `COPY (${exact}) TO ${sqlString(answerPath)} (FORMAT parquet, COMPRESSION uncompressed)`,
        );
      } catch (cause) {
        signal?.throwIfAborted();
        throw sqlFailed(cause, this.registered());
      }
      return { value: await use(answerPath), scans };
    } finally {
      signal?.removeEventListener("abort", interrupt);
      db.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
}

/**
 * The tables a query reads, as written (CTE names included: a resolver answers null
 * for them).
 *
 * @param sql One SELECT.
 * @returns The names, each once.
 * @throws {OpsError} SQL_REFUSED for anything but one SELECT; SQL_FAILED when it does not parse.
 */
export async function tablesOf(sql: string): Promise<string[]> {
  const db = await openLockedDuckDB([]);
  try {
    return baseTables(await serialize(db.connection, sql.trim().replace(/;\s*$/, "")));
  } finally {
    db.close();
  }
}

/** The base-table names of a syntax tree, each once. */
function baseTables(tree: SqlNode): string[] {
  const out = new Set<string>();
  eachNode(tree, (n) => {
    if (n.type === "BASE_TABLE" && typeof n.table_name === "string") out.add(n.table_name);
  });
  return [...out];
}

/** Calls `fn` on every node of a syntax tree, depth first. */
function eachNode(tree: unknown, fn: (n: SqlNode) => void): void {
  if (Array.isArray(tree)) {
    for (const x of tree) eachNode(x, fn);
    return;
  }
  if (tree === null || typeof tree !== "object") return;
  fn(tree as SqlNode);
  for (const x of Object.values(tree)) eachNode(x, fn);
}

/**
 * The query, wrapped so that its answer crosses Parquet exactly: a 128-bit integer
 * (`sum` of BIGINTs gives one) would be written as a DOUBLE, so it is cast to
 * `DECIMAL(38,0)`, which holds every value it can have (past that DuckDB refuses the
 * cast, never rounds).
 */
async function exactAnswer(conn: DuckDBConnection, text: string): Promise<string> {
  const reader = await conn.runAndReadAll(`DESCRIBE (\n${text}\n)`);
  const wide = reader.getRows()
    .filter((r) => r[1] === "HUGEINT" || r[1] === "UHUGEINT")
    .map((r) => String(r[0]));
  if (wide.length === 0) return `\n${text}\n`;
  const replace = wide.map((c) => `CAST(${sqlIdent(c)} AS DECIMAL(38,0)) AS ${sqlIdent(c)}`);
  return `SELECT * REPLACE (${replace.join(", ")}) FROM (\n${text}\n)`;
}

/** One registered archive a query reads, and how. */
interface Use {
  entry: Entry;
  columns: string[];
  where: WhereNode | null;
}

/** The query's syntax tree, or SQL_REFUSED / SQL_FAILED. */
async function serialize(conn: DuckDBConnection, sql: string): Promise<SqlNode> {
  let json: string;
  try {
    const reader = await conn.runAndReadAll(`SELECT json_serialize_sql(${sqlString(sql)})`);
    json = String(reader.getRows()[0]?.[0]);
  } catch (cause) {
    throw new OpsError("SQL_FAILED", `Cannot read the query: ${reason(cause)}`, { cause });
  }
  const tree = JSON.parse(json) as {
    error?: boolean;
    error_message?: string;
    statements?: SqlNode[];
  };
  if (tree.error) {
    const why = tree.error_message ?? "it does not parse";
    throw new OpsError(
      /only SELECT/i.test(why) ? "SQL_REFUSED" : "SQL_FAILED",
      /only SELECT/i.test(why)
        ? "Cannot run this statement: only one SELECT (or WITH … SELECT) is answered; nothing is written or changed"
        : `Cannot read the query: ${why}`,
    );
  }
  if (tree.statements?.length !== 1) {
    throw new OpsError(
      "SQL_REFUSED",
      `Cannot run ${tree.statements?.length ?? 0} statements: give one SELECT`,
    );
  }
  return tree.statements[0]!;
}

/** A node of DuckDB's serialized syntax tree. */
type SqlNode = { [key: string]: unknown };

/** Which registered archives the query reads, with the columns and the filter to read them with. */
function analyze(statement: SqlNode, entries: ReadonlyMap<string, Entry>): Use[] {
  const names = new Set<string>();
  let star = false;
  const tables = new Map<string, number>();
  eachNode(statement, (n) => {
    if (n.class === "COLUMN_REF" && Array.isArray(n.column_names)) {
      names.add(String(n.column_names.at(-1)).toLowerCase());
    } else if (n.class === "STAR") star = true;
    if (n.type === "BASE_TABLE" && typeof n.table_name === "string") {
      const t = n.table_name.toLowerCase();
      tables.set(t, (tables.get(t) ?? 0) + 1);
    }
  });
  const uses: Use[] = [];
  for (const [table, count] of tables) {
    const entry = entries.get(table);
    if (!entry) continue; // DuckDB says "does not exist", with our hint (sqlFailed)
    let columns = star
      ? entry.schema.map((f) => f.name)
      : entry.schema.filter((f) => names.has(f.name.toLowerCase())).map((f) => f.name);
    // `SELECT count(*) FROM t` reads no column; its rows still count: load the smallest.
    if (columns.length === 0) columns = [entry.schema[0]!.name];
    const where = count === 1 ? pruningFilter(statement, entry) : null;
    uses.push({ entry, columns, where });
  }
  return uses;
}

/**
 * The `AND`-ed `WHERE` conditions of a one-table query that may skip chunks and rows
 * of `entry`, as a `--where` tree (see the module doc for when), or null.
 */
function pruningFilter(statement: SqlNode, entry: Entry): WhereNode | null {
  const node = statement.node as SqlNode | undefined;
  if (node?.type !== "SELECT_NODE") return null;
  const ctes = (node.cte_map as { map?: unknown[] } | undefined)?.map ?? [];
  if (ctes.length > 0) return null;
  const from = node.from_table as SqlNode | undefined;
  if (
    from?.type !== "BASE_TABLE" ||
    String(from.table_name).toLowerCase() !== entry.alias.toLowerCase()
  ) {
    return null;
  }
  const names = new Set([entry.alias.toLowerCase(), String(from.alias ?? "").toLowerCase()]);
  const byName = new Map(entry.schema.map((f) => [f.name.toLowerCase(), f]));
  const column = (n: unknown): string | null => {
    const c = n as SqlNode | undefined;
    if (c?.class !== "COLUMN_REF" || !Array.isArray(c.column_names)) return null;
    const parts = c.column_names.map(String);
    if (parts.length > 2 || (parts.length === 2 && !names.has(parts[0]!.toLowerCase()))) {
      return null;
    }
    const field = byName.get(parts.at(-1)!.toLowerCase());
    if (!field || !PRUNABLE.has(field.type) || field.timezone !== undefined) return null;
    return field.name;
  };
  const literal = (n: unknown): WhereLiteral | null => {
    const c = n as SqlNode | undefined;
    if (c?.class === "CAST") {
      // `TIMESTAMP '2001-03-01'` and `DATE '…'`: text DuckDB casts; kept only where
      // it means what the column's own text means (`castsFit`).
      const to = (c.cast_type as { id?: unknown } | undefined)?.id;
      const inner = c.child as SqlNode | undefined;
      const v = inner?.class === "CONSTANT"
        ? inner.value as { is_null?: boolean; value?: unknown }
        : null;
      if (
        c.try_cast === false && (to === "TIMESTAMP" || to === "DATE") && v && !v.is_null &&
        typeof v.value === "string"
      ) {
        return { text: v.value, quoted: true, cast: to } as CastLiteral;
      }
      return null;
    }
    const v = c?.class === "CONSTANT" ? c.value as { is_null?: boolean; value?: unknown } : null;
    if (!v || v.is_null || v.value === undefined || v.value === null) return null;
    if (typeof v.value === "object") return null;
    return { text: String(v.value), quoted: typeof v.value === "string" };
  };
  const conjuncts: SqlNode[] = [];
  const flatten = (n: unknown): void => {
    const c = n as SqlNode | undefined;
    if (!c) return;
    if (c.type === "CONJUNCTION_AND" && Array.isArray(c.children)) {
      for (const x of c.children) flatten(x);
    } else conjuncts.push(c);
  };
  flatten(node.where_clause);
  const parts: WhereNode[] = [];
  for (const c of conjuncts) {
    const part = condition(c, column, literal);
    if (part !== null && castsFit(part, byName)) parts.push(part);
  }
  if (parts.length === 0) return null;
  const tree: WhereNode = parts.length === 1 ? parts[0]! : { kind: "and", args: parts };
  try {
    compileWhere(tree, entry.schema);
  } catch {
    return null; // a constant our reading of the column's type refuses: let DuckDB decide alone
  }
  return tree;
}

/** A literal DuckDB casts (`TIMESTAMP '…'`, `DATE '…'`). */
type CastLiteral = WhereLiteral & { cast?: "TIMESTAMP" | "DATE" };

/**
 * Whether every cast literal of a condition means, as the column's own text, what
 * DuckDB's cast means: `TIMESTAMP` against a microsecond timestamp column, `DATE`
 * against a date or a microsecond timestamp (midnight). Any other pairing is left to
 * DuckDB alone.
 */
function castsFit(node: WhereNode, byName: ReadonlyMap<string, Field>): boolean {
  const fits = (column: string, lit: CastLiteral): boolean => {
    if (lit.cast === undefined) return true;
    const f = byName.get(column.toLowerCase());
    const microTimestamp = f?.type === "timestamp" && f.unit === "us" && f.timezone === undefined;
    return lit.cast === "TIMESTAMP" ? microTimestamp : microTimestamp || f?.type === "date";
  };
  switch (node.kind) {
    case "cmp":
      return fits(node.column, node.value);
    case "in":
      return node.values.every((v) => fits(node.column, v));
    case "and":
    case "or":
      return node.args.every((a) => castsFit(a, byName));
    default:
      return true;
  }
}

const COMPARE: Readonly<Record<string, WhereOp>> = {
  COMPARE_EQUAL: "=",
  COMPARE_NOTEQUAL: "!=",
  COMPARE_LESSTHAN: "<",
  COMPARE_LESSTHANOREQUALTO: "<=",
  COMPARE_GREATERTHAN: ">",
  COMPARE_GREATERTHANOREQUALTO: ">=",
};

const FLIPPED: Readonly<Record<WhereOp, WhereOp>> = {
  "=": "=",
  "!=": "!=",
  "<": ">",
  "<=": ">=",
  ">": "<",
  ">=": "<=",
};

/** One condition as a `--where` node, when it is one the pruning understands. */
function condition(
  c: SqlNode,
  column: (n: unknown) => string | null,
  literal: (n: unknown) => WhereLiteral | null,
): WhereNode | null {
  const type = String(c.type);
  if (Object.hasOwn(COMPARE, type)) {
    const op = COMPARE[type]!;
    const lc = column(c.left);
    const rl = literal(c.right);
    if (lc !== null && rl !== null) return { kind: "cmp", column: lc, op, value: rl };
    const rc = column(c.right);
    const ll = literal(c.left);
    if (rc !== null && ll !== null) return { kind: "cmp", column: rc, op: FLIPPED[op], value: ll };
    return null;
  }
  if (type === "COMPARE_BETWEEN") {
    const col = column(c.input);
    const lo = literal(c.lower);
    const hi = literal(c.upper);
    if (col === null || lo === null || hi === null) return null;
    return {
      kind: "and",
      args: [
        { kind: "cmp", column: col, op: ">=", value: lo },
        { kind: "cmp", column: col, op: "<=", value: hi },
      ],
    };
  }
  if (type === "COMPARE_IN" && Array.isArray(c.children) && c.children.length > 1) {
    const col = column(c.children[0]);
    const values = c.children.slice(1).map(literal);
    if (col === null || values.some((v) => v === null)) return null;
    return { kind: "in", column: col, values: values as WhereLiteral[], negated: false };
  }
  if (
    (type === "OPERATOR_IS_NULL" || type === "OPERATOR_IS_NOT_NULL") &&
    Array.isArray(c.children)
  ) {
    const col = column(c.children[0]);
    if (col === null) return null;
    return { kind: "null", column: col, negated: type === "OPERATOR_IS_NOT_NULL" };
  }
  return null;
}

/** Thaws what a query reads of one archive into a table named after its alias. */
/** Puts rows into a table of the query engine; returns how many. */
type TableSink = (
  table: string,
  schema: Schema,
  batches: AsyncIterable<Batch>,
) => Promise<number>;

async function load(use: Use, sink: TableSink): Promise<QueryScan> {
  const { entry, columns, where } = use;
  const counters = { ...newCounters(), partitions_total: 0, partitions_read: 0 };
  const schema = columns.map((c) => entry.schema.find((f) => f.name === c)!);
  const options = {
    columns,
    ...(where ? { where } : {}),
    ...(entry.keys ? { keys: entry.keys } : {}),
  };
  let rows: number;
  if (entry.partitioned) {
    rows = await sink(entry.alias, schema, readPartitioned(entry.path, options, counters));
  } else {
    const reader = await openArchive(entry.path, { keys: entry.keys, requireKey: true });
    try {
      rows = await sink(entry.alias, schema, scanArchive(reader, options, counters));
    } finally {
      reader.close();
    }
  }
  return {
    alias: entry.alias,
    columns,
    pruned_by: where ? whereText(where) : null,
    chunks_total: counters.chunks_total,
    chunks_pruned: counters.chunks_pruned,
    chunks_read: counters.chunks_read,
    bytes_read: counters.bytes_read,
    payload_bytes: counters.payload_bytes,
    rows_loaded: rows,
  };
}

/** A `--where` tree as text, for the report. */
export function whereText(n: WhereNode): string {
  const lit = (l: WhereLiteral) => l.quoted ? `'${l.text.replaceAll("'", "''")}'` : l.text;
  switch (n.kind) {
    case "cmp":
      return `${sqlIdent(n.column)} ${n.op} ${lit(n.value)}`;
    case "in":
      return `${sqlIdent(n.column)} ${n.negated ? "not in" : "in"} (${
        n.values.map(lit).join(", ")
      })`;
    case "null":
      return `${sqlIdent(n.column)} is ${n.negated ? "not " : ""}null`;
    case "and":
    case "or":
      return n.args.map((
        a,
      ) => (a.kind === "or" || a.kind === "and" ? `(${whereText(a)})` : whereText(a)))
        .join(` ${n.kind} `);
    case "not":
      return `not (${whereText(n.arg)})`;
  }
}

function reason(cause: unknown): string {
  return (cause instanceof Error ? cause.message : String(cause)).split("\n")[0]!;
}

/** The error of a query DuckDB refused, with the registered names when a table is unknown. */
function sqlFailed(cause: unknown, registered: RegisteredArchive[]): OpsError {
  const why = reason(cause);
  if (/^Permission Error/i.test(why)) {
    return new OpsError(
      "SQL_REFUSED",
      "Cannot answer the query: it reads or writes files (read_csv, read_parquet, glob, …), which SQL over archives does not do; register each archive and query it by its alias",
      { cause },
    );
  }
  const hint = /Table with name .* does not exist/i.test(why)
    ? registered.length === 0
      ? "; no archive is registered (--register alias=archive.pf)"
      : `; registered: ${registered.map((r) => r.alias).join(", ")}`
    : "";
  return new OpsError("SQL_FAILED", `Cannot answer the query: ${why}${hint}`, { cause });
}

/**
 * The one statement a query may be on the `duckdb-wasm` engine, which has no parser tree:
 * it must start as a SELECT does and hold no second statement. (The engine itself is
 * locked down: no file, no setting, no extension, whatever the text.)
 *
 * @param sql The query.
 * @returns Its text, trimmed, without a final `;`.
 * @throws {OpsError} SQL_REFUSED.
 */
export function checkOneSelect(sql: string): string {
  const text = sql.trim().replace(/;\s*$/, "");
  const bare = text.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, " ")
    .replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"/g, "''").trim();
  if (!/^(select|with|from|values|\()/i.test(bare)) {
    throw new OpsError(
      "SQL_REFUSED",
      "Cannot run this statement: only one SELECT (or WITH … SELECT) is answered; nothing is written or changed",
    );
  }
  if (bare.includes(";")) {
    throw new OpsError("SQL_REFUSED", "Cannot run several statements: give one SELECT");
  }
  return text;
}

/**
 * The identifiers a query's text holds (quoted ones unquoted), lowercased unless
 * `keepCase`. Words inside string literals are not identifiers and are skipped.
 *
 * @param text The query.
 * @param keepCase Keep the case as written.
 * @returns The identifiers, each once.
 */
export function identifiers(text: string, keepCase = false): Set<string> {
  const out = new Set<string>();
  const bare = text.replace(/--[^\n]*|\/\*[\s\S]*?\*\/|'(?:[^']|'')*'/g, " ");
  for (const m of bare.matchAll(/"((?:[^"]|"")*)"|([A-Za-z_][A-Za-z0-9_$]*)/g)) {
    const word = m[1] !== undefined ? m[1].replaceAll('""', '"') : m[2]!;
    out.add(keepCase ? word : word.toLowerCase());
  }
  return out;
}

/** Rows as one Arrow IPC stream (the schema alone for none). */
async function arrowStream(schema: Schema, batches: Batch[]): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  await writeArrow(
    {
      write: (p) => {
        parts.push(p.slice());
        return Promise.resolve(p.length);
      },
    },
    schema,
    batches,
    true,
  );
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A duckdb-wasm error as DuckDB's own words (it may come as a JSON object). */
function wasmError(cause: unknown): Error {
  const text = cause instanceof Error ? cause.message : String(cause);
  try {
    const o = JSON.parse(text) as { exception_type?: string; exception_message?: string };
    if (o.exception_message) {
      return new Error(`${o.exception_type ?? ""} Error: ${o.exception_message}`.trim());
    }
  } catch {
    // already text
  }
  return cause instanceof Error ? cause : new Error(text);
}

/** The session behind {@link register}, {@link unregister}, {@link registered} and {@link query}. */
const DEFAULT_SESSION = new SqlSession();

/**
 * Registers an archive under an alias for {@link query} (the process-wide session;
 * make a {@link SqlSession} for one of your own).
 *
 * @param alias The name queries use.
 * @param path The archive or partitioned dataset directory.
 * @param options Keys of an encrypted archive.
 * @returns What was registered.
 */
export function register(
  alias: string,
  path: string,
  options: RegisterAliasOptions = {},
): Promise<RegisteredArchive> {
  return DEFAULT_SESSION.register(alias, path, options);
}

/**
 * Forgets an alias of the process-wide session.
 *
 * @param alias The alias.
 * @returns Whether it was registered.
 */
export function unregister(alias: string): boolean {
  return DEFAULT_SESSION.unregister(alias);
}

/**
 * The archives registered in the process-wide session.
 *
 * @returns Them, by alias.
 */
export function registered(): RegisteredArchive[] {
  return DEFAULT_SESSION.registered();
}

/**
 * Answers one SELECT over the process-wide session's aliases, as an Arrow table.
 *
 * @param sql The query.
 * @returns The answer.
 */
export function query(sql: string): Promise<arrow.Table> {
  return DEFAULT_SESSION.query(sql);
}
