/**
 * The context API: one object that carries where the catalog and the cluster are and
 * the token for both, so a script configures them once —
 * `const pf = await Permafrost.open({ catalog, cluster, token })` — then calls
 * `pf.freeze`, `pf.thaw`, `pf.register` and `pf.query` (local archives and object-storage
 * URIs, with SQL over a session of its own), `pf.submit` and `pf.wait` (the cluster),
 * `pf.datasets`, `pf.rows` and `pf.sql` (the catalog's REST API), and `pf.close()`.
 * Object storage takes its credentials from the variables users already set
 * (`AWS_*`, `AZURE_*`, `GOOGLE_APPLICATION_CREDENTIALS`), as everywhere else, or from
 * the context's `storage` settings by the same names, which win for its own calls.
 *
 * @example Freeze, register and query, with no server at all
 * ```ts
 * import assert from "node:assert/strict";
 * import { tableFromArrays } from "apache-arrow";
 * import { Permafrost } from "./context.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const pf = await Permafrost.open();
 * const table = tableFromArrays({ city: ["Oslo", "Lima", "Oslo"], temp: Float64Array.of(3, 19, 5) });
 * await pf.freeze(table, `${dir}/weather.pf`, { threads: 0 });
 * await pf.register("weather", `${dir}/weather.pf`);
 * const answer = await pf.query("SELECT city, avg(temp) AS t FROM weather GROUP BY 1 ORDER BY 1");
 * assert.deepEqual(answer.toArray().map((r) => [r.city, r.t]), [["Lima", 19], ["Oslo", 4]]);
 * pf.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @example A cluster and a catalog (needs a master and a catalog running)
 * ```ts ignore
 * const pf = await Permafrost.open({
 *   cluster: "http://master:8700",
 *   catalog: "http://catalog:8800",
 *   token: Deno.env.get("PERMAFROST_TOKEN"),
 * });
 * const job = await pf.wait(await pf.submit("s3://raw/trips.csv", "s3://archive/trips.pf"));
 * const rows = await pf.rows("trips", { where: "fare > 100", columns: ["fare", "day"] });
 * pf.close();
 * ```
 *
 * @module
 */
import * as arrow from "apache-arrow";
import {
  ClusterClient,
  type ClusterFreezeOptions,
  type WaitOptions,
} from "./client/cluster_client.ts";
import type { JobRecord } from "./client/types.ts";
import { CatalogError, type CatalogErrorCode } from "./catalog/errors.ts";
import type {
  DatasetDetail,
  DatasetRecord,
  Page,
  RegisterResult,
  SqlResult,
} from "./catalog/types.ts";
import { PermafrostError } from "./internal/errors.ts";
import { freeze, type FreezeOptions, type FreezeSource, type FreezeSummary } from "./ops/freeze.ts";
import { audit, type AuditReport } from "./ops/inspect.ts";
import { type QueryBackend, type RegisteredArchive, SqlSession } from "./ops/sql.ts";
import { thaw, type ThawOptions, type ThawSummary, thawTable } from "./ops/thaw.ts";
import { type StorageSettings, withStorageSettings } from "./storage/registry.ts";

/** Where a context's servers are. */
export interface PermafrostOptions {
  /** The catalog server's URL (for `datasets`, `rows`, `sql`, `registerDataset`). */
  catalog?: string;
  /** The master's URL (for `submit`, `wait`, `job`). */
  cluster?: string;
  /** Bearer token sent to both (a user token from `cluster add-user`). */
  token?: string;
  /** Ask each configured server for `/health` when opening (default true). */
  check?: boolean;
  /** The engine of `query` (default: the process's, `duckdb` unless set otherwise). */
  queryBackend?: QueryBackend;
  /**
   * Object-storage settings for this context's `freeze`, `thaw`, `audit`, `register`
   * and `query`, by the names of the variables they replace (`AWS_ACCESS_KEY_ID`,
   * `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT_URL_S3`, `AZURE_STORAGE_ACCOUNT`,
   * `AZURE_STORAGE_KEY`, `GOOGLE_APPLICATION_CREDENTIALS`, …); what it does not name
   * comes from the environment. Two contexts with different settings work side by side.
   */
  storage?: StorageSettings;
  /** `fetch` (tests). */
  fetch?: typeof fetch;
}

/** What `rows` reads of a dataset. */
export interface DatasetRowsOptions {
  /** The version (default: the latest). */
  version?: string;
  /** Rows `[start, end)`. */
  rows?: { start: number; end: number };
  /** Columns, in order. */
  columns?: string[];
  /** A filter in the `--where` language. */
  where?: string;
}

const KNOWN_CATALOG_CODES = new Set<string>([
  "NOT_FOUND",
  "CONFLICT",
  "INVALID_ARGUMENT",
  "PATH_OUTSIDE_ROOT",
  "ARCHIVE_UNREADABLE",
  "SQL_REFUSED",
  "SQL_FAILED",
  "SQL_TIMEOUT",
  "SQL_TOO_LARGE",
  "PATH_NOT_ALLOWED",
]);

