/**
 * `WorkerNode`: a cluster worker without HTTP. It registers with the master (and
 * keeps retrying with back-off, logging it, while the master cannot be reached),
 * sends a heartbeat every interval the master asked for (saying which tasks it holds,
 * so a restarted master can re-adopt it), holds up to `slots` tasks and computes one
 * at a time, and reports the frozen chunk or the failure: the results of small tasks
 * several at a time (`POST /tasks/done`), the others alone.
 *
 * A task: read the chunk's rows and encode them on the task thread
 * (`task_thread.ts`) when this machine sees the same source file, so this thread
 * stays free for heartbeats and HTTP; else fetch the rows from the master and encode
 * them there (a tiny chunk is read and encoded here, see {@link INLINE_CELLS}). Then
 * `POST /tasks/{id}/done` the framed chunk (`cluster/wire.ts`), whose answer may
 * carry the next task. A report the master cannot take now (5xx, unreachable) is
 * retried until it can; one it refuses as stale is dropped. A task the master tells
 * it to drop (cancel, or a heartbeat answer) stops at once: no result is sent, and
 * the next task runs on a fresh thread while the old one winds down.
 *
 * With auth on (a `token` source given) every request to the master carries the
 * worker's service token, signed from the shared JWT secret with its worker id
 * (`cluster/service_token.ts`); a master with another secret answers 401, which the
 * worker logs as such while it keeps retrying.
 *
 * @module
 */
import type { Batch, Schema } from "../format/column.ts";
import { encodeChunk, INLINE_ENCODER } from "../format/chunk.ts";
import type { ColumnPlan } from "../format/header.ts";
import type { EncodedChunk } from "../format/writer.ts";
import { IoError } from "../io/errors.ts";
import { PermafrostError } from "../internal/errors.ts";
import { createLogger, type Logger } from "../internal/log.ts";
import { JobError } from "../client/errors.ts";
import type {
  HeartbeatResponse,
  RegisterResponse,
  RunningTask,
  TaskErrorReport,
  TaskSpec,
} from "../client/types.ts";
import {
  isSmallTask,
  KeptSource,
  readTaskRows,
  sameSchema,
  type TaskRead,
} from "../cluster/task_source.ts";
import { ParquetReaders } from "../io/parquet.ts";
import { TaskSpecChecker } from "./task_spec.ts";
import { type TaskEncoder, TaskThread } from "./task_thread.ts";
import {
  decodeBatchBody,
  encodeChunkBodies,
  encodeChunkBody,
  MAX_BODIES,
  WIRE_CONTENT_TYPE,
} from "../cluster/wire.ts";
import type { ServiceToken } from "../cluster/service_token.ts";
import { MasterLink } from "./_master_link.ts";
import { warmUpSmallTasks } from "./_warm_up.ts";
import { fetchWindowFile, readableFromStore } from "./_remote_window.ts";
import { type FileIdentity, openedIdentity, unchanged } from "../internal/file_identity.ts";

/**
 * Chunks of at most this many cells are encoded on this thread: handing one to the
 * Worker costs more than encoding it (well under a millisecond with zstd), and a
 * few milliseconds at most never delay a heartbeat.
 */
const INLINE_CELLS = 4096;
/** What a {@link WorkerNode} needs. */
export interface WorkerNodeDeps {
  /** The master's URL. */
  masterUrl: string;
  /** This worker's id (empty: generated). */
  workerId?: string;
  /** `auto` (read the source when visible, else fetch from the master) or `master`. */
  read?: "auto" | "master";
  /** How the master is reached (default the global `fetch`). */
  fetch?: typeof fetch;
  /** Logger (default: info and above to stderr). */
  logger?: Logger;
  /** Makes the chunk encoder (default a {@link TaskThread}, which also reads the rows). */
  encoder?: () => TaskEncoder;
  /**
   * Reads a task's rows from the source on this thread (default: the encoder's task
   * thread reads them, or `readTaskRows` here); the signal aborts on a drop.
   */
  readRows?: (read: TaskRead, signal: AbortSignal) => Promise<Batch>;
  /**
   * Whether to take a built-in small task through this thread's task path before
   * registering (`_warm_up.ts`; default: when `encoder` is not given, as in a real
   * worker).
   */
  warmUp?: boolean;
  /** Heartbeat interval before the master says one, in seconds (default 5). */
  heartbeatS?: number;
  /** The worker's service token, sent to the master (absent: auth off). */
  token?: ServiceToken;
  /**
   * Tasks it may hold at once (default {@link DEFAULT_SLOTS}): it computes one at a
   * time, and the next waits here instead of a round trip to the master away.
   */
  slots?: number;
  /**
   * Results of small tasks it sends in one request at most (default
   * {@link DEFAULT_REPORT_BATCH}; 1: each alone, `POST /tasks/{id}/done`).
   */
  reportBatch?: number;
}

