/**
 * What the master's parts share: its settings, the jobs, tasks and workers in memory
 * (written through to the {@link JobStore}), background work, the callers waiting for
 * a job's end, and the two steps every part may need: ending a job and telling a
 * worker to drop a task.
 *
 * The parts ({@link Master} in `master.ts`, the scheduler, membership and assembly in
 * `_scheduler.ts`, `_membership.ts`, `_assembly.ts`) each hold this one object; what
 * one part asks of another that sits above it in that list (the scheduler starting a
 * preparation or an assembly, anything asking for a schedule round) goes through
 * {@link MasterHooks}, set once by the master, so the files import downwards only.
 *
 * @module
 */
import type { TaskSpec } from "../client/types.ts";
import { JobError } from "../client/errors.ts";
import { PermafrostError } from "../internal/errors.ts";
import type { Logger } from "../internal/log.ts";
import type { ChunkStaging } from "./staging.ts";
import type { JobRow, JobStore, TaskRow } from "./store.ts";
import type { WorkerTransport } from "./transport.ts";
import { removeJobCopies } from "./_remote_files.ts";
import { isSmallTask } from "../cluster/task_source.ts";

/** What the master believes a worker does. */
export type WorkerStatus = "idle" | "busy" | "offline";

/** Slots a worker may ask for at most (`RegisterRequest.slots`). */
export const MAX_SLOTS = 8;

/**
 * A worker as the master sees it: the tasks it holds (given, not yet reported) and
 * how many it may hold (`slots`, 1 unless it said more when it registered). Its
 * holdings keep the master's sets of free workers current (see
 * {@link MasterState.idle} and {@link MasterState.spare}), so the scheduler finds a
 * worker in O(1) however many workers there are.
 */
export class WorkerState {
  readonly worker_id: string;
  url: string;
  /** Jobs it finished a task for. */
  jobs = new Set<string>();
  /** Tasks it finished. */
  tasks_done = 0;
  tasks_failed = 0;
  last_heartbeat: number;
  registered_at: number;
  /** Tasks the master gave it and expects back, in the order given. */
  readonly #tasks = new Set<string>();
  /** Those of them too large for a spare slot (see {@link MasterState.large}). */
  readonly #large = new Set<string>();
  #slots = 1;
  #offline = false;
  /**
   * Slots whose state is unknown until the worker says (a drop not yet confirmed, a
   * hand-out that timed out): taken until then. Cleared by a register or heartbeat,
   * which says what the worker holds.
   */
  #unsure = 0;
  /** Counts the clearings of `#unsure`: a confirmation from before one is stale. */
  #unsureEpoch = 0;
  #idle: Set<WorkerState>;
  #spare: Set<WorkerState>;

  /**
   * A worker that just registered: idle.
   *
   * @param workerId Its id.
   * @param url Where it is reached.
   * @param now The master's clock.
   * @param free The master's sets of workers that hold nothing (`idle`) and of those
   * with a spare slot (`spare`), which this worker joins and leaves.
   */
  constructor(
    workerId: string,
    url: string,
    now: number,
    free: { idle: Set<WorkerState>; spare: Set<WorkerState> },
  ) {
    this.worker_id = workerId;
    this.url = url;
    this.last_heartbeat = now;
    this.registered_at = now;
    this.#idle = free.idle;
    this.#spare = free.spare;
    this.#refresh();
  }

