/**
 * Who sees what in the catalog server, and where archives may come from.
 *
 * **Namespaces.** A dataset version belongs to the namespace of its archive: the
 * first directory of its path under the data root that holds it
 * (`<root>/team-a/flights.pf` is in `team-a`). A token with namespace `team-a` sees,
 * registers and removes only such versions; a token with namespace `*` (operators)
 * sees everything; with auth off everything is visible. A version outside every
 * data root, or directly in a root, has no namespace and only `*` sees it. Versions
 * the caller may not see answer 404, as if they did not exist. A name whose versions
 * live in another namespace cannot be extended by a namespaced caller (403).
 *
 * **Confinement.** `register` and `register_dir` accept only paths that resolve,
 * symlinks followed, inside a data root (`internal/paths.ts`), else 403. A path
 * this process may not read at all is 403 `PATH_NOT_ALLOWED` naming the path.
 *
 * The filtering here walks the catalog's own pages (at most {@link MAX_PAGE} rows
 * per query), so a namespaced list costs O(versions) rather than one page; fine for
 * catalogs of up to some ten thousand versions.
 *
 * @module
 */
import { isAbsolute, relative, sep } from "node:path";
import { seesNamespace } from "../auth/bearer/index.ts";
import { AuthError } from "../auth/errors.ts";
import { ALL_NAMESPACES, type Principal } from "../auth/types.ts";
import { type ConfinedPath, confinePath, PathError } from "../internal/paths.ts";
import { storageBackend } from "./backend.ts";
import { listArchives, registerEach } from "./_register_dir.ts";
import type { Catalog } from "./catalog.ts";
import { type ListOptions, MAX_PAGE, nameFromPath, type RegisterOptions } from "./options.ts";
import { isPermissionError, notAllowed } from "./_read_errors.ts";
import { CatalogError } from "./errors.ts";
import {
  datasetOfTable,
  type RowsRequest,
  type RowsResponse,
  serveRows,
  sqlOverDatasets,
} from "./data.ts";
import { CATALOG_TABLES } from "./_tables.ts";
import { schemaDiff } from "../ops/schema_diff.ts";
import type { Schema } from "../format/column.ts";
import { NAME_PATTERN } from "./limits.ts";
import type {
  ColumnsReport,
  DatasetDetail,
  DatasetRecord,
  IntegrityReport,
  Page,
  RegisterDirResult,
  RegisterResult,
  SearchResult,
  SqlResult,
  VersionRecord,
} from "./types.ts";

/** The access rules of one server: its data roots and how paths resolve. */
export interface AccessConfig {
  /** Data roots (resolved, real paths); empty: no confinement, no namespaces. */
  roots: readonly string[];
  /** Directory a relative path resolves against (default: the first root). */
  base?: string;
}

/** Namespace-aware operations over a catalog, for one caller. */
export class CatalogAccess {
  readonly #catalog: Catalog;
  readonly #config: AccessConfig;

  /**
   * @param catalog The catalog.
   * @param config Data roots and base.
   */
  constructor(catalog: Catalog, config: AccessConfig) {
    this.#catalog = catalog;
    this.#config = config;
  }