/**
 * Tasks a worker holds at once by default: the one it computes and those after it,
 * so it starts the next as soon as it has a result, while the master takes the last
 * ones and answers with more (the master gives spare slots only small tasks).
 */
export const DEFAULT_SLOTS = 8;

/**
 * Results of small tasks sent together by default (`POST /tasks/done`): one round
 * trip for four tasks. With {@link DEFAULT_SLOTS} twice that, the worker computes the
 * next four while the last four travel (on a loaded machine a round trip can take
 * several tasks' time: the master waits for a core too).
 */
export const DEFAULT_REPORT_BATCH = 4;

/** What a worker reports about itself (`GET /health` on the worker). */
export interface WorkerState {
  /** Its id. */
  worker_id: string;
  /** `registering` until the master answered, then `idle` or `busy`. */
  status: "registering" | "idle" | "busy";
  /** The task it runs. */
  task_id: string | null;
  /** The master's URL. */
  master: string;
  /** Tasks it finished since it started. */
  tasks_done: number;
}

/** A result waiting to be sent with others (`POST /tasks/done`). */
interface Outgoing {
  run: Run;
  body: Uint8Array;
  /** Ends the run's report: true when the master took the result. */
  settle: (taken: boolean) => void;
}

interface Run {
  spec: TaskSpec;
  cancelled: boolean;
  done: Promise<void>;
  /** Aborts the run's requests to the master when it is dropped. */
  abort: AbortController;
  /** Lets the next task start computing (called once its own computing ends or stops). */
  next: () => void;
}

/**
 * Turns any error into what a worker reports.
 *
 * @param err The error.
 * @returns Code, message and column.
 */
export function errorReport(err: unknown): TaskErrorReport {
  if (err instanceof PermafrostError) {
    const out: TaskErrorReport = { code: err.code, message: err.message };
    if (err.column !== undefined) out.column = err.column;
    return out;
  }
  return { code: "ERROR", message: err instanceof Error ? err.message : String(err) };
}

/** A cluster worker. */
export class WorkerNode {
  readonly workerId: string;
  #link: MasterLink;
  #read: "auto" | "master";
  #log: Logger;
  #makeEncoder: () => TaskEncoder;
  #readRows: (read: TaskRead, signal: AbortSignal) => Promise<Batch>;
  /** Whether the encoder may read the rows itself (no `readRows` was injected). */
  #readsOnThread: boolean;
  /** Whether to warm up before registering (`WorkerNodeDeps.warmUp`). */
  #warm: boolean;
  /** Parquet sources kept open between tasks of a job. */
  #parquetReaders = new ParquetReaders();
  /** The CSV source of the small tasks it runs, kept open while it holds tasks. */
  #keptSource = new KeptSource();
  #encoder: TaskEncoder | null = null;
  /** Encoders shutting down (a dropped task's thread ends its job first). */
  #retiring = new Set<Promise<void>>();
  #heartbeatMs: number;
  #url = "";
  #registered = false;
  #stopped = false;
  #started = false;
  #current: Run | null = null;
  /** Tasks accepted and waiting for their turn, in order. */
  #queued: Run[] = [];
  /** Resolves when the last accepted task has finished computing: the next one's turn. */
  #turn: Promise<void> = Promise.resolve();
  #slots: number;
  #reporting = new Set<Run>();
  /** Results of small tasks waiting to be sent together. */
  #outbox: Outgoing[] = [];
  /** Whether a `POST /tasks/done` is on its way (one at a time). */
  #sending = false;
  #reportBatch: number;
  /** Aborts a `POST /tasks/done` when the worker stops. */
  #sendAbort = new AbortController();
  #runs = new Set<Promise<void>>();
  #tasksDone = 0;
  #loop: Promise<void> | null = null;
  #wake = new AbortController();
  /** The source this machine was last seen to open as the master accepted it (see `#seesSource`). */
  #seenSource: string | null = null;
  /** Checks the tasks the master sends in its answers. */
  #specs = new TaskSpecChecker();

