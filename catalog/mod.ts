/**
 * The catalog: an index of Permafrost archives ({@link Catalog}) with its records in
 * a DuckDB file or in Deno KV ({@link KvStore}), and its REST server
 * ({@link createCatalogApp}, {@link serveCatalog}; `hosted.ts` under `deno serve`).
 *
 * @module
 */
export { Catalog } from "./catalog.ts";
export { KvStore } from "./kv_store.ts";
export type { KvStoreOptions } from "./kv_store.ts";
export type { CatalogStore, RecordRequest, Rows, SqlParam, StoreSqlLimits } from "./store.ts";
export type { ColumnRow, VersionEntry } from "./_record.ts";
export { nameFromPath } from "./options.ts";
export { DEFAULT_PARQUET_RATIO, DEFAULT_PRICES } from "./cost.ts";
export type {
  CatalogOptions,
  ChunkOptions,
  ListOptions,
  RegisterOptions,
  ThawFunction,
} from "./options.ts";
export { CATALOG_STATUS_BY_CODE, createCatalogApp } from "./app.ts";
export type { CatalogAppDeps } from "./app.ts";
export { serveCatalog } from "./server.ts";
export type { CatalogServer, ServeCatalogOptions } from "./server.ts";
export { CATALOG_CONFIG, CATALOG_PORT } from "./config.ts";
export type { CatalogConfig } from "./config.ts";
export { localBackend, storageBackend } from "./backend.ts";
export type { ArchiveBackend, ArchiveHandle, StorageBackendOptions } from "./backend.ts";
export { CatalogError } from "./errors.ts";
export type { CatalogErrorCode } from "./errors.ts";
export type * from "./types.ts";
