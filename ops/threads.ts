/**
 * How many threads a freeze or append may run: a cap per core, so a typo such as
 * `--threads 1000` is refused rather than spent on scheduling and memory.
 *
 * @module
 */
import { defaultThreads } from "../internal/cores.ts";

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
