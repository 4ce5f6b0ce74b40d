/**
 * A cluster worker's encoder: one Worker thread (`_task_thread.ts`) that encodes
 * chunks, and can also read a task's rows from the source and encode them in one
 * job, so the worker's main thread neither decodes the source nor copies the rows
 * to the thread (it stays free for heartbeats and HTTP, and does less work).
 *
 * @module
 */
import type { ChunkEncoder, ChunkJob, ChunkResult } from "../format/chunk.ts";
import type { ColumnPlan } from "../format/header.ts";
import { BlockPool, type SerializedError } from "../format/pool.ts";
import { reviveIoError } from "../io/errors.ts";
import { JobError, type JobErrorCode } from "../client/errors.ts";
import type { TaskRead } from "../cluster/task_source.ts";

/** A chunk encoder that may also read the rows of a task itself. */
export interface TaskEncoder extends ChunkEncoder {
  /**
   * Reads a task's rows from its source (`readTaskRows`) and encodes them.
   * Absent: the worker reads the rows and calls `encode`.
   */
  readAndEncode?(
    read: TaskRead,
    plans: Record<string, ColumnPlan>,
    codec: string,
  ): Promise<ChunkResult>;
  /** Stops after releasing what it holds (open files); absent: `close` does. */
  shutdown?(): Promise<void>;
  /** Resolves once it can take a task at once (its thread has loaded its code). */
  ready?(): Promise<void>;
}

/** The task thread's job that answers once the thread has loaded. */
export interface ReadyJob {
  /** Tells this job from others. */
  kind: "ready";
}

/** The task thread's job: read a task's rows, then encode them. */
export interface ReadTaskJob {
  /** Tells this job from others. */
  kind: "read-task";
  /** Source, schema and window. */
  read: TaskRead;
  /** Per-column plans by name. */
  plans: Record<string, ColumnPlan>;
  /** Codec id. */
  codec: string;
}

/**
 * The default {@link TaskEncoder}: one Worker thread. `shutdown()` lets it end its
 * job and close its files; `close()` terminates it at once.
 */
export class TaskThread implements TaskEncoder {
  #pool = new BlockPool(1, {
    script: new URL("./_task_thread.ts", import.meta.url),
    revive: reviveTaskError,
  });

  /** Encodes rows the worker already holds (fetched from the master). */
  encode(job: ChunkJob): Promise<ChunkResult> {
    return this.#pool.encode(job);
  }

  /** Reads the task's rows on the thread and encodes them there. */
  readAndEncode(
    read: TaskRead,
    plans: Record<string, ColumnPlan>,
    codec: string,
  ): Promise<ChunkResult> {
    const task: ReadTaskJob = { kind: "read-task", read, plans, codec };
    return this.#pool.run(task);
  }

  /** Resolves once the thread has loaded its code (DuckDB, the codecs). */
  async ready(): Promise<void> {
    const job: ReadyJob = { kind: "ready" };
    await this.#pool.run(job);
  }

  /** Terminates the thread at once (its open files' native memory is not freed). */
  close(): void {
    this.#pool.close();
  }

  /** Stops the thread after it has closed its open files. */
  shutdown(): Promise<void> {
    return this.#pool.shutdown();
  }
}

function reviveTaskError(e: SerializedError): Error | undefined {
  if (e.name === "JobError" && e.code) {
    return new JobError(e.code as JobErrorCode, e.message, e.details);
  }
  return reviveIoError(e);
}
