/**
 * The catalog's DuckDB: one file, one owner, locked down before any request reaches it.
 *
 * - **Lockdown** (as `io/_duckdb.ts` does, for the same reasons): `SET
 *   enable_external_access=false` (no file but the database itself, no network, no
 *   extension install), autoinstall and autoload of extensions off, then
 *   `lock_configuration=true` so no later statement can undo it. Memory, threads and
 *   the streaming buffer are fixed first.
 * - **One owner.** DuckDB takes an OS lock on the file, so a second process fails to
 *   open it: that error becomes `CatalogError` `DB_LOCKED` naming the holder. OS
 *   file locks do not exclude the process holding them, so a process-wide set of
 *   open paths refuses a second `Catalog` on the same file in the same process.
 * - **Connections.** One write connection behind a mutex (writes are serialized; a
 *   registration is one transaction), a small pool of read connections, and a
 *   separate {@link SandboxPool} for user SQL: each query has a connection to itself,
 *   so interrupting a runaway one stops nothing else, and one that DuckDB is slow to
 *   interrupt keeps only its own connection busy. Every connection is made after
 *   external access is off, and the configuration is locked (a global lock) once all
 *   of them exist, so none can change a setting.
 * - **JSON.** {@link toJsonValue} turns DuckDB values into JSON: big integers as
 *   numbers when safe, else decimal strings; NaN and infinities as null.
 *
 * @module
 */
import {
  type DuckDBConnection,
  DuckDBInstance,
  type DuckDBType,
  DuckDBTypeId,
  type DuckDBValue,
  type DuckDBValueConverter,
  type Json,
  JsonDuckDBValueConverter,
} from "@duckdb/node-api";
import { realpathSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { CatalogError, message } from "./errors.ts";

export { message };

/** Paths of the database files open in this process. */
const OPEN_FILES = new Set<string>();

/** Options of {@link openCatalogDb}. */
export interface CatalogDbOptions {
  /** Read connections in the pool (default 4). */
  readConnections?: number;
  /** DuckDB `memory_limit` (default `1GB`). */
  memoryLimit?: string;
  /** DuckDB `threads` (default: DuckDB's, the number of cores). */
  threads?: number;
  /** Connections for user SQL (default {@link DEFAULT_SQL_CONNECTIONS}). */
  sqlConnections?: number;
}

/** Connections user SQL gets by default: queries that run at once. */
export const DEFAULT_SQL_CONNECTIONS = 4;

/** A serial lane over one connection: one operation at a time, in call order. */
export class Lane {
  readonly connection: DuckDBConnection;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(connection: DuckDBConnection) {
    this.connection = connection;
  }

  /** Runs `fn` on the connection once every earlier call has finished. */
  run<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    const result = this.#tail.then(() => fn(this.connection));
    this.#tail = result.catch(() => undefined);
    return result;
  }
}

/** A pool of lanes: each call goes to the least busy one. */
export class LanePool {
  readonly #lanes: { lane: Lane; busy: number }[];

  constructor(connections: DuckDBConnection[]) {
    this.#lanes = connections.map((c) => ({ lane: new Lane(c), busy: 0 }));
  }

  /** Runs `fn` on the least busy connection. */
  async run<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    let best = this.#lanes[0]!;
    for (const l of this.#lanes) if (l.busy < best.busy) best = l;
    best.busy++;
    try {
      return await best.lane.run(fn);
    } finally {
      best.busy--;
    }
  }
}

/**
 * The connections user SQL runs on. A query takes a connection to itself
 * ({@link SandboxPool.acquire}) and gives it back when DuckDB has finished with it
 * ({@link SandboxPool.release}), which for a query interrupted at its time limit may
 * be well after its caller got the answer: DuckDB checks for an interrupt between
 * pieces of work, and one long function call (a list of a billion elements) is one
 * piece. Until then that connection stays out of the pool and the others serve.
 */
export class SandboxPool {
  /** Number of connections. */
  readonly size: number;
  readonly #free: DuckDBConnection[];
  readonly #busy = new Set<DuckDBConnection>();
  readonly #waiting: { give: (c: DuckDBConnection | null) => void }[] = [];
  #idle: (() => void) | null = null;
  #closed = false;

