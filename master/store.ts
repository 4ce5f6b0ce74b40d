/**
 * `JobStore`: the master's durable record of jobs and tasks, in an embedded SQLite
 * database (`node:sqlite`). The master keeps its working state in memory and writes
 * every change through to here; at start it loads everything back, so a master
 * killed at any instant (even `kill -9`) resumes its jobs without redoing a chunk
 * whose row says DONE.
 *
 * Durability: WAL journal with `synchronous=NORMAL`, so a commit survives the
 * process dying at once (the OS holds the write); a power cut may lose the last
 * commits, which then only costs redoing those tasks (a staged chunk counts only
 * once its row says DONE). The database is opened in exclusive locking mode, so a
 * second master on the same file fails at start instead of corrupting the jobs.
 *
 * Two kinds of write: `putJob`/`putTask`/`transaction` commit at once; `deferJob`/
 * `deferTask` (a task handed out or done, many a second) are committed together, in
 * one transaction, within `flushMs` (default 20 ms), or with the next immediate
 * write, whichever comes first. A row is written as it is at that moment (the row
 * objects are the master's own), so a task handed out and done within one flush is
 * one write. A master killed meanwhile loses at most those rows: a task whose DONE
 * was not yet written is frozen again, one whose hand-out was not is queued again
 * (its worker is told to drop it when it re-registers): no result is ever wrong. The
 * master flushes before it shows a job (`GET /jobs`, `GET /jobs/{id}`), so a task a
 * client has seen DONE is on disk and never frozen again.
 *
 * Owns no logic: rows in, rows out.
 *
 * @module
 */
import type { TextFallback } from "../client/types.ts";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { dirname } from "node:path";
import type {
  ColumnPlanJson,
  FieldJson,
  JobCodec,
  JobPhase,
  JobSourceFormat,
  JobStatus,
  TaskStatus,
  TaskWindow,
} from "../client/types.ts";
import { JobError } from "../client/errors.ts";
import type { FileIdentity } from "../internal/file_identity.ts";

/** What the master fixed for a job once it had read its source's layout and first chunk. */
export interface PreparedJob {
  /** Format read. */
  format: JobSourceFormat;
  /** Source size when laid out. */
  source_bytes: number;
  /** Schema every chunk is read with. */
  schema: FieldJson[];
  /** Plan of every column. */
  plans: Record<string, ColumnPlanJson>;
  /** Codec id of every block. */
  codec: string;
  /** Why `auto` chose it. */
  auto_reason: string | null;
  /** A CSV source's delimiter, told once from its start (absent for other formats). */
  delimiter?: string;
}

/** One job as stored (and held in memory). Times are epoch milliseconds. */
export interface JobRow {
  job_id: string;
  seq: number;
  status: JobStatus;
  phase: JobPhase;
  source: string;
  destination: string;
  format: JobSourceFormat | null;
  codec: JobCodec;
  chunk_rows: number;
  /** Columns forced to text (grows when a worker reports SCHEMA_MISMATCH). */
  types: Record<string, TextFallback>;
  /** The same columns, in the order they were widened. */
  widened: string[];
  prepared: PreparedJob | null;
  total_rows: number | null;
  tasks_total: number | null;
  /** Bumped each time the job starts over (a widened column). */
  generation: number;
  error: string | null;
  payload_sha256: string | null;
  archive_bytes: number | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  updated_at: number;
  /** Namespace of the token that submitted it (null: submitted with auth off). */
  namespace: string | null;
  /** Name of that token's user (null: auth off). */
  submitted_by: string | null;
  /**
   * The source file as accepted (device, inode, size, modification time): every read
   * of the job must open this file (null for jobs accepted before it was recorded).
   */
  source_id: FileIdentity | null;
}

/** One task as stored (and held in memory). */
export interface TaskRow {
  task_id: string;
  job_id: string;
  index: number;
  status: TaskStatus;
  attempts: number;
  worker_id: string | null;
  /** Id of the current attempt; results must carry it. Null when not running. */
  lease: string | null;
  window: TaskWindow;
  rows: number;
  /** Workers an attempt failed on (a retry prefers another one). */
  failed_on: string[];
  error: string | null;
  started_at: number | null;
  finished_at: number | null;
  /** Staging file (one append-only file per job and generation). */
  staged_path: string | null;
  /** Where the chunk's body starts in it. */
  staged_offset: number | null;
  staged_bytes: number | null;
  staged_sha256: string | null;
}

