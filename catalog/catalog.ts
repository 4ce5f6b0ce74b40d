/**
 * `Catalog`: a DuckDB-backed index of archives. Registration reads an archive's
 * header and footer only and records one `datasets` row per version plus one
 * `chunks` row per chunk (see `_schema.ts`); everything else is a query.
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
 * it. A read that raced a write is not cached.
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
import type { DuckDBValue } from "@duckdb/node-api";
import { createHash } from "node:crypto";
import { basename, isAbsolute, relative, resolve, sep } from "node:path";
import { PermafrostError } from "../internal/errors.ts";
import { createLogger, type Logger } from "../internal/log.ts";
import type { RowRange } from "../format/reader.ts";
import {
  ARCHIVE_EXTENSION,
  type ArchiveBackend,
  type ArchiveIndex,
  localBackend,
} from "./backend.ts";
import { CatalogError } from "./errors.ts";
import {
  type CatalogDb,
  type Lane,
  type LanePool,
  message,
  openCatalogDb,
  toJsonValue,
} from "./_db.ts";
import { CATALOG_TABLES, SCHEMA_DDL, SCHEMA_VERSION } from "./_schema.ts";
import { runSandboxedSql } from "./sql_sandbox.ts";
import type {
  CatalogStats,
  ChunkColumnStats,
  ChunkRecord,
  ColumnInfo,
  CostLine,
  CostReport,
  DatasetDetail,
  DatasetRecord,
  IntegrityProblem,
  IntegrityReport,
  Page,
  RegisterDirResult,
  RegisterResult,
  SearchHit,
  SearchResult,
  SqlResult,
  StatsGroup,
} from "./types.ts";

/** Thaws an archive (`mod.ts`'s `thaw`), injected so the catalog does not import `mod.ts`. */
export type ThawFunction = (
  archivePath: string,
  outputPath: string,
  options: { rows?: RowRange; columns?: string[] },
) => Promise<unknown>;

/** Storage prices, $/GB-month by storage class (cloud object storage list prices). */
export const DEFAULT_PRICES: Readonly<Record<string, number>> = Object.freeze({
  standard: 0.023,
  infrequent: 0.0125,
  archive: 0.0036,
  deep_archive: 0.00099,
});

/** Assumed size of the same data as Snappy Parquet, as a fraction of the raw column bytes. */
export const DEFAULT_PARQUET_RATIO = 0.35;

/** Bytes in a billing GB. */
export const GB_BYTES = 2 ** 30;

/** Names and versions: a letter or digit, then letters, digits, `.`, `_`, `-` (128 at most). */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Names whose records `get` keeps in memory (the oldest is dropped past this). */
const CACHE_NAMES = 10_000;

/** Largest page a list answers. */
export const MAX_PAGE = 1000;

/** Options of {@link Catalog}. */
export interface CatalogOptions {
  /** Where archives are read from (default: local disk). */
  backend?: ArchiveBackend;
  /** `mod.ts`'s `thaw`, for {@link Catalog.thaw}. */
  thaw?: ThawFunction;
  /** Logger (default: silent). */
  logger?: Logger;
  /** Clock (default: `new Date()`). */
  now?: () => Date;
  /** When set, only archives under this directory may be registered; relative paths resolve against it. */
  root?: string;
  /** $/GB-month by storage class (default {@link DEFAULT_PRICES}); also the classes a dataset may use. */
  prices?: Readonly<Record<string, number>>;
  /** Parquet size as a fraction of raw bytes, for `costReport` (default {@link DEFAULT_PARQUET_RATIO}). */
  parquetRatio?: number;
  /**
   * Limits of `sql` (defaults: 5,000 ms, 10,000 rows, 32 MiB of JSON) and the
   * connections it runs on (default 4: queries that may run at once).
   */
  sql?: { timeoutMs?: number; maxRows?: number; maxBytes?: number; connections?: number };
  /** Read connections (default 4). */
  readConnections?: number;
  /** DuckDB memory limit (default `1GB`). */
  memoryLimit?: string;
}

/** Options of {@link Catalog.register}. */
export interface RegisterOptions {
  /** Dataset name (default: the file name without `.pf`). */
  name?: string;
  /** Version label (default: `v<N>`, the next free number). */
  version?: string;
  /** Free-text description (default: the header's `metadata.description`). */
  description?: string;
  /** Storage class (default `standard`). */
  storageClass?: string;
}

/** Options of {@link Catalog.list}. */
export interface ListOptions {
  /** Page size (default 100, at most {@link MAX_PAGE}). */
  limit?: number;
  /** Items to skip. */
  offset?: number;
  /** Only this codec. */
  codec?: string;
  /** Only names starting with this prefix. */
  prefix?: string;
  /** Only this storage class. */
  storageClass?: string;
  /** Every version instead of the latest of each name. */
  allVersions?: boolean;
}

