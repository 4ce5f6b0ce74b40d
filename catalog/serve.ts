/**
 * The `deno serve` entry of the catalog. Host and port come from `deno serve`
 * (`--host`, `--port`); everything else from `PERMAFROST_*` variables (see
 * `config.ts`), `PERMAFROST_CATALOG_DB` required:
 *
 * ```sh
 * PERMAFROST_CATALOG_DB=catalog.db deno serve --port 8800 --allow-net \
 *   --allow-read --allow-write --allow-ffi --allow-env=PERMAFROST_* catalog/serve.ts
 * ```
 *
 * @module
 */
import { loadConfig, processEnv } from "../internal/config.ts";
import { createLogger } from "../internal/log.ts";
import { createCatalogApp } from "./app.ts";
import { Catalog } from "./catalog.ts";
import { catalogSecurity } from "./server.ts";
import { CATALOG_CONFIG } from "./config.ts";

const { host: _host, port: _port, ...SERVE_CONFIG } = CATALOG_CONFIG;
const config = loadConfig(SERVE_CONFIG, { env: processEnv(SERVE_CONFIG) });
const logger = createLogger({ component: "catalog", level: config.logLevel });
const security = await catalogSecurity(config, logger);
const catalog = await Catalog.open(config.db, {
  logger,
  root: security.root,
  prices: config.prices,
  parquetRatio: config.parquetRatio,
  memoryLimit: config.memoryLimit,
  cacheBytes: config.cacheBytes,
  cacheTtlS: config.cacheTtlS,
  sql: { timeoutMs: config.sqlTimeoutMs, maxRows: config.sqlMaxRows, maxBytes: config.sqlMaxBytes },
});
const app = createCatalogApp({
  catalog,
  logger,
  rbac: security.rbac,
  dataRoots: security.dataRoots,
  pathBase: security.root,
  maxBodyBytes: config.maxBodyBytes,
});

export default { fetch: app.fetch } satisfies Deno.ServeDefaultExport;
