/**
 * The Deno KV store of a catalog (`store.ts`), for hosts with neither native code nor a
 * disk (`deno serve` with only `--allow-net`; Deno Deploy style): the records live in
 * Deno KV, and the same tables as the DuckDB store's (`_tables.ts`) are kept in an
 * in-memory duckdb-wasm database — the *mirror* — that every read and user SQL runs on.
 *
 * **Layout** (under a key prefix, default `["permafrost", "catalog"]`):
 * - `[…, "meta"]` → `{ schema_version, seq }`: `seq` numbers registrations and
 *   changes with every write, so its versionstamp says whether anything changed;
 * - `[…, "version", name, version]` → `{ seq, blob, parts }`: one registered version;
 * - `[…, "blob", id, i]` → bytes: the version's rows (`_record.ts` `VersionRows`, as
 *   JSON) in parts of at most {@link PART_BYTES} (a KV value holds 64 KiB).
 *
 * **Writes** are all-or-nothing however large a version is: its parts are written
 * first under a fresh id, invisible, then one atomic commit checks that `meta` is the
 * one the decision was made on, adds the version key and bumps `meta`. A commit that
 * lost to another process's write is dropped (its parts deleted), the mirror caught up,
 * and the registration decided again. Parts no version names (a process killed between
 * the two steps) are deleted when a store opens, once ten minutes old.
 *
 * **Several processes** (isolates) may share one KV: each read first compares `meta`'s
 * versionstamp with the one its mirror was built at and rebuilds the mirror when
 * another wrote (one KV read per request; a rebuild reads every record).
 *
 * **User SQL** runs on a connection of its own, one query at a time, in a read-only
 * transaction of the mirror, which holds nothing but the catalog's tables; the engine
 * is locked down (no file, no network, no extension, no setting). The query runs in
 * steps with the time limit checked between them (`streamQuery`); its answer is read
 * batch by batch and cut at the row and byte limits. The mirror has no `json`
 * extension: `schema`, `metadata`, `partition` and `stats` are JSON text (VARCHAR),
 * and `chunk_stats` is a table filled from the chunks' statistics, not a view.
 *
 * @module
 */
import * as arrow from "apache-arrow";
import { openWasmDatabase, runWithParams, type WasmConnection } from "../ops/_duckdb_wasm.ts";
import { checkOneSelect, identifiers } from "../ops/sql.ts";
import { OpsError } from "../ops/errors.ts";
import type { QueryBackend } from "../ops/query_backends.ts";
import { CatalogError } from "./errors.ts";
import { message } from "./errors.ts";
import { notFound } from "./_queries.ts";
import { CATALOG_TABLES, SCHEMA_DDL, SCHEMA_VERSION } from "./_tables.ts";
import {
  type ColumnRow,
  decideVersion,
  type ExistingVersion,
  type VersionRows,
  versionRows,
} from "./_record.ts";
import { DEFAULT_SQL_MAX_BYTES, DEFAULT_SQL_MAX_ROWS, DEFAULT_SQL_TIMEOUT_MS } from "./limits.ts";
import { checkText } from "./_sql_text.ts";
import { rowObjects } from "./_wasm_rows.ts";
import { runWasmSql, wasmMessage, type WasmSqlLimits } from "./_wasm_sql.ts";
import type { CatalogStore, RecordRequest, Rows, SqlParam, StoreSqlLimits } from "./store.ts";
import type { SqlResult } from "./types.ts";

/** Bytes of one stored part of a version's rows (a KV value holds at most 64 KiB). */
export const PART_BYTES = 60_000;

/** How old unnamed parts must be before they are deleted as a dead writer's. */
const STRAY_AFTER_MS = 10 * 60_000;

/** Tries of a write that keeps losing to other processes' writes. */
const WRITE_TRIES = 8;

/** The `meta` record. */
interface Meta {
  schema_version: number;
  seq: number;
}

/** A version key's value. */
interface VersionPointer {
  seq: number;
  blob: string;
  parts: number;
}