/** Options of {@link Catalog.chunks}. */
export interface ChunkOptions {
  /** Version (default: latest). */
  version?: string;
  /** Page size (default 100, at most {@link MAX_PAGE}). */
  limit?: number;
  /** Items to skip. */
  offset?: number;
  /** Only chunks overlapping these rows (0-based, half-open). */
  rows?: RowRange;
}

const SILENT: Logger = createLogger({ component: "catalog", level: "error", sink: () => {} });

const DATASET_COLUMNS = `name, version, path, rows, columns, schema::VARCHAR AS schema, codec,
  auto_reason, chunk_rows, chunks, file_bytes, stored_bytes, raw_bytes, format_version,
  header_sha256, payload_sha256, primary_key, lossy_columns, encrypted,
  partition::VARCHAR AS partition, metadata::VARCHAR AS metadata, description, storage_class,
  strftime(registered_at, '%Y-%m-%dT%H:%M:%S.%gZ') AS registered_at`;

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
  /** Database file as given. */
  readonly dbPath: string;
  readonly #options: CatalogOptions;
  readonly #backend: ArchiveBackend;
  readonly #logger: Logger;
  readonly #prices: Readonly<Record<string, number>>;
  readonly #root: string | undefined;
  #opening: Promise<CatalogDb> | undefined;
  #closed = false;
  /** Dataset records by name, then by version key (`""` = latest); see {@link Catalog.get}. */
  readonly #cache = new Map<string, Map<string, DatasetDetail>>();
  /** Bumped after every committed write, so a read that raced a write is not cached. */
  #generation = 0;

  /**
   * Creates a catalog on a database file. Nothing is opened until the first call
   * (or {@link Catalog.ready}).
   *
   * @param dbPath DuckDB file (created if missing).
   * @param options Backend, thaw, logger, clock, root, prices, limits.
   */
  constructor(dbPath: string, options: CatalogOptions = {}) {
    this.dbPath = dbPath;
    this.#options = options;
    this.#backend = options.backend ?? localBackend();
    this.#logger = options.logger ?? SILENT;
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
   * @param dbPath DuckDB file.
   * @param options As the constructor's.
   * @returns The open catalog.
   * @throws {CatalogError} DB_LOCKED when another process or catalog owns the file.
   */
  static async open(dbPath: string, options: CatalogOptions = {}): Promise<Catalog> {
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
    const db = await opening.catch(() => undefined);
    await db?.close();
  }

  #db(): Promise<CatalogDb> {
    if (this.#closed) return Promise.reject(new CatalogError("CLOSED", "The catalog is closed"));
    this.#opening ??= this.#open();
    return this.#opening;
  }

  async #open(): Promise<CatalogDb> {
    const db = await openCatalogDb(this.dbPath, {
      readConnections: this.#options.readConnections,
      memoryLimit: this.#options.memoryLimit,
      sqlConnections: this.#options.sql?.connections,
    }).catch((err) => {
      this.#opening = undefined;
      throw err;
    });
    try {
      await db.writer.run(async (c) => {
        for (const ddl of SCHEMA_DDL) await c.run(ddl);
        const found = await c.runAndReadAll(
          "SELECT value FROM catalog_meta WHERE key = 'schema_version'",
        );
        const v = found.getRowsJS()[0]?.[0];
        if (v === undefined) {
          await c.run("INSERT INTO catalog_meta VALUES ('schema_version', $1)", [
            String(SCHEMA_VERSION),
          ]);
        } else if (Number(v) > SCHEMA_VERSION) {
          throw new CatalogError(
            "DB_FAILED",
            `Cannot open catalog database '${db.path}': it has schema version ${v}, this program reads up to ${SCHEMA_VERSION}`,
          );
        }
      });
    } catch (err) {
      await db.close();
      this.#opening = undefined;
      throw err instanceof CatalogError ? err : new CatalogError(
        "DB_FAILED",
        `Cannot prepare catalog database '${db.path}': ${message(err)}`,
        { cause: err },
      );
    }
    // Warm the record cache with the latest version of each name (one query), so
    // reads after a restart do not each wait for DuckDB.
    try {
      const rows = await this.#query(
        db.readers,
        `SELECT ${DATASET_COLUMNS}, count(*) OVER (PARTITION BY name) AS n_versions FROM datasets
         QUALIFY row_number() OVER (PARTITION BY name ORDER BY seq DESC) = 1 LIMIT ${CACHE_NAMES}`,
      );
      for (const row of rows) {
        const detail: DatasetDetail = { ...datasetFromRow(row), versions: Number(row.n_versions) };
        this.#cache.set(detail.name, new Map([["", detail]]));
      }
    } catch (err) {
      this.#logger.warn("cannot warm the dataset cache", { err });
    }
    this.#logger.info("catalog open", { db: db.path, datasets: this.#cache.size });
    return db;
  }

  // -------------------------------------------------------------------------
  // queries

  async #query(
    lanes: Lane | LanePool,
    sql: string,
    params: DuckDBValue[] = [],
  ): Promise<Record<string, unknown>[]> {
    // Prepared statements are not cached: re-running a cached one in
    // @duckdb/node-api 1.5.5-r.5 returned corrupt short strings (seen in tests).
    return await lanes.run(async (c) => {
      const reader = await c.runAndReadAll(sql, params);
      return reader.convertRowObjects(toJsonValue) as Record<string, unknown>[];
    });
  }

  async #read(sql: string, params: DuckDBValue[] = []): Promise<Record<string, unknown>[]> {
    const db = await this.#db();
    return await this.#query(db.readers, sql, params);
  }

  /**
   * Lists datasets (the latest version of each name, unless `allVersions`).
   *
   * @param options Paging and filters.
   * @returns One page, by name.
   */
  async list(options: ListOptions = {}): Promise<Page<DatasetRecord>> {
    const { limit, offset } = paging(options);
    const where: string[] = [];
    const params: DuckDBValue[] = [];
    if (!options.allVersions) where.push("rn = 1");
    if (options.codec !== undefined) {
      params.push(options.codec);
      where.push(`codec = $${params.length}`);
    }
    if (options.prefix !== undefined) {
      params.push(options.prefix);
      where.push(`starts_with(name, $${params.length})`);
    }
    if (options.storageClass !== undefined) {
      params.push(options.storageClass);
      where.push(`storage_class = $${params.length}`);
    }
    const from =
      `(SELECT *, row_number() OVER (PARTITION BY name ORDER BY seq DESC) AS rn FROM datasets)`;
    const cond = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
    const total = await this.#read(`SELECT count(*) AS n FROM ${from} ${cond}`, params);
    const rows = await this.#read(
      `SELECT ${DATASET_COLUMNS} FROM ${from} ${cond} ORDER BY name, seq DESC LIMIT ${limit} OFFSET ${offset}`,
      params,
    );
    return { items: rows.map(datasetFromRow), total: Number(total[0]?.n ?? 0), limit, offset };
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
    if (this.#closed) throw new CatalogError("CLOSED", "The catalog is closed");
    const key = options.version ?? "";
    const hit = this.#cache.get(name)?.get(key);
    if (hit) return structuredClone(hit);
    const generation = this.#generation;
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
    if (generation === this.#generation) {
      let byVersion = this.#cache.get(name);
      if (!byVersion) {
        if (this.#cache.size >= CACHE_NAMES) this.#cache.delete(this.#cache.keys().next().value!);
        this.#cache.set(name, byVersion = new Map());
      }
      byVersion.set(key, detail);
      return structuredClone(detail);
    }
    return detail;
  }

  /** Forgets cached records of a name after a committed write. */
  #written(name: string): void {
    this.#generation++;
    this.#cache.delete(name);
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
    const { limit, offset } = paging(options);
    const total = Number(
      (await this.#read("SELECT count(*) AS n FROM datasets WHERE name = $1", [name]))[0]?.n ?? 0,
    );
    if (total === 0) throw notFound(name);
    const rows = await this.#read(
      `SELECT ${DATASET_COLUMNS} FROM datasets WHERE name = $1 ORDER BY seq DESC LIMIT ${limit} OFFSET ${offset}`,
      [name],
    );
    return { items: rows.map(datasetFromRow), total, limit, offset };
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
    const { limit, offset } = paging(options);
    const record = await this.get(name, { version: options.version });
    const params: DuckDBValue[] = [name, record.version];
    let cond = "dataset = $1 AND version = $2";
    if (options.rows) {
      if (!(options.rows.start >= 0 && options.rows.end >= options.rows.start)) {
        throw new CatalogError(
          "INVALID_ARGUMENT",
          `Invalid row range ${options.rows.start}:${options.rows.end}`,
        );
      }
      params.push(options.rows.start, options.rows.end);
      cond += " AND row_end > $3 AND row_start < $4";
    }
    const total = Number(
      (await this.#read(`SELECT count(*) AS n FROM chunks WHERE ${cond}`, params))[0]?.n ?? 0,
    );
    const rows = await this.#read(
      `SELECT chunk, row_start, row_end, byte_offset, byte_length, raw_bytes, sha256, stats::VARCHAR AS stats
       FROM chunks WHERE ${cond} ORDER BY chunk LIMIT ${limit} OFFSET ${offset}`,
      params,
    );
    return {
      version: record.version,
      items: rows.map(chunkFromRow),
      total,
      limit,
      offset,
    };
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
    return await this.registerIndex({ ...index, path: abs }, options);
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
    const db = await this.#db();
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
    const outcome = await db.writer.run(async (c) => {
      const existing = await c.runAndReadAll(
        "SELECT version, header_sha256, payload_sha256, path FROM datasets WHERE name = $1 ORDER BY seq",
        [name],
      );
      const versions = existing.getRowObjectsJS() as {
        version: string;
        header_sha256: string;
        payload_sha256: string;
        path: string;
      }[];
      const same = (v: (typeof versions)[number]) =>
        v.header_sha256 === index.header_sha256 && v.payload_sha256 === footer.payload_sha256;
      let version = options.version;
      if (version !== undefined) {
        const found = versions.find((v) => v.version === version);
        if (found && same(found)) return { created: false, version };
        if (found) {
          throw new CatalogError(
            "CONFLICT",
            `Dataset '${name}' version '${version}' is already registered with other content (${found.path}); pick another version`,
          );
        }
      } else {
        const latest = versions.at(-1);
        if (latest && same(latest) && latest.path === index.path) {
          return { created: false, version: latest.version };
        }
        const used = new Set(versions.map((v) => v.version));
        let n = versions.length + 1;
        while (used.has(`v${n}`)) n++;
        version = `v${n}`;
      }
      await c.run("BEGIN TRANSACTION");
      try {
        await c.run(
          `INSERT INTO datasets VALUES ($1, $2, nextval('datasets_seq'), $3, $4, $5,
            from_json($6, '["VARCHAR"]'), $7::JSON, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
            from_json($19, '["VARCHAR"]'), $20, $21::JSON, $22::JSON, $23, $24, $25::TIMESTAMP)`,
          [
            name,
            version,
            index.path,
            footer.rows,
            index.schema.length,
            JSON.stringify(index.schema.map((f) => f.name)),
            JSON.stringify(index.schema.map(columnInfo)),
            header.codec,
            header.auto_reason ?? null,
            header.chunk_rows,
            footer.chunks.length,
            index.file_bytes,
            footer.payload_length,
            footer.raw_bytes,
            index.version,
            index.header_sha256,
            footer.payload_sha256,
            header.primary_key ?? null,
            JSON.stringify(header.lossy_columns ?? []),
            header.encryption !== null && header.encryption !== undefined,
            header.partition ? JSON.stringify(header.partition) : null,
            JSON.stringify(header.metadata ?? {}),
            description,
            storageClass,
            registeredAt,
          ],
        );
        const appender = await c.createAppender("chunks");
        try {
          footer.chunks.forEach((chunk, i) => {
            appender.appendVarchar(name);
            appender.appendVarchar(version!);
            appender.appendInteger(i);
            appender.appendBigInt(BigInt(chunk.row_start));
            appender.appendBigInt(BigInt(chunk.row_end));
            appender.appendBigInt(BigInt(chunk.offset));
            appender.appendBigInt(BigInt(chunk.length));
            appender.appendBigInt(BigInt(chunk.blocks.reduce((s, b) => s + b.raw_length, 0)));
            appender.appendVarchar(chunk.sha256);
            appender.appendVarchar(JSON.stringify(
              chunk.stats.map((s, j) => ({
                column: index.schema[j]?.name ?? `#${j}`,
                min: s.min,
                max: s.max,
                null_count: s.null_count,
              })),
            ));
            appender.endRow();
          });
          appender.flushSync();
        } finally {
          appender.closeSync();
        }
        await c.run("COMMIT");
      } catch (err) {
        await c.run("ROLLBACK").catch(() => undefined);
        throw err instanceof PermafrostError ? err : new CatalogError(
          "DB_FAILED",
          `Cannot record dataset '${name}': ${message(err)}`,
          { cause: err },
        );
      }
      this.#written(name);
      return { created: true, version };
    });
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
    let files: string[];
    try {
      files = await this.#backend.list(abs, { recursive: options.recursive ?? false });
    } catch (cause) {
      if (isPermissionError(cause)) throw notAllowed(abs, cause);
      throw new CatalogError(
        "INVALID_ARGUMENT",
        `Cannot list directory '${abs}': ${message(cause)}`,
        { cause, path: abs },
      );
    }
    const result: RegisterDirResult = { dir: abs, registered: [], unchanged: [], failed: [] };
    for (const file of files) {
      try {
        const r = await this.register(file, { storageClass: options.storageClass });
        const entry = { name: r.dataset.name, version: r.dataset.version, path: r.dataset.path };
        (r.created ? result.registered : result.unchanged).push(entry);
      } catch (err) {
        if (!(err instanceof PermafrostError)) throw err;
        result.failed.push({ path: file, error: { code: err.code, message: err.message } });
      }
    }
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
    const db = await this.#db();
    const removed = await db.writer.run(async (c) => {
      const params: DuckDBValue[] = options.version === undefined
        ? [name]
        : [name, options.version];
      const cond = options.version === undefined ? "name = $1" : "name = $1 AND version = $2";
      const found =
        (await c.runAndReadAll(`SELECT version FROM datasets WHERE ${cond} ORDER BY seq`, params))
          .getRowsJS().map((r) => String(r[0]));
      if (found.length === 0) throw notFound(name, options.version);
      await c.run("BEGIN TRANSACTION");
      try {
        await c.run(`DELETE FROM chunks WHERE ${cond.replace("name", "dataset")}`, params);
        await c.run(`DELETE FROM datasets WHERE ${cond}`, params);
        await c.run("COMMIT");
        this.#written(name);
      } catch (err) {
        await c.run("ROLLBACK").catch(() => undefined);
        throw new CatalogError("DB_FAILED", `Cannot remove dataset '${name}': ${message(err)}`, {
          cause: err,
        });
      }
      return found;
    });
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
    const problems: IntegrityProblem[] = [];
    const report = (p: IntegrityProblem) => problems.push(p);
    let checked = 0;
    let bytes = 0;
    let size: number | null | undefined;
    try {
      size = await this.#backend.size(record.path);
    } catch (err) {
      report({
        kind: "UNREADABLE",
        chunk: null,
        expected: null,
        actual: err instanceof PermafrostError ? err.code : null,
        message: `Cannot read archive '${record.path}': ${describeReadError(record.path, err)}`,
      });
    }
    if (size === undefined) {
      // Reported above.
    } else if (size === null) {
      report({
        kind: "MISSING_FILE",
        chunk: null,
        expected: record.file_bytes,
        actual: null,
        message: `Archive '${record.path}' is missing`,
      });
    } else {
      if (size !== record.file_bytes) {
        report({
          kind: "FILE_SIZE",
          chunk: null,
          expected: record.file_bytes,
          actual: size,
          message:
            `Archive '${record.path}' is ${size} bytes, the catalog recorded ${record.file_bytes}`,
        });
      }
      let footer: ArchiveIndex | undefined;
      try {
        footer = await this.#backend.readIndex(record.path);
      } catch (err) {
        report({
          kind: "UNREADABLE",
          chunk: null,
          expected: null,
          actual: err instanceof PermafrostError ? err.code : null,
          message: `Cannot read the header and footer of archive '${record.path}'${
            err instanceof PermafrostError ? ` (${err.code})` : ""
          }: ${describeReadError(record.path, err)}`,
        });
      }
      if (footer) {
        if (footer.header_sha256 !== record.header_sha256) {
          report({
            kind: "HEADER_HASH",
            chunk: null,
            expected: record.header_sha256,
            actual: footer.header_sha256,
            message: "The header differs from the one registered",
          });
        }
        if (footer.footer.chunks.length !== chunks.length) {
          report({
            kind: "FOOTER_MISMATCH",
            chunk: null,
            expected: chunks.length,
            actual: footer.footer.chunks.length,
            message:
              `The file's footer lists ${footer.footer.chunks.length} chunks, the catalog ${chunks.length}`,
          });
        }
      }
      const payload = createHash("sha256");
      let handle: Awaited<ReturnType<ArchiveBackend["open"]>> | undefined;
      try {
        handle = await this.#backend.open(record.path);
        for (const row of chunks) {
          const i = Number(row.chunk);
          const expected = String(row.sha256);
          const inFooter = footer?.footer.chunks[i];
          if (
            footer && inFooter &&
            (inFooter.sha256 !== expected || inFooter.offset !== Number(row.byte_offset) ||
              inFooter.length !== Number(row.byte_length))
          ) {
            report({
              kind: "FOOTER_MISMATCH",
              chunk: i,
              expected,
              actual: inFooter.sha256,
              message: `Chunk ${i} in the file's footer differs from the catalog's record`,
            });
          }
          let data: Uint8Array;
          try {
            data = await handle.read(Number(row.byte_offset), Number(row.byte_length));
          } catch (err) {
            report({
              kind: "READ_FAILED",
              chunk: i,
              expected,
              actual: null,
              message: `Cannot read chunk ${i} of archive '${record.path}': ${
                describeReadError(record.path, err)
              }`,
            });
            continue;
          }
          const actual = createHash("sha256").update(data).digest("hex");
          payload.update(data);
          checked++;
          bytes += data.length;
          if (actual !== expected) {
            report({
              kind: "CHUNK_HASH",
              chunk: i,
              expected,
              actual,
              message: `Chunk ${i} hashes to ${actual.slice(0, 12)}…, the catalog recorded ${
                expected.slice(0, 12)
              }…`,
            });
          }
        }
      } catch (err) {
        report({
          kind: "READ_FAILED",
          chunk: null,
          expected: null,
          actual: null,
          message: `Cannot open archive '${record.path}': ${describeReadError(record.path, err)}`,
        });
      } finally {
        handle?.close();
      }
      if (checked === chunks.length && chunks.length > 0) {
        const actual = payload.digest("hex");
        if (actual !== record.payload_sha256) {
          report({
            kind: "PAYLOAD_HASH",
            chunk: null,
            expected: record.payload_sha256,
            actual,
            message: "The payload hashes to another SHA-256 than the one registered",
          });
        }
      }
    }
    const result: IntegrityReport = {
      name,
      version: record.version,
      path: record.path,
      ok: problems.length === 0,
      chunks_checked: checked,
      bytes_checked: bytes,
      problems,
      checked_at: this.#now().toISOString(),
    };
    if (!result.ok) {
      this.#logger.warn("integrity check failed", {
        name,
        version: record.version,
        problems: problems.length,
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
    const group = `count(*) AS versions, coalesce(sum(rows), 0) AS rows,
      coalesce(sum(raw_bytes), 0) AS raw_bytes, coalesce(sum(stored_bytes), 0) AS stored_bytes`;
    const [totals] = await this.#read(
      `SELECT ${group}, count(DISTINCT name) AS datasets, coalesce(sum(chunks), 0) AS chunks,
        coalesce(sum(file_bytes), 0) AS file_bytes FROM datasets`,
    );
    const codecs = await this.#read(
      `SELECT codec, ${group} FROM datasets GROUP BY codec ORDER BY codec`,
    );
    const classes = await this.#read(
      `SELECT storage_class, ${group} FROM datasets GROUP BY storage_class ORDER BY storage_class`,
    );
    const t = totals ?? {};
    return {
      datasets: Number(t.datasets ?? 0),
      ...statsGroup(t),
      chunks: Number(t.chunks ?? 0),
      file_bytes: Number(t.file_bytes ?? 0),
      by_codec: codecs.map((r) => ({ codec: String(r.codec), ...statsGroup(r) })),
      by_storage_class: classes.map((r) => ({
        storage_class: String(r.storage_class),
        ...statsGroup(r),
      })),
    };
  }

  /**
   * Monthly storage cost of every version, by storage class, with the savings
   * against storing the raw bytes and against a Parquet-size estimate.
   *
   * @returns The report.
   */
  async costReport(): Promise<CostReport> {
    const ratio = this.#options.parquetRatio ?? DEFAULT_PARQUET_RATIO;
    const rows = await this.#read(
      `SELECT storage_class, count(*) AS versions, sum(stored_bytes) AS stored_bytes, sum(raw_bytes) AS raw_bytes
       FROM datasets GROUP BY storage_class ORDER BY storage_class`,
    );
    const money = (bytes: number, price: number | null) =>
      price === null ? null : significant((bytes / GB_BYTES) * price);
    const lines: CostLine[] = rows.map((r) => {
      const price = this.#prices[String(r.storage_class)] ?? null;
      const stored = Number(r.stored_bytes);
      const raw = Number(r.raw_bytes);
      const parquet = Math.round(raw * ratio);
      return {
        storage_class: String(r.storage_class),
        price_per_gb_month: price,
        versions: Number(r.versions),
        stored_bytes: stored,
        raw_bytes: raw,
        parquet_bytes_estimate: parquet,
        monthly_cost: money(stored, price),
        raw_monthly_cost: money(raw, price),
        parquet_monthly_cost: money(parquet, price),
      };
    });
    const priced = lines.filter((l) => l.price_per_gb_month !== null);
    const sum = (f: (l: CostLine) => number | null) => priced.reduce((s, l) => s + (f(l) ?? 0), 0);
    const cost = sum((l) => l.monthly_cost);
    const raw = sum((l) => l.raw_monthly_cost);
    const parquet = sum((l) => l.parquet_monthly_cost);
    const pct = (saved: number, of: number) => (of > 0 ? round((saved / of) * 100, 2) : null);
    return {
      currency: "USD",
      gb_bytes: GB_BYTES,
      prices: { ...this.#prices },
      parquet_ratio: ratio,
      storage_classes: lines,
      total: {
        stored_bytes: priced.reduce((s, l) => s + l.stored_bytes, 0),
        raw_bytes: priced.reduce((s, l) => s + l.raw_bytes, 0),
        parquet_bytes_estimate: priced.reduce((s, l) => s + l.parquet_bytes_estimate, 0),
        monthly_cost: significant(cost),
        raw_monthly_cost: significant(raw),
        parquet_monthly_cost: significant(parquet),
        savings_vs_raw: significant(raw - cost),
        savings_vs_parquet: significant(parquet - cost),
        savings_vs_raw_pct: pct(raw - cost, raw),
        savings_vs_parquet_pct: pct(parquet - cost, parquet),
      },
    };
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
    const { limit, offset } = paging(options);
    const terms = [...new Set(q.toLowerCase().split(/\s+/).filter((t) => t !== ""))].slice(0, 8);
    if (terms.length === 0) throw new CatalogError("INVALID_ARGUMENT", "Search query 'q' is empty");
    const parts = terms.map((_, i) => {
      const p = `$${i + 1}`;
      return `(CASE WHEN lower(name) = ${p} THEN 100 WHEN starts_with(lower(name), ${p}) THEN 60
          WHEN contains(lower(name), ${p}) THEN 40 ELSE 0 END
        + CASE WHEN lower(version) = ${p} THEN 30 WHEN contains(lower(version), ${p}) THEN 15 ELSE 0 END
        + CASE WHEN list_contains(list_transform(column_names, lambda c: lower(c)), ${p}) THEN 25
          WHEN len(list_filter(column_names, lambda c: contains(lower(c), ${p}))) > 0 THEN 12 ELSE 0 END
        + CASE WHEN contains(lower(description), ${p}) THEN 8 ELSE 0 END)`;
    });
    const scored = `SELECT name, version, description, rows, codec, column_names, seq, ${
      parts.join(" + ")
    } AS score
      FROM datasets`;
    const best = `SELECT * FROM (${scored}) WHERE score > 0
      QUALIFY row_number() OVER (PARTITION BY name ORDER BY score DESC, seq DESC) = 1`;
    const total = Number(
      (await this.#read(`SELECT count(*) AS n FROM (${best})`, terms))[0]?.n ?? 0,
    );
    const rows = await this.#read(
      `SELECT * FROM (${best}) ORDER BY score DESC, name LIMIT ${limit} OFFSET ${offset}`,
      terms,
    );
    const items: SearchHit[] = rows.map((r) => {
      const name = String(r.name);
      const version = String(r.version);
      const description = String(r.description);
      const columns = (r.column_names as string[]) ?? [];
      const matched: string[] = [];
      const has = (s: string) => terms.some((t) => s.toLowerCase().includes(t));
      if (has(name)) matched.push("name");
      if (has(version)) matched.push("version");
      for (const c of columns) if (has(c)) matched.push(`column:${c}`);
      if (has(description)) matched.push("description");
      return {
        name,
        version,
        score: Number(r.score),
        matched,
        description,
        rows: Number(r.rows),
        codec: String(r.codec),
      };
    });
    return { q, items, total };
  }

  /**
   * Runs one read-only SELECT over the catalog tables (`datasets`, `chunks`,
   * `chunk_stats`) in the sandbox (see `sql_sandbox.ts`), on a connection of its
   * own: a slow query does not hold up the others, nor the catalog's own reads and writes.
   *
   * @param query The SQL.
   * @returns Columns and rows, cut at the row and byte limits (`truncated: true`).
   * @throws {CatalogError} SQL_REFUSED, SQL_FAILED, SQL_TOO_LARGE, SQL_TIMEOUT.
   */
  async sql(query: string): Promise<SqlResult> {
    const db = await this.#db();
    return await runSandboxedSql(db.sandbox, query, {
      timeoutMs: this.#options.sql?.timeoutMs,
      maxRows: this.#options.sql?.maxRows,
      maxBytes: this.#options.sql?.maxBytes,
      tables: CATALOG_TABLES,
      logger: this.#logger,
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
    if (typeof path !== "string" || path.trim() === "" || path.includes("\0")) {
      throw new CatalogError("INVALID_ARGUMENT", "Path is empty");
    }
    if (!this.#root) return this.#backend.resolve(path);
    const abs = resolve(this.#root, path);
    const rel = relative(this.#root, abs);
    if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw new CatalogError(
        "PATH_OUTSIDE_ROOT",
        `Path '${path}' is outside the catalog root '${this.#root}'`,
        {
          path,
        },
      );
    }
    return abs;
  }
}

// ---------------------------------------------------------------------------
// helpers

function paging(options: { limit?: number; offset?: number }): { limit: number; offset: number } {
  const limit = options.limit ?? 100;
  const offset = options.offset ?? 0;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new CatalogError("INVALID_ARGUMENT", `limit must be 1..${MAX_PAGE}, got ${limit}`);
  }
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new CatalogError("INVALID_ARGUMENT", `offset must be a count, got ${offset}`);
  }
  return { limit, offset };
}

function checkName(what: "name" | "version", value: string): void {
  if (!NAME_PATTERN.test(value)) {
    throw new CatalogError(
      "INVALID_ARGUMENT",
      `Invalid dataset ${what} '${value}': use letters, digits, '.', '_' or '-' (starting with a letter or digit, 128 at most)`,
    );
  }
}

/**
 * The dataset name a path registers under by default: the file name without `.pf`,
 * with characters a name may not hold replaced by `_`.
 *
 * @param path Archive path.
 * @returns The name.
 */
export function nameFromPath(path: string): string {
  let base = basename(path);
  if (base.endsWith(ARCHIVE_EXTENSION)) base = base.slice(0, -ARCHIVE_EXTENSION.length);
  const clean = base.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^[._-]+/, "").slice(0, 128);
  return clean === "" ? "dataset" : clean;
}

