/**
 * Whole-process runs for the benches that time commands as a user runs them
 * (`thaw_bench.ts`, `profile_bench.ts`): the CLI's permissions, a DuckDB script's
 * command line, and one timed run of a command — wall time, CPU time of the process and
 * its threads, peak memory where GNU time is installed, and its output's SHA-256.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { cliTaskFlags } from "../cli/compile.ts";

/** The repository's root, where the commands run. */
const ROOT = new URL("../", import.meta.url).pathname;

/**
 * `deno task cli`'s arguments to `deno` before `main.ts` (`run -q`, the permissions and
 * the V8 flags), read from a checkout's `deno.json`: every bench runs the CLI as the
 * task does, and an earlier checkout (a `--baseline`) as its own task did.
 *
 * @param checkout The checkout's root (default: this one).
 * @returns The arguments, e.g. `["run", "-q", "--allow-read", …]`.
 * @throws {Error} when the task is not `deno … main.ts`.
 */
export async function cliRunArgs(checkout: string = ROOT): Promise<string[]> {
  return ["run", "-q", ...cliTaskFlags(await Deno.readTextFile(join(checkout, "deno.json")))];
}

/** One command of a table: its line's label, the file it writes and its argv. */
export interface ProcessCase {
  label: string;
  output: string;
  command: string[];
}

/** One run of a {@link ProcessCase}. */
export interface ProcessRun {
  seconds: number;
  cpuSeconds: number;
  /** Peak resident set in kB; null without GNU time. */
  peakKb: number | null;
  sha256: string;
  bytes: number;
}

/**
 * A DuckDB script (`@duckdb/node-api`, the project's own pin) run by Deno in a process
 * of its own, like `duckdb -c "..."`.
 *
 * @param script The script's path.
 * @param args Its arguments.
 */
export function duckCommand(script: string, args: readonly string[]): string[] {
  return [
    Deno.execPath(),
    "run",
    "-q",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-ffi",
    "--allow-sys",
    `--config=${ROOT}deno.json`,
    script,
    ...args,
  ];
}

/** SHA-256 and size of a file. */
export async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash("sha256");
  let bytes = 0;
  // The readable stream closes the file when it ends.
  for await (const chunk of (await Deno.open(path)).readable) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest("hex"), bytes };
}

/** Whether `/usr/bin/time` is GNU time (`-f %M`: peak memory). */
export async function hasGnuTime(): Promise<boolean> {
  try {
    const r = await new Deno.Command("/usr/bin/time", {
      args: ["-f", "%M", "true"],
      stderr: "null",
    })
      .output();
    return r.success;
  } catch {
    return false;
  }
}

/**
 * CPU seconds (user + system) of every child process this one has waited for:
 * `getrusage(RUSAGE_CHILDREN)` through libc, on Linux (`--allow-ffi`, which `deno task
 * bench` grants; `/proc/self/stat` would need `--allow-all`); NaN elsewhere, or without
 * the permission. A child's own usage is the difference across its run.
 */
export const childrenCpu: () => number = childrenCpuReader();

function childrenCpuReader(): () => number {
  if (Deno.build.os !== "linux") return () => NaN;
  try {
    const libc = Deno.dlopen("libc.so.6", {
      getrusage: { parameters: ["i32", "buffer"], result: "i32" },
    });
    // struct rusage: ru_utime and ru_stime (struct timeval: seconds, microseconds), then 14 longs.
    const usage = new BigInt64Array(18);
    return () => {
      if (libc.symbols.getrusage(-1, usage) !== 0) return NaN;
      const [us, uu, ss, su] = usage;
      return Number((us! + ss!) * 1_000_000n + uu! + su!) / 1e6;
    };
  } catch {
    return () => NaN;
  }
}

/**
 * Runs a command once, from the repository's root, after removing its output.
 *
 * @param c The command.
 * @param gnuTime Run it under GNU time for its peak memory ({@link hasGnuTime}).
 * @throws {Error} If the command fails, with its stderr.
 */
export async function runProcess(c: ProcessCase, gnuTime = false): Promise<ProcessRun> {
  await Deno.remove(c.output).catch(() => {});
  const [cmd, ...args] = gnuTime ? ["/usr/bin/time", "-f", "@@%M", ...c.command] : c.command;
  const cpu0 = childrenCpu();
  const started = performance.now();
  const { success, stderr } = await new Deno.Command(cmd!, {
    args,
    stdout: "null",
    stderr: "piped",
    cwd: ROOT,
  }).output();
  const seconds = (performance.now() - started) / 1000;
  const err = new TextDecoder().decode(stderr);
  if (!success) throw new Error(`${c.label} failed: ${err}`);
  const cpuSeconds = childrenCpu() - cpu0;
  const peak = /@@(\d+)/.exec(err);
  return {
    seconds,
    cpuSeconds,
    peakKb: peak ? Number(peak[1]) : null,
    ...await hashFile(c.output),
  };
}
