/**
 * `Master`: the cluster's brain, without HTTP. It holds jobs, tasks and workers in
 * memory (written through to the {@link JobStore}), and implements "How a freeze
 * job flows" (`DESIGN.md`):
 *
 * - **submit**: checks the request, records the job QUEUED, and prepares it in the
 *   background (`prepare.ts`: layout, schema, plan, codec); a job without tasks yet
 *   is never scheduled.
 * - **schedule**: hands the next task to the next idle worker, round-robin across
 *   every active job (each assignment serves the job after the one served last) and
 *   across workers; a retried task prefers an idle worker it has not failed on. One
 *   task per worker. Each assignment gets a fresh *lease*; a result or report must
 *   carry the current lease, so anything late, duplicated, or from a worker declared
 *   offline is refused as `STALE_RESULT` and changes nothing.
 * - **done**: checks the chunk (framing, block hashes, row and column counts),
 *   stages it durably (appended to the job's file under the data directory,
 *   `staging.ts`, then its row, which is the commit point; the file's SHA-256 is recorded and checked again before use), and
 *   when every task is done writes the archive in chunk order (`ArchiveWriter`: temp
 *   file, fsync, rename) with the header a local freeze writes (`ops/freeze.ts`).
 * - **failed**: a SCHEMA_MISMATCH naming a column not yet text widens it and starts
 *   the job over (as a local freeze does; not a failure). Any other error counts:
 *   the task is retried until it has had `maxRetries` attempts, then the job is
 *   FAILED with that error (other jobs go on).
 * - **tick** (the caller runs it on a timer; tests call it with a fake clock): a
 *   worker silent for 3 heartbeat intervals is offline and its task re-queued
 *   without counting the attempt; a task past the task timeout counts as failed.
 * - **cancel**: the job becomes CANCELLED, its workers are told to drop its tasks,
 *   staged chunks are deleted and no archive is written.
 * - **restart**: {@link Master.open} reloads the store: jobs resume where they were;
 *   a task still RUNNING waits for its worker to re-register (3 heartbeat intervals)
 *   and is re-queued otherwise; DONE chunks are never redone.
 *
 * Time comes from the injected clock only; workers are reached through the injected
 * {@link WorkerTransport} (`transport.ts`).
 *
 * @module
 */
import { isAbsolute, resolve } from "node:path";
import { createHash } from "node:crypto";
import type { Batch, Schema } from "../format/column.ts";
import type { ColumnPlan } from "../format/header.ts";
import { ArchiveWriter } from "../format/writer.ts";
import { sourceFormatOf } from "../io/source.ts";
import type { SourceFormat } from "../io/types.ts";
import { newArchiveHeader } from "../format/new_archive.ts";
import { createLogger, type Logger } from "../internal/log.ts";
import { PermafrostError } from "../internal/errors.ts";
import { JobError } from "../client/errors.ts";
import type {
  FailedRequest,
  HealthRecord,
  HeartbeatRequest,
  HeartbeatResponse,
  JobCodec,
  JobRecord,
  JobSummary,
  RegisterRequest,
  RegisterResponse,
  RunningTask,
  SubmitRequest,
  TaskErrorReport,
  TaskRecord,
  TaskSpec,
  WorkerRecord,
} from "../client/types.ts";
import { decodeChunkBody, encodeBatchBody } from "../cluster/wire.ts";
import { readTaskRows, type TaskRead } from "../cluster/task_source.ts";
import { MAX_CHUNK_ROWS } from "../format/constants.ts";
import { type PrepareInput, prepareJob, type PrepareResult } from "./prepare.ts";
import { acceptFiles, checkDestinationInPlace, checkNotBusy } from "./_job_files.ts";
import { ChunkStaging } from "./staging.ts";
import { DispatchError, httpTransport, type WorkerTransport, workerUrl } from "./transport.ts";
import type { JobRow, JobStore, TaskRow } from "./store.ts";

/** Codecs a job may ask for. */
export const JOB_CODECS: readonly JobCodec[] = Object.freeze(["zstd", "lzma2", "zpaq", "auto"]);

/** Heartbeat intervals of silence after which a worker is offline. */
export const MISSED_HEARTBEATS = 3;

/** Who submitted a job: recorded with it, so each user sees only their namespace's jobs. */
export interface JobOwner {
  /** The token's namespace (`*` for all); null when auth is off. */
  namespace: string | null;
  /** The token's user; null when auth is off. */
  submitted_by: string | null;
}

const NO_OWNER: JobOwner = Object.freeze({ namespace: null, submitted_by: null });

/** What a {@link Master} needs. */
export interface MasterDeps {
  /** The durable store (its content is loaded by {@link Master.open}). */
  store: JobStore;
  /** Directory for staged chunks (`staging/<job_id>/`). */
  dataDir: string;
  /** Attempts a task gets (default 3). */
  maxRetries?: number;
  /** Heartbeat interval in seconds (default 5). */
  heartbeatS?: number;
  /** Task timeout in seconds (default 900). */
  taskTimeoutS?: number;
  /** `chunk_rows` of a job that does not give it (default 50,000). */
  defaultChunk?: number;
  /** Clock in epoch milliseconds (default `Date.now`). */
  now?: () => number;
  /** Logger (default: info and above to stderr). */
  logger?: Logger;
  /** How workers are reached (default {@link httpTransport}). */
  transport?: WorkerTransport;
  /** Job preparation (default `prepareJob`; tests may slow or fail it). */
  prepare?: (input: PrepareInput) => Promise<PrepareResult>;
  /** Reads a task's rows for a worker that cannot (default `readTaskRows`). */
  readRows?: (read: TaskRead) => Promise<Batch>;
  /**
   * fsync each staged chunk before recording it (default false). Not needed for
   * correctness: a staged chunk is checked against its recorded SHA-256 before the
   * archive is written, and one lost to a power cut is frozen again.
   */
  fsync?: boolean;
}

interface WorkerState {
  worker_id: string;
  url: string;
  status: "idle" | "busy" | "offline";
  /** Task the master gave it and expects back, or null. */
  task_id: string | null;
  jobs_done: number;
  tasks_failed: number;
  last_heartbeat: number;
  registered_at: number;
}