  /**
   * Creates a worker (call `start` once it serves).
   *
   * @param deps Master URL, id, read mode, fetch, logger, encoder.
   */
  constructor(deps: WorkerNodeDeps) {
    this.workerId = deps.workerId || `worker-${crypto.randomUUID().slice(0, 8)}`;
    this.#link = new MasterLink(deps.masterUrl, {
      fetch: deps.fetch,
      token: deps.token,
      timeoutMs: () => Math.max(10_000, 4 * this.#heartbeatMs),
    });
    this.#read = deps.read ?? "auto";
    this.#log = deps.logger ?? createLogger({ component: "worker" });
    this.#log = this.#log.child({ worker_id: this.workerId });
    this.#makeEncoder = deps.encoder ?? (() => new TaskThread());
    this.#readRows = deps.readRows ??
      ((read) => readTaskRows(read, this.#parquetReaders, this.#keptSource));
    this.#readsOnThread = deps.readRows === undefined;
    this.#warm = deps.warmUp ?? deps.encoder === undefined;
    this.#heartbeatMs = (deps.heartbeatS ?? 5) * 1000;
    this.#slots = Math.max(1, Math.floor(deps.slots ?? DEFAULT_SLOTS));
    this.#reportBatch = Math.max(1, Math.min(MAX_BODIES, deps.reportBatch ?? DEFAULT_REPORT_BATCH));
  }

  /** What the worker is doing. */
  get state(): WorkerState {
    return {
      worker_id: this.workerId,
      status: !this.#registered
        ? "registering"
        : this.#current || this.#queued.length > 0
        ? "busy"
        : "idle",
      task_id: (this.#current ?? this.#queued[0])?.spec.task_id ?? null,
      master: this.#link.url,
      tasks_done: this.#tasksDone,
    };
  }

  /**
   * Starts registering and heartbeating.
   *
   * @param url Where the master reaches this worker.
   */
  start(url: string): void {
    if (this.#started) return;
    this.#started = true;
    this.#url = url;
    // The thread loads its modules while the worker registers, not on the first task.
    this.#encoder ??= this.#makeEncoder();
    this.#loop = this.#run();
  }

  /** Stops the loops and drops the running task (nothing is reported). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake.abort();
    this.#sendAbort.abort();
    for (const run of [...this.#queued]) this.#drop(run.spec.task_id, "worker stopping");
    if (this.#current) this.#drop(this.#current.spec.task_id, "worker stopping");
    this.#flush();
    await this.#loop;
    await Promise.allSettled([...this.#runs]);
    const encoder = this.#encoder;
    this.#encoder = null;
    if (encoder) this.#retire(encoder);
    await Promise.allSettled([...this.#retiring]);
    this.#keptSource.close();
    await this.#parquetReaders.close();
  }

  /** Shuts an encoder down in the background (see `stop`, which waits for it). */
  #retire(encoder: TaskEncoder): void {
    if (!encoder.shutdown) {
      encoder.close();
      return;
    }
    const done: Promise<void> = encoder.shutdown().finally(() => this.#retiring.delete(done));
    this.#retiring.add(done);
  }

  // -------------------------------------------------------------------------
  // master link

  async #run(): Promise<void> {
    // Register once the task thread has loaded, so a first task does not wait for it
    // while the master counts this worker as ready (a thread that fails to load
    // fails its first task instead, which is reported). Meanwhile this thread warms
    // up (`_warm_up.ts`), a few tens of ms against the thread's several hundred.
    await Promise.all([this.#encoder?.ready?.().catch(() => {}), this.#warmUp()]);
    let backoff = 100;
    let failures = 0;
    while (!this.#stopped) {
      if (!this.#registered) {
        try {
          await this.register();
          if (failures > 0) this.#log.info("reached the master again", { master: this.#link.url });
          failures = 0;
          backoff = 100;
        } catch (err) {
          failures++;
          const refused = err instanceof JobError && (err.status === 401 || err.status === 403);
          if (refused && (failures === 1 || failures % 10 === 0)) {
            this.#log.error(
              "the master refused this worker's token; is PERMAFROST_JWT_SECRET the same on the master and every worker?",
              { master: this.#link.url, status: err.status, attempts: failures, err },
            );
          } else if (failures === 1 || failures % 10 === 0) {
            this.#log.warn("cannot register with the master; retrying", {
              master: this.#link.url,
              attempts: failures,
              retry_in_ms: backoff,
              err,
            });
          }
          await this.#sleep(backoff);
          backoff = Math.min(backoff * 2, Math.max(1000, 2 * this.#heartbeatMs));
          continue;
        }
      }
      await this.#sleep(this.#heartbeatMs);
      if (this.#stopped) break;
      try {
        await this.#heartbeat();
      } catch (err) {
        this.#registered = false;
        if (err instanceof JobError && err.code === "WORKER_NOT_FOUND") {
          this.#log.info("the master does not know this worker (restarted?); registering again");
        } else {
          this.#log.warn("lost the master; registering again", { master: this.#link.url, err });
        }
      }
    }
  }

  /** Runs the warm-up when asked; a failure is logged and changes nothing else. */
  async #warmUp(): Promise<void> {
    if (!this.#warm) return;
    const started = performance.now();
    try {
      await warmUpSmallTasks();
      this.#log.debug("warmed up", { ms: Math.round(performance.now() - started) });
    } catch (err) {
      this.#log.warn("warm-up failed (the first tasks compile what they need themselves)", {
        err,
      });
    }
  }

  #sleep(ms: number): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const signal = this.#wake.signal;
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /**
   * What this worker holds, as a register or heartbeat says it: every task (the one
   * being computed, those waiting, and those whose result is on its way: a master
   * that restarted meanwhile must keep expecting them) in `tasks`, and one of them in
   * `running` for a master that reads only that.
   */
  #held(): { running: RunningTask | null; tasks: RunningTask[] } {
    const runs = [
      ...(this.#current ? [this.#current] : []),
      ...this.#queued,
      ...this.#reporting,
    ];
    const tasks = runs.map((r) => ({ task_id: r.spec.task_id, lease: r.spec.lease }));
    return { running: tasks[0] ?? null, tasks };
  }

  /**
   * Joins the master once: registers this worker (with the task it still runs, so a
   * restarted master re-adopts it) and takes the heartbeat interval the master asks
   * for. {@link start} calls it, and again whenever the master has lost this worker;
   * call it yourself to join without the heartbeat loop, or to learn the answer.
   *
   * @param url Where the master reaches this worker (default: the URL given to `start`).
   * @returns The master's answer: heartbeat interval, the URL it will use, tasks to drop.
   * @throws {JobError} UNREACHABLE, or REQUEST_FAILED with the status (401/403: a
   * service token the master refuses).
   */
  async register(url?: string): Promise<RegisterResponse> {
    if (url !== undefined) this.#url = url;
    const res = await this.#link.post(
      "/workers/register",
      JSON.stringify({
        worker_id: this.workerId,
        url: this.#url,
        slots: this.#slots,
        ...this.#held(),
      }),
      "application/json",
    );
    const answer = await this.#link.json<RegisterResponse>(res);
    this.#heartbeatMs = answer.heartbeat_s * 1000;
    this.#registered = true;
    this.#log.info("registered with the master", {
      master: this.#link.url,
      url: answer.url,
      heartbeat_s: answer.heartbeat_s,
    });
    for (const id of answer.drop) this.#drop(id, "the master does not expect it");
    return answer;
  }

