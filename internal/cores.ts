/**
 * How many threads "one per core" means on this machine. A leaf, so the CLI can
 * describe its `--threads` limit without loading the worker pool.
 *
 * @module
 */

/**
 * Threads a pool uses by default: one per logical core.
 *
 * @returns At least 1.
 */
export function defaultThreads(): number {
  return Math.max(1, navigator.hardwareConcurrency || 1);
}