/** Options of {@link KvStore}. */
export interface KvStoreOptions {
  /** Key prefix (default `["permafrost", "catalog"]`), for several catalogs in one KV. */
  prefix?: readonly string[];
  /** Closed with the store (default true: the store was given the KV to own). */
  ownsKv?: boolean;
  /** Where the KV is, for messages (default `Deno KV`). */
  location?: string;
}

/**
 * A catalog's records in Deno KV, queried in a duckdb-wasm mirror.
 *
 * @example A catalog on Deno KV
 * ```ts ignore
 * import { Catalog } from "./catalog.ts";
 * import { KvStore } from "./kv_store.ts";
 * const catalog = await Catalog.open(new KvStore(await Deno.openKv()));
 * await catalog.register("s3://lake/flights.pf");
 * console.log(await catalog.sql("SELECT name, rows FROM datasets"));
 * await catalog.close();
 * ```
 */
export class KvStore implements CatalogStore {
  /** Where the records are, for messages. */
  readonly location: string;
  /** Its queries run on duckdb-wasm. */
  readonly engine: QueryBackend = "duckdb-wasm";
  readonly #kv: Deno.Kv;
  readonly #prefix: readonly string[];
  readonly #ownsKv: boolean;
  #mirror: WasmConnection | undefined;
  #sqlConn: WasmConnection | undefined;
  /** The versionstamp of `meta` the mirror was built at. */
  #stamp: string | null = null;
  /** Writes, one at a time in this process. */
  #writes: Promise<unknown> = Promise.resolve();
  /** User queries, one at a time. */
  #queries: Promise<unknown> = Promise.resolve();
  #closed = false;

  /**
   * A store on an open KV; nothing is read until `open` (which `Catalog.open` calls).
   *
   * @param kv An open KV (`await Deno.openKv(...)`).
   * @param options Prefix, ownership, location.
   */
  constructor(kv: Deno.Kv, options: KvStoreOptions = {}) {
    this.#kv = kv;
    this.#prefix = options.prefix ?? ["permafrost", "catalog"];
    this.#ownsKv = options.ownsKv ?? true;
    this.location = options.location ?? "Deno KV";
  }

  get #metaKey(): Deno.KvKey {
    return [...this.#prefix, "meta"];
  }

