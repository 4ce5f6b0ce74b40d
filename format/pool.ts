/**
 * `BlockPool`: a fixed set of Deno Workers that encode column blocks, so a
 * local freeze uses every core and a cluster worker's main thread stays free
 * to answer heartbeats while codecs run.
 *
 * Each Worker holds up to {@link JOBS_PER_WORKER} jobs: the next one waits in its own
 * message queue, so it starts the moment the current one ends instead of after a
 * round trip through this thread (which may be busy decoding the source). A Worker
 * still runs its jobs one at a time ({@link servePoolWorker} chains them).
 *
 * The Worker script is `_block_worker.ts` unless the caller names another: a script
 * that calls {@link servePoolWorker} with its own handler also runs jobs this folder
 * knows nothing about ({@link BlockPool.run}), e.g. `ops/` reading a chunk's rows in
 * the Worker before encoding them, which `format/` may not do (it imports no `io/`).
 *
 * Workers inherit the process's permissions (`--allow-run=zpaq` reaches them).
 * Errors thrown in a Worker come back as the same class, code and details
 * (`column`, `path`, `offset`, `chunk`): FormatError and CodecError here, others
 * through the caller's `revive`.
 *
 * @module
 */
import { defaultThreads } from "../internal/cores.ts";
import { CodecError, type CodecErrorCode } from "../codecs/errors.ts";
import type { ChunkEncoder, ChunkJob, ChunkResult } from "./chunk.ts";
import type { Column } from "./column.ts";
import { FormatError, type FormatErrorCode } from "./errors.ts";
import type { ErrorDetails } from "../internal/errors.ts";
import {
  type PackedStrings,
  packStrings,
  type PostedColumn,
  unpackColumns,
} from "./chunk_decode.ts";

/** A job as posted to a Worker: string columns packed. */
export interface PostedJob extends Omit<ChunkJob, "batch"> {
  batch: Omit<ChunkJob["batch"], "columns"> & { columns: (Column | PackedStrings)[] };
}

/** Packs a job's string columns (see {@link PackedStrings}). */
export function packJob(job: ChunkJob): PostedJob {
  const columns = job.batch.columns.map((column): Column | PackedStrings =>
    column.type === "string" ? packStrings(column) : column
  );
  return { ...job, batch: { ...job.batch, columns } };
}

/** Inverse of {@link packJob}, in the Worker. */
export function unpackJob(posted: PostedJob): ChunkJob {
  return {
    ...posted,
    batch: { ...posted.batch, columns: unpackColumns(posted.batch.columns as PostedColumn[]) },
  };
}

/** An error as it crosses back from a Worker: class name, code, message and details. */
export interface SerializedError {
  /** The error's class name (`FormatError`, `IoError`, ...). */
  name: string;
  /** Its code, when it has one. */
  code: string | null;
  /** Its message. */
  message: string;
  /** Its structured details (`column`, `path`, `offset`, `chunk`), when set. */
  details: Omit<ErrorDetails, "cause">;
}

/**
 * A message to a Worker: a chunk to encode, a job for the script's own handler, a
 * notice for every Worker (see {@link BlockPool.notify}), or stop.
 */
export type PoolMessage =
  | { id: number; job: PostedJob }
  | { id: number; task: unknown }
  | { notice: unknown }
  | { close: true };

/** A Worker's answer to one job (or to `close`, with id 0). */
export type PoolReply =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: SerializedError }
  | { id: 0; closed: true };

