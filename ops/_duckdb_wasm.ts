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
 * {@link openWasmDatabase} makes another database of the same kind, for a caller that
 * keeps tables of its own (the hosted catalog's mirror of its records), and
 * {@link streamQuery} runs a query there in steps — DuckDB works ~100 ms per step, and
 * between steps the event loop runs and the deadline is checked — so a slow query is
 * cancelled at its time limit instead of holding the process.
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
  /** Starts a query; its answer's first message, or null while it still runs. */
  startPendingQuery(conn: number, text: string, allowStreamResult: boolean): Uint8Array | null;
  /** Runs a started query one step further; as {@link startPendingQuery}. */
  pollPendingQuery(conn: number): Uint8Array | null;
  /** Cancels a started query. */
  cancelPendingQuery(conn: number): boolean;
  /** The next message of a streamed answer; empty or null at its end. */
  fetchQueryResults(conn: number): Uint8Array | null;
  /** Prepares a statement; its id. */
  createPrepared(conn: number, text: string): number;
  /** Runs a prepared statement with parameters (JSON values); its answer as Arrow IPC. */
  runPrepared(conn: number, statement: number, params: unknown[]): Uint8Array;
  /** Frees a prepared statement. */
  closePrepared(conn: number, statement: number): void;
}

/** A database of its own: connections to it. */
export interface WasmDatabase {
  /** A new connection. */
  connect(): WasmConnection;
}

let engine: Promise<WasmConnection> | undefined;
let queue: Promise<unknown> = Promise.resolve();

async function start(): Promise<WasmConnection> {
  return (await openWasmDatabase()).connect();
}

/**
 * The directory holding duckdb-wasm's `.wasm` files (in Deno's module cache): the one
 * place its bindings read from, so the one a process needs `--allow-read` for.
 *
 * @returns The directory, ending in `/`.
 */
export function wasmAssetsDir(): string {
  const spec = "@duckdb/duckdb-wasm/dist/duckdb-node-blocking.cjs";
  return decodeURIComponent(new URL("./", import.meta.resolve(spec)).pathname);
}

/**
 * A new duckdb-wasm database, in memory, locked down as the shared one is (no file, no
 * network, no extension, configuration locked) before it is handed out.
 *
 * @returns The database.
 * @throws {OpsError} BAD_OPTION without `--allow-sys=cpus`.
 */
export async function openWasmDatabase(): Promise<WasmDatabase> {
  // Its Node bindings count the cores as they load.
  if (Deno.permissions.querySync({ name: "sys", kind: "cpus" }).state !== "granted") {
    throw new OpsError(
      "BAD_OPTION",
      "The duckdb-wasm query backend needs --allow-sys=cpus (its bindings count the cores); run with it, or use the duckdb backend",
    );
  }
  const duckdb = await import("@duckdb/duckdb-wasm/dist/duckdb-node-blocking.cjs");
  const dist = wasmAssetsDir();
  const path = (name: string) => dist + name;
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
  // Settings are global: set once, locked, and every later connection has them.
  for (
    const setting of [
      "SET autoinstall_known_extensions = false",
      "SET autoload_known_extensions = false",
      "SET enable_external_access = false",
      "SET lock_configuration = true",
    ]
  ) conn.query(setting);
  return { connect: () => db.connect() as unknown as WasmConnection };
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

/** Limits of {@link streamQuery}. */
export interface StreamLimits {
  /** `performance.now()` time past which the query is cancelled. */
  deadline: number;
  /** The error thrown at the deadline. */
  timeout: () => Error;
}

/**
 * Runs one query in steps and yields its answer as Arrow IPC messages (the schema
 * first, then record batches), fetched one at a time as the caller asks for them.
 * Between steps the event loop runs; past the deadline the query is cancelled and
 * `limits.timeout()` thrown. A caller that stops early leaves the answer unread; the
 * connection's next query discards it.
 *
 * @param conn A connection no other query is using meanwhile.
 * @param text The SQL.
 * @param limits The deadline.
 * @returns The messages.
 */
export async function* streamQuery(
  conn: WasmConnection,
  text: string,
  limits: StreamLimits,
): AsyncGenerator<Uint8Array> {
  const step = <T>(fn: (b: WasmBindings, id: number) => T): T => conn.useUnsafe(fn);
  let header = step((b, id) => b.startPendingQuery(id, text, true));
  while (header === null) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (performance.now() > limits.deadline) {
      step((b, id) => b.cancelPendingQuery(id));
      throw limits.timeout();
    }
    header = step((b, id) => b.pollPendingQuery(id));
  }
  yield header;
  for (;;) {
    if (performance.now() > limits.deadline) throw limits.timeout();
    const next = step((b, id) => b.fetchQueryResults(id));
    if (next === null || next.length === 0) return;
    yield next;
  }
}

/**
 * Runs one statement with parameters (`$1`, `$2`, … as DuckDB numbers them; plain
 * JSON values: strings, numbers, booleans, null).
 *
 * @param conn The connection.
 * @param text The SQL.
 * @param params Its parameters.
 * @returns The answer as one Arrow IPC stream.
 */
export function runWithParams(conn: WasmConnection, text: string, params: unknown[]): Uint8Array {
  return conn.useUnsafe((b, id) => {
    const statement = b.createPrepared(id, text);
    try {
      return b.runPrepared(id, statement, params);
    } finally {
      b.closePrepared(id, statement);
    }
  });
}
