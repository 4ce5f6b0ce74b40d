/**
 * `Catalog`: an index of archives. Registration reads an archive's header and footer
 * only and records one `datasets` row per version plus one `chunks` row per chunk (see
 * `_tables.ts`); everything else is a query. The records live in a store (`store.ts`):
 * a DuckDB file (`Catalog.open(path)`), or Deno KV with an in-memory duckdb-wasm mirror
 * for hosts with neither native code nor a disk (`Catalog.openStore(kvStore(...))`).
 *
 * Versions: registering a name again with other content adds a version and keeps
 * the history. Without an explicit version the catalog labels it `v1`, `v2`, ...;
 * registering the same archive again (same header and payload hashes) changes
 * nothing and answers `created: false`. An explicit version that exists with other
 * content is a `CONFLICT`.
 *
 * Reads of one dataset (`get`, so `GET /datasets/{name}`) are served from memory
 * once read: the catalog is the only writer of its file (see `_db.ts`), so it knows
 * when a record changes, and drops a name's entries after each committed write to
 * it. A read that raced a write is not cached. A store shared with other processes
 * (KV) says when another wrote (`sync`), and the whole cache is dropped.
 *
 * Concurrency: reads run on a pool of connections, user SQL (`sql`) on connections
 * of its own, one per running query; writes go one at a time through one
 * connection, each registration in one transaction, so concurrent registrations
 * never interleave or get lost. The archive itself is read before
 * the write lock is taken. Durability is DuckDB's: a committed registration is in
 * the write-ahead log and survives a crash (SIGKILL included).
 *
 * `thaw` is a dependency, not an import: `mod.ts` (which re-exports `Catalog`) owns
 * `thaw`, and importing it here would be a cycle. Pass `{ thaw }` to use
 * `Catalog.thaw`.
 *
 * @module
 */
import { resolve } from "node:path";
import { createLogger, type Logger } from "../internal/log.ts";
import type { RowRange } from "../format/reader.ts";
import { type ArchiveBackend, type ArchiveIndex, storageBackend } from "./backend.ts";
import { CatalogError } from "./errors.ts";
import {
  type CatalogOptions,
  checkName,
  type ChunkOptions,
  type ListOptions,
  NAME_PATTERN,
  nameFromPath,
  paging,
  type RegisterOptions,
  resolveUnderRoot,
} from "./options.ts";
import type { CatalogStore, Rows, SqlParam } from "./store.ts";
import {
  catalogStats,
  costReport,
  DEFAULT_PARQUET_RATIO,
  DEFAULT_PRICES,
  priceClassOf,
} from "./cost.ts";
import { checkIntegrity } from "./integrity.ts";
import { columnRows } from "./_record.ts";
import { versionColumns } from "./columns.ts";
import { listArchives, registerEach } from "./_register_dir.ts";
import { searchDatasets } from "./search.ts";
import { CACHE_NAMES, RecordCache } from "./_cache.ts";
import { DATASET_COLUMNS, datasetFromRow } from "./_rows.ts";
import { listChunks, listDatasets, listVersions, notFound } from "./_queries.ts";
import { unreadable } from "./_read_errors.ts";
import type {
  CatalogStats,
  ChunkRecord,
  ColumnsReport,
  CostReport,
  DatasetDetail,
  DatasetRecord,
  IntegrityReport,
  Page,
  RegisterDirResult,
  RegisterResult,
  SearchResult,
  SqlResult,
} from "./types.ts";

const SILENT: Logger = createLogger({ component: "catalog", level: "error", sink: () => {} });

/**
 * The catalog.
 *
 * @example Register an archive described in memory, then query it
 * ```ts ignore
 * import { Catalog } from "./catalog.ts";
 * const catalog = await Catalog.open("catalog.db");
 * await catalog.register("data/flights.pf", { name: "flights", version: "2001-h1" });
 * console.log(await catalog.get("flights"));
 * await catalog.close();
 * ```
 */
export class Catalog {
  /** Where the records are: the database file as given, or the store's location. */
  readonly dbPath: string;
  /** The store given, or undefined for a DuckDB file (made at open: see #open). */
  #store: CatalogStore | undefined;
  readonly #options: CatalogOptions;
  readonly #backend: ArchiveBackend;
  readonly #logger: Logger;
  readonly #prices: Readonly<Record<string, number>>;
  readonly #root: string | undefined;
  #opening: Promise<CatalogStore> | undefined;
  #closed = false;
  /** Records `get` has read (`_cache.ts`). */
  readonly #cache = new RecordCache();

