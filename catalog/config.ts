/**
 * The catalog server's settings, declared once as a table for `internal/config.ts`:
 * flag, `PERMAFROST_*` variable, default, parser. The README's catalog config table
 * is `configMarkdown(CATALOG_CONFIG)`.
 *
 * @module
 */
import {
  type ConfigOf,
  intParser,
  LOG_LEVEL_SETTING,
  numberParser,
  type Parser,
  pathParser,
  portParser,
  setting,
  stringParser,
} from "../internal/config.ts";
import { dataRootsParser, JWT_SECRET_SETTING } from "../auth/settings.ts";
import { DEFAULT_SQL_MAX_BYTES, NAME_PATTERN } from "./limits.ts";
import { DEFAULT_PARQUET_RATIO, DEFAULT_PRICES } from "./cost.ts";

/** Default catalog port. */
export const CATALOG_PORT = 8800;

/**
 * Parses `class=price,class=price` ($/GB-month by storage class).
 *
 * @returns The parser.
 */
export function pricesParser(): Parser<Readonly<Record<string, number>>> {
  return {
    describe: "class=$/GB-month pairs, comma-separated",
    parse(raw) {
      const out: Record<string, number> = {};
      for (const part of raw.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
        const [cls, price, ...rest] = part.split("=").map((x) => x.trim());
        const n = Number(price);
        if (!cls || !NAME_PATTERN.test(cls) || rest.length > 0 || price === "" || !(n >= 0)) {
          throw new Error(`expected class=price pairs like standard=0.023, got '${part}'`);
        }
        out[cls] = n;
      }
      if (Object.keys(out).length === 0) throw new Error("expected at least one class=price pair");
      return Object.freeze(out);
    },
  };
}

