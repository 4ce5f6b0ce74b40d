/**
 * The DuckDB-file store of a catalog (`store.ts`): the tables of `_tables.ts` in one
 * DuckDB file opened through the native addon and locked down (`_db.ts`). Reads run on a
 * pool of connections, writes one at a time on one connection, each in a transaction,
 * user SQL in the sandbox (`sql_sandbox.ts`). Durability is DuckDB's: a committed
 * registration is in the write-ahead log and survives a crash (SIGKILL included).
 *
 * @module
 */
import { type DuckDBConnection, LIST, listValue, VARCHAR } from "@duckdb/node-api";
import { PermafrostError } from "../internal/errors.ts";
import type { QueryBackend } from "../ops/query_backends.ts";
import { CatalogError } from "./errors.ts";
import {
  type CatalogDb,
  type CatalogDbOptions,
  message,
  openCatalogDb,
  toJsonValue,
} from "./_db.ts";
import { CATALOG_TABLES, prepareTables } from "./_tables.ts";
import { type ColumnRow, decideVersion, type ExistingVersion, versionRows } from "./_record.ts";
import { notFound } from "./_queries.ts";
import { runSandboxedSql } from "./sql_sandbox.ts";
import { tablesOf } from "../ops/sql.ts";
import type { CatalogStore, RecordRequest, Rows, SqlParam, StoreSqlLimits } from "./store.ts";
import type { SqlResult } from "./types.ts";
import type { Logger } from "../internal/log.ts";

/** A catalog's records in a DuckDB file. */
export class DuckDbStore implements CatalogStore {
  readonly location: string;
  readonly engine: QueryBackend = "duckdb";
  readonly #options: CatalogDbOptions;
  readonly #logger: Logger | undefined;
  #db: CatalogDb | undefined;

  /**
   * @param path The database file (created if missing).
   * @param options Pool sizes and memory limit.
   * @param logger For slow and interrupted user queries.
   */
  constructor(path: string, options: CatalogDbOptions = {}, logger?: Logger) {
    this.location = path;
    this.#options = options;
    this.#logger = logger;
  }

