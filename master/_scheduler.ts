/**
 * The master's scheduler: which task goes to which worker, and what becomes of an
 * attempt (`DESIGN.md`, "How a freeze job flows").
 *
 * - **schedule**: hands the next task to the next idle worker, round-robin across
 *   every active job (each assignment serves the job after the one served last) and
 *   across workers; a retried task prefers an idle worker it has not failed on. A
 *   worker holds up to its `slots` tasks (1 unless it asked for more): a small task
 *   may go to a spare slot of a busy worker, so that worker computes its next task
 *   while its last result travels; a large one only to a worker that holds nothing.
 *   Each assignment gets a fresh *lease*; a result or report must
 *   carry the current lease, so anything late, duplicated, or from a worker declared
 *   offline is refused as `STALE_RESULT` and changes nothing.
 * - **done**: checks the chunk (framing, row and column counts) and stages it durably
 *   (`staging.ts`: appended to the job's file, then its row, which is the commit point,
 *   with the SHA-256 checked again before use); the last one starts the assembly.
 * - **failed**: a SCHEMA_MISMATCH naming a column not yet text widens it and starts the
 *   job over (as a local freeze does; not a failure). Any other error counts: the task
 *   is retried until it has had `maxRetries` attempts, then the job is FAILED with that
 *   error (other jobs go on). A task past the task timeout counts as failed.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { Batch, Schema } from "../format/column.ts";
import { JOB_STATUS_BY_CODE, JobError } from "../client/errors.ts";
import type { FailedRequest, TaskErrorReport, TaskSpec, TextFallback } from "../client/types.ts";
import { fallbackType, sourceFormatOf } from "../io/source.ts";
import { type ChunkBody, decodeChunkBody, encodeBatchBody } from "../cluster/wire.ts";
import type { TaskRead } from "../cluster/task_source.ts";
import { DispatchError } from "./transport.ts";
import { isRemote, readablePath } from "./_remote_files.ts";
import type { JobRow, TaskRow } from "./store.ts";
import { errorText, type MasterState, newId, unstage, type WorkerState } from "./_state.ts";

/** What became of one result of a `POST /tasks/done`. */
export type DoneOutcome =
  | { task_id: string; ok: true }
  | { task_id: string; ok: false; error: { code: string; message: string; status: number } };

/** Hands out tasks and settles their attempts. */
export class Scheduler {
  #s: MasterState;
  #readRows: (read: TaskRead) => Promise<Batch>;
  #lastJobSeq = 0;

  /**
   * @param state The master's shared state.
   * @param readRows Reads a task's rows for a worker that cannot.
   */
  constructor(state: MasterState, readRows: (read: TaskRead) => Promise<Batch>) {
    this.#s = state;
    this.#readRows = readRows;
  }

