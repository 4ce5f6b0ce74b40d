/**
 * The catalog server: {@link serveCatalog} opens the catalog (failing at once when
 * another server owns the file), serves the app on `Deno.serve`, and prints `Catalog
 * serving at http://HOST:PORT — docs: http://HOST:PORT/docs`. `permafrost catalog
 * serve` (`cli/servers.ts`) parses its settings and runs it until SIGINT or SIGTERM.
 *
 * Permissions: `--allow-net` (listen), `--allow-read`/`--allow-write` on the database
 * file and its directory, `--allow-read` on the archives it registers and on
 * Deno's npm cache (DuckDB's native addon), `--allow-ffi` (that addon),
 * `--allow-env=PERMAFROST_*`.
 *
 * Security: `--jwt-secret` / `PERMAFROST_JWT_SECRET` turns bearer-token auth on (a
 * warning is logged at start when it is off); `--users-db` / `PERMAFROST_USERS_DB`
 * names the user store `cluster add-user` writes (the master's), against which user
 * tokens are checked, so `cluster remove-user` locks a user out of the catalog at
 * once (without it, a warning at start: a token is good until it expires);
 * `--data-roots` (default: `--root`) confines registration and defines the
 * namespaces. See `app.ts` and `_access.ts`. The user store needs `--allow-read`
 * and `--allow-write` on its file and directory (SQLite's WAL).
 *
 * @module
 */
import { RBACManager } from "../auth/rbac.ts";
import { openSqliteUserStore } from "../auth/sqlite_store.ts";
import type { UserStore } from "../auth/store.ts";
import { resolveDataRoots } from "../internal/paths.ts";
import { createLogger, type Logger, type LogLevel } from "../internal/log.ts";
import { createCatalogApp } from "./app.ts";
import { Catalog } from "./catalog.ts";
import type { CatalogOptions, ThawFunction } from "./options.ts";
import { CATALOG_PORT } from "./config.ts";

/** Options of {@link serveCatalog}. */
export interface ServeCatalogOptions {
  /** DuckDB file of the catalog. */
  db: string;
  /** Interface (default `127.0.0.1`). */
  host?: string;
  /** Port (default 8800; 0 picks a free one). */
  port?: number;
  /** Log level (default `info`). */
  logLevel?: LogLevel;
  /** Only register archives under this directory. */
  root?: string;
  /** `POST /sql` limits. */
  sqlTimeoutMs?: number;
  /** `POST /sql` row limit. */
  sqlMaxRows?: number;
  /** `POST /sql` byte limit (the rows' JSON). */
  sqlMaxBytes?: number;
  /** $/GB-month by storage class. */
  prices?: Readonly<Record<string, number>>;
  /** Parquet size estimate as a fraction of raw bytes. */
  parquetRatio?: number;
  /** DuckDB memory limit. */
  memoryLimit?: string;
  /** Bytes of remote archives' indexes kept in memory. */
  cacheBytes?: number;
  /** Seconds a cached remote index is used without revalidating it. */
  cacheTtlS?: number;
  /** JWT secret: turns auth on (empty or absent: auth off, with a warning). */
  jwtSecret?: string;
  /** Or a ready manager (tests; wins over `jwtSecret`). */
  rbac?: RBACManager;
  /** The user store (SQLite) user tokens are checked against; used with `jwtSecret`. */
  usersDb?: string;
  /** Directories registration is confined to (default: `root`, if set). */
  dataRoots?: readonly string[];
  /** Largest request body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** `mod.ts`'s thaw, handed to the catalog. */
  thaw?: ThawFunction;
  /** Logger (default: JSON lines on stderr at `logLevel`). */
  logger?: Logger;
  /** Where the "serving at" line goes (default: stderr). */
  print?: (line: string) => void;
  /** Stops the server when aborted. */
  signal?: AbortSignal;
}

/** A running catalog server. */
export interface CatalogServer {
  /** Base URL (`http://127.0.0.1:8800`). */
  readonly url: string;
  /** Port actually bound. */
  readonly port: number;
  /** The catalog behind it. */
  readonly catalog: Catalog;
  /** Resolves once the server has stopped and the catalog is closed. */
  readonly finished: Promise<void>;
  /** Stops accepting requests, finishes the ones in flight, closes the catalog. */
  shutdown(): Promise<void>;
}

const encoder = new TextEncoder();

function printErr(line: string): void {
  Deno.stderr.writeSync(encoder.encode(line + "\n"));
}

