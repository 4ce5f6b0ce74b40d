/**
 * The one `CliIo`: where every command writes and what it reads besides its
 * arguments. Data goes to `out` (stdout), human text, warnings and progress to `err`
 * (stderr), so a command's output can be piped while its messages stay on the screen.
 * Tests pass their own (`captureIo`).
 *
 * @module
 */
import type { FetchLike } from "../client/cluster_client.ts";
import { type ProgressSink, stderrSink } from "../internal/progress.ts";

/** Where a command writes, and what it reads besides its arguments. */
export interface CliIo {
  /** Writes data to stdout (a newline is added when missing). */
  out(text: string): void;
  /** Writes a message to stderr (a newline is added when missing). */
  err(text: string): void;
  /** The environment variables the command's settings name (default: the process's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Stops a server command when aborted (default: SIGINT or SIGTERM). */
  readonly signal?: AbortSignal;
  /** Where progress bars draw (default: stderr, drawn only on a terminal). */
  readonly progress?: ProgressSink;
  /** How cluster commands reach the master (tests: an app's `request`). */
  readonly fetch?: FetchLike;
  /** Whether `out` is an interactive terminal (then commands print tables rather than JSON). */
  readonly stdoutIsTerminal?: boolean;
  /** What `-` as a source reads (default: the process's stdin). */
  readonly stdin?: ReadableStream<Uint8Array>;
}

const encoder = new TextEncoder();

/** One line writer: `text` and a newline unless it ends with one. */
export function lineWriter(file: { writeSync(p: Uint8Array): number }): (text: string) => void {
  return (text) => {
    const bytes = encoder.encode(text.endsWith("\n") ? text : text + "\n");
    let at = 0;
    while (at < bytes.length) at += file.writeSync(bytes.subarray(at));
  };
}

/**
 * The process's stdout and stderr.
 *
 * @returns The io.
 */
export function processIo(): CliIo {
  return {
    out: lineWriter(Deno.stdout),
    err: lineWriter(Deno.stderr),
    progress: stderrSink(),
    stdoutIsTerminal: Deno.stdout.isTerminal(),
  };
}

/** A `CliIo` that keeps what a command writes, for tests. */
export interface CapturedIo extends CliIo {
  /** Everything written to `out`, one entry per call. */
  readonly stdout: string[];
  /** Everything written to `err`, one entry per call. */
  readonly stderr: string[];
}

/**
 * An io that records output instead of writing it.
 *
 * @param extra Environment, signal or fetch to pass along.
 * @returns The io, with `stdout` and `stderr` arrays.
 */
export function captureIo(extra: Partial<Omit<CliIo, "out" | "err">> = {}): CapturedIo {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    ...extra,
    stdout,
    stderr,
    out: (text) => void stdout.push(text),
    err: (text) => void stderr.push(text),
    progress: extra.progress ?? { write: () => {}, isTerminal: false },
  };
}

/**
 * Moves into the directory the user typed the command in, when a task runner started
 * us elsewhere: `deno task` (and npm) run the command in the project's directory and
 * say where the user was in `INIT_CWD`, so `deno task cli freeze trips.csv t.pf`
 * reads `trips.csv` from the user's directory, as the installed command does. Only
 * when the variable may be read (no permission prompt) and names a directory.
 */
export function enterCallerDirectory(): void {
  if (Deno.permissions.querySync({ name: "env", variable: "INIT_CWD" }).state !== "granted") return;
  const dir = Deno.env.get("INIT_CWD");
  if (!dir) return;
  try {
    if (Deno.statSync(dir).isDirectory) Deno.chdir(dir);
  } catch {
    // A stale or unreadable INIT_CWD: stay where we are.
  }
}