  async open(): Promise<void> {
    let db;
    try {
      db = await openWasmDatabase();
    } catch (cause) {
      if (cause instanceof OpsError) {
        throw new CatalogError("DB_FAILED", cause.message, { cause });
      }
      throw new CatalogError(
        "DB_FAILED",
        `Cannot start the catalog's duckdb-wasm engine: ${message(cause)}`,
        { cause },
      );
    }
    this.#mirror = db.connect();
    this.#sqlConn = db.connect();
    for (const ddl of MIRROR_DDL) this.#mirror.query(ddl);
    const meta = await whenFree(() => this.#kv.get<Meta>(this.#metaKey));
    if (meta.value === null) {
      await whenFree(() =>
        this.#kv.atomic().check({ key: this.#metaKey, versionstamp: null })
          .set(this.#metaKey, { schema_version: SCHEMA_VERSION, seq: 0 }).commit()
      );
    } else if (meta.value.schema_version > SCHEMA_VERSION) {
      throw new CatalogError(
        "DB_FAILED",
        `Cannot open the catalog in ${this.location}: it has schema version ${meta.value.schema_version}, this program reads up to ${SCHEMA_VERSION}`,
      );
    }
    await this.sync();
    await this.#dropStrayParts();
  }

  #conn(): WasmConnection {
    if (!this.#mirror || this.#closed) throw new CatalogError("CLOSED", "The catalog is closed");
    return this.#mirror;
  }

  read(sql: string, params: readonly SqlParam[] = []): Promise<Rows> {
    try {
      return Promise.resolve(
        rowObjects(arrow.tableFromIPC(runWithParams(this.#conn(), sql, [...params]))),
      );
    } catch (cause) {
      if (cause instanceof CatalogError) return Promise.reject(cause);
      return Promise.reject(
        new CatalogError("DB_FAILED", `Catalog query failed: ${wasmMessage(cause)}`, { cause }),
      );
    }
  }

  async sync(): Promise<boolean> {
    this.#conn();
    const meta = await whenFree(() => this.#kv.get<Meta>(this.#metaKey));
    if (meta.versionstamp === this.#stamp) return false;
    const versions: { pointer: VersionPointer; rows: VersionRows }[] = [];
    for (const entry of await this.#list<VersionPointer>(["version"])) {
      versions.push({ pointer: entry.value, rows: await this.#readBlob(entry.value) });
    }
    const conn = this.#conn();
    conn.query("BEGIN TRANSACTION");
    try {
      for (const t of ["chunk_stats", "chunks", "dataset_columns", "datasets"]) {
        conn.query(`DELETE FROM ${t}`);
      }
      insertVersions(conn, versions);
      conn.query("COMMIT");
    } catch (cause) {
      conn.query("ROLLBACK");
      throw new CatalogError(
        "DB_FAILED",
        `Cannot load the catalog from ${this.location}: ${wasmMessage(cause)}`,
        { cause },
      );
    }
    this.#stamp = meta.versionstamp;
    return true;
  }

  record(
    request: RecordRequest,
    written: () => void,
  ): Promise<{ created: boolean; version: string }> {
    return this.#write(async () => {
      const { index, name } = request;
      for (let attempt = 1;; attempt++) {
        await this.sync();
        const meta = await whenFree(() => this.#kv.get<Meta>(this.#metaKey));
        if (meta.versionstamp !== this.#stamp) continue;
        const existing = (await this.read(
          "SELECT version, header_sha256, payload_sha256, path FROM datasets WHERE name = $1 ORDER BY seq",
          [name],
        )) as unknown as ExistingVersion[];
        const decided = decideVersion(existing, index, name, request.requested);
        if (!decided.created) return decided;
        const rows = versionRows(index, { ...request.entry, name, version: decided.version });
        const seq = meta.value!.seq + 1;
        // Named by when it was written: an unnamed one is left alone while young (its
        // writer may still be committing) and deleted once old (#dropStrayParts).
        const blob = `${Date.now()}-${crypto.randomUUID()}`;
        const parts = await this.#writeBlob(blob, rows);
        const key = [...this.#prefix, "version", name, decided.version];
        const pointer: VersionPointer = { seq, blob, parts };
        const done = await whenFree(() =>
          this.#kv.atomic()
            .check(meta)
            .check({ key, versionstamp: null })
            .set(key, pointer)
            .set(this.#metaKey, { ...meta.value!, seq })
            .commit()
        );
        if (!done.ok) {
          await this.#deleteBlob(blob, parts);
          if (attempt >= WRITE_TRIES) throw busy(name);
          continue;
        }
        this.#apply(done.versionstamp, () => insertVersions(this.#conn(), [{ pointer, rows }]));
        written();
        return decided;
      }
    });
  }

  remove(name: string, version: string | undefined, written: () => void): Promise<string[]> {
    return this.#write(async () => {
      for (let attempt = 1;; attempt++) {
        await this.sync();
        const meta = await whenFree(() => this.#kv.get<Meta>(this.#metaKey));
        if (meta.versionstamp !== this.#stamp) continue;
        const found: { key: Deno.KvKey; value: VersionPointer }[] = [];
        for (const e of await this.#list<VersionPointer>(["version", name])) {
          if (version === undefined || e.key.at(-1) === version) found.push(e);
        }
        if (found.length === 0) throw notFound(name, version);
        found.sort((a, b) => a.value.seq - b.value.seq);
        // An atomic operation holds at most 1,000 mutations: past that, batches.
        let stamp: string | null = null;
        let lost = false;
        for (let i = 0; i < found.length; i += 500) {
          const current = i === 0 ? meta : await whenFree(() => this.#kv.get<Meta>(this.#metaKey));
          const op = this.#kv.atomic().check(current)
            .set(this.#metaKey, { ...current.value!, seq: current.value!.seq + 1 });
          for (const e of found.slice(i, i + 500)) op.delete(e.key);
          const done = await whenFree(() => op.commit());
          if (!done.ok) {
            lost = true;
            break;
          }
          stamp = done.versionstamp;
        }
        if (lost && stamp === null) {
          if (attempt >= WRITE_TRIES) throw busy(name);
          continue;
        }
        for (const e of found) await this.#deleteBlob(e.value.blob, e.value.parts);
        const versions = found.map((e) => String(e.key.at(-1)));
        if (lost) {
          // Part was removed and another process wrote meanwhile: read everything again.
          this.#stamp = null;
          await this.sync();
        } else {
          this.#apply(stamp!, () => deleteFromMirror(this.#conn(), name, version));
        }
        written();
        return versions;
      }
    });
  }

  addColumns(rows: ColumnRow[]): Promise<void> {
    // Every version this store records carries its columns (`versionRows`).
    const first = rows[0];
    return Promise.reject(
      new CatalogError(
        "DB_FAILED",
        `The KV catalog has no column record of ${first?.dataset}@${first?.version}: register it again`,
      ),
    );
  }

  sql(query: string, limits: StoreSqlLimits): Promise<SqlResult> {
    const started = performance.now();
    const timeoutMs = limits.timeoutMs ?? DEFAULT_SQL_TIMEOUT_MS;
    const run = this.#queries.then(() =>
      this.#runSql(query, {
        deadline: started + timeoutMs,
        timeoutMs,
        maxRows: limits.maxRows ?? DEFAULT_SQL_MAX_ROWS,
        maxBytes: limits.maxBytes ?? DEFAULT_SQL_MAX_BYTES,
        started,
      })
    );
    this.#queries = run.catch(() => {});
    return run;
  }

  tablesOf(query: string): Promise<string[]> {
    const run = this.#queries.then(() => {
      const conn = this.#sqlConn;
      this.#conn();
      let text: string;
      try {
        text = checkOneSelect(query);
      } catch {
        return [];
      }
      const words = [...identifiers(text, true)];
      const isCatalogTable = (w: string) => CATALOG_TABLES.includes(w.toLowerCase());
      try {
        conn!.query("BEGIN TRANSACTION READ ONLY");
        try {
          conn!.query(`DESCRIBE (\n${text}\n)`);
        } finally {
          conn!.query("ROLLBACK");
        }
      } catch {
        return words.filter((w) => !isCatalogTable(w));
      }
      return words.filter(isCatalogTable);
    });
    this.#queries = run.catch(() => {});
    return run;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#writes.catch(() => {});
    await this.#queries.catch(() => {});
    if (this.#ownsKv) this.#kv.close();
  }

  // -------------------------------------------------------------------------

  async #runSql(
    query: string,
    limits: WasmSqlLimits,
  ): Promise<SqlResult> {
    checkText(query);
    let text: string;
    try {
      text = checkOneSelect(query);
    } catch (err) {
      if (err instanceof OpsError) {
        throw new CatalogError("SQL_REFUSED", err.message, { cause: err });
      }
      throw err;
    }
    this.#conn();
    return await runWasmSql(this.#sqlConn!, text, limits);
  }

  /** Runs writes one at a time (in this process; the KV commit checks the others). */
  #write<T>(fn: () => Promise<T>): Promise<T> {
    this.#conn();
    const run = this.#writes.then(fn);
    this.#writes = run.catch(() => {});
    return run;
  }

  /** Applies a committed write to the mirror; on failure the next read rebuilds it. */
  #apply(stamp: string, fn: () => void): void {
    const conn = this.#conn();
    try {
      conn.query("BEGIN TRANSACTION");
      fn();
      conn.query("COMMIT");
      this.#stamp = stamp;
    } catch {
      try {
        conn.query("ROLLBACK");
      } catch {
        // nothing open
      }
      this.#stamp = null;
    }
  }

  async #writeBlob(id: string, rows: VersionRows): Promise<number> {
    const bytes = new TextEncoder().encode(JSON.stringify(rows));
    const parts = Math.max(1, Math.ceil(bytes.length / PART_BYTES));
    for (let i = 0; i < parts; i += 8) {
      const op = this.#kv.atomic();
      for (let j = i; j < Math.min(parts, i + 8); j++) {
        op.set(
          [...this.#prefix, "blob", id, j],
          bytes.subarray(j * PART_BYTES, (j + 1) * PART_BYTES),
        );
      }
      const done = await whenFree(() => op.commit());
      if (!done.ok) throw new CatalogError("DB_FAILED", `Cannot write to ${this.location}`);
    }
    return parts;
  }

  async #readBlob(pointer: VersionPointer): Promise<VersionRows> {
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < pointer.parts; i += 10) {
      const keys: Deno.KvKey[] = [];
      for (let j = i; j < Math.min(pointer.parts, i + 10); j++) {
        keys.push([...this.#prefix, "blob", pointer.blob, j]);
      }
      for (const e of await whenFree(() => this.#kv.getMany<Uint8Array[]>(keys))) {
        if (!(e.value instanceof Uint8Array)) {
          throw new CatalogError(
            "DB_FAILED",
            `The catalog in ${this.location} is damaged: part ${
              String(e.key.at(-1))
            } of record ${pointer.blob} is missing`,
          );
        }
        chunks.push(e.value);
      }
    }
    const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.length;
    }
    return JSON.parse(new TextDecoder().decode(all)) as VersionRows;
  }

  async #deleteBlob(id: string, parts: number): Promise<void> {
    for (let i = 0; i < parts; i += 500) {
      const op = this.#kv.atomic();
      for (let j = i; j < Math.min(parts, i + 500); j++) {
        op.delete([...this.#prefix, "blob", id, j]);
      }
      await whenFree(() => op.commit());
    }
  }

  /** Every entry under a key prefix (below the store's own), read again if the KV was busy. */
  async #list<T>(prefix: Deno.KvKey): Promise<Deno.KvEntry<T>[]> {
    return await whenFree(async () => {
      const out: Deno.KvEntry<T>[] = [];
      for await (const e of this.#kv.list<T>({ prefix: [...this.#prefix, ...prefix] })) out.push(e);
      return out;
    });
  }

  /** Deletes parts no version names (a writer killed between writing and committing). */
  async #dropStrayParts(): Promise<void> {
    const named = new Set<string>();
    for (const e of await this.#list<VersionPointer>(["version"])) named.add(e.value.blob);
    const stray = new Map<string, number>();
    for (const e of await this.#list<unknown>(["blob"])) {
      const id = String(e.key.at(-2));
      if (!named.has(id)) stray.set(id, Math.max(stray.get(id) ?? 0, Number(e.key.at(-1)) + 1));
    }
    for (const [id, parts] of stray) {
      const written = Number(id.split("-")[0]);
      if (Date.now() - written > STRAY_AFTER_MS) await this.#deleteBlob(id, parts);
    }
  }
}

/** The mirror's tables: the DuckDB store's, with JSON as text and `chunk_stats` a table. */
const MIRROR_DDL: readonly string[] = Object.freeze([
  ...SCHEMA_DDL
    .filter((d) => /CREATE TABLE IF NOT EXISTS (datasets|chunks|dataset_columns) /.test(d))
    .map((d) => d.replace(/\bJSON\b/g, "VARCHAR")),
  `CREATE TABLE chunk_stats (
    dataset VARCHAR NOT NULL,
    version VARCHAR NOT NULL,
    chunk INTEGER NOT NULL,
    row_start BIGINT NOT NULL,
    row_end BIGINT NOT NULL,
    column_name VARCHAR,
    min VARCHAR,
    max VARCHAR,
    null_count BIGINT
  )`,
]);

/** Inserts versions' rows into the mirror (inside the caller's transaction). */
function insertVersions(
  conn: WasmConnection,
  versions: { pointer: VersionPointer; rows: VersionRows }[],
): void {
  if (versions.length === 0) return;
  const datasets = versions.map((v) => ({ ...v.rows.dataset, seq: v.pointer.seq }));
  const chunks = versions.flatMap((v) => v.rows.chunks);
  const stats = chunks.flatMap((c) =>
    (JSON.parse(c.stats) as { column: string; min: unknown; max: unknown; null_count: number }[])
      .map((s) => ({
        dataset: c.dataset,
        version: c.version,
        chunk: c.chunk,
        row_start: c.row_start,
        row_end: c.row_end,
        column_name: s.column,
        min: statText(s.min),
        max: statText(s.max),
        null_count: s.null_count,
      }))
  );
  insertRows(conn, "datasets", datasets);
  insertRows(conn, "chunks", chunks);
  insertRows(conn, "dataset_columns", versions.flatMap((v) => v.rows.columns));
  insertRows(conn, "chunk_stats", stats);
}

/** A statistic as the DuckDB store's `chunk_stats` view reads it (JSON to VARCHAR). */
function statText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return typeof v === "string" ? v : JSON.stringify(v);
}

function deleteFromMirror(conn: WasmConnection, name: string, version: string | undefined): void {
  const params = version === undefined ? [name] : [name, version];
  const cond = version === undefined ? "name = $1" : "name = $1 AND version = $2";
  const byDataset = cond.replace("name", "dataset");
  runWithParams(conn, `DELETE FROM chunk_stats WHERE ${byDataset}`, params);
  runWithParams(conn, `DELETE FROM chunks WHERE ${byDataset}`, params);
  runWithParams(conn, `DELETE FROM dataset_columns WHERE ${byDataset}`, params);
  runWithParams(conn, `DELETE FROM datasets WHERE ${cond}`, params);
}

/**
 * Inserts rows (objects by column name) into a mirror table: as one Arrow IPC stream
 * into a staging table, then `INSERT … BY NAME`, which casts each column to the table's
 * type (numbers to BIGINT, text to TIMESTAMP). All of it synchronous, so no user query
 * (which yields between its steps) ever sees the staging table.
 */
function insertRows(conn: WasmConnection, table: string, rows: readonly object[]): void {
  if (rows.length === 0) return;
  const names = Object.keys(rows[0]!);
  const vectors: Record<string, arrow.Vector> = {};
  for (const name of names) {
    const values = rows.map((r) => (r as Record<string, unknown>)[name] ?? null);
    const sample = values.find((v) => v !== null);
    const type = Array.isArray(sample)
      ? new arrow.List(new arrow.Field("item", new arrow.Utf8(), true))
      : typeof sample === "number"
      ? new arrow.Float64()
      : typeof sample === "boolean"
      ? new arrow.Bool()
      : new arrow.Utf8();
    vectors[name] = arrow.vectorFromArray(values, type as arrow.DataType);
  }
  const stage = `_stage_${table}`;
  conn.insertArrowFromIPCStream(arrow.tableToIPC(new arrow.Table(vectors), "stream"), {
    name: stage,
    create: true,
  });
  try {
    conn.query(`INSERT INTO ${table} BY NAME SELECT * FROM ${stage}`);
  } finally {
    conn.query(`DROP TABLE ${stage}`);
  }
}

/**
 * Runs a KV call again while the KV says another connection holds its lock: a local
 * (SQLite) KV shared by several processes answers "database is locked" instead of
 * waiting. Any other failure is thrown at once.
 */
async function whenFree<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= 200 || !/database is locked/i.test(message(err))) throw err;
      await new Promise((resolve) =>
        setTimeout(resolve, 2 + Math.random() * 8 * Math.min(attempt, 10))
      );
    }
  }
}

function busy(name: string): CatalogError {
  return new CatalogError(
    "DB_FAILED",
    `Cannot write dataset '${name}': other processes kept writing to the catalog; try again`,
  );
}
