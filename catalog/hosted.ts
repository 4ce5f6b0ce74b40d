/**
 * The `deno serve` entry of a catalog hosted where neither native code nor a disk is
 * allowed (Deno Deploy style): records in Deno KV, archives read from object storage,
 * every query on duckdb-wasm (`kv_store.ts`). It needs no `--allow-ffi`,
 * `--allow-write` or `--allow-run`; `--allow-read` only for duckdb-wasm's own `.wasm`
 * files in the module cache; `--allow-sys=cpus` because duckdb-wasm's bindings count
 * the cores as they load:
 *
 * ```sh
 * WASM_DIR="$(deno info --json npm:@duckdb/duckdb-wasm@1.32.0 | …)"   # see README
 * PERMAFROST_JWT_SECRET=… PERMAFROST_DATA_ROOTS=s3://bucket/archives \
 *   deno serve --port 8800 --unstable-kv --allow-net --allow-sys=cpus \
 *   --allow-read="$WASM_DIR" '--allow-env=PERMAFROST_*,AWS_*' catalog/hosted.ts
 * ```
 *
 * Settings come from `PERMAFROST_*` variables (`HOSTED_CATALOG_CONFIG`):
 * `PERMAFROST_CATALOG_KV` picks the KV (default: the host's), the rest are those of
 * `catalog serve`. Every REST path of the catalog is served, `/sql` over the catalog
 * and over datasets' rows alike; registering takes object URIs under the data roots.
 *
 * @module
 */
import { loadConfig, processEnv } from "../internal/config.ts";
import { createLogger } from "../internal/log.ts";
import { RBACManager } from "../auth/rbac.ts";
import { resolveDataRoots } from "../internal/paths.ts";
import { createCatalogApp } from "./app.ts";
import { Catalog } from "./catalog.ts";
import { KvStore } from "./kv_store.ts";
import { HOSTED_CATALOG_CONFIG } from "./config.ts";

const config = loadConfig(HOSTED_CATALOG_CONFIG, { env: processEnv(HOSTED_CATALOG_CONFIG) });
const logger = createLogger({ component: "catalog", level: config.logLevel });
let kv: Deno.Kv;
try {
  kv = await Deno.openKv(config.kv === "" ? undefined : config.kv);
} catch (err) {
  // A KV in a file is a disk this entry is not given: say so in one line, not a stack.
  logger.error(
    `Cannot open the Deno KV '${config.kv || "(the host's)"}': ${
      err instanceof Error ? err.message : err
    }. Leave PERMAFROST_CATALOG_KV empty for the host's KV or give a KV Connect URL; a file needs --allow-read and --allow-write for it`,
  );
  Deno.exit(1);
}
const catalog = await Catalog.open(
  new KvStore(kv, { location: config.kv === "" ? "the host's Deno KV" : `Deno KV ${config.kv}` }),
  {
    logger,
    prices: config.prices,
    parquetRatio: config.parquetRatio,
    cacheBytes: config.cacheBytes,
    cacheTtlS: config.cacheTtlS,
    sql: {
      timeoutMs: config.sqlTimeoutMs,
      maxRows: config.sqlMaxRows,
      maxBytes: config.sqlMaxBytes,
    },
  },
);
const dataRoots = await resolveDataRoots(config.dataRoots ?? []);
const app = createCatalogApp({
  catalog,
  logger,
  rbac: config.jwtSecret ? new RBACManager({ secret: config.jwtSecret }) : null,
  dataRoots,
  maxBodyBytes: config.maxBodyBytes,
});
logger.info("hosted catalog ready", { kv: config.kv || "default", data_roots: dataRoots });

export default { fetch: app.fetch } satisfies Deno.ServeDefaultExport;
