/**
 * `BlockPool`: a fixed set of Deno Workers that encode column blocks, so a
 * local freeze uses every core and a cluster worker's main thread stays free
 * to answer heartbeats while codecs run.
 *
 * Each Worker holds up to {@link JOBS_PER_WORKER} jobs: the next one waits in its own
 * message queue, so it starts the moment the current one ends instead of after a
 * round trip through this thread (which may be busy decoding the source). A Worker
 * still runs its jobs one at a time (`_block_worker.ts` chains them).
 *
 * Workers inherit the process's permissions (`--allow-run=zpaq` reaches them).
 * Errors thrown in a Worker come back as the same class and code.
 *
 * @module
 */
import { CodecError, type CodecErrorCode } from "../codecs/errors.ts";
import type { ChunkEncoder, ChunkJob, ChunkResult } from "./chunk.ts";
import type { Column } from "./column.ts";
import { FormatError, type FormatErrorCode } from "./errors.ts";

/**
 * A string column as it crosses to a Worker: the values joined into one string and
 * the end offset (UTF-16 code units) of each. Cloning one long string is a copy;
 * cloning a `string[]` of 50,000 values costs this thread, which also decodes the
 * source, several milliseconds per column.
 */
export interface PackedStrings {
  type: "string";
  packed: { joined: string; ends: Uint32Array };
  validity: Uint8Array | null;
}

/** A job as posted to a Worker: string columns packed. */
export interface PostedJob extends Omit<ChunkJob, "batch"> {
  batch: Omit<ChunkJob["batch"], "columns"> & { columns: (Column | PackedStrings)[] };
}

/** Packs a job's string columns (see {@link PackedStrings}). */
export function packJob(job: ChunkJob): PostedJob {
  const columns = job.batch.columns.map((column): Column | PackedStrings => {
    if (column.type !== "string") return column;
    const ends = new Uint32Array(column.values.length);
    let at = 0;
    for (let i = 0; i < column.values.length; i++) {
      at += column.values[i]!.length;
      ends[i] = at;
    }
    return {
      type: "string",
      packed: { joined: column.values.join(""), ends },
      validity: column.validity,
    };
  });
  return { ...job, batch: { ...job.batch, columns } };
}

/** Inverse of {@link packJob}, in the Worker. */
export function unpackJob(posted: PostedJob): ChunkJob {
  const columns = posted.batch.columns.map((column): Column => {
    if (!("packed" in column)) return column;
    const { joined, ends } = column.packed;
    const values = new Array<string>(ends.length);
    let start = 0;
    for (let i = 0; i < ends.length; i++) {
      values[i] = joined.slice(start, ends[i]);
      start = ends[i]!;
    }
    return { type: "string", values, validity: column.validity };
  });
  return { ...posted, batch: { ...posted.batch, columns } };
}

/** A Worker's answer to one job. */
export type PoolReply =
  | { id: number; ok: true; result: ChunkResult }
  | { id: number; ok: false; error: { name: string; code: string | null; message: string } };

interface Pending {
  job: ChunkJob;
  resolve: (value: ChunkResult) => void;
  reject: (reason: unknown) => void;
}

/** Jobs handed to one Worker at once: the running one and the next. */
export const JOBS_PER_WORKER = 2;

/** Threads a pool uses by default: one per logical core. */
export function defaultThreads(): number {
  return Math.max(1, navigator.hardwareConcurrency || 1);
}

/** A pool of block-encoding Workers. Call `close()` when done. */
export class BlockPool implements ChunkEncoder {
  #all: Worker[] = [];
  /** Job ids each Worker holds (running or waiting in its message queue). */
  #held = new Map<Worker, Set<number>>();
  #queue: { id: number; pending: Pending }[] = [];
  #running = new Map<number, Pending>();
  #nextId = 1;
  #closed = false;

  /**
   * Starts `threads` Workers.
   *
   * @param threads Number of Workers (default: one per core).
   */
  constructor(threads: number = defaultThreads()) {
    if (!Number.isInteger(threads) || threads < 1) {
      throw new FormatError(
        "BAD_ARGUMENT",
        `Cannot start a block pool with ${threads} threads: give a positive integer`,
      );
    }
    for (let i = 0; i < threads; i++) {
      const worker = new Worker(new URL("./_block_worker.ts", import.meta.url).href, {
        type: "module",
      });
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
    if (this.#closed) return Promise.reject(new Error("Cannot encode: the block pool is closed"));
    return new Promise((resolve, reject) => {
      this.#queue.push({ id: this.#nextId++, pending: { job, resolve, reject } });
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
    for (let worker = this.#leastLoaded(); worker; worker = this.#leastLoaded()) {
      const next = this.#queue.shift();
      if (!next) return;
      this.#running.set(next.id, next.pending);
      this.#held.get(worker)!.add(next.id);
      worker.postMessage({ id: next.id, job: packJob(next.pending.job) });
    }
  }

  #reply(worker: Worker, reply: PoolReply): void {
    const pending = this.#running.get(reply.id);
    this.#running.delete(reply.id);
    this.#held.get(worker)!.delete(reply.id);
    if (pending) {
      if (reply.ok) pending.resolve(reply.result);
      else pending.reject(reviveError(reply.error));
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
    this.#pump();
  }

  /** Stops every Worker; jobs still queued are rejected. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const w of this.#all) w.terminate();
    const error = new Error("The block pool was closed");
    for (const { pending } of this.#queue) pending.reject(error);
    for (const pending of this.#running.values()) pending.reject(error);
    this.#queue = [];
    this.#running.clear();
  }
}

function reviveError(e: { name: string; code: string | null; message: string }): Error {
  if (e.name === "FormatError" && e.code) {
    return new FormatError(e.code as FormatErrorCode, e.message);
  }
  if (e.name === "CodecError" && e.code) return new CodecError(e.code as CodecErrorCode, e.message);
  return new Error(e.message);
}