/**
 * Opens the catalog and serves it.
 *
 * @param options Database, address, limits.
 * @returns The running server.
 * @throws {import("./errors.ts").CatalogError} DB_LOCKED when another server owns the file.
 */
export async function serveCatalog(options: ServeCatalogOptions): Promise<CatalogServer> {
  const logger = options.logger ??
    createLogger({ component: "catalog", level: options.logLevel ?? "info" });
  const security = await catalogSecurity(options, logger);
  const catalogOptions: CatalogOptions = {
    logger,
    root: security.root,
    prices: options.prices,
    parquetRatio: options.parquetRatio,
    memoryLimit: options.memoryLimit,
    cacheBytes: options.cacheBytes,
    cacheTtlS: options.cacheTtlS,
    thaw: options.thaw,
    sql: {
      timeoutMs: options.sqlTimeoutMs,
      maxRows: options.sqlMaxRows,
      maxBytes: options.sqlMaxBytes,
    },
  };
  let catalog: Catalog;
  try {
    catalog = await Catalog.open(options.db, catalogOptions);
  } catch (err) {
    security.close();
    throw err;
  }
  const app = createCatalogApp({
    catalog,
    logger,
    rbac: security.rbac,
    dataRoots: security.dataRoots,
    pathBase: security.root,
    maxBodyBytes: options.maxBodyBytes,
  });
  if (security.dataRoots.length === 0) {
    logger.warn(
      "no data roots configured (--data-roots / --root): register accepts any path the server can read, and only namespace '*' tokens may register",
    );
  }
  const host = options.host ?? "127.0.0.1";
  const print = options.print ?? printErr;
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: host,
      port: options.port ?? CATALOG_PORT,
      signal: options.signal,
      onListen: () => {},
    }, app.fetch);
  } catch (err) {
    await catalog.close();
    security.close();
    throw err;
  }
  const port = server.addr.port;
  const url = `http://${displayHost(host)}:${port}`;
  print(`Catalog serving at ${url} — docs: ${url}/docs`);
  logger.info("catalog listening", { url, db: options.db });
  let closing: Promise<void> | undefined;
  const finished = server.finished.then(() => catalog.close()).finally(() => security.close());
  return {
    url,
    port,
    catalog,
    finished,
    shutdown() {
      closing ??= server.shutdown().then(() => finished);
      return closing;
    },
  };
}

/** The security settings of a catalog server, resolved once at start. */
export interface CatalogSecurity {
  /** Token validator, or null (auth off). */
  rbac: RBACManager | null;
  /** Data roots, resolved (real paths). */
  dataRoots: string[];
  /** The catalog root, resolved (undefined when not set). */
  root: string | undefined;
  /** Closes the user store, if one was opened (idempotent). */
  close(): void;
}

/**
 * Resolves the security settings: the token manager (with the user store, when
 * `usersDb` is set) and the real paths of the root and data roots (so a symlinked
 * root does not refuse its own files).
 *
 * @param options `jwtSecret`/`rbac`, `usersDb`, `root`, `dataRoots`.
 * @param logger Where the warning about a missing user store goes (default: nowhere).
 * @returns The resolved settings; `close()` them when the server stops.
 * @throws {import("../auth/errors.ts").AuthError} BAD_SECRET for a short secret,
 * STORE_FAILED when the user store cannot be opened;
 * {import("../internal/paths.ts").PathError} PATH_INVALID for a missing root.
 */
export async function catalogSecurity(
  options: Pick<ServeCatalogOptions, "jwtSecret" | "rbac" | "usersDb" | "root" | "dataRoots">,
  logger?: Pick<Logger, "warn">,
): Promise<CatalogSecurity> {
  const root = options.root ? (await resolveDataRoots([options.root]))[0] : undefined;
  const configured = options.dataRoots?.length ? options.dataRoots : root ? [root] : [];
  const dataRoots = await resolveDataRoots(configured);
  let store: UserStore | undefined;
  let rbac = options.rbac ?? null;
  if (rbac === null && options.jwtSecret) {
    if (options.usersDb) store = openSqliteUserStore(options.usersDb);
    else {
      logger?.warn(
        "auth is on without a user store (--users-db / PERMAFROST_USERS_DB): tokens are checked by signature only, so a removed user's token works here until it expires; point it at the master's users.db",
      );
    }
    try {
      rbac = new RBACManager({ secret: options.jwtSecret, store });
    } catch (err) {
      store?.close();
      throw err;
    }
  }
  return { rbac, dataRoots, root, close: () => store?.close() };
}

function displayHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}
