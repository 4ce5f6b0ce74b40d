/**
 * Process start: the whole-process wall time of the quick commands (`--version`,
 * `--help`, `audit`, `peek`, `verify` of a small archive, a 10-row `thaw --rows` of
 * flights-3m to stdout) as a user runs them: the `permafrost` command README's
 * `deno task install` installs (the CLI bundled into one image, `cli/bundle.ts`, run with
 * `deno task cli`'s flags), and beside it `main.ts` from source as `deno task cli` runs
 * it, next to `deno eval 1` (the runtime alone) measured in the same rounds. Also
 * `deno task cli` itself (a second Deno process: the task runner), and, where
 * `deno compile` can fetch its runtime, the compiled binary.
 *
 * `deno task bench` calls {@link startFigures}; alone:
 * `deno run -A bench/start_bench.ts [--root DIR] [--before DIR] [--rounds N] [--big F]
 * [--small F]` (`--root` measures another checkout; `--before` adds one's `main.ts`, e.g. a
 * worktree of an older commit, to the same rounds for a before/after; the archives
 * are frozen from the vega-datasets cache that `deno task bench` fills unless given).
 *
 * Rounds alternate the commands, so load on a shared machine hits each alike. The
 * minimum is the figure (what a command costs when nothing competes for the CPU);
 * the median is beside it. A 10-row slice's work beyond start is its minimum less
 * `permafrost --version`'s (the runtime and the router, no command), in each form. The
 * slice's and `peek`'s output are hashed and compared between the forms (and, with
 * `--before`, with the other checkout's): speed never at the cost of other bytes.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freeze } from "../mod.ts";
import { parseArgs } from "../internal/config.ts";
import { childrenCpu, cliRunArgs } from "./_process.ts";
import { bundleCli, installFlags } from "../cli/bundle.ts";

/** The goals of the process-start work: whole process, and a slice's own work. */
const GOAL_MS = 80;
const SLICE_WORK_GOAL_MS = 20;

/** The label of a row that runs `main.ts` from source. */
const SOURCE = "from source: ";

/** The slice `README.md` shows. */
const SLICE = "1500000:1500010";

/** What to measure. */
export interface StartOptions {
  /** The checkout whose `main.ts` and `deno.json` run (default: this one). */
  root?: string;
  /**
   * Another checkout (e.g. a worktree of an older commit) whose CLI runs in the same
   * rounds, for a before/after measured under the same load.
   */
  before?: string;
  /** flights-3m, frozen (any codec). */
  big: string;
  /** Its name in the table (default `flights-3m`). */
  bigName?: string;
  /** The 10 rows to thaw from it (default `1500000:1500010`, as README shows). */
  slice?: string;
  /** A small archive. */
  small: string;
  /** Where `deno compile` may write its binary. */
  work: string;
  /**
   * Rounds over every command (default 31: the figure is a minimum, and on a shared machine
   * fewer rounds seldom catch a quiet moment for each command).
   */
  rounds?: number;
}

interface Case {
  label: string;
  cmd: string;
  args: string[];
  cwd: string;
}

interface Timing {
  label: string;
  min: number;
  median: number;
  /** The least CPU time (user + system) of a run, or NaN where it cannot be read. */
  cpu: number;
}

interface Sample {
  wall: number;
  cpu: number;
}

/**
 * The CPU time (user + system, ms) of every child process this one has waited for.
 * Under load a command waits for a core and its wall time grows; its CPU time stays
 * close to the wall time on an idle machine (the runtime's other threads add a little),
 * so it is shown beside it.
 */
const childCpu = () => childrenCpu() * 1000;