interface Pending {
  message: { job: PostedJob } | { task: unknown };
  transfer: ArrayBuffer[];
  /** Takes the Worker's answer, whose type the caller of `run`/`encode` named. */
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/** Jobs handed to one Worker at once: the running one and the next. */
export const JOBS_PER_WORKER = 2;

export { defaultThreads } from "../internal/cores.ts";

/** Options of a {@link BlockPool}. */
export interface BlockPoolOptions {
  /**
   * The Worker script (default `_block_worker.ts`). It must call
   * {@link servePoolWorker}; its handler runs the jobs given to {@link BlockPool.run}.
   */
  script?: URL;
  /**
   * Turns an error a Worker sent back into the error to reject with, for classes this
   * folder does not know (FormatError and CodecError are revived first). Return
   * undefined to get a plain `Error`.
   */
  revive?: (error: SerializedError) => Error | undefined;
}

/** How long {@link BlockPool.shutdown} waits for a Worker to release what it holds. */
export const SHUTDOWN_WAIT_MS = 5000;

/**
 * `chunk.ts` (the encoder: plans, trials, every predictor's encoder), run only when a
 * Worker gets a chunk to encode: a thaw's Workers, and the thread that starts them,
 * never need it (running it cost about 10 ms of each one's start). A literal specifier:
 * Deno still reads its graph up front, which costs little next to running it.
 */
let inlineEncoder: Promise<ChunkEncoder> | null = null;

function inline(): Promise<ChunkEncoder> {
  return inlineEncoder ??= import("./chunk.ts").then((chunk) => chunk.INLINE_ENCODER);
}

/** A pool of block-encoding Workers. Call `close()` (or `await shutdown()`) when done. */
export class BlockPool implements ChunkEncoder {
  #all: Worker[] = [];
  /** Job ids each Worker holds (running or waiting in its message queue). */
  #held = new Map<Worker, Set<number>>();
  #queue: { id: number; pending: Pending; on: Worker | undefined }[] = [];
  #running = new Map<number, Pending>();
  #nextId = 1;
  #closed = false;
  #revive: BlockPoolOptions["revive"];
  /** Called when a Worker acknowledges `close`. */
  #onClosed = new Map<Worker, () => void>();

  /**
   * Starts `threads` Workers.
   *
   * @param threads Number of Workers (default: one per core).
   * @param options The Worker script and how to revive its errors.
   */
  constructor(threads: number = defaultThreads(), options: BlockPoolOptions = {}) {
    if (!Number.isInteger(threads) || threads < 1) {
      throw new FormatError(
        "BAD_ARGUMENT",
        `Cannot start a block pool with ${threads} threads: give a positive integer`,
      );
    }
    this.#revive = options.revive;
    const script = options.script ?? new URL("./_block_worker.ts", import.meta.url);
    for (let i = 0; i < threads; i++) {
      const worker = new Worker(script.href, { type: "module" });
      worker.onmessage = (event: MessageEvent<PoolReply>) => this.#reply(worker, event.data);
      worker.onerror = (event) => {
        event.preventDefault();
        this.#crash(worker, event.message);
      };
      this.#all.push(worker);
      this.#held.set(worker, new Set());
    }
  }

  /** Number of Workers. */
  get threads(): number {
    return this.#all.length;
  }

  /** Chunks in flight that keep every Worker busy: what callers should keep submitted. */
  get capacity(): number {
    return this.#all.length * (JOBS_PER_WORKER + 1);
  }

  /** Encodes one chunk on the next free Worker. */
  encode(job: ChunkJob): Promise<ChunkResult> {
    return this.#submit<ChunkResult>({ job: packJob(job) });
  }

  /**
   * Runs a job of the Worker script's own handler (see {@link servePoolWorker}) on
   * the next free Worker, in the same queue as {@link BlockPool.encode}.
   *
   * @param task Structured-clone friendly job description.
   * @param transfer Buffers of the task to move to the Worker instead of copying them.
   * @param on The Worker to run it on (0 to `threads - 1`), when it must be that one
   * (e.g. one that keeps a kind of job to itself); by default the next free one.
   * @returns What the handler returned (a {@link PoolAnswer}'s value).
   */
  run<T = ChunkResult>(task: unknown, transfer: ArrayBuffer[] = [], on?: number): Promise<T> {
    return this.#submit<T>({ task }, transfer, on);
  }

