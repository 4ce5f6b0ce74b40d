/**
 * The Worker pool of a local freeze that reads its source file where it encodes it
 * (`_freeze_worker.ts`), and which sources it serves (`readInWorkers`).
 *
 * The CLI starts the pool before it loads the freeze's own modules
 * (`startFreezePool`; this module's graph is small): creating a Worker holds this thread
 * while the Worker's runtime starts (~13 ms each), and each Worker then loads its
 * modules (~40 ms). Started first, they load while this thread loads `ops/freeze.ts`,
 * when the other core has nothing to do, rather than while this thread infers the
 * file's types and cuts its first chunk (on 2 cores of flights-3m: the Workers' first
 * jobs handed out ~30 ms sooner). The freeze takes the started pool (`freezePool`); the
 * CLI stops one that no freeze took (`stopStartedPool`).
 *
 * @module
 */
import { BlockPool } from "../format/pool.ts";
import { reviveIoError } from "../io/errors.ts";
import { sourceFormatOf } from "../io/source.ts";
import type { SourceFormat } from "../io/types.ts";
import type { FreezeOptions, FreezeSource } from "./freeze.ts";
import { checkThreads } from "./threads.ts";

/**
 * The format of a source file that a freeze has Worker threads read where they encode
 * it (a Parquet or CSV file, with Workers and no primary key to check); null for a
 * source that streams through the freeze's thread.
 *
 * @param source What `freeze` accepts.
 * @param options The freeze's `format`, `threads` and `primaryKey`.
 * @returns "parquet", "csv" or null.
 */
export function readInWorkers(
  source: FreezeSource,
  options: Pick<FreezeOptions, "format" | "primaryKey"> & { threads: number },
): "parquet" | "csv" | null {
  if (typeof source !== "string" || !(options.threads > 0) || options.primaryKey !== undefined) {
    return null;
  }
  const format = fileFormat(source, options.format);
  return format === "parquet" || format === "csv" ? format : null;
}

/** A file's source format, given or by extension; null for an unknown extension. */
function fileFormat(path: string, format: SourceFormat | undefined): SourceFormat | null {
  try {
    return format ?? sourceFormatOf(path);
  } catch {
    return null; // an unknown extension: `openSource` reports it
  }
}

/** The pool started ahead of its freeze (`startFreezePool`), until a freeze takes it. */
let started: BlockPool | null = null;

/**
 * Starts the pool a freeze of `source` with `options` will read it in, if it reads it
 * in Workers (`readInWorkers`); nothing otherwise, or when one is started already.
 *
 * @param source The freeze's source.
 * @param options Its `format`, `primaryKey` and `threads` (default one per core).
 * @returns Whether it started one.
 */
export function startFreezePool(
  source: FreezeSource,
  options: Pick<FreezeOptions, "format" | "primaryKey" | "threads">,
): boolean {
  if (started !== null) return false;
  let threads: number;
  try {
    threads = checkThreads(options.threads);
  } catch {
    return false; // the freeze reports it
  }
  if (readInWorkers(source, { ...options, threads }) === null) return false;
  started = newPool(threads);
  return true;
}

/**
 * A pool of `threads` `_freeze_worker.ts` Workers: the one `startFreezePool` started,
 * when it has as many, else a new one.
 *
 * @param threads Workers.
 * @returns The pool, the caller's to shut down.
 */
export function freezePool(threads: number): BlockPool {
  const pool = started;
  started = null;
  if (pool?.threads === threads) return pool;
  pool?.close();
  return newPool(threads);
}

/**
 * Stops the pool `startFreezePool` started, if no freeze took it.
 *
 * @returns Whether there was one to stop.
 */
export async function stopStartedPool(): Promise<boolean> {
  const pool = started;
  started = null;
  await pool?.shutdown();
  return pool !== null;
}

function newPool(threads: number): BlockPool {
  return new BlockPool(threads, {
    script: new URL("./_freeze_worker.ts", import.meta.url),
    revive: reviveIoError,
  });
}