  /**
   * Creates a catalog on a database file (or another store). Nothing is opened until
   * the first call (or {@link Catalog.ready}).
   *
   * @param dbPath DuckDB file (created if missing), or a store (`store.ts`).
   * @param options Backend, thaw, logger, clock, root, prices, limits.
   */
  constructor(dbPath: string | CatalogStore, options: CatalogOptions = {}) {
    this.#logger = options.logger ?? SILENT;
    this.#store = typeof dbPath === "string" ? undefined : dbPath;
    this.dbPath = typeof dbPath === "string" ? dbPath : dbPath.location;
    this.#options = options;
    this.#backend = options.backend ?? storageBackend({
      cacheBytes: options.cacheBytes,
      cacheTtlS: options.cacheTtlS,
    });
    this.#prices = Object.freeze({ ...(options.prices ?? DEFAULT_PRICES) });
    this.#root = options.root ? resolve(options.root) : undefined;
    for (const [cls, price] of Object.entries(this.#prices)) {
      if (!NAME_PATTERN.test(cls) || !(price >= 0)) {
        throw new CatalogError(
          "INVALID_ARGUMENT",
          `Invalid price '${price}' for storage class '${cls}'`,
        );
      }
    }
  }

  /**
   * Creates a catalog and opens its database.
   *
   * @param dbPath DuckDB file, or a store (`store.ts`).
   * @param options As the constructor's.
   * @returns The open catalog.
   * @throws {CatalogError} DB_LOCKED when another process or catalog owns the file.
   */
  static async open(
    dbPath: string | CatalogStore,
    options: CatalogOptions = {},
  ): Promise<Catalog> {
    const catalog = new Catalog(dbPath, options);
    await catalog.ready();
    return catalog;
  }

  /**
   * Opens the database if it is not open yet.
   *
   * @throws {CatalogError} DB_LOCKED, DB_FAILED, CLOSED.
   */
  async ready(): Promise<void> {
    await this.#db();
  }

  /** The configured storage prices. */
  get prices(): Readonly<Record<string, number>> {
    return this.#prices;
  }

  /** Checkpoints and closes the database (idempotent). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#cache.clear();
    const opening = this.#opening;
    if (!opening) return;
    const store = await opening.catch(() => undefined);
    await store?.close();
  }

  /** The engine `sql` runs on: `duckdb` (a DuckDB file) or `duckdb-wasm` (the KV store). */
  get engine(): CatalogStore["engine"] {
    return this.#store?.engine ?? "duckdb";
  }

  #db(): Promise<CatalogStore> {
    if (this.#closed) return Promise.reject(new CatalogError("CLOSED", "The catalog is closed"));
    this.#opening ??= this.#open();
    return this.#opening;
  }

  async #open(): Promise<CatalogStore> {
    // The DuckDB store is loaded only when used: its native addon needs --allow-ffi,
    // which a catalog on the KV store (hosted without native code) does not have.
    this.#store ??= new (await import("./_duckdb_store.ts")).DuckDbStore(this.dbPath, {
      readConnections: this.#options.readConnections,
      memoryLimit: this.#options.memoryLimit,
      sqlConnections: this.#options.sql?.connections,
    }, this.#logger);
    const store = this.#store;
    try {
      await store.open();
    } catch (err) {
      this.#opening = undefined;
      throw err;
    }
    // Warm the record cache with the latest version of each name (one query), so
    // reads after a restart do not each wait for the store.
    try {
      const rows = await store.read(
        `SELECT ${DATASET_COLUMNS}, count(*) OVER (PARTITION BY name) AS n_versions FROM datasets
         QUALIFY row_number() OVER (PARTITION BY name ORDER BY seq DESC) = 1 LIMIT ${CACHE_NAMES}`,
      );
      const generation = this.#cache.generation;
      for (const row of rows) {
        const detail: DatasetDetail = { ...datasetFromRow(row), versions: Number(row.n_versions) };
        this.#cache.keep(detail.name, "", detail, generation);
      }
    } catch (err) {
      this.#logger.warn("cannot warm the dataset cache", { err });
    }
    this.#logger.info("catalog open", {
      store: store.location,
      engine: store.engine,
      datasets: this.#cache.size,
    });
    return store;
  }

  // -------------------------------------------------------------------------
  // queries

  async #read(sql: string, params: SqlParam[] = []): Promise<Rows> {
    const store = await this.#synced();
    return await store.read(sql, params);
  }

  /** The open store, caught up with other processes' writes (the cache dropped if any). */
  async #synced(): Promise<CatalogStore> {
    const store = await this.#db();
    if (await store.sync()) this.#cache.clear();
    return store;
  }

  /**
   * Lists datasets (the latest version of each name, unless `allVersions`).
   *
   * @param options Paging and filters.
   * @returns One page, by name.
   */
  async list(options: ListOptions = {}): Promise<Page<DatasetRecord>> {
    return await listDatasets((sql, params) => this.#read(sql, params), options, paging(options));
  }

  /**
   * One dataset: the latest version (or the one asked for) and the number of versions.
   *
   * @param name Dataset name.
   * @param options `version` (default: latest).
   * @returns The version record plus `versions`.
   * @throws {CatalogError} NOT_FOUND.
   */
  async get(name: string, options: { version?: string } = {}): Promise<DatasetDetail> {
    await this.#synced();
    const key = options.version ?? "";
    const hit = this.#cache.get(name, key);
    if (hit) return hit;
    const generation = this.#cache.generation;
    const rows = options.version === undefined
      ? await this.#read(
        `SELECT ${DATASET_COLUMNS}, count(*) OVER () AS n_versions FROM datasets WHERE name = $1
         QUALIFY row_number() OVER (ORDER BY seq DESC) = 1`,
        [name],
      )
      : await this.#read(
        `SELECT ${DATASET_COLUMNS}, (SELECT count(*) FROM datasets WHERE name = $1) AS n_versions
         FROM datasets WHERE name = $1 AND version = $2`,
        [name, options.version],
      );
    const row = rows[0];
    if (!row) throw notFound(name, options.version);
    const detail: DatasetDetail = { ...datasetFromRow(row), versions: Number(row.n_versions) };
    return this.#cache.keep(name, key, detail, generation);
  }

  /**
   * Every version of a dataset, newest first.
   *
   * @param name Dataset name.
   * @param options Paging.
   * @returns One page.
   * @throws {CatalogError} NOT_FOUND when the name has no version.
   */
  async versions(
    name: string,
    options: { limit?: number; offset?: number } = {},
  ): Promise<Page<DatasetRecord>> {
    return await listVersions((sql, params) => this.#read(sql, params), name, paging(options));
  }

  /**
   * The chunks of a dataset version, in row order.
   *
   * @param name Dataset name.
   * @param options Version, paging, row range.
   * @returns One page.
   * @throws {CatalogError} NOT_FOUND.
   */
  async chunks(
    name: string,
    options: ChunkOptions = {},
  ): Promise<Page<ChunkRecord> & { version: string }> {
    const page = paging(options);
    const record = await this.get(name, { version: options.version });
    const read = (sql: string, params: SqlParam[]) => this.#read(sql, params);
    return await listChunks(read, name, record.version, options.rows, page);
  }

  /**
   * A version's columns with the bytes each takes, largest share first in `share`.
   * A version registered by a release before 1.4 has none recorded: they are worked
   * out from its archive's footer on first request (the archive must be readable and
   * still be the one registered) and kept.
   *
   * @param name Dataset name.
   * @param options `version` (default: latest).
   * @returns The report.
   * @throws {CatalogError} NOT_FOUND; ARCHIVE_UNREADABLE when sizes must be worked out
   * and the archive cannot be read or has changed.
   */
  async columns(name: string, options: { version?: string } = {}): Promise<ColumnsReport> {
    const record = await this.get(name, options);
    return await versionColumns({
      read: (sql, params) => this.#read(sql, params),
      addColumns: async (index) =>
        await (await this.#db()).addColumns(columnRows(index, record.name, record.version)),
      backend: this.#backend,
    }, record);
  }

  // -------------------------------------------------------------------------
  // registration

  /**
   * Registers an archive: reads its header and footer and records it.
   *
   * @param path Archive path (relative paths resolve against `root`, else the working directory).
   * @param options Name, version, description, storage class.
   * @returns Whether a new version was recorded, and the record.
   * @throws {CatalogError} ARCHIVE_UNREADABLE (naming the file, and the archive's
   * error code); PATH_NOT_ALLOWED when this process may not read the path;
   * INVALID_ARGUMENT for a directory (use `registerDir`); PATH_OUTSIDE_ROOT; CONFLICT.
   */
  async register(path: string, options: RegisterOptions = {}): Promise<RegisterResult> {
    const abs = this.#resolvePath(path);
    let size: number | null;
    try {
      size = await this.#backend.size(abs);
    } catch (cause) {
      throw unreadable(abs, cause);
    }
    if (size === null) {
      if (await this.#backend.isDirectory?.(abs).catch(() => false)) {
        throw new CatalogError(
          "INVALID_ARGUMENT",
          `Cannot register '${abs}': it is a directory, not an archive; register the archives in it with POST /datasets/register_dir {"dir": ...} (Catalog.registerDir)`,
          { path: abs },
        );
      }
      throw new CatalogError("ARCHIVE_UNREADABLE", `Cannot register '${abs}': no such file`, {
        path: abs,
      });
    }
    let index: ArchiveIndex;
    try {
      index = await this.#backend.readIndex(abs);
    } catch (cause) {
      throw unreadable(abs, cause);
    }
    // An object's own storage class, where the caller names none, is what it costs.
    const own = priceClassOf((await this.#backend.storageClass?.(abs).catch(() => null)) ?? null);
    const storageClass = options.storageClass ??
      (own !== null && own in this.#prices ? own : undefined);
    return await this.registerIndex({ ...index, path: abs }, { ...options, storageClass });
  }

  /**
   * Registers an archive from its already-read index (what `readArchiveIndex` returns).
   * The cluster master, which has just written the archive, and tests use this.
   *
   * @param index Header, footer and path of the archive.
   * @param options Name, version, description, storage class.
   * @returns Whether a new version was recorded, and the record.
   * @throws {CatalogError} INVALID_ARGUMENT, CONFLICT.
   */
  async registerIndex(index: ArchiveIndex, options: RegisterOptions = {}): Promise<RegisterResult> {
    const db = await this.#synced();
    const name = options.name ?? nameFromPath(index.path);
    checkName("name", name);
    if (options.version !== undefined) checkName("version", options.version);
    const storageClass = options.storageClass ?? "standard";
    if (!(storageClass in this.#prices)) {
      throw new CatalogError(
        "INVALID_ARGUMENT",
        `Unknown storage class '${storageClass}': expected one of ${
          Object.keys(this.#prices).join(", ")
        }`,
      );
    }
    const header = index.header;
    const footer = index.footer;
    const description = options.description ?? header.metadata?.description ?? "";
    const registeredAt = this.#now().toISOString().replace("T", " ").replace("Z", "");
    const outcome = await db.record(
      {
        index,
        name,
        requested: options.version,
        entry: { storageClass, description, registeredAt },
      },
      () => this.#cache.written(name),
    );
    if (outcome.created) {
      this.#logger.info("dataset registered", {
        name,
        version: outcome.version,
        path: index.path,
        rows: footer.rows,
        chunks: footer.chunks.length,
      });
    }
    const dataset = await this.get(name, { version: outcome.version });
    const { versions: _, ...record } = dataset;
    return { created: outcome.created, dataset: record };
  }

  /**
   * Registers every archive (`*.pf`) in a directory. A file that fails is reported,
   * not fatal.
   *
   * @param dir Directory (relative paths resolve against `root`, else the working directory).
   * @param options `recursive` (default false) and the storage class for all.
   * @returns What was registered, unchanged, or failed.
   * @throws {CatalogError} INVALID_ARGUMENT when the directory cannot be listed; PATH_OUTSIDE_ROOT.
   */
  async registerDir(
    dir: string,
    options: { recursive?: boolean; storageClass?: string } = {},
  ): Promise<RegisterDirResult> {
    const abs = this.#resolvePath(dir);
    const files = await listArchives(this.#backend, abs, options.recursive ?? false);
    const result = await registerEach(
      abs,
      files,
      (file) => this.register(file, { storageClass: options.storageClass }),
    );
    this.#logger.info("directory registered", {
      dir: abs,
      registered: result.registered.length,
      unchanged: result.unchanged.length,
      failed: result.failed.length,
    });
    return result;
  }

  /**
   * Removes a dataset: every version, or one.
   *
   * @param name Dataset name.
   * @param options `version` to remove only that one.
   * @returns The versions removed.
   * @throws {CatalogError} NOT_FOUND.
   */
  async remove(
    name: string,
    options: { version?: string } = {},
  ): Promise<{ name: string; removed: string[] }> {
    const db = await this.#synced();
    const removed = await db.remove(name, options.version, () => this.#cache.written(name));
    this.#logger.info("dataset removed", { name, versions: removed });
    return { name, removed };
  }

  // -------------------------------------------------------------------------
  // integrity, stats, cost, search, sql, thaw

  /**
   * Re-hashes a version's chunks and compares them with the catalog's records and
   * the file's own footer.
   *
   * @param name Dataset name.
   * @param options `version` (default: latest).
   * @returns Every problem found; `ok` when there is none.
   * @throws {CatalogError} NOT_FOUND.
   */
  async integrityCheck(name: string, options: { version?: string } = {}): Promise<IntegrityReport> {
    const record = await this.get(name, options);
    const chunks = await this.#read(
      "SELECT chunk, byte_offset, byte_length, sha256 FROM chunks WHERE dataset = $1 AND version = $2 ORDER BY chunk",
      [name, record.version],
    );
    const recorded = chunks.map((r) => ({
      chunk: Number(r.chunk),
      byte_offset: Number(r.byte_offset),
      byte_length: Number(r.byte_length),
      sha256: String(r.sha256),
    }));
    const result = await checkIntegrity(name, record, recorded, this.#backend, this.#now());
    if (!result.ok) {
      this.#logger.warn("integrity check failed", {
        name,
        version: record.version,
        problems: result.problems.length,
      });
    }
    return result;
  }

  /**
   * Totals over the catalog: datasets, versions, rows, raw vs stored bytes, ratio by codec.
   *
   * @returns The totals.
   */
  async stats(): Promise<CatalogStats> {
    return await catalogStats((sql) => this.#read(sql));
  }

  /**
   * Monthly storage cost of every version, by storage class, with the savings
   * against storing the raw bytes and against a Parquet-size estimate.
   *
   * @returns The report.
   */
  async costReport(): Promise<CostReport> {
    const ratio = this.#options.parquetRatio ?? DEFAULT_PARQUET_RATIO;
    return await costReport((sql) => this.#read(sql), this.#prices, ratio);
  }

  /**
   * Searches names, versions, column names and descriptions; one hit per name
   * (its best version), best first.
   *
   * Per query word: name equal 100, name starts with it 60, contains it 40; version
   * equal 30, contains 15; a column named it 25, a column containing it 12;
   * description containing it 8. A newer version wins a tie.
   *
   * @param q Words to look for (case-insensitive; at most 8 are used).
   * @param options Paging.
   * @returns The hits.
   * @throws {CatalogError} INVALID_ARGUMENT for an empty query.
   */
  async search(
    q: string,
    options: { limit?: number; offset?: number } = {},
  ): Promise<SearchResult> {
    return await searchDatasets((sql, params) => this.#read(sql, params), q, paging(options));
  }

  /**
   * The tables a user query names (see `CatalogStore.tablesOf`).
   *
   * @param query The SQL.
   * @returns The names; empty when it does not parse.
   */
  async tablesOf(query: string): Promise<string[]> {
    return await (await this.#synced()).tablesOf(query);
  }

  /** The limits of `sql` (time, rows, bytes), for queries run elsewhere on its behalf. */
  get sqlLimits(): { timeoutMs?: number; maxRows?: number; maxBytes?: number } {
    return { ...this.#options.sql };
  }

  /**
   * Runs one read-only SELECT over the catalog tables (`datasets`, `chunks`,
   * `chunk_stats`, `dataset_columns`) in the store's sandbox (see `sql_sandbox.ts`),
   * on a connection of its own: a slow query does not hold up the catalog's own reads
   * and writes.
   *
   * @param query The SQL.
   * @returns Columns and rows, cut at the row and byte limits (`truncated: true`).
   * @throws {CatalogError} SQL_REFUSED, SQL_FAILED, SQL_TOO_LARGE, SQL_TIMEOUT.
   */
  async sql(query: string): Promise<SqlResult> {
    const store = await this.#synced();
    return await store.sql(query, {
      timeoutMs: this.#options.sql?.timeoutMs,
      maxRows: this.#options.sql?.maxRows,
      maxBytes: this.#options.sql?.maxBytes,
    });
  }

  /**
   * Thaws a registered dataset by name and version.
   *
   * @param name Dataset name.
   * @param options Version (default: latest), output path, rows, columns.
   * @returns What the injected thaw function returns.
   * @throws {CatalogError} NOT_FOUND; THAW_UNAVAILABLE when built without `thaw`.
   */
  async thaw(
    name: string,
    options: { version?: string; output: string; rows?: RowRange; columns?: string[] },
  ): Promise<unknown> {
    const record = await this.get(name, { version: options.version });
    const thaw = this.#options.thaw;
    if (!thaw) {
      throw new CatalogError(
        "THAW_UNAVAILABLE",
        "This catalog was built without a thaw function: pass { thaw }",
      );
    }
    const opts: { rows?: RowRange; columns?: string[] } = {};
    if (options.rows) opts.rows = options.rows;
    if (options.columns) opts.columns = options.columns;
    return await thaw(record.path, options.output, opts);
  }

  #now(): Date {
    return this.#options.now?.() ?? new Date();
  }

  #resolvePath(path: string): string {
    return resolveUnderRoot(path, this.#root, (p) => this.#backend.resolve(p));
  }
}
