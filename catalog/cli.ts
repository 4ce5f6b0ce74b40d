/**
 * `catalog serve` as a program: {@link serveCatalog} opens the catalog (failing at
 * once when another server owns the file), serves the app on `Deno.serve`, and
 * prints `Catalog serving at http://HOST:PORT — docs: http://HOST:PORT/docs`.
 * {@link runCatalogServe} parses the command line and the environment (flag > env
 * > default, `config.ts`), runs the server until SIGINT or SIGTERM, and answers an
 * exit code: 0 after a clean stop, 1 on a failure (message on stderr), 2 on a usage
 * error. `main.ts catalog serve ...` calls it; so does `deno run catalog/cli.ts ...`.
 *
 * Permissions: `--allow-net` (listen), `--allow-read`/`--allow-write` on the database
 * file and its directory, `--allow-read` on the archives it registers and on
 * `node_modules` (DuckDB's native addon), `--allow-ffi` (that addon),
 * `--allow-env=PERMAFROST_*`.
 *
 * @module
 */
import { ConfigError, configHelp, loadConfig, processEnv } from "../internal/config.ts";
import { createLogger, type Logger, type LogLevel } from "../internal/log.ts";
import { PermafrostError } from "../internal/errors.ts";
import { createCatalogApp } from "./app.ts";
import { Catalog, type CatalogOptions, type ThawFunction } from "./catalog.ts";
import { CATALOG_CONFIG, CATALOG_PORT } from "./config.ts";

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
  /** $/GB-month by storage class. */
  prices?: Readonly<Record<string, number>>;
  /** Parquet size estimate as a fraction of raw bytes. */
  parquetRatio?: number;
  /** DuckDB memory limit. */
  memoryLimit?: string;
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
  const catalogOptions: CatalogOptions = {
    logger,
    root: options.root || undefined,
    prices: options.prices,
    parquetRatio: options.parquetRatio,
    memoryLimit: options.memoryLimit,
    thaw: options.thaw,
    sql: { timeoutMs: options.sqlTimeoutMs, maxRows: options.sqlMaxRows },
  };
  const catalog = await Catalog.open(options.db, catalogOptions);
  const app = createCatalogApp({ catalog, logger });
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
    throw err;
  }
  const port = server.addr.port;
  const url = `http://${displayHost(host)}:${port}`;
  print(`Catalog serving at ${url} — docs: ${url}/docs`);
  logger.info("catalog listening", { url, db: options.db });
  let closing: Promise<void> | undefined;
  const finished = server.finished.then(() => catalog.close());
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

function displayHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

/** Usage text of `catalog serve`. */
export const CATALOG_SERVE_USAGE =
  `Usage: catalog serve --db <catalog.db> [--host H] [--port ${CATALOG_PORT}] [--log-level info]

Options (flag > environment variable > default):
${configHelp(CATALOG_CONFIG)}`;

/** What {@link runCatalogServe} reads besides the arguments. */
export interface RunCatalogServeIo {
  /** Environment (default: the `PERMAFROST_*` variables `CATALOG_CONFIG` names). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where messages go (default: stderr). */
  print?: (line: string) => void;
  /** Stops the server when aborted (default: SIGINT or SIGTERM). */
  signal?: AbortSignal;
  /** `mod.ts`'s thaw, handed to the catalog. */
  thaw?: ThawFunction;
}

/**
 * Runs `catalog serve` until SIGINT/SIGTERM (or `io.signal`).
 *
 * @param args Arguments after `catalog serve`.
 * @param io Environment, output, stop signal.
 * @returns The exit code: 0 after a clean stop, 1 on a failure, 2 on a usage error.
 */
export async function runCatalogServe(
  args: readonly string[],
  io: RunCatalogServeIo = {},
): Promise<number> {
  const print = io.print ?? printErr;
  if (args.includes("--help") || args.includes("-h")) {
    print(CATALOG_SERVE_USAGE);
    return 0;
  }
  let config;
  try {
    config = loadConfig(CATALOG_CONFIG, { args, env: io.env ?? processEnv(CATALOG_CONFIG) });
  } catch (err) {
    if (err instanceof ConfigError) {
      print(`catalog serve: ${err.message}\n\n${CATALOG_SERVE_USAGE}`);
      return 2;
    }
    throw err;
  }
  const controller = new AbortController();
  const stop = () => controller.abort();
  io.signal?.addEventListener("abort", stop, { once: true });
  const signals: Deno.Signal[] = io.signal
    ? []
    : Deno.build.os === "windows"
    ? ["SIGINT"]
    : ["SIGINT", "SIGTERM"];
  for (const s of signals) Deno.addSignalListener(s, stop);
  try {
    const server = await serveCatalog({
      ...config,
      thaw: io.thaw,
      print,
      signal: controller.signal,
    });
    await server.finished;
    return 0;
  } catch (err) {
    print(
      `catalog serve: ${
        err instanceof PermafrostError || err instanceof Error ? err.message : String(err)
      }`,
    );
    return 1;
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, stop);
    io.signal?.removeEventListener("abort", stop);
  }
}

if (import.meta.main) {
  Deno.exit(await runCatalogServe(Deno.args));
}