/** A unique id: 12 hex digits. */
function newId(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 12);
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

function errorText(e: unknown): string {
  if (e instanceof PermafrostError) return `${e.code}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

/** The master's state machine. */
export class Master {
  #store: JobStore;
  #dataDir: string;
  #maxRetries: number;
  #heartbeatMs: number;
  #taskTimeoutMs: number;
  #defaultChunk: number;
  #now: () => number;
  #log: Logger;
  #transport: WorkerTransport;
  #prepare: (input: PrepareInput) => Promise<PrepareResult>;
  #readRows: (read: TaskRead) => Promise<Batch>;
  #staging: ChunkStaging;
  /** While a done-report is handled: its worker, which takes its next task in the answer. */
  #inlineFor: WorkerState | null = null;
  /** The task assigned to `#inlineFor` meanwhile. */
  #inlineSpec: TaskSpec | null = null;
  #startedAt: number;

  #jobs = new Map<string, JobRow>();
  #tasks = new Map<string, TaskRow[]>();
  #taskById = new Map<string, TaskRow>();
  #queues = new Map<string, TaskRow[]>();
  #running = new Set<TaskRow>();
  #workers = new Map<string, WorkerState>();
  #preparing = new Map<string, number>();
  #assembling = new Map<string, { cancelled: boolean }>();
  #pending = new Set<Promise<unknown>>();
  #nextSeq = 1;
  #lastJobSeq = 0;
  #workerCursor = 0;
  #closed = false;
  /** Callers of `untilFinished`, by job. */
  #finishWaiters = new Map<string, Set<() => void>>();

  private constructor(deps: MasterDeps) {
    this.#store = deps.store;
    this.#dataDir = resolve(deps.dataDir);
    this.#maxRetries = deps.maxRetries ?? 3;
    this.#heartbeatMs = (deps.heartbeatS ?? 5) * 1000;
    this.#taskTimeoutMs = (deps.taskTimeoutS ?? 900) * 1000;
    this.#defaultChunk = deps.defaultChunk ?? 50_000;
    this.#now = deps.now ?? Date.now;
    this.#log = deps.logger ?? createLogger({ component: "master" });
    this.#transport = deps.transport ?? httpTransport();
    this.#prepare = deps.prepare ?? prepareJob;
    this.#readRows = deps.readRows ?? readTaskRows;
    this.#staging = new ChunkStaging(this.#dataDir, { fsync: deps.fsync ?? false });
    this.#startedAt = this.#now();
  }

  /**
   * Creates a master over a store and resumes every unfinished job in it.
   *
   * @param deps Store, data directory, limits, clock, logger, transport.
   * @returns The master.
   */
  static open(deps: MasterDeps): Master {
    const master = new Master(deps);
    master.#load();
    return master;
  }

  /** Heartbeat interval in seconds. */
  get heartbeatS(): number {
    return this.#heartbeatMs / 1000;
  }

  #load(): void {
    for (const job of this.#store.jobs()) {
      this.#jobs.set(job.job_id, job);
      this.#tasks.set(job.job_id, []);
      this.#queues.set(job.job_id, []);
      this.#nextSeq = Math.max(this.#nextSeq, job.seq + 1);
    }
    for (const task of this.#store.tasks()) {
      const list = this.#tasks.get(task.job_id);
      if (!list) continue;
      list.push(task);
      this.#taskById.set(task.task_id, task);
      if (task.status === "QUEUED") this.#queues.get(task.job_id)!.push(task);
      if (task.status === "RUNNING") this.#running.add(task);
    }
    let resumed = 0;
    for (const job of this.#jobs.values()) {
      if (!this.#active(job)) continue;
      resumed++;
      if (job.prepared === null) this.#startPrepare(job);
      else if (job.phase === "writing" || this.#allDone(job)) this.#startAssemble(job);
    }
    if (resumed > 0) this.#log.info("resumed jobs from the store", { jobs: resumed });
  }

  #active(job: JobRow): boolean {
    return job.status === "QUEUED" || job.status === "RUNNING";
  }

  #allDone(job: JobRow): boolean {
    return job.tasks_total !== null &&
      (this.#tasks.get(job.job_id) ?? []).every((t) => t.status === "DONE");
  }

  #track<T>(p: Promise<T>): void {
    const tracked = p.catch((err) => {
      this.#log.error("background work failed", { err, stack: (err as Error)?.stack });
    }).finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }

  /** Resolves once every background step (preparations, dispatches, archive writes) has settled. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  // -------------------------------------------------------------------------
  // jobs

  /**
   * Accepts a job: checks it, records it QUEUED, and starts preparing it. Relative
   * paths resolve against `req.cwd` (default: this process's working directory);
   * confinement to data roots is the app's business (`_access.ts`), done before.
   *
   * @param req Source, destination, codec, chunk rows, format, cwd.
   * @param owner Who submitted it (namespace and user; default none: auth off).
   * @returns The job.
   * @throws {JobError} INVALID_JOB, SOURCE_NOT_FOUND or DESTINATION_BUSY.
   */
  async submit(req: SubmitRequest, owner: JobOwner = NO_OWNER): Promise<JobRecord> {
    const codec = req.codec ?? "zstd";
    if (!JOB_CODECS.includes(codec)) {
      throw new JobError(
        "INVALID_JOB",
        `Unknown codec "${codec}": use ${JOB_CODECS.join(", ")}`,
      );
    }
    const chunkRows = req.chunk_rows ?? this.#defaultChunk;
    if (!Number.isSafeInteger(chunkRows) || chunkRows < 1 || chunkRows > MAX_CHUNK_ROWS) {
      throw new JobError(
        "INVALID_JOB",
        `chunk_rows must be an integer 1..${MAX_CHUNK_ROWS}, got ${chunkRows}`,
      );
    }
    if (typeof req.source !== "string" || req.source.trim() === "") {
      throw new JobError("INVALID_JOB", "source must be a file path");
    }
    if (typeof req.destination !== "string" || req.destination.trim() === "") {
      throw new JobError("INVALID_JOB", "destination must be a file path");
    }
    if (req.cwd !== undefined && (typeof req.cwd !== "string" || !isAbsolute(req.cwd))) {
      throw new JobError("INVALID_JOB", `cwd must be an absolute directory, got '${req.cwd}'`);
    }
    const base = req.cwd ?? Deno.cwd();
    const source = resolve(base, req.source);
    const destination = resolve(base, req.destination);
    let format: SourceFormat;
    try {
      format = req.format ?? sourceFormatOf(source);
    } catch (err) {
      throw new JobError("INVALID_JOB", (err as Error).message, { cause: err });
    }
    const files = await acceptFiles(source, destination, req);
    await checkNotBusy(
      files,
      [...this.#jobs.values()].filter((j) => this.#active(j)),
      req.destination,
    );
    const now = this.#now();
    let jobId = newId();
    while (this.#jobs.has(jobId)) jobId = newId();
    const job: JobRow = {
      job_id: jobId,
      seq: this.#nextSeq++,
      status: "QUEUED",
      phase: "preparing",
      source: files.source,
      destination: files.destination,
      format,
      codec,
      chunk_rows: chunkRows,
      types: {},
      widened: [],
      prepared: null,
      total_rows: null,
      tasks_total: null,
      generation: 0,
      error: null,
      payload_sha256: null,
      archive_bytes: null,
      created_at: now,
      started_at: null,
      finished_at: null,
      updated_at: now,
      namespace: owner.namespace,
      submitted_by: owner.submitted_by,
      source_id: files.sourceId,
    };
    this.#store.putJob(job);
    this.#jobs.set(jobId, job);
    this.#tasks.set(jobId, []);
    this.#queues.set(jobId, []);
    this.#log.info("job submitted", {
      job_id: jobId,
      submitted_by: owner.submitted_by,
      source: files.source,
      destination: files.destination,
      codec,
      chunk_rows: chunkRows,
    });
    this.#startPrepare(job);
    return this.job(jobId);
  }

  #startPrepare(job: JobRow): void {
    const generation = job.generation;
    this.#preparing.set(job.job_id, generation);
    const tasks = this.#tasks.get(job.job_id)!;
    const windows = tasks.length > 0 ? tasks.map((t) => t.window) : null;
    this.#track((async () => {
      let result: PrepareResult;
      try {
        result = await this.#prepare({
          path: job.source,
          format: job.format ?? sourceFormatOf(job.source),
          chunkRows: job.chunk_rows,
          codec: job.codec,
          types: job.types,
          windows,
          identity: job.source_id,
        });
      } catch (err) {
        if (!this.#current(job, generation)) return;
        this.#preparing.delete(job.job_id);
        this.#finishJob(job, "FAILED", `Cannot prepare job: ${errorText(err)}`);
        return;
      }
      if (!this.#current(job, generation)) return;
      this.#preparing.delete(job.job_id);
      this.#prepared(job, result);
    })());
  }

  #current(job: JobRow, generation: number): boolean {
    return this.#active(job) && job.generation === generation && !this.#closed;
  }

  #prepared(job: JobRow, r: PrepareResult): void {
    const now = this.#now();
    job.prepared = {
      format: job.format ?? sourceFormatOf(job.source),
      source_bytes: r.bytes,
      schema: r.schema,
      plans: r.plans,
      codec: r.codec,
      auto_reason: r.autoReason,
    };
    job.types = r.types;
    job.widened = [...job.widened, ...r.widened];
    job.total_rows = r.rows;
    job.tasks_total = r.windows.length;
    job.phase = "freezing";
    job.updated_at = now;
    let tasks = this.#tasks.get(job.job_id)!;
    const fresh = tasks.length === 0;
    if (fresh) {
      tasks = r.windows.map((window, index) => ({
        task_id: `${job.job_id}-t${index}`,
        job_id: job.job_id,
        index,
        status: "QUEUED" as const,
        attempts: 0,
        worker_id: null,
        lease: null,
        window,
        rows: window.rows,
        failed_on: [],
        error: null,
        started_at: null,
        finished_at: null,
        staged_path: null,
        staged_offset: null,
        staged_bytes: null,
        staged_sha256: null,
      }));
      this.#tasks.set(job.job_id, tasks);
      for (const t of tasks) this.#taskById.set(t.task_id, t);
      this.#queues.set(job.job_id, tasks.filter((t) => t.status === "QUEUED"));
    }
    this.#store.transaction(() => {
      this.#store.putJob(job);
      if (fresh) { for (const t of tasks) this.#store.putTask(t); }
    });
    this.#log.info("job prepared", {
      job_id: job.job_id,
      rows: r.rows,
      tasks: r.windows.length,
      codec: r.codec,
      widened: job.widened,
    });
    if (this.#allDone(job)) this.#startAssemble(job);
    this.schedule();
  }

  /**
   * Cancels a QUEUED or RUNNING job (a CANCELLED one is answered as it is).
   *
   * @param jobId The job.
   * @returns The job, CANCELLED.
   * @throws {JobError} JOB_NOT_FOUND; JOB_FINISHED for a DONE or FAILED job.
   */
  cancel(jobId: string): JobRecord {
    const job = this.#job(jobId);
    if (job.status === "DONE" || job.status === "FAILED") {
      throw new JobError(
        "JOB_FINISHED",
        `Cannot cancel job ${jobId}: it is ${job.status}`,
      );
    }
    if (job.status !== "CANCELLED") {
      this.#finishJob(job, "CANCELLED", null);
      this.schedule();
    }
    return this.job(jobId);
  }

  /**
   * Resolves once the job is DONE, FAILED or CANCELLED (at once if it is), after
   * `ms` milliseconds, when `signal` aborts, or when the master closes: what
   * `GET /jobs/{id}?wait_s=` waits on, so a client learns the end without polling.
   *
   * @param jobId The job.
   * @param ms Longest wait.
   * @param signal Stops waiting (the request went away).
   * @throws {JobError} JOB_NOT_FOUND.
   */
  async untilFinished(jobId: string, ms: number, signal?: AbortSignal): Promise<void> {
    if (!this.#active(this.#job(jobId)) || this.#closed || signal?.aborted) return;
    let waiters = this.#finishWaiters.get(jobId);
    if (!waiters) this.#finishWaiters.set(jobId, waiters = new Set());
    const set = waiters;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        set.delete(done);
        if (set.size === 0 && this.#finishWaiters.get(jobId) === set) {
          this.#finishWaiters.delete(jobId);
        }
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
      set.add(done);
    });
  }

  /** Answers every `untilFinished` caller now (the master is closing: no timer outlives it). */
  stopWaiting(): void {
    for (const set of [...this.#finishWaiters.values()]) for (const done of [...set]) done();
  }

  #wakeFinishWaiters(jobId: string): void {
    for (const done of [...this.#finishWaiters.get(jobId) ?? []]) done();
  }

  /** Ends a job (CANCELLED or FAILED): drops its running tasks and deletes its staged chunks. */
  #finishJob(job: JobRow, status: "CANCELLED" | "FAILED", error: string | null): void {
    const now = this.#now();
    job.status = status;
    job.phase = "finished";
    job.error = error;
    job.finished_at = now;
    job.updated_at = now;
    const assembling = this.#assembling.get(job.job_id);
    if (assembling) assembling.cancelled = true;
    this.#preparing.delete(job.job_id);
    const tasks = this.#tasks.get(job.job_id) ?? [];
    for (const t of tasks) {
      if (t.status === "RUNNING") this.#dropOnWorker(t);
      if (t.status === "QUEUED" || t.status === "RUNNING") {
        t.status = "CANCELLED";
        t.lease = null;
        t.finished_at = now;
      }
      unstage(t);
    }
    this.#queues.set(job.job_id, []);
    this.#store.transaction(() => {
      this.#store.putJob(job);
      for (const t of tasks) this.#store.putTask(t);
    });
    this.#track(this.#staging.remove(job.job_id));
    this.#wakeFinishWaiters(job.job_id);
    this.#log.info(`job ${status.toLowerCase()}`, { job_id: job.job_id, error });
  }

  /** Tells the worker running a task to drop it; the task's lease ends now. */
  #dropOnWorker(task: TaskRow): void {
    this.#running.delete(task);
    const lease = task.lease;
    task.lease = null;
    const worker = task.worker_id ? this.#workers.get(task.worker_id) : undefined;
    if (!worker || worker.task_id !== task.task_id) return;
    // Busy without a task until it confirms: it may still be encoding.
    worker.task_id = null;
    if (worker.status === "offline") return;
    worker.status = "busy";
    this.#track(
      this.#transport.cancel(worker.url, task.task_id).then(() => {
        if (worker.status === "busy" && worker.task_id === null) {
          worker.status = "idle";
          this.schedule();
        }
      }, (err) => {
        this.#log.debug("could not tell worker to drop task; its heartbeat will", {
          worker_id: worker.worker_id,
          task_id: task.task_id,
          lease,
          err,
        });
      }),
    );
  }

  // -------------------------------------------------------------------------
  // scheduling

  /** Assigns queued tasks to idle workers until one of the two runs out. */
  schedule(): void {
    if (this.#closed) return;
    for (;;) {
      const workers = [...this.#workers.values()];
      if (!workers.some((w) => w.status === "idle")) return;
      const job = this.#nextJob();
      if (!job) return;
      const queue = this.#queues.get(job.job_id)!;
      const task = queue[0]!;
      const worker = this.#pickWorker(workers, task);
      queue.shift();
      this.#lastJobSeq = job.seq;
      this.#assign(job, task, worker);
    }
  }

  #nextJob(): JobRow | undefined {
    let first: JobRow | undefined;
    for (const job of this.#jobs.values()) {
      if (!this.#active(job) || job.phase !== "freezing") continue;
      if ((this.#queues.get(job.job_id)?.length ?? 0) === 0) continue;
      if (job.seq > this.#lastJobSeq) return job;
      first ??= job;
    }
    return first;
  }

  #pickWorker(workers: WorkerState[], task: TaskRow): WorkerState {
    const n = workers.length;
    let fallback: WorkerState | undefined;
    for (let i = 0; i < n; i++) {
      const at = (this.#workerCursor + i) % n;
      const w = workers[at]!;
      if (w.status !== "idle") continue;
      if (!task.failed_on.includes(w.worker_id)) {
        this.#workerCursor = (at + 1) % n;
        return w;
      }
      fallback ??= w;
    }
    this.#workerCursor = (workers.indexOf(fallback!) + 1) % n;
    return fallback!;
  }

  #assign(job: JobRow, task: TaskRow, worker: WorkerState): void {
    const now = this.#now();
    const lease = newId() + newId();
    task.status = "RUNNING";
    task.worker_id = worker.worker_id;
    task.lease = lease;
    task.attempts++;
    task.started_at = now;
    this.#running.add(task);
    worker.status = "busy";
    worker.task_id = task.task_id;
    if (job.status === "QUEUED") {
      job.status = "RUNNING";
      job.started_at = now;
    }
    job.updated_at = now;
    this.#store.transaction(() => {
      this.#store.putTask(task);
      this.#store.putJob(job);
    });
    const prepared = job.prepared!;
    const spec: TaskSpec = {
      task_id: task.task_id,
      job_id: job.job_id,
      index: task.index,
      lease,
      worker_id: worker.worker_id,
      source: {
        path: job.source,
        format: prepared.format,
        bytes: prepared.source_bytes,
        dev: job.source_id?.dev ?? 0,
        ino: job.source_id?.ino ?? 0,
        mtime_ms: job.source_id?.mtime_ms ?? null,
      },
      window: task.window,
      schema: prepared.schema,
      types: job.types,
      plans: prepared.plans,
      codec: prepared.codec,
    };
    this.#log.debug("task assigned", {
      job_id: job.job_id,
      task_id: task.task_id,
      worker_id: worker.worker_id,
      attempt: task.attempts,
    });
    if (this.#inlineFor === worker && this.#inlineSpec === null) {
      this.#inlineSpec = spec;
      return;
    }
    this.#track(this.#dispatch(worker, task, spec));
  }

  async #dispatch(worker: WorkerState, task: TaskRow, spec: TaskSpec): Promise<void> {
    try {
      await this.#transport.assign(worker.url, spec);
    } catch (err) {
      if (task.lease !== spec.lease || this.#closed) return;
      const kind = err instanceof DispatchError ? err.kind : "unreachable";
      this.#log.warn("could not hand task to worker", {
        task_id: task.task_id,
        worker_id: worker.worker_id,
        kind,
        err,
      });
      if (kind === "refused") {
        if (worker.task_id === task.task_id) {
          worker.task_id = null;
          worker.status = "idle";
        }
        this.#failAttempt(task, {
          code: "DISPATCH_REFUSED",
          message: (err as Error).message,
        }, worker.worker_id);
      } else {
        if (worker.task_id === task.task_id) {
          worker.task_id = null;
          worker.status = kind === "unreachable" ? "offline" : "busy";
        }
        this.#requeue(task, `worker ${worker.worker_id} ${kind}`);
      }
      this.schedule();
    }
  }

  /** Puts a task back in its queue without counting the attempt (its worker went away). */
  #requeue(task: TaskRow, why: string): void {
    this.#running.delete(task);
    task.status = "QUEUED";
    task.lease = null;
    task.attempts = Math.max(0, task.attempts - 1);
    task.started_at = null;
    this.#store.putTask(task);
    this.#queues.get(task.job_id)?.unshift(task);
    this.#log.info("task re-queued", { task_id: task.task_id, job_id: task.job_id, why });
  }

  /** Counts a failed attempt: retry, or fail the job at the limit. */
  #failAttempt(task: TaskRow, error: TaskErrorReport, workerId: string | null): void {
    const job = this.#jobs.get(task.job_id)!;
    this.#running.delete(task);
    task.lease = null;
    task.error = `${error.code}: ${error.message}`;
    if (workerId && !task.failed_on.includes(workerId)) task.failed_on.push(workerId);
    if (workerId) {
      const w = this.#workers.get(workerId);
      if (w) w.tasks_failed++;
    }
    if (task.attempts >= this.#maxRetries) {
      task.status = "FAILED";
      task.finished_at = this.#now();
      this.#store.putTask(task);
      this.#log.warn("task failed for good", {
        task_id: task.task_id,
        job_id: task.job_id,
        attempts: task.attempts,
        error: task.error,
      });
      this.#finishJob(
        job,
        "FAILED",
        `Task ${task.index} (rows ${task.index * job.chunk_rows}:${
          task.index * job.chunk_rows + task.rows
        }) failed after ${task.attempts} attempts: ${task.error}`,
      );
      return;
    }
    task.status = "QUEUED";
    task.started_at = null;
    this.#store.putTask(task);
    this.#queues.get(task.job_id)!.push(task);
    this.#log.warn("task attempt failed; retrying", {
      task_id: task.task_id,
      job_id: task.job_id,
      attempt: task.attempts,
      error: task.error,
    });
  }

  // -------------------------------------------------------------------------
  // workers

  /**
   * Registers (or re-registers) a worker.
   *
   * @param req Id, URL, and the task it still runs.
   * @param remoteHost The caller's address, used when the URL's host is unspecified (`0.0.0.0`).
   * @returns Heartbeat interval, the URL used, and tasks to drop.
   */
  register(req: RegisterRequest, remoteHost?: string): RegisterResponse {
    const now = this.#now();
    const url = workerUrl(req.url, remoteHost);
    const old = this.#workers.get(req.worker_id);
    const worker: WorkerState = old ?? {
      worker_id: req.worker_id,
      url,
      status: "idle",
      task_id: null,
      jobs_done: 0,
      tasks_failed: 0,
      last_heartbeat: now,
      registered_at: now,
    };
    worker.url = url;
    worker.last_heartbeat = now;
    if (!old) this.#workers.set(req.worker_id, worker);
    // Tasks the master believes this worker runs, but it does not: re-queue them.
    for (const t of [...this.#running]) {
      if (t.worker_id === worker.worker_id && t.task_id !== req.running?.task_id) {
        if (worker.task_id === t.task_id) worker.task_id = null;
        this.#requeue(t, `worker ${worker.worker_id} re-registered without it`);
      }
    }
    const drop = this.#reconcile(worker, req.running ?? null, true);
    this.#log.info(old ? "worker re-registered" : "worker registered", {
      worker_id: worker.worker_id,
      url,
      status: worker.status,
    });
    this.schedule();
    return { worker_id: worker.worker_id, heartbeat_s: this.heartbeatS, url, drop };
  }

  /**
   * Records a heartbeat.
   *
   * @param workerId The worker.
   * @param req The task it runs, if any.
   * @returns Tasks to drop.
   * @throws {JobError} WORKER_NOT_FOUND when the worker never registered (it should register).
   */
  heartbeat(workerId: string, req: HeartbeatRequest = {}): HeartbeatResponse {
    const worker = this.#workers.get(workerId);
    if (!worker) {
      throw new JobError(
        "WORKER_NOT_FOUND",
        `No worker '${workerId}': register with POST /workers/register`,
      );
    }
    worker.last_heartbeat = this.#now();
    const drop = this.#reconcile(worker, req.running ?? null, false);
    this.schedule();
    return { ok: true, drop };
  }

  /** Aligns what the master and a worker believe the worker runs; returns tasks to drop. */
  #reconcile(worker: WorkerState, running: RunningTask | null, registering: boolean): string[] {
    const drop: string[] = [];
    if (worker.status === "offline") {
      this.#log.info("worker back online", { worker_id: worker.worker_id });
      worker.status = "idle";
      worker.task_id = null;
    }
    if (running) {
      const t = this.#taskById.get(running.task_id);
      if (
        t && t.status === "RUNNING" && t.lease === running.lease &&
        t.worker_id === worker.worker_id
      ) {
        worker.status = "busy";
        worker.task_id = t.task_id;
        return drop;
      }
      // A task it should not run (cancelled, re-queued elsewhere, already done): it
      // drops it at once, so its state here stands.
      drop.push(running.task_id);
      if (worker.task_id !== running.task_id) return drop;
      worker.task_id = null;
      worker.status = "idle";
      return drop;
    }
    if (worker.task_id !== null) {
      const t = this.#taskById.get(worker.task_id);
      // Not yet started on the worker (the assignment is in flight): give it time.
      const young = t?.started_at != null &&
        this.#now() - t.started_at < 2 * this.#heartbeatMs;
      if (
        t && t.status === "RUNNING" && t.worker_id === worker.worker_id && (young && !registering)
      ) {
        return drop;
      }
      if (t && t.status === "RUNNING" && t.worker_id === worker.worker_id) {
        this.#requeue(t, `worker ${worker.worker_id} does not run it`);
      }
      worker.task_id = null;
    }
    worker.status = "idle";
    return drop;
  }

  // -------------------------------------------------------------------------
  // results

  /**
   * Accepts a frozen chunk: checks it, stages it durably, and writes the archive
   * when it was the last one.
   *
   * @param taskId The task.
   * @param bytes The body (`cluster/wire.ts`).
   * @param options `acceptNext`: the worker takes its next task in the answer
   * (`?next=1` on the done-report) instead of a `POST /tasks` from the master.
   * @returns The worker's next task, when it accepts one and there is one.
   * @throws {JobError} TASK_NOT_FOUND; BAD_CHUNK (the attempt also counts as failed);
   * STALE_RESULT for a lease that is not current.
   */
  taskDone(
    taskId: string,
    bytes: Uint8Array,
    options: { acceptNext?: boolean } = {},
  ): Promise<{ next?: TaskSpec }> {
    try {
      return Promise.resolve(this.#taskDone(taskId, bytes, options.acceptNext === true));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  #taskDone(taskId: string, bytes: Uint8Array, acceptNext: boolean): { next?: TaskSpec } {
    const task = this.#taskById.get(taskId);
    if (!task) throw new JobError("TASK_NOT_FOUND", `No task '${taskId}'`);
    const { meta, chunk } = decodeChunkBody(bytes);
    if (meta.task_id !== taskId) {
      throw new JobError(
        "BAD_CHUNK",
        `Chunk for task '${meta.task_id}' was posted to task '${taskId}'`,
      );
    }
    this.#checkLease(task, meta.lease);
    const job = this.#jobs.get(task.job_id)!;
    const columns = job.prepared!.schema.length;
    if (chunk.blocks.length !== columns || chunk.rows !== task.rows) {
      const error = new JobError(
        "BAD_CHUNK",
        `Chunk of task '${taskId}' has ${chunk.blocks.length} blocks and ${chunk.rows} rows, expected ${columns} and ${task.rows}`,
      );
      this.#endAttemptOnWorker(task);
      this.#failAttempt(task, { code: error.code, message: error.message }, meta.worker_id);
      this.schedule();
      throw error;
    }
    // The worker is free as soon as its result is here: give it the next task while
    // this one is staged (the task stays RUNNING under its lease until then).
    const worker = this.#workers.get(meta.worker_id) ??
      (task.worker_id ? this.#workers.get(task.worker_id) : undefined);
    let next: TaskSpec | undefined;
    if (worker?.task_id === taskId) {
      worker.task_id = null;
      if (worker.status === "busy") worker.status = "idle";
      // A worker that accepts it gets its next task in this answer: one HTTP round
      // trip per task instead of two, which is most of a small task's cost.
      this.#inlineFor = acceptNext ? worker : null;
      try {
        this.schedule();
      } finally {
        next = this.#inlineSpec ?? undefined;
        this.#inlineFor = null;
        this.#inlineSpec = null;
      }
    }
    let staged: { path: string; offset: number };
    try {
      staged = this.#staging.append(job.job_id, job.generation, bytes);
    } catch (err) {
      if (next && worker) this.#sendInline(worker, next);
      if (task.lease === meta.lease && task.status === "RUNNING") {
        this.#requeue(task, `the master could not stage its chunk: ${errorText(err)}`);
        this.schedule();
      }
      throw err;
    }
    // (Staging is synchronous, so nothing can have changed the lease since the check.)
    const now = this.#now();
    this.#running.delete(task);
    task.status = "DONE";
    task.lease = null;
    task.finished_at = now;
    task.staged_path = staged.path;
    task.staged_offset = staged.offset;
    task.staged_bytes = bytes.length;
    task.staged_sha256 = createHash("sha256").update(bytes).digest("hex");
    job.updated_at = now;
    if (worker) worker.jobs_done++;
    this.#store.transaction(() => {
      this.#store.putTask(task);
      this.#store.putJob(job);
    });
    this.#log.debug("task done", { task_id: taskId, job_id: job.job_id, bytes: bytes.length });
    if (this.#allDone(job)) this.#startAssemble(job);
    this.schedule();
    return next ? { next } : {};
  }

  /** The answer carrying `spec` will not be sent: hand it over the usual way. */
  #sendInline(worker: WorkerState, spec: TaskSpec): void {
    const task = this.#taskById.get(spec.task_id);
    if (task && task.lease === spec.lease) this.#track(this.#dispatch(worker, task, spec));
  }

  #checkLease(task: TaskRow, lease: string): void {
    if (task.status !== "RUNNING" || task.lease !== lease) {
      throw new JobError(
        "STALE_RESULT",
        `Task '${task.task_id}' is ${task.status} and no longer expects lease '${lease}': result ignored`,
      );
    }
  }

  #endAttemptOnWorker(task: TaskRow): void {
    const w = task.worker_id ? this.#workers.get(task.worker_id) : undefined;
    if (w && w.task_id === task.task_id) {
      w.task_id = null;
      if (w.status === "busy") w.status = "idle";
    }
  }

  /**
   * Records a failed attempt reported by a worker.
   *
   * @param taskId The task.
   * @param req Lease, worker and error.
   * @throws {JobError} TASK_NOT_FOUND; STALE_RESULT for a lease that is not current.
   */
  taskFailed(taskId: string, req: FailedRequest): void {
    const task = this.#taskById.get(taskId);
    if (!task) throw new JobError("TASK_NOT_FOUND", `No task '${taskId}'`);
    this.#checkLease(task, req.lease);
    const error: TaskErrorReport = typeof req.error === "string"
      ? { code: "ERROR", message: req.error }
      : req.error;
    this.#endAttemptOnWorker(task);
    const job = this.#jobs.get(task.job_id)!;
    const column = error.column;
    if (error.code === "SCHEMA_MISMATCH" && column && job.types[column] !== "string") {
      this.#widen(job, column, error.message);
    } else {
      this.#failAttempt(task, error, req.worker_id);
    }
    this.schedule();
  }

  /** Reads a column as text from now on and starts the job over (a local freeze does the same). */
  #widen(job: JobRow, column: string, why: string): void {
    this.#log.info("widening column to text and starting the job over", {
      job_id: job.job_id,
      column,
      why,
    });
    job.types = { ...job.types, [column]: "string" };
    job.widened = [...job.widened, column];
    job.generation++;
    job.prepared = null;
    job.phase = "preparing";
    job.updated_at = this.#now();
    const tasks = this.#tasks.get(job.job_id)!;
    for (const t of tasks) {
      if (t.status === "RUNNING") this.#dropOnWorker(t);
      t.status = "QUEUED";
      t.attempts = 0;
      t.lease = null;
      t.failed_on = [];
      t.error = null;
      t.started_at = null;
      t.finished_at = null;
      unstage(t);
    }
    this.#queues.set(job.job_id, [...tasks]);
    this.#store.transaction(() => {
      this.#store.putJob(job);
      for (const t of tasks) this.#store.putTask(t);
    });
    // Only the old generation's file goes, and at once: the new one lives beside it.
    this.#staging.removeGeneration(job.job_id, job.generation - 1);
    this.#startPrepare(job);
  }

  /**
   * The rows of a running task, for a worker that cannot read the source.
   *
   * @param taskId The task.
   * @param lease Its current lease.
   * @returns The rows, framed (`cluster/wire.ts`).
   * @throws {JobError} TASK_NOT_FOUND or STALE_RESULT.
   */
  async taskRows(taskId: string, lease: string): Promise<Uint8Array> {
    const task = this.#taskById.get(taskId);
    if (!task) throw new JobError("TASK_NOT_FOUND", `No task '${taskId}'`);
    this.#checkLease(task, lease);
    const job = this.#jobs.get(task.job_id)!;
    const prepared = job.prepared!;
    const batch = await this.#readRows({
      path: job.source,
      format: prepared.format,
      schema: prepared.schema as Schema,
      types: job.types,
      window: task.window,
      identity: job.source_id,
    });
    return encodeBatchBody(batch);
  }

  // -------------------------------------------------------------------------
  // time

  /** Marks silent workers offline, re-queues their tasks, and fails timed-out attempts. */
  tick(): void {
    if (this.#closed) return;
    const now = this.#now();
    const silence = MISSED_HEARTBEATS * this.#heartbeatMs;
    for (const w of this.#workers.values()) {
      if (w.status === "offline" || now - w.last_heartbeat <= silence) continue;
      w.status = "offline";
      this.#log.warn("worker offline", {
        worker_id: w.worker_id,
        silent_s: (now - w.last_heartbeat) / 1000,
      });
      const t = w.task_id ? this.#taskById.get(w.task_id) : undefined;
      w.task_id = null;
      if (t && t.status === "RUNNING" && t.worker_id === w.worker_id) {
        this.#requeue(t, `worker ${w.worker_id} went offline`);
      }
    }
    for (const t of [...this.#running]) {
      const w = t.worker_id ? this.#workers.get(t.worker_id) : undefined;
      if (!w && now - this.#startedAt > silence) {
        // Running when the master restarted; its worker never came back.
        this.#requeue(t, `worker ${t.worker_id} did not re-register`);
        continue;
      }
      if (t.started_at !== null && now - t.started_at > this.#taskTimeoutMs) {
        this.#dropOnWorker(t);
        this.#failAttempt(t, {
          code: "TIMEOUT",
          message: `attempt ran over the task timeout of ${this.#taskTimeoutMs / 1000} s`,
        }, t.worker_id);
      }
    }
    this.schedule();
  }

  // -------------------------------------------------------------------------
  // archive

  #startAssemble(job: JobRow): void {
    if (this.#assembling.has(job.job_id) || !this.#active(job)) return;
    const state = { cancelled: false };
    this.#assembling.set(job.job_id, state);
    job.phase = "writing";
    job.updated_at = this.#now();
    this.#store.putJob(job);
    this.#track(
      this.#assemble(job, state).finally(() => this.#assembling.delete(job.job_id)),
    );
  }

  async #assemble(job: JobRow, state: { cancelled: boolean }): Promise<void> {
    const tasks = [...this.#tasks.get(job.job_id)!].sort((a, b) => a.index - b.index);
    this.#staging.close(job.job_id);
    const reader = this.#staging.reader();
    try {
      await this.#writeArchive(job, state, tasks, (t) => reader.read(t));
    } finally {
      reader.close();
    }
  }

  async #writeArchive(
    job: JobRow,
    state: { cancelled: boolean },
    tasks: TaskRow[],
    read: (t: TaskRow) => Promise<Uint8Array | null>,
  ): Promise<void> {
    // A staged chunk that went missing or bad on disk is frozen again, not trusted.
    const lost: TaskRow[] = [];
    for (const t of tasks) {
      const bytes = await read(t);
      const ok = bytes !== null &&
        createHash("sha256").update(bytes).digest("hex") === t.staged_sha256;
      if (!ok) lost.push(t);
    }
    if (state.cancelled) return;
    if (lost.length > 0) {
      for (const t of lost) {
        t.status = "QUEUED";
        unstage(t);
        this.#queues.get(job.job_id)!.push(t);
        this.#log.warn("staged chunk missing or damaged; freezing it again", {
          task_id: t.task_id,
          job_id: job.job_id,
        });
      }
      job.phase = "freezing";
      this.#store.transaction(() => {
        this.#store.putJob(job);
        for (const t of lost) this.#store.putTask(t);
      });
      this.schedule();
      return;
    }
    const prepared = job.prepared!;
    const schema = prepared.schema as Schema;
    const h = newArchiveHeader(
      schema,
      prepared.codec,
      prepared.auto_reason,
      prepared.plans as Record<string, ColumnPlan>,
      { chunkRows: job.chunk_rows },
    );
    let writer: ArchiveWriter | undefined;
    try {
      await checkDestinationInPlace(job.destination);
      writer = await ArchiveWriter.create(job.destination, h);
      for (const t of tasks) {
        if (state.cancelled) break;
        const bytes = await read(t);
        if (bytes === null) throw new Error(`staged chunk of task ${t.index} vanished`);
        const { chunk } = decodeChunkBody(bytes);
        await writer.writeChunk(chunk);
      }
      if (state.cancelled) {
        await writer.abort();
        return;
      }
      const written = await writer.finish();
      if (state.cancelled) {
        await Deno.remove(job.destination).catch(() => {});
        return;
      }
      // The directory was checked a moment before the rename; a swap in between
      // fails the job here rather than report an archive that is somewhere else.
      await checkDestinationInPlace(job.destination);
      const now = this.#now();
      job.status = "DONE";
      job.phase = "finished";
      job.total_rows = written.rows;
      job.payload_sha256 = written.payload_sha256;
      job.archive_bytes = written.bytes;
      job.finished_at = now;
      job.updated_at = now;
      for (const t of tasks) unstage(t);
      this.#store.transaction(() => {
        this.#store.putJob(job);
        for (const t of tasks) this.#store.putTask(t);
      });
      this.#wakeFinishWaiters(job.job_id);
      await this.#staging.remove(job.job_id);
      this.#log.info("job done", {
        job_id: job.job_id,
        rows: written.rows,
        chunks: written.chunks,
        bytes: written.bytes,
        payload_sha256: written.payload_sha256,
      });
    } catch (err) {
      await writer?.abort();
      if (state.cancelled || !this.#active(job)) return;
      this.#finishJob(job, "FAILED", `Cannot write archive: ${errorText(err)}`);
    }
  }

  // -------------------------------------------------------------------------
  // views

  #job(jobId: string): JobRow {
    const job = this.#jobs.get(jobId);
    if (!job) throw new JobError("JOB_NOT_FOUND", `No job '${jobId}'`);
    return job;
  }

  #summary(job: JobRow): JobSummary {
    const tasks = this.#tasks.get(job.job_id) ?? [];
    const done = tasks.reduce((n, t) => n + (t.status === "DONE" ? 1 : 0), 0);
    const progress = job.status === "DONE"
      ? 1
      : job.tasks_total
      ? Math.min(1, done / job.tasks_total)
      : 0;
    return {
      job_id: job.job_id,
      status: job.status,
      phase: job.phase,
      progress,
      total_rows: job.total_rows,
      source: job.source,
      destination: job.destination,
      codec: job.codec,
      codec_used: job.prepared?.codec ?? null,
      auto_reason: job.prepared?.auto_reason ?? null,
      chunk_rows: job.chunk_rows,
      tasks_total: job.tasks_total,
      tasks_done: done,
      widened_columns: [...job.widened],
      created_at: iso(job.created_at)!,
      started_at: iso(job.started_at),
      finished_at: iso(job.finished_at),
      updated_at: iso(job.updated_at)!,
      error: job.error,
      payload_sha256: job.payload_sha256,
      archive_bytes: job.archive_bytes,
      namespace: job.namespace,
      submitted_by: job.submitted_by,
    };
  }

  /**
   * One job with its tasks.
   *
   * @param jobId The job.
   * @returns The record.
   * @throws {JobError} JOB_NOT_FOUND.
   */
  job(jobId: string): JobRecord {
    const job = this.#job(jobId);
    const tasks: TaskRecord[] = (this.#tasks.get(jobId) ?? []).map((t) => ({
      task_id: t.task_id,
      index: t.index,
      status: t.status,
      attempts: t.attempts,
      worker_id: t.worker_id,
      rows: t.rows,
      error: t.error,
    }));
    return { ...this.#summary(job), tasks };
  }

  /**
   * The job a task belongs to.
   *
   * @param taskId The task.
   * @returns Its job's id, or null for an unknown task.
   */
  taskJobId(taskId: string): string | null {
    return this.#taskById.get(taskId)?.job_id ?? null;
  }

  /** Every job, newest first, without tasks. */
  jobs(): JobSummary[] {
    return [...this.#jobs.values()].reverse().map((j) => this.#summary(j));
  }

  /** Every worker, in registration order. */
  workers(): WorkerRecord[] {
    const now = this.#now();
    return [...this.#workers.values()].map((w) => ({
      worker_id: w.worker_id,
      url: w.url,
      status: w.status,
      jobs_done: w.jobs_done,
      tasks_failed: w.tasks_failed,
      last_heartbeat: iso(w.last_heartbeat)!,
      heartbeat_age_s: Math.max(0, (now - w.last_heartbeat) / 1000),
      task_id: w.task_id,
      registered_at: iso(w.registered_at)!,
    }));
  }

  /** Counts for `GET /health`. */
  health(): HealthRecord {
    const workers = [...this.#workers.values()];
    return {
      status: "ok",
      workers: workers.filter((w) => w.status !== "offline").length,
      idle_workers: workers.filter((w) => w.status === "idle").length,
      offline_workers: workers.filter((w) => w.status === "offline").length,
      active_jobs: [...this.#jobs.values()].filter((j) => this.#active(j)).length,
      heartbeat_s: this.heartbeatS,
    };
  }

  /** Stops scheduling and waits for background work; the caller closes the store after. */
  async close(): Promise<void> {
    this.#closed = true;
    this.stopWaiting();
    for (const s of this.#assembling.values()) s.cancelled = true;
    await this.settled();
    this.#staging.closeAll();
  }
}

function unstage(t: TaskRow): void {
  t.staged_path = null;
  t.staged_offset = null;
  t.staged_bytes = null;
  t.staged_sha256 = null;
}
