/**
 * The modules the CLI loads only when a command needs them, in one list.
 *
 * Why not a plain `await import("../ops/thaw.ts")`: before the first line runs, Deno
 * builds the module graph of every import it can read in the source, a dynamic
 * import with a literal specifier included, so a literal lazy import still pays for
 * reading and linking its whole graph (the servers', DuckDB's, Hono's) on every start,
 * `--help` too. {@link loadModule} computes the specifier (`new URL(...)`), which Deno
 * resolves only when it runs, so a command pays for what it uses and nothing else.
 *
 * Types stay exact: each entry's type is `typeof import(...)` of the same file (a type
 * is never loaded at run time). `deno compile` cannot see these imports either:
 * `cli/compile.ts` passes each of {@link lazyModules} with `--include`.
 * `cli/start_graph_test.ts` checks that what `--help` and the archive commands load
 * stays free of the heavy packages.
 *
 * @module
 */
import type { Command } from "./command.ts";

/** The command families: their declarations (names, flags, help). `--help` loads all. */
const FAMILIES = {
  archiveCommands: "./archive.ts",
  queryCommands: "./query.ts",
  storageCommands: "./storage.ts",
  serverCommands: "./servers.ts",
  catalogCommands: "./catalog.ts",
  startCommand: "./start.ts",
  clusterCommands: "./cluster.ts",
  userCommands: "./users.ts",
} as const;

/** What the commands run. */
const OPERATIONS = {
  freeze: "../ops/freeze.ts",
  freezePool: "../ops/_freeze_pool.ts",
  partition: "../ops/partition.ts",
  thaw: "../ops/thaw.ts",
  evolve: "../ops/evolve.ts",
  inspect: "../ops/inspect.ts",
  append: "../ops/append.ts",
  diff: "../ops/diff.ts",
  sql: "../ops/sql.ts",
  output: "../io/output.ts",
  cellText: "../io/cell_text.ts",
  journal: "../storage/journal.ts",
  masterServer: "../master/server.ts",
  workerServer: "../worker/server.ts",
  catalogServer: "../catalog/server.ts",
  clusterClient: "../client/cluster_client.ts",
  clientErrors: "../client/errors.ts",
  sqliteUserStore: "../auth/sqlite_store.ts",
  rbac: "../auth/rbac.ts",
  authErrors: "../auth/errors.ts",
  localKey: "../format/local_key.ts",
  awsKms: "../keys/aws_kms.ts",
  gcpKms: "../keys/gcp_kms.ts",
} as const;

/**
 * Modules that other folders load by a computed specifier for the same reason (the
 * remote stores, liblzma, aws4fetch, the Arrow and Parquet writers), and the Worker
 * scripts: listed here so that `deno compile` includes them. `cli/start_graph_test.ts`
 * fails when a computed import elsewhere is missing here or from `mod.ts`'s graph.
 */
const LOADED_ELSEWHERE = [
  "../storage/s3.ts",
  "../storage/az.ts",
  "../storage/gs.ts",
  "../codecs/_liblzma.ts",
  "../codecs/lzma2.ts",
  "../codecs/zpaq.ts",
  "../codecs/zpaq_wasm.ts",
  "../codecs/zstd.ts",
  "../codecs/_zstd_decompress.ts",
  "../codecs/_zstd_wasm.ts",
  "../format/crypto.ts",
  // Every predictor (the registry imports each file by a computed specifier).
  "../format/predictors/_all.ts",
  "../format/key_provider.ts",
  "../keys/_aws4fetch.ts",
  "../io/_write_arrow.ts",
  "../io/_write_arrow_js.ts",
  "../io/_write_parquet.ts",
  "../io/arrow_table.ts",
  "../io/arrow_schema.ts",
  "../ops/_pool_scan.ts",
  "../ops/_remote.ts",
  "../ops/partition_read.ts",
  // Worker scripts (`new Worker(url)`), which `deno compile` embeds only when told.
  "../format/_block_worker.ts",
  "../ops/_freeze_worker.ts",
  "../ops/_thaw_worker.ts",
  "../worker/_task_thread.ts",
] as const;

/** Every lazily loaded module of the CLI: its name and its path relative to this file. */
const PATHS = { ...FAMILIES, ...OPERATIONS };

