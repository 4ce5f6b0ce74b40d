/**
 * How a long-running command learns it should stop: SIGINT/SIGTERM (SIGINT only on
 * Windows), or the caller's `AbortSignal` instead when there is one (tests, a parent
 * command). One `AbortSignal` comes out either way, and `dispose()` removes every
 * listener it added, so a finished command leaves no signal handler behind.
 *
 * @module
 */

/** A stop signal and the means to release its listeners. */
export interface StopSignal {
  /** Aborts on the first SIGINT/SIGTERM, or when the given signal aborts. */
  readonly signal: AbortSignal;
  /** Aborts it now (e.g. when a child process the command depends on exits). */
  stop(): void;
  /** Removes the listeners. */
  dispose(): void;
}

/**
 * Listens for a reason to stop.
 *
 * @param given The caller's signal; when present, process signals are left alone.
 * @returns The signal to pass on, `stop()` and `dispose()`.
 */
export function stopSignal(given?: AbortSignal): StopSignal {
  const controller = new AbortController();
  const stop = () => controller.abort();
  given?.addEventListener("abort", stop, { once: true });
  if (given?.aborted) controller.abort();
  const signals: Deno.Signal[] = given
    ? []
    : Deno.build.os === "windows"
    ? ["SIGINT"]
    : ["SIGINT", "SIGTERM"];
  for (const s of signals) Deno.addSignalListener(s, stop);
  return {
    signal: controller.signal,
    stop,
    dispose() {
      for (const s of signals) Deno.removeSignalListener(s, stop);
      given?.removeEventListener("abort", stop);
    },
  };
}