  /**
   * The namespace of an archive path: its first directory under a data root.
   *
   * @param path A recorded (absolute, resolved) archive path.
   * @returns The namespace, `""` directly in a root, null outside every root.
   */
  namespaceOf(path: string): string | null {
    let best: string | null = null;
    let bestRoot = "";
    for (const root of this.#config.roots) {
      const rel = relative(root, path);
      if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) continue;
      if (root.length >= bestRoot.length) {
        bestRoot = root;
        best = rel.includes(sep) ? rel.split(sep)[0]! : "";
      }
    }
    return best;
  }

  /**
   * Whether a caller sees a version.
   *
   * @param who The caller (null: auth off).
   * @param record The version (its `path`).
   * @returns True when visible.
   */
  visible(who: Principal | null, record: { path: string }): boolean {
    return seesNamespace(who, this.namespaceOf(record.path));
  }

  /**
   * Refuses callers that are not operators (namespace `*`), for whole-catalog reads.
   *
   * @param who The caller.
   * @param what What was asked, for the message.
   * @throws {AuthError} FORBIDDEN.
   */
  requireAll(who: Principal | null, what: string): void {
    if (who !== null && who.namespace !== ALL_NAMESPACES) {
      throw new AuthError(
        "FORBIDDEN",
        `${what} reads every namespace: it needs a token with namespace '*', the token of '${who.sub}' is for '${who.namespace}'`,
      );
    }
  }

  /**
   * `GET /datasets`: one page of what the caller sees.
   *
   * @param who The caller.
   * @param options The catalog's list options.
   * @returns The page.
   */
  async list(who: Principal | null, options: ListOptions): Promise<Page<DatasetRecord>> {
    if (this.#all(who)) return await this.#catalog.list(options);
    const seen = new Set<string>();
    const items =
      (await this.#scan((offset) =>
        this.#catalog.list({ ...options, allVersions: true, limit: MAX_PAGE, offset })
      )).filter((r) => {
        if (!this.visible(who, r)) return false;
        if (options.allVersions) return true;
        if (seen.has(r.name)) return false; // rows come newest first per name
        seen.add(r.name);
        return true;
      });
    return pageOf(items, options);
  }

  /**
   * `GET /datasets/{name}`: the newest visible version (or the one asked for).
   *
   * @param who The caller.
   * @param name Dataset name.
   * @param version Version, or the newest visible.
   * @returns The record, with `versions` counting the visible ones.
   * @throws {CatalogError} NOT_FOUND when no such version is visible.
   */
  async get(who: Principal | null, name: string, version?: string): Promise<DatasetDetail> {
    if (this.#all(who)) return await this.#catalog.get(name, { version });
    const visible = (await this.#allVersions(name)).filter((r) => this.visible(who, r));
    const record = version === undefined ? visible[0] : visible.find((r) => r.version === version);
    if (!record) throw notFound(name, version);
    return { ...record, versions: visible.length };
  }

  /**
   * `GET /datasets/{name}/versions`.
   *
   * @param who The caller.
   * @param name Dataset name.
   * @param paging Limit and offset.
   * @returns One page of visible versions, newest first.
   * @throws {CatalogError} NOT_FOUND when none is visible.
   */
  async versions(
    who: Principal | null,
    name: string,
    paging: { limit?: number; offset?: number },
  ): Promise<Page<VersionRecord>> {
    if (this.#all(who)) {
      const page = await this.#catalog.versions(name, paging);
      // The version before the page's oldest, to say how that one's schema changed.
      const before = await this.#catalog.versions(name, {
        limit: 1,
        offset: page.offset + page.items.length,
      }).then((p) => p.items[0], () => undefined);
      return { ...page, items: withSchemaChanges(page.items, before) };
    }
    const visible = (await this.#allVersions(name)).filter((r) => this.visible(who, r));
    if (visible.length === 0) throw notFound(name);
    return pageOf(withSchemaChanges(visible, undefined), paging);
  }

  /**
   * The version a per-version request (chunks, integrity) is about, checked visible.
   *
   * @param who The caller.
   * @param name Dataset name.
   * @param version Version asked for, or undefined for the newest visible.
   * @returns The version to pass to the catalog (undefined for operators: the catalog's latest).
   * @throws {CatalogError} NOT_FOUND.
   */
  async versionFor(
    who: Principal | null,
    name: string,
    version: string | undefined,
  ): Promise<string | undefined> {
    if (this.#all(who)) return version;
    return (await this.get(who, name, version)).version;
  }

  /**
   * `GET /datasets/{name}/columns`.
   *
   * @param who The caller.
   * @param name Dataset name.
   * @param version Version (default: the latest the caller sees).
   * @returns The columns with their bytes.
   * @throws {CatalogError} NOT_FOUND (also for another namespace's dataset).
   */
  async columns(who: Principal | null, name: string, version?: string): Promise<ColumnsReport> {
    return await this.#catalog.columns(name, {
      version: await this.versionFor(who, name, version),
    });
  }

  /**
   * `GET /datasets/{name}/rows`: the rows of a visible version, streamed. The archive's
   * path is confined to the data roots again here, where it is opened (a file swapped
   * for a link out of them since registration is refused), and its namespace checked.
   *
   * @param who The caller (its token has `can_thaw`: the route checks).
   * @param name Dataset name.
   * @param version Version, or the newest visible.
   * @param request Rows, columns, where, format.
   * @returns The body and its content type.
   * @throws {CatalogError} NOT_FOUND; INVALID_ARGUMENT; ARCHIVE_UNREADABLE;
   * {import("../internal/paths.ts").PathError} PATH_OUTSIDE_ROOT.
   */
  async rows(
    who: Principal | null,
    name: string,
    version: string | undefined,
    request: RowsRequest,
  ): Promise<RowsResponse> {
    const record = await this.get(who, name, version);
    let path = record.path;
    if (this.#config.roots.length > 0) {
      const confined = await confinePath(path, this.#config.roots, { base: this.#config.base });
      if (!seesNamespace(who, confined.namespace)) throw notFound(name, version);
      path = confined.path;
    }
    return await serveRows(path, request);
  }

  /**
   * `POST /sql`: a query over the catalog's tables (operators: namespace `*`), or over
   * datasets' rows, each table name a dataset (`"name@version"` for an older version)
   * the caller sees; its path is confined again where it is read. One query reads one
   * kind, not both.
   *
   * @param who The caller (its token has `can_thaw`: the route checks).
   * @param query One SELECT.
   * @returns Columns and rows.
   * @throws {CatalogError} SQL_REFUSED (both kinds at once, or not a SELECT), SQL_FAILED,
   * SQL_TIMEOUT, SQL_TOO_LARGE; {AuthError} FORBIDDEN for the catalog's tables without `*`.
   */
  async sql(who: Principal | null, query: string): Promise<SqlResult> {
    // What does not parse as one SELECT gets the sandbox's own answer, below.
    const tables = await this.#catalog.tablesOf(query);
    // The datasets it reads, as this caller sees them (a name it may not see is none).
    const datasets = new Map<string, string>();
    if (!tables.some((t) => CATALOG_TABLES.includes(t.toLowerCase()))) {
      for (const table of tables) {
        const path = await this.#datasetPath(who, table);
        if (path !== null) datasets.set(table, path);
      }
    }
    if (datasets.size === 0) {
      this.requireAll(who, "POST /sql over the catalog's tables");
      return await this.#catalog.sql(query);
    }
    const engine = this.#catalog.engine;
    if (engine === "duckdb") {
      const { openLockedDuckDB } = await import("../io/_duckdb.ts");
      const { checkSyntax } = await import("./sql_sandbox.ts");
      const db = await openLockedDuckDB([]);
      try {
        await checkSyntax(db.connection, query, [...datasets.keys()]);
      } finally {
        db.close();
      }
    }
    return await sqlOverDatasets(
      query,
      (table) => Promise.resolve(datasets.get(table) ?? null),
      this.#catalog.sqlLimits,
      engine,
    );
  }

  /** Where the dataset a table name stands for lies, confined now; null when not visible. */
  async #datasetPath(who: Principal | null, table: string): Promise<string | null> {
    const { name, version } = datasetOfTable(table);
    if (!NAME_PATTERN.test(name)) return null;
    let record;
    try {
      record = await this.get(who, name, version);
    } catch (err) {
      if (err instanceof CatalogError && err.code === "NOT_FOUND") return null;
      throw err;
    }
    if (this.#config.roots.length === 0) return record.path;
    const confined = await confinePath(record.path, this.#config.roots, {
      base: this.#config.base,
    });
    return seesNamespace(who, confined.namespace) ? confined.path : null;
  }

  /**
   * `GET /datasets/{name}/integrity`.
   *
   * @param who The caller.
   * @param name Dataset name.
   * @param version Version, or the newest visible.
   * @returns The report.
   */
  async integrity(
    who: Principal | null,
    name: string,
    version: string | undefined,
  ): Promise<IntegrityReport> {
    return await this.#catalog.integrityCheck(name, {
      version: await this.versionFor(who, name, version),
    });
  }

  /**
   * `DELETE /datasets/{name}`: the visible versions only.
   *
   * @param who The caller.
   * @param name Dataset name.
   * @param version One version, or every visible one.
   * @returns The versions removed.
   * @throws {CatalogError} NOT_FOUND when none is visible.
   */
  async remove(
    who: Principal | null,
    name: string,
    version: string | undefined,
  ): Promise<{ name: string; removed: string[] }> {
    if (this.#all(who)) return await this.#catalog.remove(name, { version });
    const visible = (await this.#allVersions(name)).filter((r) =>
      this.visible(who, r) && (version === undefined || r.version === version)
    );
    if (visible.length === 0) throw notFound(name, version);
    const removed: string[] = [];
    for (const r of visible) {
      removed.push(...(await this.#catalog.remove(name, { version: r.version })).removed);
    }
    return { name, removed };
  }

  /**
   * `GET /search`: hits the caller sees, paged after filtering.
   *
   * @param who The caller.
   * @param q The query.
   * @param paging Limit and offset.
   * @returns The hits.
   */
  async search(
    who: Principal | null,
    q: string,
    paging: { limit?: number; offset?: number },
  ): Promise<SearchResult> {
    if (this.#all(who)) return await this.#catalog.search(q, paging);
    const hits = [];
    for (let offset = 0;; offset += MAX_PAGE) {
      const page = await this.#catalog.search(q, { limit: MAX_PAGE, offset });
      for (const hit of page.items) {
        // A hit names the best-matching version of a name; keep it when visible.
        const record = await this.#catalog.get(hit.name, { version: hit.version }).catch(() =>
          null
        );
        if (record && this.visible(who, record)) hits.push(hit);
      }
      if (page.items.length < MAX_PAGE) break;
    }
    const { items, total } = pageOf(hits, paging);
    return { q, items, total };
  }

  /**
   * `POST /datasets/register`: confines the path, checks the namespace, registers.
   *
   * @param who The caller.
   * @param path The archive path as given.
   * @param options Name, version, description, storage class.
   * @returns What the catalog did.
   * @throws {import("../internal/paths.ts").PathError} PATH_OUTSIDE_ROOT, PATH_INVALID;
   * {AuthError} FORBIDDEN for another namespace.
   */
  async register(
    who: Principal | null,
    path: string,
    options: RegisterOptions,
  ): Promise<RegisterResult> {
    const abs = await this.#confine(who, path);
    if (who !== null && who.namespace !== ALL_NAMESPACES) {
      await this.#checkName(who, options.name ?? nameFromPath(abs));
    }
    return await this.#catalog.register(abs, options);
  }

  /**
   * `POST /datasets/register_dir`: confines the directory, checks the namespace, and
   * registers every `*.pf` in it (symlinked entries are skipped by the listing).
   *
   * @param who The caller.
   * @param dir The directory as given.
   * @param options `recursive`, storage class.
   * @returns What was registered, unchanged or failed.
   */
  async registerDir(
    who: Principal | null,
    dir: string,
    options: { recursive?: boolean; storageClass?: string },
  ): Promise<RegisterDirResult> {
    const abs = await this.#confine(who, dir);
    if (who === null || who.namespace === ALL_NAMESPACES) {
      return await this.#catalog.registerDir(abs, options);
    }
    const files = await listArchives(storageBackend(), abs, options.recursive ?? false);
    const result = await registerEach(abs, files, async (file) => {
      await this.#checkName(who, nameFromPath(file));
      return await this.#catalog.register(file, { storageClass: options.storageClass });
    });
    return result;
  }

  #all(who: Principal | null): boolean {
    return who === null || who.namespace === ALL_NAMESPACES;
  }

  async #confine(who: Principal | null, path: string): Promise<string> {
    const { roots } = this.#config;
    if (roots.length === 0) {
      if (!this.#all(who)) {
        throw new AuthError(
          "FORBIDDEN",
          "This catalog has no data roots (--data-roots), so it has no namespaces: only a token with namespace '*' may register",
        );
      }
      return path;
    }
    let confined: ConfinedPath;
    try {
      confined = await confinePath(path, roots, { base: this.#config.base });
    } catch (err) {
      // Resolving a path this process may not read (`/proc/self/environ`) fails with
      // the platform's permission text: answer in the catalog's words instead.
      if (err instanceof PathError && isPermissionError(err.cause)) {
        throw notAllowed(path, err.cause);
      }
      throw err;
    }
    if (!seesNamespace(who, confined.namespace)) {
      throw new AuthError(
        "FORBIDDEN",
        `Path '${path}' is not in namespace '${who!.namespace}': put it under <data root>/${
          who!.namespace
        }/`,
      );
    }
    return confined.path;
  }

  async #checkName(who: Principal, name: string): Promise<void> {
    const others = (await this.#allVersions(name)).filter((r) => !this.visible(who, r));
    if (others.length > 0) {
      throw new AuthError(
        "FORBIDDEN",
        `Dataset name '${name}' belongs to another namespace: register under another name`,
      );
    }
  }

  async #allVersions(name: string): Promise<DatasetRecord[]> {
    try {
      return await this.#scan((offset) =>
        this.#catalog.versions(name, { limit: MAX_PAGE, offset })
      );
    } catch (err) {
      if (err instanceof CatalogError && err.code === "NOT_FOUND") return [];
      throw err;
    }
  }

  async #scan(
    fetchPage: (offset: number) => Promise<Page<DatasetRecord>>,
  ): Promise<DatasetRecord[]> {
    const out: DatasetRecord[] = [];
    for (let offset = 0;; offset += MAX_PAGE) {
      const page = await fetchPage(offset);
      out.push(...page.items);
      if (page.items.length < MAX_PAGE || out.length >= page.total) return out;
    }
  }
}

/**
 * Versions (newest first) with each one's schema changes from the version after it in
 * the list (`before` for the last; none: it is the first version).
 */
function withSchemaChanges(
  items: DatasetRecord[],
  before: DatasetRecord | undefined,
): VersionRecord[] {
  return items.map((record, i) => {
    const older = items[i + 1] ?? before;
    return {
      ...record,
      schema_changes: older
        ? schemaDiff(older.schema as Schema, record.schema as Schema).changes
        : null,
    };
  });
}

function pageOf<T>(items: T[], paging: { limit?: number; offset?: number }): Page<T> {
  const limit = paging.limit ?? 100;
  const offset = paging.offset ?? 0;
  return { items: items.slice(offset, offset + limit), total: items.length, limit, offset };
}

function notFound(name: string, version?: string): CatalogError {
  return new CatalogError(
    "NOT_FOUND",
    version === undefined
      ? `No dataset named '${name}'`
      : `No version '${version}' of dataset '${name}'`,
  );
}