/**
 * Version 2 added the jobs' `namespace` and `submitted_by` (auth); version 3 the
 * source's identity (`source_id`).
 */
const SCHEMA_VERSION = "3";

const JOB_COLUMNS = [
  "job_id",
  "seq",
  "status",
  "phase",
  "source",
  "destination",
  "format",
  "codec",
  "chunk_rows",
  "types",
  "widened",
  "prepared",
  "total_rows",
  "tasks_total",
  "generation",
  "error",
  "payload_sha256",
  "archive_bytes",
  "created_at",
  "started_at",
  "finished_at",
  "updated_at",
  "namespace",
  "submitted_by",
  "source_id",
] as const;

const TASK_COLUMNS = [
  "task_id",
  "job_id",
  "idx",
  "status",
  "attempts",
  "worker_id",
  "lease",
  "read_window",
  "rows",
  "failed_on",
  "error",
  "started_at",
  "finished_at",
  "staged_path",
  "staged_offset",
  "staged_bytes",
  "staged_sha256",
] as const;

const DDL = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  job_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, status TEXT NOT NULL, phase TEXT NOT NULL,
  source TEXT NOT NULL, destination TEXT NOT NULL, format TEXT, codec TEXT NOT NULL,
  chunk_rows INTEGER NOT NULL, types TEXT NOT NULL, widened TEXT NOT NULL, prepared TEXT,
  total_rows INTEGER, tasks_total INTEGER, generation INTEGER NOT NULL, error TEXT,
  payload_sha256 TEXT, archive_bytes INTEGER, created_at REAL NOT NULL, started_at REAL,
  finished_at REAL, updated_at REAL NOT NULL, namespace TEXT, submitted_by TEXT, source_id TEXT
);
CREATE TABLE IF NOT EXISTS tasks (
  task_id TEXT PRIMARY KEY, job_id TEXT NOT NULL, idx INTEGER NOT NULL, status TEXT NOT NULL,
  attempts INTEGER NOT NULL, worker_id TEXT, lease TEXT, read_window TEXT NOT NULL,
  rows INTEGER NOT NULL, failed_on TEXT NOT NULL, error TEXT, started_at REAL,
  finished_at REAL, staged_path TEXT, staged_offset INTEGER, staged_bytes INTEGER,
  staged_sha256 TEXT
);
CREATE INDEX IF NOT EXISTS tasks_by_job ON tasks (job_id, idx);
`;

function upsert(table: string, columns: readonly string[], key: string): string {
  const names = columns.join(", ");
  const params = columns.map(() => "?").join(", ");
  const sets = columns.filter((c) => c !== key).map((c) => `${c} = excluded.${c}`).join(", ");
  return `INSERT INTO ${table} (${names}) VALUES (${params}) ON CONFLICT(${key}) DO UPDATE SET ${sets}`;
}

/** Options of {@link JobStore.open}. */
export interface JobStoreOptions {
  /** Longest a deferred write waits before it is committed, in ms (default 20). */
  flushMs?: number;
}

/** The durable job store. */
export class JobStore {
  #db: DatabaseSync;
  #putJob;
  #putTask;
  #closed = false;
  #flushMs: number;
  /** Rows to write at the next commit (the master's own objects, written as they are then). */
  #dirtyJobs = new Set<JobRow>();
  #dirtyTasks = new Set<TaskRow>();
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** Rows written by the running `transaction` (dropped if it throws), or null. */
  #tx: { jobs: JobRow[]; tasks: TaskRow[] } | null = null;

  private constructor(db: DatabaseSync, flushMs: number) {
    this.#db = db;
    this.#flushMs = flushMs;
    this.#putJob = db.prepare(upsert("jobs", JOB_COLUMNS, "job_id"));
    this.#putTask = db.prepare(upsert("tasks", TASK_COLUMNS, "task_id"));
  }

  /**
   * Opens (creating if needed) the store.
   *
   * @param path Database file, or `:memory:` (tests).
   * @param options How long deferred writes may wait.
   * @returns The store.
   * @throws {JobError} REQUEST_FAILED when the file cannot be opened, or another
   * master holds it.
   */
  static async open(path: string, options: JobStoreOptions = {}): Promise<JobStore> {
    if (path !== ":memory:") await Deno.mkdir(dirname(path), { recursive: true });
    let db: DatabaseSync | undefined;
    try {
      db = new DatabaseSync(path);
      db.exec("PRAGMA busy_timeout = 0");
      db.exec("PRAGMA locking_mode = EXCLUSIVE");
      db.exec("PRAGMA journal_mode = WAL");
      db.exec("PRAGMA synchronous = NORMAL");
      // Takes the exclusive lock now: a second master fails here, at start.
      db.exec("BEGIN IMMEDIATE");
      db.exec(DDL);
      db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)").run(
        SCHEMA_VERSION,
      );
      migrate(db);
      db.exec("COMMIT");
      const version = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as
        | { value: string }
        | undefined;
      if (version?.value !== SCHEMA_VERSION) {
        throw new Error(`schema version is ${version?.value}, this master reads ${SCHEMA_VERSION}`);
      }
      return new JobStore(db, options.flushMs ?? 20);
    } catch (cause) {
      try {
        db?.close();
      } catch { /* already closed */ }
      const why = cause instanceof Error ? cause.message : String(cause);
      const busy = /locked|busy/i.test(why);
      throw new JobError(
        "REQUEST_FAILED",
        busy
          ? `Cannot open job store '${path}': another master is using it`
          : `Cannot open job store '${path}': ${why}`,
        { cause, path },
      );
    }
  }

  /** Every job, oldest first (deferred writes are committed first). */
  jobs(): JobRow[] {
    this.flush();
    const rows = this.#db.prepare("SELECT * FROM jobs ORDER BY seq").all() as Record<
      string,
      SQLInputValue
    >[];
    return rows.map((r) => ({
      job_id: String(r.job_id),
      seq: Number(r.seq),
      status: r.status as JobStatus,
      phase: r.phase as JobPhase,
      source: String(r.source),
      destination: String(r.destination),
      format: (r.format ?? null) as JobSourceFormat | null,
      codec: r.codec as JobCodec,
      chunk_rows: Number(r.chunk_rows),
      types: JSON.parse(String(r.types)),
      widened: JSON.parse(String(r.widened)),
      prepared: r.prepared === null ? null : JSON.parse(String(r.prepared)),
      total_rows: num(r.total_rows),
      tasks_total: num(r.tasks_total),
      generation: Number(r.generation),
      error: str(r.error),
      payload_sha256: str(r.payload_sha256),
      archive_bytes: num(r.archive_bytes),
      created_at: Number(r.created_at),
      started_at: num(r.started_at),
      finished_at: num(r.finished_at),
      updated_at: Number(r.updated_at),
      namespace: str(r.namespace),
      submitted_by: str(r.submitted_by),
      source_id: r.source_id === null || r.source_id === undefined
        ? null
        : JSON.parse(String(r.source_id)),
    }));
  }

  /** Every task, by job and index (deferred writes are committed first). */
  tasks(): TaskRow[] {
    this.flush();
    const rows = this.#db.prepare("SELECT * FROM tasks ORDER BY job_id, idx").all() as Record<
      string,
      SQLInputValue
    >[];
    return rows.map((r) => ({
      task_id: String(r.task_id),
      job_id: String(r.job_id),
      index: Number(r.idx),
      status: r.status as TaskStatus,
      attempts: Number(r.attempts),
      worker_id: str(r.worker_id),
      lease: str(r.lease),
      window: JSON.parse(String(r.read_window)),
      rows: Number(r.rows),
      failed_on: JSON.parse(String(r.failed_on)),
      error: str(r.error),
      started_at: num(r.started_at),
      finished_at: num(r.finished_at),
      staged_path: str(r.staged_path),
      staged_offset: num(r.staged_offset),
      staged_bytes: num(r.staged_bytes),
      staged_sha256: str(r.staged_sha256),
    }));
  }

  /** Writes one job now (with every deferred write). */
  putJob(job: JobRow): void {
    if (this.#tx) {
      this.#tx.jobs.push(job);
      return;
    }
    this.#dirtyJobs.add(job);
    this.flush();
  }

  /** Writes one task now (with every deferred write). */
  putTask(task: TaskRow): void {
    if (this.#tx) {
      this.#tx.tasks.push(task);
      return;
    }
    this.#dirtyTasks.add(task);
    this.flush();
  }

  /** Rows waiting to be committed. */
  get pending(): number {
    return this.#dirtyJobs.size + this.#dirtyTasks.size;
  }

  /** Writes a job within `flushMs` (see the module doc). */
  deferJob(job: JobRow): void {
    this.#dirtyJobs.add(job);
    this.#later();
  }

  /** Writes a task within `flushMs` (see the module doc). */
  deferTask(task: TaskRow): void {
    this.#dirtyTasks.add(task);
    this.#later();
  }

  #later(): void {
    if (this.#timer !== null || this.#closed) return;
    const timer = setTimeout(() => {
      this.#timer = null;
      try {
        this.flush();
      } catch {
        // The rows stay pending: tried again later, and the next immediate write throws.
        this.#later();
      }
    }, this.#flushMs);
    this.#timer = timer;
    // A pending flush never keeps the process alive: closing the store flushes.
    Deno.unrefTimer(timer);
  }

  /**
   * Runs writes as one transaction (all or nothing), committed at once together
   * with every deferred write.
   *
   * @param fn The writes.
   */
  transaction(fn: () => void): void {
    if (this.#tx) {
      fn();
      return;
    }
    const tx: { jobs: JobRow[]; tasks: TaskRow[] } = { jobs: [], tasks: [] };
    this.#tx = tx;
    try {
      fn();
    } finally {
      this.#tx = null;
    }
    for (const job of tx.jobs) this.#dirtyJobs.add(job);
    for (const task of tx.tasks) this.#dirtyTasks.add(task);
    this.flush();
  }

  /**
   * Commits every pending write now, in one transaction. On failure the rows stay
   * pending and the error is thrown (the next write tries them again).
   */
  flush(): void {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    if (this.#closed || (this.#dirtyJobs.size === 0 && this.#dirtyTasks.size === 0)) return;
    const jobs = [...this.#dirtyJobs];
    const tasks = [...this.#dirtyTasks];
    this.#db.exec("BEGIN");
    try {
      for (const job of jobs) this.#writeJob(job);
      for (const task of tasks) this.#writeTask(task);
      this.#db.exec("COMMIT");
    } catch (err) {
      this.#db.exec("ROLLBACK");
      throw err;
    }
    for (const job of jobs) this.#dirtyJobs.delete(job);
    for (const task of tasks) this.#dirtyTasks.delete(task);
  }

  #writeJob(job: JobRow): void {
    this.#putJob.run(
      job.job_id,
      job.seq,
      job.status,
      job.phase,
      job.source,
      job.destination,
      job.format,
      job.codec,
      job.chunk_rows,
      JSON.stringify(job.types),
      JSON.stringify(job.widened),
      job.prepared === null ? null : JSON.stringify(job.prepared),
      job.total_rows,
      job.tasks_total,
      job.generation,
      job.error,
      job.payload_sha256,
      job.archive_bytes,
      job.created_at,
      job.started_at,
      job.finished_at,
      job.updated_at,
      job.namespace,
      job.submitted_by,
      job.source_id === null ? null : JSON.stringify(job.source_id),
    );
  }

  #writeTask(task: TaskRow): void {
    this.#putTask.run(
      task.task_id,
      task.job_id,
      task.index,
      task.status,
      task.attempts,
      task.worker_id,
      task.lease,
      JSON.stringify(task.window),
      task.rows,
      JSON.stringify(task.failed_on),
      task.error,
      task.started_at,
      task.finished_at,
      task.staged_path,
      task.staged_offset,
      task.staged_bytes,
      task.staged_sha256,
    );
  }

  /** Closes the database (idempotent). */
  close(): void {
    if (this.#closed) return;
    try {
      this.flush();
    } finally {
      this.#closed = true;
      this.#db.close();
    }
  }
}

/** Brings a store written by an older master up to {@link SCHEMA_VERSION} (inside the open transaction). */
function migrate(db: DatabaseSync): void {
  const row = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as
    | { value: string }
    | undefined;
  if (row?.value === "1") {
    // Jobs from before auth have no owner: only namespace '*' sees them.
    db.exec("ALTER TABLE jobs ADD COLUMN namespace TEXT");
    db.exec("ALTER TABLE jobs ADD COLUMN submitted_by TEXT");
    db.prepare("UPDATE meta SET value = '2' WHERE key = 'schema_version'").run();
  }
  const now = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as
    | { value: string }
    | undefined;
  if (now?.value === "2") {
    // Jobs from before: their source's identity was not recorded (checked by size only).
    db.exec("ALTER TABLE jobs ADD COLUMN source_id TEXT");
    db.prepare("UPDATE meta SET value = ? WHERE key = 'schema_version'").run(SCHEMA_VERSION);
  }
}

function num(v: SQLInputValue | undefined): number | null {
  return v === null || v === undefined ? null : Number(v);
}

function str(v: SQLInputValue | undefined): string | null {
  return v === null || v === undefined ? null : String(v);
}
