/**
 * Where a catalog keeps its records: the one interface `Catalog` writes and reads
 * through, so the same catalog logic (versions, the record cache, registration,
 * integrity, the REST app) runs on either store:
 *
 * - `duckdb` (`_duckdb_store.ts`): a DuckDB file through the native addon — the
 *   catalog server's store, durable by DuckDB's write-ahead log.
 * - `kv` (`kv_store.ts`): records in Deno KV, queried in an in-memory duckdb-wasm
 *   mirror of the same tables — for hosts with neither native code nor a disk.
 *
 * Both answer the same SQL (`_queries.ts`, `search.ts`, `cost.ts`) over the same
 * tables, so a read is written once. Rows come back as JSON values (big integers as
 * numbers when safe, else text; timestamps as text).
 *
 * @module
 */
import type { QueryBackend } from "../ops/query_backends.ts";
import type { ArchiveIndex } from "./backend.ts";
import type { ColumnRow, VersionEntry } from "./_record.ts";
import type { SqlResult } from "./types.ts";

/** A query parameter. */
export type SqlParam = string | number | boolean | null;

/** Rows of a read query, as JSON values by column name. */
export type Rows = Record<string, unknown>[];

/** Limits of {@link CatalogStore.sql}. */
export interface StoreSqlLimits {
  /** Time limit (ms). */
  timeoutMs?: number;
  /** Most rows answered. */
  maxRows?: number;
  /** Most bytes of the rows' JSON answered. */
  maxBytes?: number;
}

/** What a registration asks of the store, decided inside its write lock. */
export interface RecordRequest {
  /** The archive. */
  index: ArchiveIndex;
  /** Dataset name. */
  name: string;
  /** The version asked for, if any. */
  requested: string | undefined;
  /** Everything recorded but the version (decided by the store, see `decideVersion`). */
  entry: Omit<VersionEntry, "version" | "name">;
}

/** A catalog's records. */
export interface CatalogStore {
  /** Where the records are, for messages and logs. */
  readonly location: string;
  /** The engine its SQL runs on. */
  readonly engine: QueryBackend;
  /**
   * Opens (creating when new) and checks the store.
   *
   * @throws {CatalogError} DB_LOCKED, DB_FAILED.
   */
  open(): Promise<void>;
  /**
   * Runs one read query (`$1`, `$2` … parameters).
   *
   * @param sql The query.
   * @param params Its parameters.
   * @returns The rows.
   */
  read(sql: string, params?: readonly SqlParam[]): Promise<Rows>;
  /**
   * Records a version unless `decideVersion` over the name's versions says there is
   * nothing to do; one write at a time, all of it or nothing.
   *
   * @param request The archive, name, version asked for and fields.
   * @param written Called once the write is committed (before the lock is let go).
   * @returns The version, and whether it was recorded.
   * @throws {CatalogError} CONFLICT; DB_FAILED.
   */
  record(
    request: RecordRequest,
    written: () => void,
  ): Promise<{ created: boolean; version: string }>;
  /**
   * Removes every version of a name, or one.
   *
   * @param name Dataset name.
   * @param version Only this version.
   * @param written Called once the removal is committed.
   * @returns The versions removed, oldest first.
   * @throws {CatalogError} NOT_FOUND; DB_FAILED.
   */
  remove(name: string, version: string | undefined, written: () => void): Promise<string[]>;
  /**
   * Records a version's columns when it has none yet (versions registered before 1.4).
   *
   * @param rows Its `dataset_columns` rows.
   */
  addColumns(rows: ColumnRow[]): Promise<void>;
  /**
   * Runs one user SELECT over the catalog tables, sandboxed, with limits.
   *
   * @param query The SQL.
   * @param limits Time, rows, bytes.
   * @returns Columns and rows.
   * @throws {CatalogError} SQL_REFUSED, SQL_FAILED, SQL_TOO_LARGE, SQL_TIMEOUT.
   */
  sql(query: string, limits: StoreSqlLimits): Promise<SqlResult>;
  /**
   * The tables a user query names, as written, for telling a query over the catalog's
   * tables from one over datasets' rows (`_access.ts`): DuckDB's parser on the native
   * engine; on the wasm engine (no parser extension) the catalog tables when the query
   * binds to the store's tables, else the query's other words (the caller keeps those
   * that are datasets). Empty when the query does not parse.
   *
   * @param query The SQL.
   * @returns The names.
   */
  tablesOf(query: string): Promise<string[]>;
  /**
   * Catches up with writes made by another process sharing the store (a KV store
   * served by several isolates); the DuckDB store has one owner and never needs to.
   *
   * @returns Whether anything changed (the caller drops what it cached).
   */
  sync(): Promise<boolean>;
  /** Closes the store (idempotent). */
  close(): Promise<void>;
}