  /** `offline`, `busy` (holds a task, or a slot not known to be free) or `idle`. */
  get status(): WorkerStatus {
    if (this.#offline) return "offline";
    return this.#tasks.size + this.#unsure > 0 ? "busy" : "idle";
  }

  /** The first task it holds, or null (what the views show). */
  get task_id(): string | null {
    for (const id of this.#tasks) return id;
    return null;
  }

  /** The tasks it holds, in the order given. */
  get tasks(): ReadonlySet<string> {
    return this.#tasks;
  }

  /** Tasks it may hold at once. */
  get slots(): number {
    return this.#slots;
  }

  set slots(n: number) {
    this.#slots = Math.max(1, Math.min(MAX_SLOTS, Math.floor(n)));
    this.#refresh();
  }

  /** Whether it holds a task. */
  holds(taskId: string): boolean {
    return this.#tasks.has(taskId);
  }

  /**
   * It now holds a task; with a slot still free it goes to the back of the free workers.
   *
   * @param taskId The task.
   * @param large Whether it is too large for a spare slot: the worker has none while it holds it.
   */
  hold(taskId: string, large: boolean): void {
    this.#tasks.add(taskId);
    if (large) this.#large.add(taskId);
    this.#refresh(true);
  }

  /** It no longer holds a task (done, failed, dropped or re-queued); true if it held it. */
  release(taskId: string): boolean {
    if (!this.#tasks.delete(taskId)) return false;
    this.#large.delete(taskId);
    this.#refresh(true);
    return true;
  }

  /** Forgets every task it holds (it went offline); returns them. */
  releaseAll(): string[] {
    const ids = [...this.#tasks];
    this.#tasks.clear();
    this.#large.clear();
    this.#refresh();
    return ids;
  }

  /** Marks it offline (the caller re-queues what it held) or back online. */
  set offline(offline: boolean) {
    this.#offline = offline;
    if (offline) this.#unsure = 0;
    this.#refresh(!offline);
  }

  get offline(): boolean {
    return this.#offline;
  }

  /**
   * A slot is taken until the worker confirms (see `#unsure`).
   *
   * @returns The token {@link confirm} takes.
   */
  unsure(): number {
    this.#unsure++;
    this.#refresh();
    return this.#unsureEpoch;
  }

  /** The worker confirmed what an {@link unsure} slot was for: it is free again. */
  confirm(token: number): void {
    if (token !== this.#unsureEpoch || this.#unsure === 0) return;
    this.#unsure--;
    this.#refresh(true);
  }

  /** The worker said what it holds: no slot is unsure any more. */
  sure(): void {
    if (this.#unsure === 0) return;
    this.#unsure = 0;
    this.#unsureEpoch++;
    this.#refresh(true);
  }

  /**
   * Keeps the free sets current: `idle` when it holds nothing, `spare` when it holds
   * something and has a slot left; `toBack` moves it behind the others (first
   * free, first served).
   */
  #refresh(toBack = false): void {
    const taken = this.#tasks.size + this.#unsure;
    const idle = !this.#offline && taken === 0;
    const spare = !this.#offline && taken > 0 && taken < this.#slots && this.#large.size === 0;
    if (!idle) this.#idle.delete(this);
    else if (toBack || !this.#idle.has(this)) {
      this.#idle.delete(this);
      this.#idle.add(this);
    }
    if (!spare) this.#spare.delete(this);
    else if (toBack || !this.#spare.has(this)) {
      this.#spare.delete(this);
      this.#spare.add(this);
    }
  }
}

/** Steps of the parts above the state, set by the master once they exist. */
export interface MasterHooks {
  /** Assigns queued tasks to idle workers. */
  schedule(): void;
  /** Starts (or starts over) a job's preparation. */
  startPrepare(job: JobRow): void;
  /** Starts writing a job's archive once every task is done. */
  startAssemble(job: JobRow): void;
}

/** The master's settings, as the parts use them. */
export interface MasterSettings {
  store: JobStore;
  /** The data directory (staged chunks, copies of remote sources, archives to upload). */
  dataDir: string;
  log: Logger;
  now: () => number;
  transport: WorkerTransport;
  staging: ChunkStaging;
  maxRetries: number;
  heartbeatMs: number;
  taskTimeoutMs: number;
}

/** A unique id: 12 hex digits. */
export function newId(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 12);
}

/** Epoch milliseconds as ISO 8601, null kept. */
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** An error as one line for a job's or task's `error`. */
export function errorText(e: unknown): string {
  if (e instanceof PermafrostError) return `${e.code}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

/** Forgets where a task's chunk was staged. */
export function unstage(t: TaskRow): void {
  t.staged_path = null;
  t.staged_offset = null;
  t.staged_bytes = null;
  t.staged_sha256 = null;
}

/** The shared state (see the module doc). */
export class MasterState implements MasterSettings {
  readonly store: JobStore;
  readonly dataDir: string;
  readonly log: Logger;
  readonly now: () => number;
  readonly transport: WorkerTransport;
  readonly staging: ChunkStaging;
  readonly maxRetries: number;
  readonly heartbeatMs: number;
  readonly taskTimeoutMs: number;
  /** When this master started (its clock). */
  readonly startedAt: number;

  readonly jobs = new Map<string, JobRow>();
  readonly tasks = new Map<string, TaskRow[]>();
  readonly taskById = new Map<string, TaskRow>();
  /** Each job's QUEUED tasks, in the order they are handed out. */
  readonly queues = new Map<string, TaskRow[]>();
  readonly running = new Set<TaskRow>();
  readonly workers = new Map<string, WorkerState>();
  /** Workers that hold no task, in the order they became so (kept by `WorkerState`). */
  readonly idle = new Set<WorkerState>();
  /** Workers that hold a task and have a slot left, likewise. */
  readonly spare = new Set<WorkerState>();
  /** Jobs whose archive is being written, with the flag that stops the write. */
  readonly assembling = new Map<string, { cancelled: boolean }>();
  /** Jobs being prepared, with the generation the preparation is for. */
  readonly preparing = new Map<string, number>();
  /** Set by the master right after construction. */
  hooks!: MasterHooks;
  closed = false;
  /** While a done-report is handled: its worker, which takes its next tasks in the answer. */
  inlineFor: WorkerState | null = null;
  /** How many tasks the answer may carry (0: none, the worker did not ask). */
  inlineMax = 0;
  /** The tasks assigned to `inlineFor` meanwhile. */
  inlineSpecs: TaskSpec[] = [];

  /** DONE tasks per job, while known (see {@link allDone}). */
  #doneCounts = new Map<string, number>();
  #pending = new Set<Promise<unknown>>();
  #finishWaiters = new Map<string, Set<() => void>>();

  constructor(settings: MasterSettings) {
    this.store = settings.store;
    this.dataDir = settings.dataDir;
    this.log = settings.log;
    this.now = settings.now;
    this.transport = settings.transport;
    this.staging = settings.staging;
    this.maxRetries = settings.maxRetries;
    this.heartbeatMs = settings.heartbeatMs;
    this.taskTimeoutMs = settings.taskTimeoutMs;
    this.startedAt = this.now();
  }

  /**
   * Whether a task is too large for a spare slot (`isSmallTask`). A small task takes
   * about as long as the round trip that hands it out, so a worker that holds its
   * next one while it reports the last never waits for the master. A large task only
   * goes to a worker that holds nothing, and a worker that holds one has no spare
   * slot: queued behind another, a task would wait while others sit idle.
   */
  large(task: TaskRow): boolean {
    const columns = this.jobs.get(task.job_id)?.prepared?.schema.length ?? 1;
    return !isSmallTask(task.rows, columns);
  }

  /** Whether a job is still QUEUED or RUNNING. */
  active(job: JobRow): boolean {
    return job.status === "QUEUED" || job.status === "RUNNING";
  }

  /**
   * Whether a prepared job has every task DONE. O(1) per call: the count of DONE
   * tasks is kept by {@link markDone} and counted again after {@link forgetDone}.
   */
  allDone(job: JobRow): boolean {
    if (job.tasks_total === null) return false;
    const tasks = this.tasks.get(job.job_id) ?? [];
    let done = this.#doneCounts.get(job.job_id);
    if (done === undefined) {
      done = tasks.reduce((n, t) => n + (t.status === "DONE" ? 1 : 0), 0);
      this.#doneCounts.set(job.job_id, done);
    }
    return done === tasks.length;
  }

  /** A task of a job just became DONE (call right after setting its status). */
  markDone(task: TaskRow): void {
    const done = this.#doneCounts.get(task.job_id);
    if (done !== undefined) this.#doneCounts.set(task.job_id, done + 1);
  }

  /** A job's tasks were replaced, or some left DONE: count them again when asked. */
  forgetDone(jobId: string): void {
    this.#doneCounts.delete(jobId);
  }

  /**
   * A job by id.
   *
   * @throws {JobError} JOB_NOT_FOUND.
   */
  job(jobId: string): JobRow {
    const job = this.jobs.get(jobId);
    if (!job) throw new JobError("JOB_NOT_FOUND", `No job '${jobId}'`);
    return job;
  }

  /** Runs `p` in the background; {@link settled} waits for it, a failure is logged. */
  track<T>(p: Promise<T>): void {
    const tracked = p.catch((err) => {
      this.log.error("background work failed", { err, stack: (err as Error)?.stack });
    }).finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }

  /** Resolves once every background step has settled. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Waits for a job's end (see `Master.untilFinished`). */
  async untilFinished(jobId: string, ms: number, signal?: AbortSignal): Promise<void> {
    if (!this.active(this.job(jobId)) || this.closed || signal?.aborted) return;
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

  /** Answers every waiter now (the master is closing: no timer outlives it). */
  stopWaiting(): void {
    for (const set of [...this.#finishWaiters.values()]) for (const done of [...set]) done();
  }

  /** Answers the waiters of one job (it has ended). */
  wakeFinishWaiters(jobId: string): void {
    for (const done of [...this.#finishWaiters.get(jobId) ?? []]) done();
  }

  /** Ends a job (CANCELLED or FAILED): drops its running tasks and deletes its staged chunks. */
  finishJob(job: JobRow, status: "CANCELLED" | "FAILED", error: string | null): void {
    const now = this.now();
    job.status = status;
    job.phase = "finished";
    job.error = error;
    job.finished_at = now;
    job.updated_at = now;
    const assembling = this.assembling.get(job.job_id);
    if (assembling) assembling.cancelled = true;
    this.preparing.delete(job.job_id);
    const tasks = this.tasks.get(job.job_id) ?? [];
    for (const t of tasks) {
      if (t.status === "RUNNING") this.dropOnWorker(t);
      if (t.status === "QUEUED" || t.status === "RUNNING") {
        t.status = "CANCELLED";
        t.lease = null;
        t.finished_at = now;
      }
      unstage(t);
    }
    this.queues.set(job.job_id, []);
    this.store.transaction(() => {
      this.store.putJob(job);
      for (const t of tasks) this.store.putTask(t);
    });
    this.track(this.staging.remove(job.job_id));
    this.track(removeJobCopies(this.dataDir, job.job_id));
    this.wakeFinishWaiters(job.job_id);
    this.log.info(`job ${status.toLowerCase()}`, { job_id: job.job_id, error });
  }

  /** Tells the worker running a task to drop it; the task's lease ends now. */
  dropOnWorker(task: TaskRow): void {
    this.running.delete(task);
    const lease = task.lease;
    task.lease = null;
    const worker = task.worker_id ? this.workers.get(task.worker_id) : undefined;
    if (!worker || !worker.release(task.task_id)) return;
    if (worker.offline) return;
    // Its slot stays taken until the worker confirms: it may still be encoding.
    const token = worker.unsure();
    this.track(
      this.transport.cancel(worker.url, task.task_id).then(() => {
        worker.confirm(token);
        this.hooks.schedule();
      }, (err) => {
        this.log.debug("could not tell worker to drop task; its heartbeat will", {
          worker_id: worker.worker_id,
          task_id: task.task_id,
          lease,
          err,
        });
      }),
    );
  }

  /**
   * A worker is offline (silent, or unreachable): every task it held is re-queued
   * without counting the attempt.
   */
  workerOffline(worker: WorkerState, why: string): void {
    worker.offline = true;
    for (const id of worker.releaseAll()) {
      const t = this.taskById.get(id);
      if (t && t.status === "RUNNING" && t.worker_id === worker.worker_id) {
        this.requeue(t, `worker ${worker.worker_id} ${why}`);
      }
    }
  }

  /** Puts a task back in its queue without counting the attempt (its worker went away). */
  requeue(task: TaskRow, why: string): void {
    this.running.delete(task);
    task.status = "QUEUED";
    task.lease = null;
    task.attempts = Math.max(0, task.attempts - 1);
    task.started_at = null;
    this.store.putTask(task);
    this.queues.get(task.job_id)?.unshift(task);
    this.log.info("task re-queued", { task_id: task.task_id, job_id: task.job_id, why });
  }
}