/**
 * What the router reads of each command family. Declared rather than
 * `typeof import("./archive.ts")`: a family's commands call {@link loadModule}, so
 * their types would depend on themselves. `cli/start_graph_test.ts` checks each
 * declaration against its module.
 */
export interface FamilyModules {
  archiveCommands: { readonly ARCHIVE_COMMANDS: readonly Command[] };
  queryCommands: { readonly sqlCommand: Command };
  storageCommands: { readonly STORAGE_COMMANDS: readonly Command[] };
  serverCommands: { readonly SERVER_COMMANDS: readonly Command[] };
  catalogCommands: { readonly CATALOG_CLIENT_COMMANDS: readonly Command[] };
  startCommand: { readonly startCommand: Command };
  clusterCommands: { readonly CLUSTER_COMMANDS: readonly Command[] };
  userCommands: { readonly USER_COMMANDS: readonly Command[] };
}

/** The type of each lazily loaded module, by name. */
export interface LazyModules extends FamilyModules {
  freeze: typeof import("../ops/freeze.ts");
  freezePool: typeof import("../ops/_freeze_pool.ts");
  partition: typeof import("../ops/partition.ts");
  thaw: typeof import("../ops/thaw.ts");
  evolve: typeof import("../ops/evolve.ts");
  inspect: typeof import("../ops/inspect.ts");
  append: typeof import("../ops/append.ts");
  diff: typeof import("../ops/diff.ts");
  sql: typeof import("../ops/sql.ts");
  output: typeof import("../io/output.ts");
  cellText: typeof import("../io/cell_text.ts");
  journal: typeof import("../storage/journal.ts");
  masterServer: typeof import("../master/server.ts");
  workerServer: typeof import("../worker/server.ts");
  catalogServer: typeof import("../catalog/server.ts");
  clusterClient: typeof import("../client/cluster_client.ts");
  clientErrors: typeof import("../client/errors.ts");
  sqliteUserStore: typeof import("../auth/sqlite_store.ts");
  rbac: typeof import("../auth/rbac.ts");
  authErrors: typeof import("../auth/errors.ts");
  localKey: typeof import("../format/local_key.ts");
  awsKms: typeof import("../keys/aws_kms.ts");
  gcpKms: typeof import("../keys/gcp_kms.ts");
}

// A name without a type (or the reverse) fails to compile here.
const _sameNames: Record<keyof LazyModules, string> = PATHS;

/** The name of a lazily loaded module. */
export type LazyName = keyof typeof PATHS & keyof LazyModules;

// The lists of URLs below are functions: built at load, their ~70 URLs cost every
// command ~0.4 ms, and only `deno compile` and the tests read them.

/**
 * The URL of every module no static import names (for `deno compile --include`).
 *
 * @returns The URLs.
 */
export function lazyModules(): readonly URL[] {
  return Object.freeze(
    [...Object.values(_sameNames), ...LOADED_ELSEWHERE].map((path) =>
      new URL(path, import.meta.url)
    ),
  );
}

/**
 * The modules other folders load by computed specifiers. `mod.ts` names them by
 * literal ones, so that a library user's module graph holds them.
 *
 * @returns The URLs.
 */
export function loadedElsewhereModules(): readonly URL[] {
  return Object.freeze(LOADED_ELSEWHERE.map((path) => new URL(path, import.meta.url)));
}

/**
 * The command families' modules: what `--help` loads besides `main.ts`'s own graph.
 *
 * @returns The URLs.
 */
export function familyModules(): readonly URL[] {
  return Object.freeze(Object.values(FAMILIES).map((path) => new URL(path, import.meta.url)));
}

/**
 * Loads a module the first time a command needs it.
 *
 * @param name Its name in the list above.
 * @returns The module.
 *
 * @example Load the archive inspection operations
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadModule } from "./lazy.ts";
 * const { audit } = await loadModule("inspect");
 * assert.equal(typeof audit, "function");
 * ```
 */
export async function loadModule<K extends LazyName>(name: K): Promise<LazyModules[K]> {
  const url = new URL(PATHS[name], import.meta.url);
  return await import(url.href) as LazyModules[K];
}
