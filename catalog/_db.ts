/**
 * The catalog's DuckDB: one file, one owner, locked down before any request reaches it.
 *
 * - **Lockdown** (as `io/_duckdb.ts` does, for the same reasons): `SET
 *   enable_external_access=false` (no file but the database itself, no network, no
 *   extension install), autoinstall and autoload of extensions off, then
 *   `lock_configuration=true` so no later statement can undo it. Memory and threads
 *   are fixed first.
 * - **One owner.** DuckDB takes an OS lock on the file, so a second process fails to
 *   open it: that error becomes `CatalogError` `DB_LOCKED` naming the holder. OS
 *   file locks do not exclude the process holding them, so a process-wide set of
 *   open paths refuses a second `Catalog` on the same file in the same process.
 * - **Connections.** One write connection behind a mutex (writes are serialized; a
 *   registration is one transaction), a small pool of read connections, and one
 *   sandbox connection for user SQL (so interrupting a runaway query stops nothing else).
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
import { CatalogError } from "./errors.ts";

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
}

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

/** The open database. */
export interface CatalogDb {
  /** Absolute path of the file. */
  readonly path: string;
  /** Serialized writes (one transaction at a time). */
  readonly writer: Lane;
  /** Concurrent reads. */
  readonly readers: LanePool;
  /** User SQL, one query at a time. */
  readonly sandbox: Lane;
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
    await setup.run("SET lock_configuration = true");
    const readers: DuckDBConnection[] = [];
    for (let i = 0; i < Math.max(1, options.readConnections ?? 4); i++) {
      const c = await instance.connect();
      connections.push(c);
      readers.push(c);
    }
    const sandbox = await instance.connect();
    connections.push(sandbox);
    const inst = instance;
    let closed = false;
    const writer = new Lane(setup);
    return {
      path: abs,
      writer,
      readers: new LanePool(readers),
      sandbox: new Lane(sandbox),
      async close() {
        if (closed) return;
        closed = true;
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

/**
 * The message of any thrown value.
 *
 * @param err Anything thrown.
 * @returns Its message.
 */
export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
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
