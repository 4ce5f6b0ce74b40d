/**
 * The names of the query engines, in a leaf module so the command line can offer them
 * without loading an engine: `duckdb` (native, the default) and `duckdb-wasm` (DuckDB
 * built to WebAssembly, for hosts where native code may not load).
 *
 * @module
 */

/** A query engine. */
export type QueryBackend = "duckdb" | "duckdb-wasm";

/** The engines a query may run on. */
export const QUERY_BACKENDS: readonly QueryBackend[] = Object.freeze(["duckdb", "duckdb-wasm"]);