/** One configured Permafrost: local operations, the cluster and the catalog. */
export class Permafrost {
  readonly #options: PermafrostOptions;
  readonly #sql: SqlSession;
  readonly #cluster: ClusterClient | null;
  #closed = false;

  private constructor(options: PermafrostOptions) {
    this.#options = options;
    this.#sql = new SqlSession(options.queryBackend ? { backend: options.queryBackend } : {});
    this.#cluster = options.cluster
      ? new ClusterClient(options.cluster, {
        ...(options.token ? { token: options.token } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
      })
      : null;
  }

  /**
   * Opens a context; with `check` (the default) each configured server must answer
   * `/health`, so a wrong URL fails here and not halfway through a script.
   *
   * @param options Catalog and cluster URLs, token.
   * @returns The context.
   * @throws {import("./client/errors.ts").JobError} UNREACHABLE for the master;
   * {CatalogError} for the catalog.
   */
  static async open(options: PermafrostOptions = {}): Promise<Permafrost> {
    const pf = new Permafrost(options);
    if (options.check ?? true) {
      if (pf.#cluster) await pf.#cluster.health();
      if (options.catalog) await pf.#catalogCall("GET", "/health");
    }
    return pf;
  }

  /** The master's client (null without `cluster`). */
  get cluster(): ClusterClient | null {
    return this.#cluster;
  }

  #open(): void {
    if (this.#closed) {
      throw new PermafrostError("CLOSED", "This Permafrost context is closed: open another");
    }
  }

  /**
   * Freezes a source (path, URI, Arrow table or batches) into an archive (path or URI).
   *
   * @param source The source.
   * @param archive Where the archive goes.
   * @param options `freeze`'s options.
   * @returns The summary.
   */
  async freeze(
    source: FreezeSource,
    archive: string,
    options?: FreezeOptions,
  ): Promise<FreezeSummary> {
    this.#open();
    return await this.#scoped(() => freeze(source, archive, options));
  }

  /**
   * Thaws an archive (or a slice) into a file, or into an Arrow table when no output is given.
   *
   * @param archive The archive (path or URI).
   * @param output The output file (path or URI); omitted: an in-memory table.
   * @param options `thaw`'s options.
   * @returns The summary, or the table.
   */
  thaw(archive: string, output: string, options?: ThawOptions): Promise<ThawSummary>;
  /**
   * Thaws an archive (or a slice) into an in-memory Arrow table.
   *
   * @param archive The archive (path or URI).
   * @param output Omitted.
   * @param options `thaw`'s options.
   * @returns The table.
   */
  thaw(archive: string, output?: undefined, options?: ThawOptions): Promise<arrow.Table>;
  async thaw(
    archive: string,
    output?: string,
    options: ThawOptions = {},
  ): Promise<ThawSummary | arrow.Table> {
    this.#open();
    return await this.#scoped<ThawSummary | arrow.Table>(() =>
      output === undefined ? thawTable(archive, options) : thaw(archive, output, options)
    );
  }

  /**
   * Reads an archive's header and footer.
   *
   * @param archive The archive (path or URI).
   * @returns The report.
   */
  async audit(archive: string): Promise<AuditReport> {
    this.#open();
    return await this.#scoped(() => audit(archive));
  }

  /**
   * Names an archive for `query` (this context's own session).
   *
   * @param alias The name queries use.
   * @param uriOrPath The archive.
   * @returns What was registered.
   */
  async register(alias: string, uriOrPath: string): Promise<RegisteredArchive> {
    this.#open();
    return await this.#scoped(() => this.#sql.register(alias, uriOrPath));
  }

  /**
   * Forgets an alias.
   *
   * @param alias The alias.
   * @returns Whether it was registered.
   */
  unregister(alias: string): boolean {
    return this.#sql.unregister(alias);
  }

  /**
   * The registered archives.
   *
   * @returns Them, by alias.
   */
  registered(): RegisteredArchive[] {
    return this.#sql.registered();
  }

  /**
   * Answers one SELECT over the registered archives, thawing only what it names.
   *
   * @param sql The query.
   * @returns The answer as an Arrow table.
   */
  async query(sql: string): Promise<arrow.Table> {
    this.#open();
    return await this.#scoped(() => this.#sql.query(sql));
  }