/** Settings of `catalog serve`. */
export const CATALOG_CONFIG = {
  db: setting({
    flag: "--db",
    env: "PERMAFROST_CATALOG_DB",
    parse: pathParser(),
    description: "DuckDB file of the catalog (created if missing; one server per file)",
  }),
  host: setting({
    flag: "--host",
    env: "PERMAFROST_CATALOG_HOST",
    default: "127.0.0.1",
    parse: stringParser(),
    description: "Interface to listen on",
  }),
  port: setting({
    flag: "--port",
    env: "PERMAFROST_CATALOG_PORT",
    default: CATALOG_PORT,
    parse: portParser(),
    description: "Port to listen on (0: any free port)",
  }),
  logLevel: LOG_LEVEL_SETTING,
  root: setting({
    flag: "--root",
    env: "PERMAFROST_CATALOG_ROOT",
    default: "",
    parse: pathParser(),
    description: "Only register archives under this directory (relative paths resolve against it)",
  }),
  sqlTimeoutMs: setting({
    flag: "--sql-timeout-ms",
    env: "PERMAFROST_CATALOG_SQL_TIMEOUT_MS",
    default: 5000,
    parse: intParser({ min: 1, max: 600_000 }),
    description: "Time limit of one POST /sql query",
  }),
  sqlMaxRows: setting({
    flag: "--sql-max-rows",
    env: "PERMAFROST_CATALOG_SQL_MAX_ROWS",
    default: 10_000,
    parse: intParser({ min: 1, max: 1_000_000 }),
    description: "Rows one POST /sql answer holds at most (the rest is cut, truncated: true)",
  }),
  sqlMaxBytes: setting({
    flag: "--sql-max-bytes",
    env: "PERMAFROST_CATALOG_SQL_MAX_BYTES",
    default: DEFAULT_SQL_MAX_BYTES,
    parse: intParser({ min: 1024, max: 256 * 1024 * 1024 }),
    description:
      "Bytes of rows (as JSON) one POST /sql answer holds at most (the rest is cut, truncated: true)",
  }),
  prices: setting({
    flag: "--prices",
    env: "PERMAFROST_CATALOG_PRICES",
    default: DEFAULT_PRICES,
    parse: pricesParser(),
    description: "Storage classes and their $/GB-month, for cost_report",
  }),
  parquetRatio: setting({
    flag: "--parquet-ratio",
    env: "PERMAFROST_CATALOG_PARQUET_RATIO",
    default: DEFAULT_PARQUET_RATIO,
    parse: numberParser({ min: 0.001, max: 10 }),
    description: "Assumed Parquet size as a fraction of raw bytes, for cost_report",
  }),
  jwtSecret: JWT_SECRET_SETTING,
  usersDb: setting({
    flag: "--users-db",
    env: "PERMAFROST_USERS_DB",
    default: "",
    parse: stringParser({ nonEmpty: false }),
    description:
      "User store (SQLite) that cluster add-user and remove-user write, the master's: user tokens are checked against it, so a removed user is refused at once (unset with auth on: tokens are good until they expire, a warning at start)",
  }),
  dataRoots: setting({
    flag: "--data-roots",
    env: "PERMAFROST_DATA_ROOTS",
    default: Object.freeze([]) as readonly string[],
    parse: dataRootsParser(),
    description:
      "Directories (or prefixes like s3://bucket/root) register/register_dir are confined to (symlinks followed); their subdirectories are the namespaces. Default: --root, if set",
  }),
  maxBodyBytes: setting({
    flag: "--max-body-bytes",
    env: "PERMAFROST_CATALOG_MAX_BODY_BYTES",
    default: 1024 * 1024,
    parse: intParser({ min: 1024, max: 1024 * 1024 * 1024 }),
    description: "Largest request body; larger ones are refused with 413",
  }),
  cacheBytes: setting({
    flag: "--cache-bytes",
    env: "PERMAFROST_CATALOG_CACHE_BYTES",
    default: 64_000_000,
    parse: intParser({ min: 0, max: 64 * 1024 * 1024 * 1024 }),
    description:
      "Bytes of headers and footers of archives in object storage kept in memory (revalidated by ETag)",
  }),
  cacheTtlS: setting({
    flag: "--cache-ttl-s",
    env: "PERMAFROST_CATALOG_CACHE_TTL_S",
    default: 0,
    parse: intParser({ min: 0, max: 7 * 24 * 3600 }),
    description:
      "Seconds a cached header and footer of an archive in object storage is used without revalidating it (0: revalidate by ETag at every use)",
  }),
  memoryLimit: setting({
    flag: "--memory-limit",
    env: "PERMAFROST_CATALOG_MEMORY_LIMIT",
    default: "1GB",
    parse: {
      describe: "a DuckDB size like 512MB or 2GB",
      parse(raw) {
        if (!/^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.test(raw.trim())) {
          throw new Error("expected a size like 512MB or 2GB");
        }
        return raw.trim();
      },
    },
    description: "DuckDB memory limit",
  }),
};

/** The resolved settings of `catalog serve`. */
export type CatalogConfig = ConfigOf<typeof CATALOG_CONFIG>;

/**
 * Settings of the hosted catalog (`catalog/hosted.ts`, under `deno serve`): records in
 * Deno KV instead of a DuckDB file, archives in object storage, no user store (it is
 * a SQLite file); the rest as `catalog serve`'s, from the same variables.
 */
export const HOSTED_CATALOG_CONFIG = {
  kv: setting({
    flag: "--kv",
    env: "PERMAFROST_CATALOG_KV",
    default: "",
    parse: stringParser(),
    description:
      "Deno KV of the hosted catalog: a path, a KV Connect URL, or empty for the host's default KV",
  }),
  logLevel: CATALOG_CONFIG.logLevel,
  sqlTimeoutMs: CATALOG_CONFIG.sqlTimeoutMs,
  sqlMaxRows: CATALOG_CONFIG.sqlMaxRows,
  sqlMaxBytes: CATALOG_CONFIG.sqlMaxBytes,
  prices: CATALOG_CONFIG.prices,
  parquetRatio: CATALOG_CONFIG.parquetRatio,
  jwtSecret: CATALOG_CONFIG.jwtSecret,
  dataRoots: CATALOG_CONFIG.dataRoots,
  maxBodyBytes: CATALOG_CONFIG.maxBodyBytes,
  cacheBytes: CATALOG_CONFIG.cacheBytes,
  cacheTtlS: CATALOG_CONFIG.cacheTtlS,
};
