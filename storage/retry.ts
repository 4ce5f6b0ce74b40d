/**
 * Retries for object-store requests: 3 attempts, exponential back-off from 200 ms
 * with jitter, capped at 60 s. What is worth retrying is the caller's call: network
 * failures, 5xx and 429 answers are; a 4xx is not.
 *
 * @module
 */

/** Attempts a request gets. */
export const ATTEMPTS = 3;

/** Longest pause between attempts. */
export const MAX_BACKOFF_MS = 60_000;

/** Options of {@link withRetries}. */
export interface RetryOptions {
  /** Attempts (default {@link ATTEMPTS}). */
  attempts?: number;
  /** First pause (default 200 ms); doubled each time, capped at {@link MAX_BACKOFF_MS}. */
  baseMs?: number;
  /** Whether an error is worth another attempt. */
  retryable: (err: unknown) => boolean;
}

/**
 * Runs `fn` until it succeeds, an error is not retryable, or the attempts are spent.
 *
 * @param fn The request.
 * @param options Attempts, back-off, what to retry.
 * @returns What `fn` returned.
 * @throws the last error.
 */
export async function withRetries<T>(
  fn: (attempt: number) => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const attempts = options.attempts ?? ATTEMPTS;
  const base = options.baseMs ?? 200;
  for (let attempt = 1;; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= attempts || !options.retryable(err)) throw err;
      const pause = Math.min(MAX_BACKOFF_MS, base * 2 ** (attempt - 1));
      await new Promise((r) => setTimeout(r, pause / 2 + Math.random() * pause / 2));
    }
  }
}