  /**
   * Assigns queued tasks to idle workers until one of the two runs out. Each
   * assignment costs O(1) in the number of workers: idle workers are a set kept by
   * their status (`_state.ts`), served first idle, first served.
   */
  schedule(): void {
    if (this.#s.closed) return;
    while (this.#s.idle.size > 0 || this.#s.spare.size > 0) {
      const job = this.#nextJob();
      if (!job) return;
      const queue = this.#s.queues.get(job.job_id)!;
      const task = queue[0]!;
      const worker = this.#pickWorker(task, !this.#s.large(task));
      // A large task waits for a worker that holds nothing.
      if (!worker) return;
      queue.shift();
      this.#lastJobSeq = job.seq;
      this.#assign(job, task, worker);
    }
  }

  #nextJob(): JobRow | undefined {
    let first: JobRow | undefined;
    for (const job of this.#s.jobs.values()) {
      if (!this.#s.active(job) || job.phase !== "freezing") continue;
      if ((this.#s.queues.get(job.job_id)?.length ?? 0) === 0) continue;
      if (job.seq > this.#lastJobSeq) return job;
      first ??= job;
    }
    return first;
  }

  /**
   * The worker that holds nothing and has waited longest, else (a small task) the
   * one with a spare slot that has, preferring one the task has not failed on (a
   * retry goes elsewhere when it can). Looks at most at `failed_on.length + 1`
   * workers of each set before it finds one, so it stays O(1) in the number of workers.
   */
  #pickWorker(task: TaskRow, spare: boolean): WorkerState | undefined {
    let fallback: WorkerState | undefined;
    for (const set of spare ? [this.#s.idle, this.#s.spare] : [this.#s.idle]) {
      for (const w of set) {
        if (task.failed_on.length === 0 || !task.failed_on.includes(w.worker_id)) return w;
        fallback ??= w;
      }
    }
    return fallback;
  }

  #assign(job: JobRow, task: TaskRow, worker: WorkerState): void {
    const now = this.#s.now();
    const lease = newId() + newId();
    task.status = "RUNNING";
    task.worker_id = worker.worker_id;
    task.lease = lease;
    task.attempts++;
    task.started_at = now;
    this.#s.running.add(task);
    worker.hold(task.task_id, this.#s.large(task));
    job.updated_at = now;
    // Many a second: written behind (`store.ts`); a hand-out lost in a crash is only
    // handed out again. A job's first one is written at once.
    this.#s.store.deferTask(task);
    if (job.status === "QUEUED") {
      job.status = "RUNNING";
      job.started_at = now;
      this.#s.store.putJob(job);
    } else {
      this.#s.store.deferJob(job);
    }
    const prepared = job.prepared!;
    const spec: TaskSpec = {
      task_id: task.task_id,
      job_id: job.job_id,
      index: task.index,
      lease,
      worker_id: worker.worker_id,
      source: {
        path: readablePath(this.#s.dataDir, job),
        format: prepared.format,
        bytes: prepared.source_bytes,
        dev: job.source_id?.dev ?? 0,
        ino: job.source_id?.ino ?? 0,
        mtime_ms: job.source_id?.mtime_ms ?? null,
        ...(isRemote(job.source) && job.source_id?.etag
          ? { uri: job.source, etag: job.source_id.etag }
          : {}),
        ...(prepared.delimiter === undefined ? {} : { delimiter: prepared.delimiter }),
      },
      window: task.window,
      schema: prepared.schema,
      types: job.types,
      plans: prepared.plans,
      codec: prepared.codec,
    };
    this.#s.log.debug("task assigned", {
      job_id: job.job_id,
      task_id: task.task_id,
      worker_id: worker.worker_id,
      attempt: task.attempts,
    });
    if (this.#s.inlineFor === worker && this.#s.inlineSpecs.length < this.#s.inlineMax) {
      this.#s.inlineSpecs.push(spec);
      return;
    }
    this.#s.track(this.#dispatch(worker, task, spec));
  }

  async #dispatch(worker: WorkerState, task: TaskRow, spec: TaskSpec): Promise<void> {
    try {
      await this.#s.transport.assign(worker.url, spec);
    } catch (err) {
      if (task.lease !== spec.lease || this.#s.closed) return;
      const kind = err instanceof DispatchError ? err.kind : "unreachable";
      this.#s.log.warn("could not hand task to worker", {
        task_id: task.task_id,
        worker_id: worker.worker_id,
        kind,
        err,
      });
      if (kind === "refused") {
        worker.release(task.task_id);
        this.failAttempt(task, {
          code: "DISPATCH_REFUSED",
          message: (err as Error).message,
        }, worker.worker_id);
      } else if (kind === "unreachable") {
        // Every task it held goes back (this one among them).
        this.#s.workerOffline(worker, "unreachable");
        if (task.status === "RUNNING" && task.lease === spec.lease) {
          this.#s.requeue(task, `worker ${worker.worker_id} unreachable`);
        }
      } else {
        // Busy: its slot stays taken until its next heartbeat says what it holds.
        if (worker.release(task.task_id)) worker.unsure();
        this.#s.requeue(task, `worker ${worker.worker_id} ${kind}`);
      }
      this.schedule();
    }
  }

  /** Counts a failed attempt: retry, or fail the job at the limit. */
  failAttempt(task: TaskRow, error: TaskErrorReport, workerId: string | null): void {
    const job = this.#s.jobs.get(task.job_id)!;
    this.#s.running.delete(task);
    task.lease = null;
    task.error = `${error.code}: ${error.message}`;
    if (workerId && !task.failed_on.includes(workerId)) task.failed_on.push(workerId);
    if (workerId) {
      const w = this.#s.workers.get(workerId);
      if (w) w.tasks_failed++;
    }
    if (task.attempts >= this.#s.maxRetries) {
      task.status = "FAILED";
      task.finished_at = this.#s.now();
      this.#s.store.putTask(task);
      this.#s.log.warn("task failed for good", {
        task_id: task.task_id,
        job_id: task.job_id,
        attempts: task.attempts,
        error: task.error,
      });
      this.#s.finishJob(
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
    this.#s.store.putTask(task);
    this.#s.queues.get(task.job_id)!.push(task);
    this.#s.log.warn("task attempt failed; retrying", {
      task_id: task.task_id,
      job_id: task.job_id,
      attempt: task.attempts,
      error: task.error,
    });
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
    try {
      const [next] = this.#inline(options.acceptNext === true ? 1 : 0, () => {
        this.#taskDone(taskId, bytes);
      });
      return Promise.resolve(next ? { next } : {});
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Accepts several frozen chunks of one worker (`POST /tasks/done`), each as
   * {@link taskDone} would, each with its own outcome.
   *
   * @param bodies The chunk bodies (`cluster/wire.ts`), checked one by one.
   * @param acceptNext How many next tasks the worker takes in the answer.
   * @returns Each body's outcome in order (its error as the single route would
   * answer it), and the next tasks.
   */
  tasksDone(
    bodies: readonly Uint8Array[],
    acceptNext: number,
  ): { results: DoneOutcome[]; next: TaskSpec[] } {
    const results: DoneOutcome[] = [];
    const next = this.#inline(acceptNext, () => {
      for (const bytes of bodies) {
        let taskId = "";
        try {
          // Read and checked once (its blocks' hashes too): #taskDone takes it as read.
          const body = decodeChunkBody(bytes);
          taskId = body.meta.task_id;
          this.#taskDone(taskId, bytes, body);
          results.push({ task_id: taskId, ok: true });
        } catch (err) {
          // As the single route answers it: a JobError by its code, anything else 500.
          const code = err instanceof JobError ? err.code : "INTERNAL_ERROR";
          const status = err instanceof JobError ? JOB_STATUS_BY_CODE[err.code] : 500;
          const message = err instanceof Error ? err.message : String(err);
          results.push({ task_id: taskId, ok: false, error: { code, message, status } });
        }
      }
    });
    return { results, next };
  }

  /**
   * Runs `fn` (done-reports of one worker) so that up to `max` tasks assigned to that
   * worker meanwhile come back here for the answer instead of a `POST /tasks`;
   * should `fn` throw, they are handed over the usual way.
   */
  #inline(max: number, fn: () => void): TaskSpec[] {
    const s = this.#s;
    s.inlineMax = max;
    s.inlineSpecs = [];
    try {
      fn();
      return s.inlineSpecs;
    } catch (err) {
      for (const spec of s.inlineSpecs) this.#sendInline(spec);
      throw err;
    } finally {
      s.inlineFor = null;
      s.inlineMax = 0;
      s.inlineSpecs = [];
    }
  }

  /** `body`: `bytes` as `decodeChunkBody` read them, when the caller already has. */
  #taskDone(taskId: string, bytes: Uint8Array, body?: ChunkBody): void {
    const task = this.#s.taskById.get(taskId);
    if (!task) throw new JobError("TASK_NOT_FOUND", `No task '${taskId}'`);
    const { meta, chunk } = body ?? decodeChunkBody(bytes);
    if (meta.task_id !== taskId) {
      throw new JobError(
        "BAD_CHUNK",
        `Chunk for task '${meta.task_id}' was posted to task '${taskId}'`,
      );
    }
    this.#checkLease(task, meta.lease);
    const job = this.#s.jobs.get(task.job_id)!;
    const columns = job.prepared!.schema.length;
    if (chunk.blocks.length !== columns || chunk.rows !== task.rows) {
      const error = new JobError(
        "BAD_CHUNK",
        `Chunk of task '${taskId}' has ${chunk.blocks.length} blocks and ${chunk.rows} rows, expected ${columns} and ${task.rows}`,
      );
      this.#endAttemptOnWorker(task);
      this.failAttempt(task, { code: error.code, message: error.message }, meta.worker_id);
      this.schedule();
      throw error;
    }
    // The worker is free as soon as its result is here: give it the next task while
    // this one is staged (the task stays RUNNING under its lease until then).
    const worker = this.#s.workers.get(meta.worker_id) ??
      (task.worker_id ? this.#s.workers.get(task.worker_id) : undefined);
    if (worker?.release(taskId)) {
      // A worker that accepts it gets its next task in this answer: one HTTP round
      // trip per task instead of two, which is most of a small task's cost.
      if (this.#s.inlineMax > 0) this.#s.inlineFor = worker;
      this.schedule();
    }
    let staged: { path: string; offset: number };
    try {
      staged = this.#s.staging.append(job.job_id, job.generation, bytes);
    } catch (err) {
      if (task.lease === meta.lease && task.status === "RUNNING") {
        this.#s.requeue(task, `the master could not stage its chunk: ${errorText(err)}`);
        this.schedule();
      }
      throw err;
    }
    // (Staging is synchronous, so nothing can have changed the lease since the check.)
    const now = this.#s.now();
    this.#s.running.delete(task);
    task.status = "DONE";
    this.#s.markDone(task);
    task.lease = null;
    task.finished_at = now;
    task.staged_path = staged.path;
    task.staged_offset = staged.offset;
    task.staged_bytes = bytes.length;
    task.staged_sha256 = createHash("sha256").update(bytes).digest("hex");
    job.updated_at = now;
    if (worker) {
      worker.jobs.add(job.job_id);
      worker.tasks_done++;
    }
    // Written behind (`store.ts`): a DONE lost in a crash only freezes the chunk again.
    this.#s.store.deferTask(task);
    this.#s.store.deferJob(job);
    this.#s.log.debug("task done", { task_id: taskId, job_id: job.job_id, bytes: bytes.length });
    if (this.#s.allDone(job)) this.#s.hooks.startAssemble(job);
    this.schedule();
  }

  /** The answer carrying `spec` will not be sent: hand it over the usual way. */
  #sendInline(spec: TaskSpec): void {
    const task = this.#s.taskById.get(spec.task_id);
    const worker = this.#s.workers.get(spec.worker_id);
    if (task && worker && task.lease === spec.lease) {
      this.#s.track(this.#dispatch(worker, task, spec));
    }
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
    const w = task.worker_id ? this.#s.workers.get(task.worker_id) : undefined;
    w?.release(task.task_id);
  }

  /**
   * Records a failed attempt reported by a worker.
   *
   * @param taskId The task.
   * @param req Lease, worker and error.
   * @throws {JobError} TASK_NOT_FOUND; STALE_RESULT for a lease that is not current.
   */
  taskFailed(taskId: string, req: FailedRequest): void {
    const task = this.#s.taskById.get(taskId);
    if (!task) throw new JobError("TASK_NOT_FOUND", `No task '${taskId}'`);
    this.#checkLease(task, req.lease);
    const error: TaskErrorReport = typeof req.error === "string"
      ? { code: "ERROR", message: req.error }
      : req.error;
    this.#endAttemptOnWorker(task);
    const job = this.#s.jobs.get(task.job_id)!;
    const column = error.column;
    const fallback = fallbackType(job.prepared?.format ?? job.format ?? sourceFormatOf(job.source));
    if (error.code === "SCHEMA_MISMATCH" && column && job.types[column] !== fallback) {
      this.#widen(job, column, fallback, error.message);
    } else {
      this.failAttempt(task, error, req.worker_id);
    }
    this.schedule();
  }

  /**
   * Reads a column as text (`fallback`: JSON text for JSON lines) from now on and
   * starts the job over, as a local freeze does.
   */
  #widen(job: JobRow, column: string, fallback: TextFallback, why: string): void {
    this.#s.log.info("widening column to text and starting the job over", {
      job_id: job.job_id,
      column,
      why,
    });
    job.types = { ...job.types, [column]: fallback };
    job.widened = [...job.widened, column];
    job.generation++;
    job.prepared = null;
    job.phase = "preparing";
    job.updated_at = this.#s.now();
    const tasks = this.#s.tasks.get(job.job_id)!;
    for (const t of tasks) {
      if (t.status === "RUNNING") this.#s.dropOnWorker(t);
      t.status = "QUEUED";
      t.attempts = 0;
      t.lease = null;
      t.failed_on = [];
      t.error = null;
      t.started_at = null;
      t.finished_at = null;
      unstage(t);
    }
    this.#s.queues.set(job.job_id, [...tasks]);
    this.#s.forgetDone(job.job_id);
    this.#s.store.transaction(() => {
      this.#s.store.putJob(job);
      for (const t of tasks) this.#s.store.putTask(t);
    });
    // Only the old generation's file goes, and at once: the new one lives beside it.
    this.#s.staging.removeGeneration(job.job_id, job.generation - 1);
    this.#s.hooks.startPrepare(job);
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
    const task = this.#s.taskById.get(taskId);
    if (!task) throw new JobError("TASK_NOT_FOUND", `No task '${taskId}'`);
    this.#checkLease(task, lease);
    const job = this.#s.jobs.get(task.job_id)!;
    const prepared = job.prepared!;
    const batch = await this.#readRows({
      path: readablePath(this.#s.dataDir, job),
      format: prepared.format,
      schema: prepared.schema as Schema,
      types: job.types,
      window: task.window,
      identity: job.source_id,
      delimiter: prepared.delimiter,
    });
    return encodeBatchBody(batch);
  }

  /** Counts attempts past the task timeout as failed (the caller's clock tick). */
  timeouts(): void {
    const now = this.#s.now();
    for (const t of [...this.#s.running]) {
      if (t.started_at !== null && now - t.started_at > this.#s.taskTimeoutMs) {
        this.#s.dropOnWorker(t);
        this.failAttempt(t, {
          code: "TIMEOUT",
          message: `attempt ran over the task timeout of ${this.#s.taskTimeoutMs / 1000} s`,
        }, t.worker_id);
      }
    }
  }
}
