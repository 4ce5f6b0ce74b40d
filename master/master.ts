/**
 * `Master`: the cluster's brain, without HTTP. It holds jobs, tasks and workers in
 * memory (written through to the {@link JobStore}), and implements "How a freeze
 * job flows" (`DESIGN.md`) with three parts behind this one API:
 *
 * - **submit** (here): checks the request and its files (`_job_files.ts`: real paths,
 *   the source's identity, busy and same-file checks), records the job QUEUED, and
 *   prepares it in the background (`prepare.ts`: layout, schema, plan, codec); a job
 *   without tasks yet is never scheduled.
 * - **scheduling and results** (`_scheduler.ts`): leases, round-robin assignment,
 *   staging done chunks, retries, widening a column to text, task timeouts.
 * - **membership** (`_membership.ts`): register, heartbeats, offline workers.
 * - **assembly** (`_assembly.ts`): the archive, once every task is done.
 * - **cancel** (here): the job becomes CANCELLED, its workers are told to drop its
 *   tasks, staged chunks are deleted and no archive is written.
 * - **restart**: {@link Master.open} reloads the store: jobs resume where they were;
 *   a task still RUNNING waits for its worker to re-register (3 heartbeat intervals)
 *   and is re-queued otherwise; DONE chunks are never redone.
 *
 * The parts share one `MasterState` (`_state.ts`). Time comes from the injected clock
 * only ({@link Master.tick} runs on the caller's timer; tests call it with a fake
 * clock); workers are reached through the injected {@link WorkerTransport}
 * (`transport.ts`).
 *
 * @module
 */
import { isAbsolute, resolve } from "node:path";
import type { Batch } from "../format/column.ts";
import { sourceFormatOf } from "../io/source.ts";
import type { SourceFormat } from "../io/types.ts";
import { createLogger, type Logger } from "../internal/log.ts";
import { JobError } from "../client/errors.ts";
import type {
  FailedRequest,
  HealthRecord,
  HeartbeatRequest,
  HeartbeatResponse,
  JobRecord,
  JobSummary,
  RegisterRequest,
  RegisterResponse,
  SubmitRequest,
  TaskRecord,
  TaskSpec,
  WorkerRecord,
} from "../client/types.ts";
import { readTaskRows, type TaskRead } from "../cluster/task_source.ts";
import { CODEC_CHOICES } from "../codecs/registry.ts";
import { MAX_CHUNK_ROWS } from "../format/constants.ts";
import { version } from "../internal/version.ts";
import { type PrepareInput, prepareJob, type PrepareResult } from "./prepare.ts";
import { acceptFiles, checkNotBusy } from "./_job_files.ts";
import { ChunkStaging } from "./staging.ts";
import { httpTransport, type WorkerTransport } from "./transport.ts";
import type { JobRow, JobStore } from "./store.ts";
import { errorText, iso, MasterState, newId } from "./_state.ts";
import { type DoneOutcome, Scheduler } from "./_scheduler.ts";
import { Membership } from "./_membership.ts";
import { Assembly } from "./_assembly.ts";
import { acceptRemoteFiles, ensureSourceCopy, isRemote, readablePath } from "./_remote_files.ts";
import { jobMetrics } from "./_metrics.ts";

export { MISSED_HEARTBEATS } from "./_membership.ts";

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

/** The master's state machine. */
export class Master {
  #s: MasterState;
  #scheduler: Scheduler;
  #membership: Membership;
  #assembly: Assembly;
  #prepare: (input: PrepareInput) => Promise<PrepareResult>;
  #defaultChunk: number;
  #nextSeq = 1;