  /** Runs local work with this context's storage settings, if it has any. */
  #scoped<T>(fn: () => Promise<T>): Promise<T> {
    const settings = this.#options.storage;
    return settings ? withStorageSettings(settings, fn) : fn();
  }

  #master(): ClusterClient {
    this.#open();
    if (!this.#cluster) {
      throw new PermafrostError(
        "NO_CLUSTER",
        "This context has no cluster: open it with { cluster: 'http://master:8700' }",
      );
    }
    return this.#cluster;
  }

  /**
   * Submits a freeze job to the cluster.
   *
   * @param source The source (a path the master sees, or a URI).
   * @param destination The archive (a path or a URI).
   * @param options Codec, chunk rows, format.
   * @returns The job id.
   */
  async submit(
    source: string,
    destination: string,
    options?: ClusterFreezeOptions,
  ): Promise<string> {
    return await this.#master().freeze(source, destination, options);
  }

  /**
   * Waits for a job to end.
   *
   * @param jobId The job.
   * @param options Poll interval, signal, progress callback.
   * @returns The job as it ended.
   */
  async wait(jobId: string, options?: WaitOptions): Promise<JobRecord> {
    return await this.#master().wait(jobId, options);
  }

  /**
   * A job, with its tasks.
   *
   * @param jobId The job.
   * @returns It.
   */
  async job(jobId: string): Promise<JobRecord> {
    return await this.#master().job(jobId);
  }

  async #catalogCall(method: string, path: string, body?: unknown): Promise<Response> {
    this.#open();
    const base = this.#options.catalog;
    if (!base) {
      throw new PermafrostError(
        "NO_CATALOG",
        "This context has no catalog: open it with { catalog: 'http://catalog:8800' }",
      );
    }
    const headers: Record<string, string> = {};
    if (this.#options.token) headers.authorization = `Bearer ${this.#options.token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await (this.#options.fetch ?? fetch)(`${base.replace(/\/+$/, "")}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (cause) {
      throw new PermafrostError(
        "UNREACHABLE",
        `Cannot reach the catalog at ${base}: ${cause instanceof Error ? cause.message : cause}`,
        { cause },
      );
    }
    if (res.ok) return res;
    const answer = await res.json().catch(() => null) as
      | { error?: { code?: string; message?: string } }
      | null;
    const code = answer?.error?.code ?? "";
    const message = answer?.error?.message ?? `${method} ${path} answered ${res.status}`;
    if (KNOWN_CATALOG_CODES.has(code)) throw new CatalogError(code as CatalogErrorCode, message);
    throw new PermafrostError(code || `HTTP_${res.status}`, message);
  }

  /**
   * The catalog's datasets (latest version of each), one page.
   *
   * @param options Page size and offset.
   * @returns The page.
   */
  async datasets(options: { limit?: number; offset?: number } = {}): Promise<Page<DatasetRecord>> {
    const q = new URLSearchParams();
    if (options.limit !== undefined) q.set("limit", String(options.limit));
    if (options.offset !== undefined) q.set("offset", String(options.offset));
    return await (await this.#catalogCall("GET", `/datasets?${q}`)).json();
  }

  /**
   * One dataset of the catalog.
   *
   * @param name Its name.
   * @param version A version (default: the latest).
   * @returns It.
   * @throws {CatalogError} NOT_FOUND.
   */
  async dataset(name: string, version?: string): Promise<DatasetDetail> {
    const q = version === undefined ? "" : `?version=${encodeURIComponent(version)}`;
    return await (await this.#catalogCall("GET", `/datasets/${encodeURIComponent(name)}${q}`))
      .json();
  }

  /**
   * Registers an archive in the catalog.
   *
   * @param path The archive (a path the catalog sees, or a URI).
   * @param options Name and version.
   * @returns The catalog's answer.
   */
  async registerDataset(
    path: string,
    options: { name?: string; version?: string } = {},
  ): Promise<RegisterResult> {
    return await (await this.#catalogCall("POST", "/datasets/register", { path, ...options }))
      .json();
  }

  /**
   * A dataset's rows through the catalog (no access to the archive needed), as a table.
   *
   * @param name The dataset.
   * @param options Version, rows, columns, where.
   * @returns The rows.
   */
  async rows(name: string, options: DatasetRowsOptions = {}): Promise<arrow.Table> {
    const q = new URLSearchParams({ format: "arrow" });
    if (options.version !== undefined) q.set("version", options.version);
    if (options.rows) q.set("rows", `${options.rows.start}:${options.rows.end}`);
    if (options.columns) q.set("columns", options.columns.join(","));
    if (options.where !== undefined) q.set("where", options.where);
    const res = await this.#catalogCall("GET", `/datasets/${encodeURIComponent(name)}/rows?${q}`);
    return arrow.tableFromIPC(new Uint8Array(await res.arrayBuffer()));
  }

  /**
   * One SELECT through the catalog: over its tables, or over datasets' rows (each
   * dataset a table).
   *
   * @param query The query.
   * @returns Columns and rows.
   */
  async sql(query: string): Promise<SqlResult> {
    return await (await this.#catalogCall("POST", "/sql", { query })).json();
  }

  /** Ends the context: later calls throw `CLOSED`. */
  close(): void {
    this.#closed = true;
  }
}
