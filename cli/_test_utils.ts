/**
 * Running the `permafrost` router in-process for the cli/ tests: the exit code and
 * what went to stdout and stderr, with an empty environment unless a test gives one.
 *
 * @module
 */
import { captureIo, type CliIo } from "./io.ts";
import { run } from "./run.ts";

/** What one invocation did. */
export interface CliResult {
  /** Its exit code. */
  code: number;
  /** stdout, lines joined. */
  out: string;
  /** stderr, lines joined. */
  err: string;
}

/**
 * Runs `permafrost ...args` in this process.
 *
 * @param args The arguments.
 * @param extra Environment (default none), signal, fetch.
 * @returns Exit code, stdout and stderr.
 */
export async function cli(
  args: readonly string[],
  extra: Partial<Omit<CliIo, "out" | "err">> = {},
): Promise<CliResult> {
  const io = captureIo({ env: {}, ...extra });
  const code = await run(args, io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}