async function timeOnce(c: Case): Promise<Sample> {
  const cpu = childCpu();
  const t = performance.now();
  const out = await new Deno.Command(c.cmd, {
    args: c.args,
    cwd: c.cwd,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  const wall = performance.now() - t;
  if (!out.success) {
    throw new Error(`${c.label} failed: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  return { wall, cpu: childCpu() - cpu };
}

/** The SHA-256 (hex) of what a command writes to stdout. */
async function outputHash(c: Case): Promise<string> {
  const out = await new Deno.Command(c.cmd, {
    args: c.args,
    cwd: c.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`${c.label} failed: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", out.stdout));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Builds the standalone binary, or says why not (no runtime download here). */
async function compiled(root: string, work: string): Promise<string | { why: string }> {
  const output = join(work, "permafrost-start-bench");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-q", "--allow-read", "--allow-write", "--allow-run", "cli/compile.ts"]
      .concat(["--output", output]),
    cwd: root,
    env: { NO_COLOR: "1" },
    stdout: "null",
    stderr: "piped",
  }).output();
  if (out.success) return output;
  // cli/compile.ts says why in one line (no runtime download from here), else deno's
  // own "error: ..." line.
  const lines = new TextDecoder().decode(out.stderr).split("\n").map((l) => l.trim());
  const why = lines.find((l) => l.startsWith("deno task compile:")) ??
    lines.find((l) => l.startsWith("error:"));
  return { why: why ?? `exit ${out.code}` };
}

function signed(x: number): string {
  return `${x < 0 ? "−" : "+"}${Math.abs(x).toFixed(0)}`;
}

function ms(x: number): string {
  return Number.isNaN(x) ? "n/a" : x.toFixed(0);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * Measures process start and returns the markdown lines of the results.
 *
 * @param options The archives, the checkout and the rounds.
 * @returns Markdown lines.
 */
export async function startFigures(options: StartOptions): Promise<string[]> {
  const root = options.root ?? fileURLToPath(new URL("..", import.meta.url));
  const rounds = options.rounds ?? 31;
  const sliceRows = options.slice ?? SLICE;
  const bigName = options.bigName ?? "flights-3m";
  const deno = Deno.execPath();
  const run = await cliRunArgs(root);
  /**
   * The quick commands, each run as `prefix` then its words, labelled with `form`:
   * `--version` first and the slice last (where `sliceOf` below reads them).
   */
  const quickCases = (form: string, checkout: string, prefix: string[]): Case[] => {
    const cli = (label: string, ...args: string[]): Case => ({
      label: `${form}${label}`,
      cmd: deno,
      args: [...prefix, ...args],
      cwd: checkout,
    });
    return [
      cli("`permafrost --version`", "--version"),
      cli("`permafrost --help`", "--help"),
      cli("`permafrost audit small.pf`", "audit", options.small),
      cli("`permafrost peek small.pf`", "peek", options.small),
      cli("`permafrost verify small.pf`", "verify", options.small),
      cli(
        `\`permafrost thaw ${bigName}.pf - --rows ${sliceRows}\``,
        ...["thaw", options.big, "-", "--rows", sliceRows],
      ),
    ];
  };
  /** The quick commands as a checkout's `deno task cli` runs them: `main.ts` from source. */
  const sourceCases = (checkout: string, runArgs: readonly string[]) =>
    quickCases(SOURCE, checkout, [...runArgs, join(checkout, "main.ts")]);
  // The installed command: what `deno task install` builds, run as its shim runs it.
  const bundle = await bundleCli(root, join(options.work, "bundle"));
  const installed = quickCases("", root, [
    ...["run", "-q", ...installFlags(await Deno.readTextFile(join(root, "deno.json")))],
    ...["--config", bundle.config, bundle.entry],
  ]);
  const fromSource = sourceCases(root, run);
  const before = options.before === undefined
    ? []
    : sourceCases(options.before, await cliRunArgs(options.before));
  const cases: Case[] = [
    { label: "`deno eval 1` (the runtime alone)", cmd: deno, args: ["eval", "1"], cwd: root },
    ...installed,
    ...fromSource,
    {
      label: "`deno task cli audit small.pf` (task runner + CLI)",
      cmd: deno,
      args: ["task", "-q", "cli", "audit", options.small],
      cwd: root,
    },
  ];
  const binary = await compiled(root, options.work);
  if (typeof binary === "string") {
    cases.push({
      label: "compiled `permafrost audit small.pf`",
      cmd: binary,
      args: ["audit", options.small],
      cwd: root,
    });
    cases.push({
      label: `compiled \`permafrost thaw … --rows ${sliceRows}\``,
      cmd: binary,
      args: ["thaw", options.big, "-", "--rows", sliceRows],
      cwd: root,
    });
  }
  const all = [...cases, ...before];
  for (const c of all) await timeOnce(c); // warm the caches (code cache, npm, disk)
  const samples = all.map(() => [] as Sample[]);
  for (let round = 0; round < rounds; round++) {
    for (const [i, c] of all.entries()) samples[i]!.push(await timeOnce(c));
  }
  const measured: Timing[] = all.map((c, i) => ({
    label: c.label,
    min: Math.min(...samples[i]!.map((x) => x.wall)),
    median: median(samples[i]!.map((x) => x.wall)),
    cpu: Math.min(...samples[i]!.map((x) => x.cpu)),
  }));
  const timings = measured.slice(0, cases.length);
  // The outputs whose bytes must not change: the slice's and peek's.
  const hashed = (list: readonly Case[]) =>
    Promise.all(
      list.filter((c) => c.label.includes("--rows") || c.label.includes("peek"))
        .map(async (c) => ({ label: c.label, sha: await outputHash(c) })),
    );
  const hashes = await hashed(cases);
  const beforeHashes = await hashed(before);
  const beforeOf = (label: string) => measured.slice(cases.length).find((t) => t.label === label);
  const anchor = timings[0]!;
  const timingOf = (c: Case) => timings.find((t) => t.label === c.label)!;
  /** A form's slice: its work beyond start (wall and CPU), less its own `--version`. */
  const sliceOf = (form: readonly Case[]) => {
    const [version, slice] = [timingOf(form[0]!), timingOf(form.at(-1)!)];
    return { wall: slice.min - version.min, cpu: slice.cpu - version.cpu };
  };
  const sliceWork = sliceOf(installed);
  const sourceWork = sliceOf(fromSource);
  const sameAsSource = hashes.filter((h) => installed.some((c) => c.label === h.label))
    .every((h) => hashes.find((s) => s.label === `${SOURCE}${h.label}`)?.sha === h.sha);
  const lines = [
    `Whole-process wall time in ms, ${rounds} round(s) alternating the commands, minimum and median ` +
    `(Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores). \`permafrost …\` ` +
    "is the installed command as `deno task install` sets it up: the bundle (`cli/bundle.ts`) " +
    "run with `deno task cli`'s flags. " +
    `"${SOURCE.trim()}" runs \`main.ts\` as \`deno task cli\` does: \`deno ` + run.join(" ") +
    " main.ts …`.",
    "",
    `| command | wall min | wall median | CPU min | wall min over \`deno eval 1\` | goal ≤ 80 ms |${
      options.before ? " before: wall min (median), CPU min |" : ""
    }`,
    `|---|---|---|---|---|---|${options.before ? "---|" : ""}`,
    ...timings.map((t, i) => {
      const was = beforeOf(t.label);
      const then = was ? `${ms(was.min)} (${ms(was.median)}), ${ms(was.cpu)}` : "—";
      return `| ${t.label} | ${ms(t.min)} | ${ms(t.median)} | ${ms(t.cpu)} | ${
        i === 0 ? "—" : signed(t.min - anchor!.min)
      } | ${
        i === 0 || t.label.includes("task") ? "—" : t.min <= GOAL_MS ? "met" : "**not met**"
      } |${options.before ? ` ${then} |` : ""}`;
    }),
    "",
    `- 10-row slice: ${ms(sliceWork.wall)} ms of work beyond start (its wall minimum less ` +
    `\`permafrost --version\`'s; ${
      ms(sliceWork.cpu)
    } ms by CPU time; goal ≤ ${SLICE_WORK_GOAL_MS} ` +
    `ms: ${sliceWork.wall <= SLICE_WORK_GOAL_MS ? "met" : "**not met**"}); from source ` +
    `${ms(sourceWork.wall)} ms (${ms(sourceWork.cpu)} by CPU time).`,
    `- The installed command writes the bytes \`main.ts\` writes: ${
      sameAsSource ? "yes" : "**no**"
    }.`,
    `- Outputs (SHA-256 of stdout): ${
      hashes.map((h) => `${h.label} \`${h.sha.slice(0, 12)}\``).join(", ")
    }${
      options.before === undefined
        ? ""
        : `; the same as before's: ${
          beforeHashes.every((b) => hashes.find((h) => h.label === b.label)?.sha === b.sha)
            ? "yes"
            : "**no**"
        }`
    }.`,
    "- CPU min: the least user + system time of a run (children's rusage): what a command " +
    "costs when it need not wait for a core, so it stays readable on a loaded machine.",
    typeof binary === "string"
      ? "- The compiled binary (`deno task compile`) is measured above."
      : `- Compiled binary: not measured (\`deno task compile\`: ${binary.why}).`,
  ];
  return lines;
}

if (import.meta.main) {
  const { flags } = parseArgs(Deno.args, {
    string: ["root", "before", "rounds", "big", "small"],
  });
  const text = (name: string) =>
    typeof flags[name] === "string" ? flags[name] as string : undefined;
  const here = fileURLToPath(new URL(".", import.meta.url));
  const data = join(here, ".cache", "vega-datasets-3.2.1", "package", "data");
  const work = await Deno.makeTempDir({ dir: join(here, ".cache"), prefix: "start-" });
  try {
    // Archives given (--big, --small) or frozen here; give them when --before names a
    // checkout whose reader predates this one's format.
    const big = resolve(text("big") ?? join(work, "flights-3m.pf"));
    const small = resolve(text("small") ?? join(work, "seattle-weather.pf"));
    if (!text("big")) await freeze(join(data, "flights-3m.parquet"), big, { codec: "zstd" });
    if (!text("small")) {
      await freeze(join(data, "seattle-weather.csv"), small, { codec: "zstd" });
    }
    const rounds = text("rounds") === undefined ? undefined : Number(text("rounds"));
    const lines = await startFigures({
      root: text("root"),
      before: text("before"),
      big,
      small,
      work,
      rounds,
    });
    Deno.stdout.writeSync(new TextEncoder().encode(lines.join("\n") + "\n"));
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}
