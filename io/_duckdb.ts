/**
 * The one place `io/` opens DuckDB, locked down before any user path reaches SQL:
 * `allowed_paths` lists exactly the files the caller named (and an in-memory instance
 * spills nowhere unless its caller names a spill directory of its own, since DuckDB
 * always lets an instance reach its temp directory), then
 * `enable_external_access=false` (no other file, no network, no extension install),
 * `autoinstall_known_extensions=false`, `autoload_known_extensions=false` and
 * `lock_configuration=true` (so no later statement can undo any of it). DuckDB 1.5
 * refuses these as `DuckDBInstance.create` options, so they run as `SET` statements
 * on the fresh instance, before anything else.
 *
 * User paths go into SQL as prepared parameters where DuckDB accepts them
 * (`read_parquet($1)`) and otherwise through {@link sqlString}.
 *
 * @module
 */
import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { resolve } from "node:path";

/** Parquet key-value metadata key under which our writer records the exact schema. */
export const PARQUET_SCHEMA_KEY = "permafrost_schema";

/** A locked-down DuckDB instance with one connection. */
export interface LockedDuckDB {
  /** The connection to run statements on. */
  readonly connection: DuckDBConnection;
  /** Disconnects and closes the instance (idempotent). */
  close(): void;
}

/**
 * Quotes a string as a SQL literal (doubles single quotes).
 *
 * @param s Any string.
 * @returns `'s'` with `'` doubled.
 */
export function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/**
 * Quotes a SQL identifier (doubles double quotes).
 *
 * @param s A column name.
 * @returns `"s"` with `"` doubled.
 */
export function sqlIdent(s: string): string {
  return `"${s.replaceAll('"', '""')}"`;
}

/**
 * Creates an instance, not yet locked: give it to {@link openLockedDuckDB} before
 * anything else runs on it.
 *
 * @param database Database file to open, `:memory:` by default.
 * @returns The instance.
 */
export async function createDuckDB(database = ":memory:"): Promise<DuckDBInstance> {
  // Loaded on first use: the native addon needs --allow-ffi, which a process that never
  // opens DuckDB (the hosted catalog) does not have.
  const { DuckDBInstance } = await import("@duckdb/node-api");
  return await DuckDBInstance.create(database);
}

/**
 * Opens an instance (in memory, or on `database` for spill-to-disk work) whose only
 * reachable files are `paths`.
 *
 * @param paths Files DuckDB may read or write (made absolute).
 * @param database Database file to open, `:memory:` by default.
 * @param memoryLimit DuckDB `memory_limit` (e.g. `1GB`), else DuckDB's default (80% of RAM).
 * @param settings More DuckDB settings (names from our code, never a user's), set
 * after the in-memory defaults (so `temp_directory` names a spill directory of the
 * caller's, whose files DuckDB then reaches, and `threads` undoes the one thread) and
 * before the configuration is locked.
 * @param created An instance of `database` the caller made ahead with
 * {@link createDuckDB}, untouched since (the Parquet writer's Worker makes it while
 * it waits for its output path); it is locked here and closed by `close()`.
 * @returns The locked instance.
 */
export async function openLockedDuckDB(
  paths: readonly string[],
  database = ":memory:",
  memoryLimit?: string,
  settings: Readonly<Record<string, string>> = {},
  created?: DuckDBInstance,
): Promise<LockedDuckDB> {
  const instance = created ?? await createDuckDB(database);
  let connection: DuckDBConnection | undefined;
  try {
    connection = await instance.connect();
    const list = paths.map((p) => sqlString(resolve(p))).join(", ");
    // DuckDB also lets a locked instance reach its temp directory, which for an
    // in-memory instance defaults to `.tmp` under the working directory: turn spilling
    // off there (an on-disk database spills beside its own file, `<db>.tmp`).
    if (database === ":memory:") await connection.run("SET temp_directory = ''");
    // Sources and outputs stream one file in order: one DuckDB thread keeps the
    // cores for the block encoders (more threads only add scheduling overhead here).
    if (database === ":memory:") await connection.run("SET threads = 1");
    if (memoryLimit !== undefined) {
      await connection.run(`SET memory_limit = ${sqlString(memoryLimit)}`);
    }
    for (const [name, value] of Object.entries(settings)) {
      await connection.run(`SET ${sqlIdent(name)} = ${sqlString(value)}`);
    }
    await connection.run(`SET allowed_paths = [${list}]`);
    await connection.run("SET enable_external_access = false");
    await connection.run("SET autoinstall_known_extensions = false");
    await connection.run("SET autoload_known_extensions = false");
    await connection.run("SET lock_configuration = true");
  } catch (err) {
    connection?.closeSync();
    instance.closeSync();
    throw err;
  }
  const conn = connection;
  let open = true;
  return {
    connection: conn,
    close() {
      if (!open) return;
      open = false;
      conn.closeSync();
      instance.closeSync();
    },
  };
}