function notFound(name: string, version?: string): CatalogError {
  return new CatalogError(
    "NOT_FOUND",
    version === undefined
      ? `No dataset named '${name}'`
      : `No version '${version}' of dataset '${name}'`,
  );
}

function unreadable(path: string, cause: unknown): CatalogError {
  if (cause instanceof CatalogError) return cause;
  if (isPermissionError(cause)) return notAllowed(path, cause);
  const code = (cause as { code?: unknown })?.code;
  if (cause instanceof Deno.errors.NotFound || code === "ENOENT") {
    return new CatalogError("ARCHIVE_UNREADABLE", `Cannot register '${path}': no such file`, {
      cause,
      path,
    });
  }
  const why = cause instanceof PermafrostError ? ` (${cause.code})` : "";
  return new CatalogError(
    "ARCHIVE_UNREADABLE",
    `Cannot register '${path}'${why}: ${describeReadError(path, cause)}`,
    { cause, path },
  );
}

/** Why a path may not be read, in the catalog's words. */
const NOT_ALLOWED_WHY =
  "this catalog server is not allowed to read it (its process permissions or the file's do not let it)";

/**
 * What went wrong reading an archive, for a message that already names it: without
 * the platform's permission text, and without the reader's own "Cannot read archive
 * '<path>': " prefix.
 */