  async open(): Promise<void> {
    const db = await openCatalogDb(this.location, this.#options);
    try {
      await db.writer.run((c) => prepareTables(c, db.path));
    } catch (err) {
      await db.close();
      throw err instanceof CatalogError ? err : new CatalogError(
        "DB_FAILED",
        `Cannot prepare catalog database '${db.path}': ${message(err)}`,
        { cause: err },
      );
    }
    this.#db = db;
  }

  #open(): CatalogDb {
    if (!this.#db) throw new CatalogError("CLOSED", "The catalog is closed");
    return this.#db;
  }

  async read(sql: string, params: readonly SqlParam[] = []): Promise<Rows> {
    // Prepared statements are not cached: re-running a cached one in
    // @duckdb/node-api 1.5.5-r.5 returned corrupt short strings (seen in tests).
    return await this.#open().readers.run(async (c) => {
      const reader = await c.runAndReadAll(sql, [...params]);
      return reader.convertRowObjects(toJsonValue) as Rows;
    });
  }

  async record(
    request: RecordRequest,
    written: () => void,
  ): Promise<{ created: boolean; version: string }> {
    const { index, name } = request;
    return await this.#open().writer.run(async (c) => {
      const existing = (await c.runAndReadAll(
        "SELECT version, header_sha256, payload_sha256, path FROM datasets WHERE name = $1 ORDER BY seq",
        [name],
      )).getRowObjectsJS() as unknown as ExistingVersion[];
      const decided = decideVersion(existing, index, name, request.requested);
      if (!decided.created) return decided;
      const rows = versionRows(index, { ...request.entry, name, version: decided.version });
      await transaction(c, `Cannot record dataset '${name}'`, async () => {
        const d = rows.dataset;
        await c.run(
          `INSERT INTO datasets VALUES ($1, $2, nextval('datasets_seq'), $3, $4, $5,
            from_json($6, '["VARCHAR"]'), $7::JSON, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
            from_json($19, '["VARCHAR"]'), $20, $21::JSON, $22::JSON, $23, $24, $25::TIMESTAMP)`,
          [
            d.name,
            d.version,
            d.path,
            d.rows,
            d.columns,
            JSON.stringify(d.column_names),
            d.schema,
            d.codec,
            d.auto_reason,
            d.chunk_rows,
            d.chunks,
            d.file_bytes,
            d.stored_bytes,
            d.raw_bytes,
            d.format_version,
            d.header_sha256,
            d.payload_sha256,
            d.primary_key,
            JSON.stringify(d.lossy_columns),
            d.encrypted,
            d.partition,
            d.metadata,
            d.description,
            d.storage_class,
            d.registered_at,
          ],
        );
        const appender = await c.createAppender("chunks");
        try {
          for (const r of rows.chunks) {
            appender.appendVarchar(r.dataset);
            appender.appendVarchar(r.version);
            appender.appendInteger(r.chunk);
            appender.appendBigInt(BigInt(r.row_start));
            appender.appendBigInt(BigInt(r.row_end));
            appender.appendBigInt(BigInt(r.byte_offset));
            appender.appendBigInt(BigInt(r.byte_length));
            appender.appendBigInt(BigInt(r.raw_bytes));
            appender.appendVarchar(r.sha256);
            appender.appendVarchar(r.stats);
            appender.endRow();
          }
          appender.flushSync();
        } finally {
          appender.closeSync();
        }
        await appendColumns(c, rows.columns);
      });
      written();
      return decided;
    });
  }

  async remove(name: string, version: string | undefined, written: () => void): Promise<string[]> {
    return await this.#open().writer.run(async (c) => {
      const params = version === undefined ? [name] : [name, version];
      const cond = version === undefined ? "name = $1" : "name = $1 AND version = $2";
      const found =
        (await c.runAndReadAll(`SELECT version FROM datasets WHERE ${cond} ORDER BY seq`, params))
          .getRowsJS().map((r) => String(r[0]));
      if (found.length === 0) throw notFound(name, version);
      await transaction(c, `Cannot remove dataset '${name}'`, async () => {
        const byDataset = cond.replace("name", "dataset");
        await c.run(`DELETE FROM chunks WHERE ${byDataset}`, params);
        await c.run(`DELETE FROM dataset_columns WHERE ${byDataset}`, params);
        await c.run(`DELETE FROM datasets WHERE ${cond}`, params);
      });
      written();
      return found;
    });
  }

  async addColumns(rows: ColumnRow[]): Promise<void> {
    const first = rows[0];
    if (!first) return;
    await this.#open().writer.run(async (c) => {
      const found = await c.runAndReadAll(
        "SELECT count(*) FROM dataset_columns WHERE dataset = $1 AND version = $2",
        [first.dataset, first.version],
      );
      if (Number(found.getRowsJS()[0]![0]) > 0) return;
      await appendColumns(c, rows);
    });
  }

  async sql(query: string, limits: StoreSqlLimits): Promise<SqlResult> {
    return await runSandboxedSql(this.#open().sandbox, query, {
      ...limits,
      tables: CATALOG_TABLES,
      logger: this.#logger,
    });
  }

  async tablesOf(query: string): Promise<string[]> {
    return await tablesOf(query).catch(() => [] as string[]);
  }

  sync(): Promise<boolean> {
    return Promise.resolve(false);
  }

  async close(): Promise<void> {
    const db = this.#db;
    this.#db = undefined;
    await db?.close();
  }
}

/** Runs `fn` in a transaction: committed, or rolled back and a DB_FAILED naming `what`. */
async function transaction(
  c: DuckDBConnection,
  what: string,
  fn: () => Promise<void>,
): Promise<void> {
  await c.run("BEGIN TRANSACTION");
  try {
    await fn();
    await c.run("COMMIT");
  } catch (err) {
    await c.run("ROLLBACK").catch(() => undefined);
    throw err instanceof PermafrostError
      ? err
      : new CatalogError("DB_FAILED", `${what}: ${message(err)}`, { cause: err });
  }
}

async function appendColumns(c: DuckDBConnection, rows: ColumnRow[]): Promise<void> {
  const appender = await c.createAppender("dataset_columns");
  try {
    for (const r of rows) {
      appender.appendVarchar(r.dataset);
      appender.appendVarchar(r.version);
      appender.appendInteger(r.position);
      appender.appendVarchar(r.name);
      appender.appendVarchar(r.type);
      appender.appendList(listValue([...r.predictors]), LIST(VARCHAR));
      appender.appendBigInt(BigInt(r.stored_bytes));
      appender.appendBigInt(BigInt(r.raw_bytes));
      appender.appendBigInt(BigInt(r.null_count));
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}