  constructor(connections: DuckDBConnection[]) {
    if (connections.length === 0) throw new TypeError("SandboxPool needs a connection");
    this.size = connections.length;
    this.#free = [...connections];
  }

  /** Connections still running a query (an interrupted one included). */
  get busy(): number {
    return this.#busy.size;
  }

  /**
   * Takes a free connection, waiting for one up to `timeoutMs`.
   *
   * @param timeoutMs How long to wait.
   * @returns The connection, or null when none came free in time or the pool is closed.
   */
  acquire(timeoutMs: number): Promise<DuckDBConnection | null> {
    if (this.#closed) return Promise.resolve(null);
    const c = this.#free.pop();
    if (c) {
      this.#busy.add(c);
      return Promise.resolve(c);
    }
    return new Promise((resolve) => {
      const waiter = {
        give: (c: DuckDBConnection | null) => {
          clearTimeout(timer);
          resolve(c);
        },
      };
      const timer = setTimeout(() => {
        const i = this.#waiting.indexOf(waiter);
        if (i >= 0) this.#waiting.splice(i, 1);
        resolve(null);
      }, Math.max(0, timeoutMs));
      this.#waiting.push(waiter);
    });
  }

  /**
   * Gives a connection back once DuckDB has finished with it.
   *
   * @param c A connection {@link acquire} gave.
   */
  release(c: DuckDBConnection): void {
    if (!this.#busy.has(c)) return;
    const next = this.#closed ? undefined : this.#waiting.shift();
    if (next) return next.give(c);
    this.#busy.delete(c);
    this.#free.push(c);
    if (this.#busy.size === 0) this.#idle?.();
  }

  /**
   * Refuses new queries, interrupts the running ones and waits until DuckDB has
   * given every connection back (a connection cannot be closed while it runs).
   */
  async drain(): Promise<void> {
    this.#closed = true;
    for (const w of this.#waiting.splice(0)) w.give(null);
    if (this.#busy.size === 0) return;
    const idle = new Promise<void>((resolve) => (this.#idle = resolve));
    for (const c of this.#busy) c.interrupt();
    await idle;
  }
}

/** The open database. */
export interface CatalogDb {
  /** Absolute path of the file. */
  readonly path: string;
  /** Serialized writes (one transaction at a time). */
  readonly writer: Lane;
  /** Concurrent reads. */
  readonly readers: LanePool;
  /** User SQL: one connection per running query. */
  readonly sandbox: SandboxPool;
  /** Checkpoints and closes everything (idempotent). */
  close(): Promise<void>;
}

/**
 * Opens (creating if needed) the catalog database file, locked down.
 *
 * @param path Database file.
 * @param options Pool size and limits.
 * @returns The database.
 * @throws {CatalogError} DB_LOCKED when another process or catalog owns the file;
 * DB_FAILED when DuckDB cannot open it.
 */
export async function openCatalogDb(
  path: string,
  options: CatalogDbOptions = {},
): Promise<CatalogDb> {
  const abs = canonical(path);
  if (OPEN_FILES.has(abs)) {
    throw new CatalogError(
      "DB_LOCKED",
      `Cannot open catalog database '${abs}': it is already open in this process`,
      { path: abs },
    );
  }
  OPEN_FILES.add(abs);
  let instance: DuckDBInstance | undefined;
  const connections: DuckDBConnection[] = [];
  try {
    try {
      instance = await DuckDBInstance.create(abs);
    } catch (cause) {
      throw openError(abs, cause);
    }
    const setup = await instance.connect();
    connections.push(setup);
    await setup.run(`SET memory_limit = '${(options.memoryLimit ?? "1GB").replaceAll("'", "")}'`);
    if (options.threads !== undefined) {
      await setup.run(`SET threads = ${Math.max(1, options.threads | 0)}`);
    }
    await setup.run("SET enable_external_access = false");
    await setup.run("SET autoinstall_known_extensions = false");
    await setup.run("SET autoload_known_extensions = false");
    const readers: DuckDBConnection[] = [];
    for (let i = 0; i < Math.max(1, options.readConnections ?? 4); i++) {
      const c = await instance.connect();
      connections.push(c);
      readers.push(c);
    }
    const sql: DuckDBConnection[] = [];
    for (let i = 0; i < Math.max(1, options.sqlConnections ?? DEFAULT_SQL_CONNECTIONS); i++) {
      const c = await instance.connect();
      connections.push(c);
      sql.push(c);
      // A streaming result buffers chunks ahead of its reader up to this size, counted
      // without their long strings: at DuckDB's default (~1 MB) a query of long
      // values was computed whole before its first chunk was read. Small, so DuckDB
      // stops soon after the answer's byte limit is reached. A session setting: set
      // on each connection, before the lock.
      await c.run("SET streaming_buffer_size = '64KB'");
    }
    // Global, and refuses every later SET on every connection, these included.
    await setup.run("SET lock_configuration = true");
    const sandbox = new SandboxPool(sql);
    const inst = instance;
    let closed = false;
    const writer = new Lane(setup);
    return {
      path: abs,
      writer,
      readers: new LanePool(readers),
      sandbox,
      async close() {
        if (closed) return;
        closed = true;
        // closeSync on a connection that still runs blocks the whole process until
        // DuckDB gives up the query, so wait for that without blocking.
        await sandbox.drain();
        try {
          await writer.run((c) => c.run("CHECKPOINT"));
        } catch {
          // A failed checkpoint leaves the WAL, which the next open replays.
        }
        for (const c of connections) c.closeSync();
        inst.closeSync();
        OPEN_FILES.delete(abs);
      },
    };
  } catch (err) {
    for (const c of connections) c.closeSync();
    instance?.closeSync();
    OPEN_FILES.delete(abs);
    if (err instanceof CatalogError) throw err;
    throw new CatalogError("DB_FAILED", `Cannot open catalog database '${abs}': ${message(err)}`, {
      cause: err,
      path: abs,
    });
  }
}

function canonical(path: string): string {
  const abs = resolve(path);
  try {
    return resolve(realpathSync(dirname(abs)), basename(abs));
  } catch {
    return abs;
  }
}

function openError(path: string, cause: unknown): CatalogError {
  const text = message(cause);
  if (/Could not set lock|Conflicting lock/i.test(text)) {
    const pid = /PID (\d+)/.exec(text)?.[1];
    const holder = pid ? `process ${pid}` : "another process";
    return new CatalogError(
      "DB_LOCKED",
      `Cannot open catalog database '${path}': ${holder} already owns it (stop that catalog server, or use another --db)`,
      { cause, path },
    );
  }
  return new CatalogError("DB_FAILED", `Cannot open catalog database '${path}': ${text}`, {
    cause,
    path,
  });
}

const BIG_INTEGER_TYPES = new Set<DuckDBTypeId>([
  DuckDBTypeId.BIGINT,
  DuckDBTypeId.UBIGINT,
  DuckDBTypeId.HUGEINT,
  DuckDBTypeId.UHUGEINT,
  DuckDBTypeId.BIGNUM,
]);

/**
 * DuckDB value → JSON value: big integers as numbers when safe, else strings; NaN
 * and infinities as null; decimals as numbers up to 15 digits, else strings; the
 * rest as `@duckdb/node-api`'s JSON converter does (timestamps and dates as text).
 */
export const toJsonValue: DuckDBValueConverter<unknown> = function toJsonValue(
  value: DuckDBValue,
  type: DuckDBType,
  converter: DuckDBValueConverter<unknown>,
): unknown {
  if (value === null) return null;
  if (typeof value === "bigint" && BIG_INTEGER_TYPES.has(type.typeId)) {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (type.typeId === DuckDBTypeId.DECIMAL && "width" in type && (type.width as number) <= 15) {
    const n = Number(String(value));
    return Number.isFinite(n) ? n : String(value);
  }
  return JsonDuckDBValueConverter(value, type, converter as DuckDBValueConverter<Json>);
};