function describeReadError(path: string, err: unknown): string {
  if (isPermissionError(err)) return NOT_ALLOWED_WHY;
  // The reader shows the bytes it found instead of the magic: for a file that is not
  // an archive at all (any file the server can read) that would echo its content.
  if (err instanceof PermafrostError && err.code === "BAD_MAGIC") {
    return "not a Permafrost archive (it does not start with the archive magic)";
  }
  const text = message(err);
  const prefix = `Cannot read archive '${path}': `;
  return text.startsWith(prefix) ? text.slice(prefix.length) : text;
}

/** Whether an error is the platform refusing a read (Deno's permissions, or the file's mode). */
export function isPermissionError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied ||
    code === "EACCES" || code === "EPERM";
}

/**
 * The answer to a path this process may not read: names the path and the
 * confinement, never the platform's own text (Deno's asks to rerun with flags).
 *
 * @param path The path as resolved.
 * @param cause The platform's error.
 * @returns A `PATH_NOT_ALLOWED` error.
 */
export function notAllowed(path: string, cause?: unknown): CatalogError {
  return new CatalogError(
    "PATH_NOT_ALLOWED",
    `Cannot read '${path}': ${NOT_ALLOWED_WHY}; register archives under the server's data roots (--data-roots)`,
    cause === undefined ? { path } : { path, cause },
  );
}

