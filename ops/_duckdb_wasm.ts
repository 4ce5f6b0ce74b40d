/**
 * DuckDB built to WebAssembly (`@duckdb/duckdb-wasm`, its Node bindings, which run in
 * Deno; the wasm ships in the npm package, so nothing is fetched): the query engine of
 * the `duckdb-wasm` backend, for hosts where native code may not load. One database per
 * process, locked down before anything else runs in it — extension autoload and
 * autoinstall off, `enable_external_access=false` (no file, no network), then the
 * configuration locked — and used by one query at a time ({@link withWasmDuckDB}).
 * Tables come in as Arrow IPC streams and answers go out as Arrow IPC streams, so the
 * two sides need not share an Arrow library.
 *
 * @module
 */
import { OpsError } from "./errors.ts";

/** The parts of a duckdb-wasm connection this module uses. */
export interface WasmConnection {
  /** Runs SQL; the answer as an Arrow table of duckdb-wasm's own Arrow library. */
  query(text: string): unknown;
  /** Appends an Arrow IPC stream to a table (creating it when `create`). */
  insertArrowFromIPCStream(bytes: Uint8Array, options: { name: string; create?: boolean }): void;
  /** The tables a query reads (it binds the query: they must exist). */
  getTableNames(text: string): string[];
  /** Runs `fn` with the raw bindings and this connection's id. */
  useUnsafe<T>(fn: (bindings: WasmBindings, conn: number) => T): T;
}

/** The raw bindings' call this module uses. */
export interface WasmBindings {
  /** Runs a query; its answer as one Arrow IPC stream. */
  runQuery(conn: number, text: string): Uint8Array;
}

let engine: Promise<WasmConnection> | undefined;
let queue: Promise<unknown> = Promise.resolve();

async function start(): Promise<WasmConnection> {
  // Its Node bindings count the cores as they load.
  if (Deno.permissions.querySync({ name: "sys", kind: "cpus" }).state !== "granted") {
    throw new OpsError(
      "BAD_OPTION",
      "The duckdb-wasm query backend needs --allow-sys=cpus (its bindings count the cores); run with it, or use the duckdb backend",
    );
  }
  const spec = "@duckdb/duckdb-wasm/dist/duckdb-node-blocking.cjs";
  const duckdb = await import("@duckdb/duckdb-wasm/dist/duckdb-node-blocking.cjs");
  const dist = new URL("./", import.meta.resolve(spec));
  const path = (name: string) => decodeURIComponent(new URL(name, dist).pathname);
  const bundles = {
    mvp: { mainModule: path("duckdb-mvp.wasm"), mainWorker: path("duckdb-node-mvp.worker.cjs") },
    eh: { mainModule: path("duckdb-eh.wasm"), mainWorker: path("duckdb-node-eh.worker.cjs") },
  };
  const db = await duckdb.createDuckDB(bundles, new duckdb.VoidLogger(), duckdb.NODE_RUNTIME);
  await db.instantiate(() => {});
  // Exact values out: no BIGINT, DECIMAL or TIMESTAMP turned into a double or a date.
  await db.open({
    query: {
      castBigIntToDouble: false,
      castDecimalToDouble: false,
      castTimestampToDate: false,
      castDurationToTime64: false,
    },
  });
  const conn = db.connect() as unknown as WasmConnection;
  for (
    const setting of [
      "SET autoinstall_known_extensions = false",
      "SET autoload_known_extensions = false",
      "SET enable_external_access = false",
      "SET lock_configuration = true",
    ]
  ) conn.query(setting);
  return conn;
}

/**
 * Runs `fn` with the process's locked-down duckdb-wasm connection, alone: the next
 * caller waits until it is done (the tables one query creates are its own).
 *
 * @param fn Uses the connection.
 * @returns What `fn` returned.
 */
export function withWasmDuckDB<T>(fn: (conn: WasmConnection) => Promise<T>): Promise<T> {
  const run = queue.then(async () => {
    engine ??= start();
    engine.catch(() => (engine = undefined)); // a failed start is tried again next time
    return await fn(await engine);
  });
  queue = run.catch(() => {});
  return run;
}