  /**
   * Tells every Worker something at once, ahead of the jobs they hold (the script's
   * `notice` handler takes it, not in turn with the jobs): e.g. what jobs already
   * running wait for. No answer comes back.
   *
   * @param notice Structured-clone friendly value.
   */
  notify(notice: unknown): void {
    if (this.#closed) return;
    for (const worker of this.#all) worker.postMessage({ notice } satisfies PoolMessage);
  }

  #submit<T>(message: Pending["message"], transfer: ArrayBuffer[] = [], on?: number): Promise<T> {
    if (this.#closed) return Promise.reject(new Error("Cannot encode: the block pool is closed"));
    const worker = on === undefined ? undefined : this.#all[on];
    if (on !== undefined && worker === undefined) {
      return Promise.reject(
        new FormatError(
          "BAD_ARGUMENT",
          `Cannot run a job on Worker ${on}: the pool has ${this.#all.length}`,
        ),
      );
    }
    return new Promise<T>((resolve, reject) => {
      const pending = { message, transfer, resolve: resolve as (value: unknown) => void, reject };
      this.#queue.push({ id: this.#nextId++, pending, on: worker });
      this.#pump();
    });
  }

  /** The Worker holding the fewest jobs, if one has room. */
  #leastLoaded(): Worker | undefined {
    let best: Worker | undefined;
    for (const worker of this.#all) {
      const held = this.#held.get(worker)!.size;
      if (held < JOBS_PER_WORKER && (!best || held < this.#held.get(best)!.size)) best = worker;
    }
    return best;
  }

  #pump(): void {
    // Jobs bound to a Worker first, each to its own while it has room, in order.
    for (let i = 0; i < this.#queue.length;) {
      const job = this.#queue[i]!;
      if (job.on === undefined || this.#held.get(job.on)!.size >= JOBS_PER_WORKER) {
        i++;
        continue;
      }
      this.#queue.splice(i, 1);
      this.#post(job.on, job);
    }
    for (let worker = this.#leastLoaded(); worker; worker = this.#leastLoaded()) {
      const at = this.#queue.findIndex((job) => job.on === undefined);
      if (at < 0) return;
      this.#post(worker, this.#queue.splice(at, 1)[0]!);
    }
  }

  #post(worker: Worker, next: { id: number; pending: Pending }): void {
    this.#running.set(next.id, next.pending);
    this.#held.get(worker)!.add(next.id);
    worker.postMessage(
      { id: next.id, ...next.pending.message } as PoolMessage,
      next.pending.transfer,
    );
  }

  #reply(worker: Worker, reply: PoolReply): void {
    if ("closed" in reply) {
      this.#onClosed.get(worker)?.();
      return;
    }
    const pending = this.#running.get(reply.id);
    this.#running.delete(reply.id);
    this.#held.get(worker)!.delete(reply.id);
    if (pending) {
      if (reply.ok) pending.resolve(reply.result);
      else pending.reject(reviveError(reply.error, this.#revive));
    }
    this.#pump();
  }

  #crash(worker: Worker, message: string): void {
    const held = this.#held.get(worker)!;
    for (const id of held) {
      this.#running.get(id)?.reject(new Error(`Block worker crashed: ${message}`));
      this.#running.delete(id);
    }
    held.clear();
    this.#onClosed.get(worker)?.();
    this.#pump();
  }

  /** Stops every Worker at once; jobs still queued or running are rejected. */
  close(): void {
    if (this.#closed) return;
    this.#reject();
    for (const w of this.#all) w.terminate();
  }

  /**
   * Stops every Worker after it has released what it holds (the script's `close`
   * handler, e.g. open files), waiting at most {@link SHUTDOWN_WAIT_MS} per Worker; jobs
   * still queued or running are rejected.
   */
  async shutdown(): Promise<void> {
    if (this.#closed) return;
    this.#reject();
    await Promise.all(this.#all.map((worker) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(done, SHUTDOWN_WAIT_MS);
        function done() {
          clearTimeout(timer);
          worker.terminate();
          resolve();
        }
        this.#onClosed.set(worker, done);
        worker.postMessage({ close: true } satisfies PoolMessage);
      })
    ));
  }

  #reject(): void {
    this.#closed = true;
    const error = new Error("The block pool was closed");
    for (const { pending } of this.#queue) pending.reject(error);
    for (const pending of this.#running.values()) pending.reject(error);
    this.#queue = [];
    this.#running.clear();
  }
}

function reviveError(e: SerializedError, revive: BlockPoolOptions["revive"]): Error {
  if (e.name === "FormatError" && e.code) {
    return new FormatError(e.code as FormatErrorCode, e.message, e.details);
  }
  if (e.name === "CodecError" && e.code) {
    return new CodecError(e.code as CodecErrorCode, e.message, e.details);
  }
  return revive?.(e) ?? new Error(e.message);
}

/**
 * Serializes an error for the trip back from a Worker.
 *
 * @param err Anything thrown.
 * @returns Its class name, code, message and details.
 */
export function serializeError(err: unknown): SerializedError {
  const e = err as {
    name?: string;
    code?: string;
    message?: string;
    column?: string;
    path?: string;
    offset?: number;
    chunk?: number;
  } | null;
  const details: SerializedError["details"] = {};
  if (typeof e?.column === "string") details.column = e.column;
  if (typeof e?.path === "string") details.path = e.path;
  if (typeof e?.offset === "number") details.offset = e.offset;
  if (typeof e?.chunk === "number") details.chunk = e.chunk;
  return {
    name: e?.name ?? "Error",
    code: typeof e?.code === "string" ? e.code : null,
    message: e?.message ?? String(err),
    details,
  };
}

/**
 * A handler's answer that is not an encoded chunk: the value {@link BlockPool.run}
 * resolves to, and the buffers in it to move rather than copy.
 */
export interface PoolAnswer {
  /** What the caller receives. */
  value: unknown;
  /** Buffers inside `value` that the Worker gives up. */
  transfer: ArrayBuffer[];
}

/** What a Worker script gives {@link servePoolWorker}. */
export interface PoolWorkerHandler {
  /** Runs one job given to {@link BlockPool.run}: an encoded chunk, or any other answer. */
  run(task: unknown): Promise<ChunkResult | PoolAnswer>;
  /** Releases what the handler holds (called once, when the pool shuts down). */
  close(): void | Promise<void>;
  /** Takes a {@link BlockPool.notify} notice, as it arrives (ignored when absent). */
  notice?(notice: unknown): void;
}

interface WorkerScope {
  onmessage: ((event: MessageEvent<PoolMessage>) => void) | null;
  postMessage(message: PoolReply, transfer?: Transferable[]): void;
  close(): void;
}

/**
 * Posts one message before any job runs. A thread's first postMessage changes a
 * prototype that V8's optimized code depends on ('dependent prototype chain changed' in
 * --trace-deopt), and a Worker's first answer came just after its first job had
 * optimized the code it runs: ~15 functions per Worker thrown away and compiled again in
 * a `max_speed` freeze of flights-3m, ~10 of a CSV thaw's renderer (`writeTimestamp`,
 * `write`, ...).
 */
function primeMessaging(): void {
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(0);
  port1.close();
  port2.close();
}

/**
 * The body of a pool Worker: call it once at the top of the Worker script. It encodes
 * chunks with `INLINE_ENCODER` (`chunk.ts`, loaded with the first), hands other jobs to
 * `handler`, runs one job at a time, and answers each with its result (block buffers
 * transferred) or its error.
 *
 * @param handler The script's own jobs and cleanup (none by default).
 */
export function servePoolWorker(handler?: PoolWorkerHandler): void {
  primeMessaging();
  const scope = self as unknown as WorkerScope;
  // The pool may queue a second job while one runs: chain them, so a Worker encodes
  // one chunk at a time (an async codec such as zpaq would otherwise interleave).
  let tail: Promise<void> = Promise.resolve();
  scope.onmessage = (event) => {
    const message = event.data;
    if ("notice" in message) {
      handler?.notice?.(message.notice); // at once: a job in the chain may wait for it
      return;
    }
    if ("close" in message) {
      tail = tail.then(async () => {
        try {
          await handler?.close();
        } finally {
          scope.postMessage({ id: 0, closed: true });
          scope.close();
        }
      });
      return;
    }
    const { id } = message;
    tail = tail.then(() =>
      answer(
        scope,
        id,
        () =>
          "job" in message
            ? inline().then((encoder) => encoder.encode(unpackJob(message.job)))
            : handler
            ? handler.run(message.task)
            : Promise.reject(new Error("Cannot run the job: this pool Worker only encodes chunks")),
      )
    );
  };
}

async function answer(
  scope: WorkerScope,
  id: number,
  work: () => Promise<ChunkResult | PoolAnswer>,
): Promise<void> {
  try {
    const result = await work();
    if ("transfer" in result) {
      scope.postMessage({ id, ok: true, result: result.value }, result.transfer);
      return;
    }
    // Each block's bytes copied into a buffer of their own, whose one view moves: V8
    // optimizes typed-array code on the promise that no buffer of the isolate was ever
    // detached (its ArrayBufferDetaching protector), and keeps it through a detach only
    // of a buffer with one view. An encoder's output may share its buffer with other
    // views (node:zlib's), and moving it broke the promise at the Worker's first answer,
    // just after its first chunk had optimized the parser and encoders: ~100 functions
    // deoptimized and compiled again in a max_speed freeze of flights-3m (trace-deopt
    // 'dependent property cell changed'). The copies hold compressed blocks: little.
    const blocks = result.chunk.blocks.map((b) => ({ ...b, bytes: b.bytes.slice() }));
    const moved = { ...result, chunk: { ...result.chunk, blocks } };
    scope.postMessage({ id, ok: true, result: moved }, blocks.map((b) => b.bytes.buffer));
  } catch (err) {
    scope.postMessage({ id, ok: false, error: serializeError(err) });
  }
}