function columnInfo(f: ArchiveIndex["schema"][number]): ColumnInfo {
  const c: ColumnInfo = { name: f.name, type: f.type, nullable: f.nullable };
  if (f.unit !== undefined) c.unit = f.unit;
  if (f.timezone !== undefined) c.timezone = f.timezone;
  return c;
}

function parseJson<T>(v: unknown, fallback: T): T {
  if (typeof v !== "string") return fallback;
  try {
    return JSON.parse(v) as T;
  } catch {
    return fallback;
  }
}

function datasetFromRow(r: Record<string, unknown>): DatasetRecord {
  const raw = Number(r.raw_bytes);
  const stored = Number(r.stored_bytes);
  return {
    name: String(r.name),
    version: String(r.version),
    path: String(r.path),
    rows: Number(r.rows),
    columns: Number(r.columns),
    schema: parseJson<ColumnInfo[]>(r.schema, []),
    codec: String(r.codec),
    auto_reason: r.auto_reason === null ? null : String(r.auto_reason),
    chunk_rows: Number(r.chunk_rows),
    chunks: Number(r.chunks),
    file_bytes: Number(r.file_bytes),
    stored_bytes: stored,
    raw_bytes: raw,
    ratio: stored > 0 ? round(raw / stored, 4) : null,
    format_version: String(r.format_version),
    header_sha256: String(r.header_sha256),
    payload_sha256: String(r.payload_sha256),
    primary_key: r.primary_key === null ? null : String(r.primary_key),
    lossy_columns: (r.lossy_columns as string[]) ?? [],
    encrypted: r.encrypted === true,
    partition: parseJson<Record<string, string> | null>(r.partition, null),
    metadata: parseJson<Record<string, string>>(r.metadata, {}),
    description: String(r.description),
    storage_class: String(r.storage_class),
    registered_at: String(r.registered_at),
  };
}

function chunkFromRow(r: Record<string, unknown>): ChunkRecord {
  return {
    chunk: Number(r.chunk),
    row_start: Number(r.row_start),
    row_end: Number(r.row_end),
    offset: Number(r.byte_offset),
    length: Number(r.byte_length),
    raw_bytes: Number(r.raw_bytes),
    sha256: String(r.sha256),
    stats: parseJson<ChunkColumnStats[]>(r.stats, []),
  };
}

function statsGroup(r: Record<string, unknown>): StatsGroup {
  const raw = Number(r.raw_bytes ?? 0);
  const stored = Number(r.stored_bytes ?? 0);
  return {
    versions: Number(r.versions ?? 0),
    rows: Number(r.rows ?? 0),
    raw_bytes: raw,
    stored_bytes: stored,
    ratio: stored > 0 ? round(raw / stored, 4) : null,
  };
}

/** Money: six significant digits, so tiny test catalogs do not round to 0. */
function significant(x: number): number {
  return x === 0 ? 0 : Number(x.toPrecision(6));
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
