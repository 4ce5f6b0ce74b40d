/**
 * How many threads a freeze, append or thaw may run: a cap per core, so a typo such as
 * `--threads 1000` is refused rather than spent on scheduling and memory.
 *
 * @module
 */
import { defaultThreads } from "../internal/cores.ts";
import { OpsError } from "./errors.ts";

/** Most threads per logical core a freeze or append may run: more only adds scheduling and memory. */
export const MAX_THREADS_PER_CORE = 4;

/**
 * The most threads a freeze or append may run here: {@link MAX_THREADS_PER_CORE} per core.
 *
 * @returns The cap.
 */
export function maxThreads(): number {
  return MAX_THREADS_PER_CORE * defaultThreads();
}

/**
 * The thread count a freeze, append or thaw runs with: the option's, or one per core.
 *
 * @param threads What the caller gave.
 * @returns The settled count.
 * @throws {OpsError} BAD_OPTION for a negative or fractional count, or one past
 * `maxThreads()` (4 per core).
 */
export function checkThreads(threads: number | undefined): number {
  const n = threads ?? defaultThreads();
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new OpsError("BAD_OPTION", `Threads must be a non-negative integer, got ${n}`);
  }
  if (n > maxThreads()) {
    throw new OpsError(
      "BAD_OPTION",
      `Threads must be at most ${maxThreads()} (${MAX_THREADS_PER_CORE} per core, ${defaultThreads()} cores here), got ${n}; 0 means one per core`,
    );
  }
  return n;
}