  async #heartbeat(): Promise<void> {
    // Holding nothing: let a source go (its space is freed if it was deleted).
    if (!this.#current && this.#queued.length === 0) this.#keptSource.close();
    const res = await this.#link.post(
      `/workers/${encodeURIComponent(this.workerId)}/heartbeat`,
      JSON.stringify(this.#held()),
      "application/json",
    );
    const answer = await this.#link.json<HeartbeatResponse>(res);
    for (const id of answer.drop) this.#drop(id, "the master does not expect it");
  }

  // -------------------------------------------------------------------------
  // tasks

  /**
   * Takes a task: it starts at once, or after those taken before it (one is
   * computed at a time).
   *
   * @param spec The task.
   * @throws {JobError} BUSY when it already holds as many tasks as its slots (a
   * result on its way does not count: the master has freed that slot when it
   * hands out the next).
   */
  accept(spec: TaskSpec): void {
    if (this.#stopped) throw new JobError("BUSY", `Worker ${this.workerId} is stopping`);
    const holding = this.#queued.length + (this.#current ? 1 : 0);
    if (holding >= this.#slots) {
      const ids = [this.#current, ...this.#queued].flatMap((r) => r ? [r.spec.task_id] : []);
      throw new JobError(
        "BUSY",
        `Worker ${this.workerId} holds ${holding} of its ${this.#slots} tasks (${ids.join(", ")})`,
      );
    }
    const turn = this.#turn;
    let next!: () => void;
    this.#turn = new Promise<void>((resolve) => next = resolve);
    const run: Run = {
      spec,
      cancelled: false,
      done: Promise.resolve(),
      abort: new AbortController(),
      next,
    };
    // Nothing ahead: it starts now (and is the running task as soon as this returns).
    const now = this.#current === null && this.#queued.length === 0;
    this.#queued.push(run);
    const execute = () => this.#execute(run);
    run.done = (now ? execute() : turn.then(execute)).catch((err) => {
      this.#log.error("task crashed", { task_id: spec.task_id, err });
    }).finally(() => {
      run.next();
      this.#unqueue(run);
      if (this.#current === run) this.#current = null;
      this.#runs.delete(run.done);
      this.#flush(); // a result may have waited for this task's
    });
    this.#runs.add(run.done);
  }

  #unqueue(run: Run): boolean {
    const at = this.#queued.indexOf(run);
    if (at >= 0) this.#queued.splice(at, 1);
    return at >= 0;
  }

  /**
   * Drops a task if it is the one running.
   *
   * @param taskId The task.
   * @returns Whether it was running.
   */
  cancel(taskId: string): boolean {
    return this.#drop(taskId, "cancelled by the master");
  }

  #drop(taskId: string, why: string): boolean {
    try {
      return this.#dropRun(taskId, why);
    } finally {
      this.#flush(); // a dropped result leaves the outbox; a dropped task may end a wait
    }
  }

  #dropRun(taskId: string, why: string): boolean {
    const reporting = [...this.#reporting].find((r) => r.spec.task_id === taskId);
    if (reporting && !reporting.cancelled) {
      reporting.cancelled = true;
      reporting.abort.abort();
      this.#reporting.delete(reporting);
      this.#log.info("dropped the result of a task", { task_id: taskId, why });
    }
    const waiting = this.#queued.find((r) => r.spec.task_id === taskId);
    if (waiting && !waiting.cancelled) {
      waiting.cancelled = true;
      waiting.abort.abort();
      this.#unqueue(waiting);
      this.#log.info("dropped task", { task_id: taskId, job_id: waiting.spec.job_id, why });
      return true;
    }
    const run = this.#current;
    if (!run || run.spec.task_id !== taskId || run.cancelled) return reporting !== undefined;
    run.cancelled = true;
    run.abort.abort();
    this.#current = null;
    run.next(); // the next task starts now, on the fresh thread made below
    // Retire the task thread and give the next task a fresh one at once. The old
    // thread's current job is refused; it exits once that job ends, after closing its
    // open files (terminating it mid-read would leak their native memory, ~7 MB each).
    const encoder = this.#encoder;
    this.#encoder = this.#stopped ? null : this.#makeEncoder();
    if (encoder) this.#retire(encoder);
    this.#log.info("dropped task", { task_id: taskId, job_id: run.spec.job_id, why });
    return true;
  }

  /** Resolves when the running task (if any) has finished, reported or been dropped. */
  async idle(): Promise<void> {
    while (this.#runs.size > 0) await Promise.allSettled([...this.#runs]);
  }

  async #execute(run: Run): Promise<void> {
    if (run.cancelled || !this.#unqueue(run)) return;
    this.#current = run;
    const { spec } = run;
    const log = this.#log.child({ task_id: spec.task_id, job_id: spec.job_id });
    log.debug("task started", { index: spec.index, rows: spec.window.rows });
    let body: Uint8Array;
    const t0 = performance.now();
    let t1 = t0;
    try {
      const chunk = await this.#chunk(spec, run.abort.signal);
      if (run.cancelled) return;
      t1 = performance.now();
      body = encodeChunkBody(
        { task_id: spec.task_id, lease: spec.lease, worker_id: this.workerId },
        chunk,
      );
    } catch (err) {
      if (run.cancelled) return;
      const error = errorReport(err);
      log.warn("task failed", { error });
      if (this.#current === run) this.#current = null;
      this.#reporting.add(run);
      run.next();
      try {
        await this.#report(
          run,
          "failed",
          JSON.stringify({
            lease: spec.lease,
            worker_id: this.workerId,
            error,
          }),
        );
      } finally {
        this.#reporting.delete(run);
      }
      return;
    }
    // Free for the next task while the result travels: the master hands out the
    // next one as soon as it has staged this one, before it answers.
    if (this.#current === run) this.#current = null;
    this.#reporting.add(run);
    run.next();
    try {
      const accepted = this.#reportBatch > 1 && small(spec)
        ? await this.#send(run, body)
        : await this.#report(run, "done", body);
      if (accepted) {
        this.#tasksDone++;
        const ms = (a: number, b: number) => Math.round(b - a);
        log.debug("task done", {
          bytes: body.length,
          work_ms: ms(t0, t1),
          report_ms: ms(t1, performance.now()),
        });
      }
    } finally {
      this.#reporting.delete(run);
    }
  }

  /** Puts a result in the outbox; resolves once it is settled (true: the master took it). */
  #send(run: Run, body: Uint8Array): Promise<boolean> {
    return new Promise((settle) => {
      this.#outbox.push({ run, body, settle });
      this.#flush();
    });
  }

  /**
   * Sends the outbox when it holds a batch, or when no small task is being computed
   * or waits here (no result then waits for another to join it); one request at a
   * time, the next once its answer is in.
   */
  #flush(): void {
    if (this.#sending) return;
    this.#outbox = this.#outbox.filter((o) => {
      if (!o.run.cancelled && !this.#stopped) return true;
      o.settle(false);
      return false;
    });
    if (this.#outbox.length === 0) return;
    const next = this.#current ?? this.#queued[0];
    if (next && small(next.spec) && this.#outbox.length < this.#reportBatch) return;
    const items = this.#outbox.splice(0, this.#reportBatch);
    this.#sending = true;
    const sent = this.#sendBatch(items).catch((err) => {
      this.#log.error("sending results crashed", { err });
      for (const o of items) o.settle(false);
    }).finally(() => {
      this.#sending = false;
      this.#runs.delete(sent);
      this.#flush();
    });
    this.#runs.add(sent);
  }

  /**
   * `POST /tasks/done` with several results, until the master answers: each result
   * is then settled as its own report would be (taken; refused as stale; refused
   * otherwise, then reported failed; or 5xx, sent again). A master without the
   * route (404, 405: an older one), or that refuses the request as a whole (4xx),
   * gets each result alone.
   */
  async #sendBatch(items: Outgoing[]): Promise<void> {
    let backoff = 100;
    for (let attempt = 1;; attempt++) {
      items = items.filter((o) => {
        if (!o.run.cancelled && !this.#stopped) return true;
        o.settle(false);
        return false;
      });
      if (items.length === 0) return;
      const free = Math.max(0, this.#slots - this.#queued.length - (this.#current ? 1 : 0));
      let answer: {
        results?: { task_id: string; ok: boolean; error?: TaskErrorReport & { status?: number } }[];
        next?: unknown;
        next_more?: unknown[];
      };
      try {
        const res = await this.#link.post(
          `/tasks/done?next=${free}`,
          encodeChunkBodies(items.map((o) => o.body)) as BodyInit,
          WIRE_CONTENT_TYPE,
          this.#sendAbort.signal,
        );
        answer = await this.#link.json(res);
        if (!Array.isArray(answer?.results)) {
          throw new JobError("REQUEST_FAILED", "The master's answer has no results", {
            status: 404,
          });
        }
      } catch (err) {
        const status = err instanceof JobError ? err.status : undefined;
        if (status !== undefined && status >= 400 && status < 500) {
          this.#log.info("the master takes no batch of results; sending each alone", {
            status,
            err,
          });
          if (status === 404 || status === 405) this.#reportBatch = 1;
          for (const o of items) o.settle(await this.#report(o.run, "done", o.body));
          return;
        }
        if (this.#stopped) continue; // settled above on the next turn
        if (attempt === 1 || attempt % 10 === 0) {
          this.#log.warn("cannot report to the master; retrying", {
            tasks: items.map((o) => o.run.spec.task_id),
            attempts: attempt,
            err,
          });
        }
        await this.#sleep(backoff);
        backoff = Math.min(backoff * 2, Math.max(1000, 2 * this.#heartbeatMs));
        continue;
      }
      for (const spec of [answer.next, ...(answer.next_more ?? [])]) {
        if (spec !== undefined) this.#acceptInline(spec);
      }
      const again: Outgoing[] = [];
      for (const [i, o] of items.entries()) {
        const result = answer.results?.[i];
        if (!result || result.task_id !== o.run.spec.task_id) {
          again.push(o); // not answered for: sent again (a duplicate is refused as stale)
        } else if (result.ok) {
          o.settle(true);
        } else if (result.error?.code === "STALE_RESULT") {
          this.#log.info("the master ignored a stale result", { task_id: result.task_id });
          o.settle(false);
        } else if ((result.error?.status ?? 500) >= 500) {
          again.push(o);
        } else {
          this.#log.error("the master refused a result", {
            task_id: result.task_id,
            error: result.error,
          });
          const error = {
            code: result.error?.code ?? "ERROR",
            message: result.error?.message ?? "",
          };
          o.settle(
            await this.#report(
              o.run,
              "failed",
              JSON.stringify({ lease: o.run.spec.lease, worker_id: this.workerId, error }),
            ),
          );
        }
      }
      if (again.length === 0) return;
      items = again;
      await this.#sleep(backoff);
      backoff = Math.min(backoff * 2, Math.max(1000, 2 * this.#heartbeatMs));
    }
  }