  private constructor(deps: MasterDeps) {
    const dataDir = resolve(deps.dataDir);
    this.#s = new MasterState({
      store: deps.store,
      dataDir,
      log: deps.logger ?? createLogger({ component: "master" }),
      now: deps.now ?? Date.now,
      transport: deps.transport ?? httpTransport(),
      staging: new ChunkStaging(dataDir, { fsync: deps.fsync ?? false }),
      maxRetries: deps.maxRetries ?? 3,
      heartbeatMs: (deps.heartbeatS ?? 5) * 1000,
      taskTimeoutMs: (deps.taskTimeoutS ?? 900) * 1000,
    });
    this.#scheduler = new Scheduler(this.#s, deps.readRows ?? readTaskRows);
    this.#membership = new Membership(this.#s);
    this.#assembly = new Assembly(this.#s);
    this.#prepare = deps.prepare ?? prepareJob;
    this.#defaultChunk = deps.defaultChunk ?? 50_000;
    this.#s.hooks = {
      schedule: () => this.schedule(),
      startPrepare: (job) => this.#startPrepare(job),
      startAssemble: (job) => this.#assembly.start(job),
    };
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
    return this.#s.heartbeatMs / 1000;
  }

  #load(): void {
    const s = this.#s;
    for (const job of s.store.jobs()) {
      s.jobs.set(job.job_id, job);
      s.tasks.set(job.job_id, []);
      s.queues.set(job.job_id, []);
      this.#nextSeq = Math.max(this.#nextSeq, job.seq + 1);
    }
    for (const task of s.store.tasks()) {
      const list = s.tasks.get(task.job_id);
      if (!list) continue;
      list.push(task);
      s.taskById.set(task.task_id, task);
      if (task.status === "QUEUED") s.queues.get(task.job_id)!.push(task);
      if (task.status === "RUNNING") s.running.add(task);
    }
    let resumed = 0;
    for (const job of s.jobs.values()) {
      if (!s.active(job)) continue;
      resumed++;
      if (job.prepared === null) this.#startPrepare(job);
      else if (job.phase === "writing" || s.allDone(job)) this.#assembly.start(job);
    }
    if (resumed > 0) s.log.info("resumed jobs from the store", { jobs: resumed });
  }

  /** Resolves once every background step (preparations, dispatches, archive writes) has settled. */
  settled(): Promise<void> {
    return this.#s.settled();
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
    if (!CODEC_CHOICES.includes(codec)) {
      throw new JobError(
        "INVALID_JOB",
        `Unknown codec "${codec}": use ${CODEC_CHOICES.join(", ")}`,
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
    // Object URIs are taken as they are (`_remote_files.ts`); paths resolve against cwd.
    const source = isRemote(req.source) ? req.source : resolve(base, req.source);
    const destination = isRemote(req.destination)
      ? req.destination
      : resolve(base, req.destination);
    let format: SourceFormat;
    try {
      format = req.format ?? sourceFormatOf(source);
    } catch (err) {
      throw new JobError("INVALID_JOB", (err as Error).message, { cause: err });
    }
    const files = isRemote(source) || isRemote(destination)
      ? await acceptRemoteFiles(source, destination)
      : await acceptFiles(source, destination, req);
    await checkNotBusy(
      files,
      [...this.#s.jobs.values()].filter((j) => this.#s.active(j)),
      req.destination,
    );
    const now = this.#s.now();
    let jobId = newId();
    while (this.#s.jobs.has(jobId)) jobId = newId();
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
    this.#s.store.putJob(job);
    this.#s.jobs.set(jobId, job);
    this.#s.tasks.set(jobId, []);
    this.#s.queues.set(jobId, []);
    this.#s.log.info("job submitted", {
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
    this.#s.preparing.set(job.job_id, generation);
    const tasks = this.#s.tasks.get(job.job_id)!;
    const windows = tasks.length > 0 ? tasks.map((t) => t.window) : null;
    this.#s.track((async () => {
      let result: PrepareResult;
      try {
        // A remote source is read from the master's own copy, made once here.
        const identity = await ensureSourceCopy(this.#s.dataDir, job);
        if (identity !== job.source_id && this.#current(job, generation)) {
          job.source_id = identity;
          this.#s.store.putJob(job);
        }
        result = await this.#prepare({
          path: readablePath(this.#s.dataDir, job),
          format: job.format ?? sourceFormatOf(job.source),
          chunkRows: job.chunk_rows,
          codec: job.codec,
          types: job.types,
          windows,
          identity: job.source_id,
        });
      } catch (err) {
        if (!this.#current(job, generation)) return;
        this.#s.preparing.delete(job.job_id);
        this.#s.finishJob(job, "FAILED", `Cannot prepare job: ${errorText(err)}`);
        return;
      }
      if (!this.#current(job, generation)) return;
      this.#s.preparing.delete(job.job_id);
      this.#prepared(job, result);
    })());
  }

  #current(job: JobRow, generation: number): boolean {
    return this.#s.active(job) && job.generation === generation && !this.#s.closed;
  }

  #prepared(job: JobRow, r: PrepareResult): void {
    const now = this.#s.now();
    job.prepared = {
      format: job.format ?? sourceFormatOf(job.source),
      source_bytes: r.bytes,
      schema: r.schema,
      plans: r.plans,
      codec: r.codec,
      auto_reason: r.autoReason,
      ...(r.delimiter === undefined ? {} : { delimiter: r.delimiter }),
    };
    job.types = r.types;
    job.widened = [...job.widened, ...r.widened];
    job.total_rows = r.rows;
    job.tasks_total = r.windows.length;
    job.phase = "freezing";
    job.updated_at = now;
    let tasks = this.#s.tasks.get(job.job_id)!;
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
      this.#s.tasks.set(job.job_id, tasks);
      this.#s.forgetDone(job.job_id);
      for (const t of tasks) this.#s.taskById.set(t.task_id, t);
      this.#s.queues.set(job.job_id, tasks.filter((t) => t.status === "QUEUED"));
    }
    this.#s.store.transaction(() => {
      this.#s.store.putJob(job);
      if (fresh) { for (const t of tasks) this.#s.store.putTask(t); }
    });
    this.#s.log.info("job prepared", {
      job_id: job.job_id,
      rows: r.rows,
      tasks: r.windows.length,
      codec: r.codec,
      widened: job.widened,
    });
    if (this.#s.allDone(job)) this.#assembly.start(job);
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
    const job = this.#s.job(jobId);
    if (job.status === "DONE" || job.status === "FAILED") {
      throw new JobError(
        "JOB_FINISHED",
        `Cannot cancel job ${jobId}: it is ${job.status}`,
      );
    }
    if (job.status !== "CANCELLED") {
      this.#s.finishJob(job, "CANCELLED", null);
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
  untilFinished(jobId: string, ms: number, signal?: AbortSignal): Promise<void> {
    return this.#s.untilFinished(jobId, ms, signal);
  }

  /** Answers every `untilFinished` caller now (the master is closing: no timer outlives it). */
  stopWaiting(): void {
    this.#s.stopWaiting();
  }

  // -------------------------------------------------------------------------
  // scheduling, workers and results (`_scheduler.ts`, `_membership.ts`)

  /** Assigns queued tasks to idle workers until one of the two runs out. */
  schedule(): void {
    this.#scheduler.schedule();
  }

  /**
   * Registers (or re-registers) a worker.
   *
   * @param req Id, URL, and the task it still runs.
   * @param remoteHost The caller's address, used when the URL's host is unspecified (`0.0.0.0`).
   * @returns Heartbeat interval, the URL used, and tasks to drop.
   */
  register(req: RegisterRequest, remoteHost?: string): RegisterResponse {
    return this.#membership.register(req, remoteHost);
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
    return this.#membership.heartbeat(workerId, req);
  }

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
    return this.#scheduler.taskDone(taskId, bytes, options);
  }

  /**
   * Accepts several frozen chunks of one worker (`POST /tasks/done`), each as
   * {@link taskDone} would, each with its own outcome.
   *
   * @param bodies The chunk bodies (`cluster/wire.ts`).
   * @param acceptNext How many next tasks the worker takes in the answer.
   * @returns Each body's outcome, in order, and the next tasks.
   */
  tasksDone(
    bodies: readonly Uint8Array[],
    acceptNext: number,
  ): { results: DoneOutcome[]; next: TaskSpec[] } {
    return this.#scheduler.tasksDone(bodies, acceptNext);
  }

  /**
   * Records a failed attempt reported by a worker.
   *
   * @param taskId The task.
   * @param req Lease, worker and error.
   * @throws {JobError} TASK_NOT_FOUND; STALE_RESULT for a lease that is not current.
   */
  taskFailed(taskId: string, req: FailedRequest): void {
    this.#scheduler.taskFailed(taskId, req);
  }

  /**
   * The rows of a running task, for a worker that cannot read the source.
   *
   * @param taskId The task.
   * @param lease Its current lease.
   * @returns The rows, framed (`cluster/wire.ts`).
   * @throws {JobError} TASK_NOT_FOUND or STALE_RESULT.
   */
  taskRows(taskId: string, lease: string): Promise<Uint8Array> {
    return this.#scheduler.taskRows(taskId, lease);
  }

  /** Marks silent workers offline, re-queues their tasks, and fails timed-out attempts. */
  tick(): void {
    if (this.#s.closed) return;
    this.#membership.sweep();
    this.#scheduler.timeouts();
    this.schedule();
  }

  // -------------------------------------------------------------------------
  // views

  #summary(job: JobRow): JobSummary {
    const tasks = this.#s.tasks.get(job.job_id) ?? [];
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
      ...jobMetrics(job, tasks, progress, this.#s.now()),
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
    const job = this.#s.job(jobId);
    // What a client is shown is on disk: a task it saw DONE is never frozen again.
    this.#s.store.flush();
    const tasks: TaskRecord[] = (this.#s.tasks.get(jobId) ?? []).map((t) => ({
      task_id: t.task_id,
      index: t.index,
      status: t.status,
      attempts: t.attempts,
      worker_id: t.worker_id,
      rows: t.rows,
      error: t.error,
      started_at: iso(t.started_at),
      finished_at: iso(t.finished_at),
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
    return this.#s.taskById.get(taskId)?.job_id ?? null;
  }

  /** Every job, newest first, without tasks. */
  jobs(): JobSummary[] {
    this.#s.store.flush(); // what a client is shown is on disk (see `job`)
    return [...this.#s.jobs.values()].reverse().map((j) => this.#summary(j));
  }

  /** Every worker, in registration order. */
  workers(): WorkerRecord[] {
    return this.#membership.list();
  }

  /** Counts for `GET /health`. */
  health(): HealthRecord {
    return {
      status: "ok",
      version: version(),
      ...this.#membership.counts(),
      active_jobs: [...this.#s.jobs.values()].filter((j) => this.#s.active(j)).length,
      heartbeat_s: this.heartbeatS,
    };
  }

  /** Stops scheduling and waits for background work; the caller closes the store after. */
  async close(): Promise<void> {
    this.#s.closed = true;
    this.stopWaiting();
    for (const s of this.#s.assembling.values()) s.cancelled = true;
    await this.#s.settled();
    this.#s.staging.closeAll();
  }
}