  /**
   * Starts the task the master sent in its answer to a done-report. Should that
   * fail, the master learns from the next heartbeat that this worker does not run
   * it, and re-queues it.
   */
  #acceptInline(next: unknown): void {
    const parsed = this.#specs.check(next);
    if ("error" in parsed) {
      this.#log.error("the master sent a malformed next task", { err: parsed.error });
      return;
    }
    try {
      this.accept(parsed.spec);
    } catch (err) {
      this.#log.warn("cannot start the next task the master sent", {
        task_id: parsed.spec.task_id,
        err,
      });
    }
  }

  /** Sends a result until the master takes or refuses it; true when taken. */
  async #report(run: Run, kind: "done" | "failed", body: Uint8Array | string): Promise<boolean> {
    // `?next=1`: the master may answer a done-report with this worker's next task.
    const path = `/tasks/${encodeURIComponent(run.spec.task_id)}/${kind}${
      kind === "done" ? "?next=1" : ""
    }`;
    const type = kind === "done" ? WIRE_CONTENT_TYPE : "application/json";
    let backoff = 100;
    for (let attempt = 1;; attempt++) {
      if (run.cancelled || this.#stopped) return false;
      try {
        const res = await this.#link.post(path, body as BodyInit, type, run.abort.signal);
        const answer = await this.#link.json<{ next?: unknown }>(res);
        if (answer?.next !== undefined) this.#acceptInline(answer.next);
        return true;
      } catch (err) {
        const status = err instanceof JobError ? err.status : undefined;
        if (status !== undefined && status >= 400 && status < 500) {
          if (err instanceof JobError && err.code === "STALE_RESULT") {
            this.#log.info("the master ignored a stale result", {
              task_id: run.spec.task_id,
              kind,
            });
            return false;
          }
          this.#log.error("the master refused a result", { task_id: run.spec.task_id, kind, err });
          if (kind === "done") {
            return await this.#report(
              run,
              "failed",
              JSON.stringify({
                lease: run.spec.lease,
                worker_id: this.workerId,
                error: errorReport(err),
              }),
            );
          }
          return false;
        }
        if (attempt === 1 || attempt % 10 === 0) {
          this.#log.warn("cannot report to the master; retrying", {
            task_id: run.spec.task_id,
            kind,
            attempts: attempt,
            err,
          });
        }
        await this.#sleep(backoff);
        backoff = Math.min(backoff * 2, Math.max(1000, 2 * this.#heartbeatMs));
      }
    }
  }

  /**
   * A task's encoded chunk. When this machine sees the source, the rows are read
   * from it: on the task thread together with the encoding (the default encoder), or
   * here and then encoded (a tiny chunk, or an injected `readRows`). Otherwise, or
   * when the source cannot be read here, they are fetched from the master.
   */
  async #chunk(spec: TaskSpec, signal: AbortSignal): Promise<EncodedChunk> {
    const schema = spec.schema as Schema;
    const plans = spec.plans as Record<string, ColumnPlan>;
    const small = spec.window.rows * Math.max(1, schema.length) <= INLINE_CELLS;
    const encoder: TaskEncoder = small ? INLINE_ENCODER : (this.#encoder ??= this.#makeEncoder());
    const encode = async (batch: Batch) =>
      await encodeChunk(batch, { plans, codec: spec.codec, encoder });
    // Reads a window here: on the task thread when it can, else on this one.
    const here = async (path: string, identity: FileIdentity | null) => {
      const read: TaskRead = {
        path,
        format: spec.source.format,
        schema,
        types: spec.types,
        window: spec.window,
        identity,
        delimiter: spec.source.delimiter,
      };
      if (this.#readsOnThread && encoder.readAndEncode) {
        return (await encoder.readAndEncode(read, plans, spec.codec)).chunk;
      }
      return await encode(await this.#readRows(read, signal));
    };
    if (this.#read === "auto" && await this.#seesSource(spec)) {
      signal.throwIfAborted(); // dropped while the file was looked at
      try {
        return await here(spec.source.path, sourceIdentity(spec));
      } catch (err) {
        if (!(err instanceof IoError && err.code === "READ_FAILED")) throw err;
        this.#log.info("cannot read the source here; fetching rows from the master", {
          task_id: spec.task_id,
          err,
        });
      }
    }
    if (this.#read === "auto" && readableFromStore(spec)) {
      // Another machine than the master's: the window comes from object storage.
      const { path, dispose } = await fetchWindowFile(spec);
      try {
        signal.throwIfAborted();
        return await here(path, null);
      } finally {
        await dispose();
      }
    }
    return await encode(await this.#fetchRows(spec, schema, signal));
  }

  /**
   * Whether this machine opens the very file the master accepted (same device, inode,
   * size and modification time). Another machine's mount, or a path that now names
   * another file, answers false: the rows then come from the master, which checks the
   * file it reads the same way.
   *
   * A yes is remembered for the job's source (one entry: the tasks of a job come one
   * after another), which saves opening the file once more per task: the read checks
   * the file's identity itself, before and after (`readTaskRows`), so a file changed
   * since fails the task with SOURCE_CHANGED, as the master's read of it would.
   */
  async #seesSource(spec: TaskSpec): Promise<boolean> {
    const { path, dev, ino, bytes, mtime_ms } = spec.source;
    const key = JSON.stringify([path, dev, ino, bytes, mtime_ms]);
    if (this.#seenSource === key) return true;
    const sees = unchanged(sourceIdentity(spec), await openedIdentity(path));
    this.#seenSource = sees ? key : null;
    return sees;
  }

  async #fetchRows(spec: TaskSpec, schema: Schema, signal: AbortSignal): Promise<Batch> {
    const body = await this.#link.taskRows(spec, signal);
    const batch = decodeBatchBody(body);
    if (batch.length !== spec.window.rows || !sameSchema(batch.schema, schema)) {
      throw new JobError(
        "SOURCE_CHANGED",
        `Rows from the master do not match task ${spec.task_id}: ${batch.length} rows, expected ${spec.window.rows}`,
      );
    }
    return batch;
  }
}

/** Whether a task is small (`isSmallTask`): its result may wait to be sent with others. */
function small(spec: TaskSpec): boolean {
  return isSmallTask(spec.window.rows, spec.schema.length);
}

/** The identity of a task's source file as the master accepted it. */
function sourceIdentity(spec: TaskSpec): FileIdentity {
  const { dev, ino, bytes, mtime_ms } = spec.source;
  return { dev, ino, size: bytes, mtime_ms };
}
