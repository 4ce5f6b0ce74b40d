/**
 * Codec profiles on one dataset (`freeze --profile`), each against the others and
 * against DuckDB writing the same CSV as Parquet (zstd) in the same run: archive size,
 * freeze and thaw speed, and every thaw's hash equal to the others' (a profile changes
 * how the bytes are stored, never the rows). `deno task bench` calls
 * {@link profileFigures}, and {@link processFigures} for `max_speed` (5 rounds); alone:
 *
 * ```
 * deno run -A bench/profile_bench.ts [CSV] [--profiles max_speed,balanced] [--rounds 5]
 * ```
 *
 * `--rounds N` alternates DuckDB's write and each profile's freeze and thaw N times and
 * reports the medians (read them, not one run, on a shared machine); `--profiles`
 * leaves out the others (`max_compression` takes minutes on flights-3m).
 *
 * Those figures are in-process: the freeze and DuckDB's `COPY` run in this process,
 * each after the first with its modules loaded. `--processes` adds whole processes, as a
 * user runs each ({@link processFigures}): `permafrost freeze CSV OUT --profile P` (the
 * CLI with `deno task cli`'s permissions) against `COPY (SELECT * FROM read_csv(CSV)) TO
 * OUT (FORMAT parquet, COMPRESSION zstd)` through `@duckdb/node-api` in a process of its
 * own (its default threads, one per core), wall and CPU (user + system of the process
 * and its threads), and DuckDB's process starting alone (what a native `duckdb -c`
 * would not pay); `--baseline DIR` (an export of an earlier commit) adds that tree's
 * CLI to the same alternation, each archive's SHA-256 shown:
 *
 * ```
 * deno run -A bench/profile_bench.ts CSV --profiles max_speed --rounds 5 --processes [--baseline DIR]
 * ```
 *
 * (`--processes-only`: the whole processes alone.)
 *
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "../internal/config.ts";
import { freeze, thaw } from "../mod.ts";
import { openLockedDuckDB, sqlString } from "../io/_duckdb.ts";
import { defaultThreads } from "../internal/cores.ts";
import {
  cliRunArgs,
  duckCommand,
  hashFile,
  type ProcessCase,
  type ProcessRun,
  runProcess,
} from "./_process.ts";
import type { CodecProfile } from "../format/new_archive.ts";

const PROFILES: readonly CodecProfile[] = ["max_speed", "balanced", "auto", "max_compression"];

/** One profile's run. */
interface ProfileRun {
  profile: CodecProfile;
  bytes: number;
  freezeSeconds: number;
  thawSeconds: number;
  csvSha256: string;
  codecs: string;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const t0 = performance.now();
  const value = await fn();
  return { value, seconds: (performance.now() - t0) / 1000 };
}

/** DuckDB's own CSV → Parquet (zstd) write: time and size, the anchor of `max_speed`. */
async function duckdbParquet(
  csv: string,
  work: string,
): Promise<{ seconds: number; bytes: number }> {
  const out = join(work, "duckdb.parquet");
  // DuckDB's threads as a user's DuckDB has them, one per core (our locked instances
  // default to one thread, for streaming beside our own Workers): the anchor is what
  // DuckDB does on this machine, not DuckDB held to one core.
  const db = await openLockedDuckDB([csv, out], ":memory:", undefined, {
    threads: String(defaultThreads()),
  });
  try {
    const { seconds } = await timed(() =>
      db.connection.run(
        `COPY (SELECT * FROM read_csv(${sqlString(csv)})) TO ${
          sqlString(out)
        } (FORMAT parquet, COMPRESSION zstd)`,
      )
    );
    return { seconds, bytes: (await Deno.stat(out)).size };
  } finally {
    db.close();
    // The next round writes a new file, as a user's COPY to a fresh path does.
    await Deno.remove(out).catch(() => {});
  }
}

/** Which profiles, and how many alternating rounds. */
export interface ProfileOptions {
  /** Profiles to run (default: all four). */
  profiles?: readonly CodecProfile[];
  /** Rounds of DuckDB's write and every profile, alternated; medians reported (default 1). */
  rounds?: number;
}

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Freezes `csv` with every profile and thaws each back to CSV.
 *
 * @param csv The dataset as CSV.
 * @param name Its name, for the lines.
 * @param work A scratch directory.
 * @param options Profiles and rounds.
 * @returns Markdown lines for `bench/RESULTS.md`.
 */
export async function profileFigures(
  csv: string,
  name: string,
  work: string,
  options: ProfileOptions = {},
): Promise<string[]> {
  const profiles = options.profiles ?? PROFILES;
  const rounds = Math.max(1, options.rounds ?? 1);
  const csvBytes = (await Deno.stat(csv)).size;
  const rounded: ProfileRun[][] = [];
  const duckRuns: { seconds: number; bytes: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    if (rounds > 1) duckRuns.push(await duckdbParquet(csv, work));
    rounded.push(await profileRound(csv, name, work, profiles));
  }
  if (rounds === 1) duckRuns.push(await duckdbParquet(csv, work));
  const runs = profiles.map((_, i): ProfileRun => ({
    ...rounded[0]![i]!,
    freezeSeconds: median(rounded.map((r) => r[i]!.freezeSeconds)),
    thawSeconds: median(rounded.map((r) => r[i]!.thawSeconds)),
  }));
  const hashes = new Set(rounded.flat().map((r) => r.csvSha256));
  const duck = { seconds: median(duckRuns.map((d) => d.seconds)), bytes: duckRuns[0]!.bytes };
  const balanced = runs.find((r) => r.profile === "balanced");
  const mbps = (s: number) => (csvBytes / 1e6 / s).toFixed(1);
  const how = rounds === 1
    ? "one run each"
    : `median of ${rounds} rounds alternating DuckDB's write and each profile`;
  const lines = [
    `Profiles on ${name} (${(csvBytes / 1e6).toFixed(1)} MB of CSV), ${how}, the same rows ` +
    `back from every one (CSV hashes equal: ${hashes.size === 1}). ` +
    `DuckDB writing the same CSV as Parquet (zstd) in this run: ${duck.seconds.toFixed(2)} s, ` +
    `${(duck.bytes / 1e6).toFixed(2)} MB.`,
    "",
    "| profile | columns' codecs | archive | vs balanced | freeze MB/s | freeze vs DuckDB Parquet write | thaw to CSV MB/s |",
    "|---|---|---|---|---|---|---|",
    ...runs.map((r) =>
      `| ${r.profile} | ${r.codecs} | ${(r.bytes / 1e6).toFixed(2)} MB | ${
        balanced ? `${(r.bytes / balanced.bytes).toFixed(3)}×` : "—"
      } | ${mbps(r.freezeSeconds)} | ${(r.freezeSeconds / duck.seconds).toFixed(2)}× | ${
        mbps(r.thawSeconds)
      } |`
    ),
  ];
  return lines;
}

/** One freeze and thaw of `csv` with each profile. */
async function profileRound(
  csv: string,
  name: string,
  work: string,
  profiles: readonly CodecProfile[],
): Promise<ProfileRun[]> {
  const runs: ProfileRun[] = [];
  for (const profile of profiles) {
    const archive = join(work, `${name}.${profile}.pf`);
    const back = join(work, `${name}.${profile}.csv`);
    const f = await timed(() => freeze(csv, archive, { profile }));
    const t = await timed(() => thaw(archive, back));
    const { audit } = await import("../mod.ts");
    const report = await audit(archive);
    const counts = new Map<string, number>();
    for (const c of report.columns) {
      const key = `${c.codec}${c.level === null ? "" : `:${c.level}`}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    runs.push({
      profile,
      bytes: f.value.archive_bytes,
      freezeSeconds: f.seconds,
      thawSeconds: t.seconds,
      csvSha256: (await hashFile(back)).sha256,
      codecs: [...counts].map(([k, n]) => `${n}× ${k}`).join(", "),
    });
    await Deno.remove(back);
    await Deno.remove(archive);
  }
  return runs;
}

/** DuckDB's side as a process: one COPY, like `duckdb -c "COPY ..."`, its default threads. */
const DUCK_SCRIPT = `
import { DuckDBInstance } from "@duckdb/node-api";
const [source, out] = Deno.args;
const db = await DuckDBInstance.create(":memory:");
const c = await db.connect();
const quote = (s) => "'" + s.replaceAll("'", "''") + "'";
await c.run("COPY (SELECT * FROM read_csv(" + quote(source) + ")) TO " + quote(out) +
  " (FORMAT parquet, COMPRESSION zstd)");
`;

/**
 * DuckDB's process doing nothing but start: Deno, `@duckdb/node-api` loaded, an instance
 * opened, `SELECT 1`, a one-byte output. The COPY's process pays this (~0.15-0.2 s here)
 * where a native `duckdb -c` would start in a few milliseconds: subtract it to compare
 * with that.
 */
const DUCK_START_SCRIPT = `
import { DuckDBInstance } from "@duckdb/node-api";
const db = await DuckDBInstance.create(":memory:");
const c = await db.connect();
await c.run("SELECT 1");
await Deno.writeTextFile(Deno.args[0], "1");
`;

/**
 * Whole processes, as a user runs each: the CLI's freeze with each profile (and an
 * earlier tree's, `baseline`) against DuckDB's CSV → Parquet (zstd) write in a process
 * of its own, alternated over `rounds` after one unmeasured round (page and module
 * caches warm).
 *
 * @param csv The dataset as CSV.
 * @param work A scratch directory.
 * @param options Profiles, rounds and the baseline tree.
 * @returns Markdown lines.
 */
export async function processFigures(
  csv: string,
  work: string,
  options: ProfileOptions & { baseline?: string } = {},
): Promise<string[]> {
  const profiles = options.profiles ?? ["max_speed"];
  const rounds = Math.max(1, options.rounds ?? 1);
  const duck = join(work, "duck_copy.ts");
  await Deno.writeTextFile(duck, DUCK_SCRIPT);
  const duckStart = join(work, "duck_start.ts");
  await Deno.writeTextFile(duckStart, DUCK_START_SCRIPT);
  const root = new URL("../", import.meta.url).pathname;
  const runArgs = await cliRunArgs(root);
  const baselineRunArgs = options.baseline ? await cliRunArgs(options.baseline) : [];
  const freezeCase = (profile: CodecProfile, tree?: string): ProcessCase => {
    const output = join(work, `${tree ? "before" : "ours"}.${profile}.pf`);
    return {
      label: `${tree ? "before" : "ours"}: freeze --profile ${profile}`,
      output,
      command: [
        Deno.execPath(),
        ...(tree ? baselineRunArgs : runArgs),
        join(tree ?? root, "main.ts"),
        "freeze",
        csv,
        output,
        "--profile",
        profile,
        "--force",
      ],
    };
  };
  const duckCase: ProcessCase = {
    label: "DuckDB: COPY read_csv TO parquet (zstd)",
    output: join(work, "duck.parquet"),
    command: duckCommand(duck, [csv, join(work, "duck.parquet")]),
  };
  const cases = [
    duckCase,
    {
      label: "DuckDB: its process's start alone (node-api, open, SELECT 1)",
      output: join(work, "duck_start.txt"),
      command: duckCommand(duckStart, [join(work, "duck_start.txt")]),
    },
    ...profiles.flatMap((p) => [
      ...(options.baseline ? [freezeCase(p, options.baseline)] : []),
      freezeCase(p),
    ]),
  ];
  for (const c of cases) await runProcess(c); // unmeasured: caches warm
  const runs = new Map<string, ProcessRun[]>(cases.map((c) => [c.label, []]));
  for (let r = 0; r < rounds; r++) {
    for (const c of cases) runs.get(c.label)!.push(await runProcess(c));
  }
  for (const c of cases) await Deno.remove(c.output).catch(() => {});
  const wall = (label: string) => median(runs.get(label)!.map((x) => x.seconds));
  const duckWall = wall(duckCase.label);
  const duckCpu = median(runs.get(duckCase.label)!.map((x) => x.cpuSeconds));
  const lines = [
    `Whole processes, ${rounds} rounds alternating the commands after one unmeasured round, ` +
    `on ${navigator.hardwareConcurrency} cores: \`permafrost freeze ${
      csv.split("/").pop()
    } OUT --profile P\` (a Worker thread per core) ` +
    `and DuckDB's \`COPY (SELECT * FROM read_csv(...)) TO OUT (FORMAT parquet, COMPRESSION zstd)\` ` +
    `through \`@duckdb/node-api\` in a process of its own (one thread per core), whose start ` +
    `(Deno, the binding, an instance: the "start alone" line) a native \`duckdb -c\` would not pay. ` +
    `CPU is user + system time of the process and its threads.`,
    "",
    "| command | output | wall median (min) | CPU median | wall vs DuckDB | CPU vs DuckDB | output SHA-256 (first 12) | same every round |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const c of cases) {
    const xs = runs.get(c.label)!;
    const cpu = median(xs.map((x) => x.cpuSeconds));
    const hashes = new Set(xs.map((x) => x.sha256));
    lines.push(
      `| ${c.label} | ${(xs[0]!.bytes / 1e6).toFixed(2)} MB | ${wall(c.label).toFixed(2)} s (${
        Math.min(...xs.map((x) => x.seconds)).toFixed(2)
      }) | ${cpu.toFixed(2)} s | ${(wall(c.label) / duckWall).toFixed(2)}× | ${
        (cpu / duckCpu).toFixed(2)
      }× | ${xs[0]!.sha256.slice(0, 12)} | ${hashes.size === 1} |`,
    );
  }
  return lines;
}

if (import.meta.main) {
  const args = parseArgs(Deno.args, {
    string: ["profiles", "rounds", "baseline"],
    boolean: ["processes", "processes-only"],
  });
  const csv = args._[0] === undefined
    ? join(new URL(".", import.meta.url).pathname, ".cache", "flights-3m.csv")
    : String(args._[0]);
  const profiles = typeof args.flags.profiles !== "string" ? undefined : args.flags.profiles
    .split(",").map((p) => {
      if (!(PROFILES as readonly string[]).includes(p)) {
        throw new Error(`--profiles: '${p}' is not one of ${PROFILES.join(", ")}`);
      }
      return p as CodecProfile;
    });
  const rounds = typeof args.flags.rounds === "string" ? Number(args.flags.rounds) : 1;
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error("--rounds: give a whole number ≥ 1");
  const work = await Deno.makeTempDir({ prefix: "permafrost-profiles-" });
  try {
    const only = args.flags["processes-only"] === true;
    const lines = only
      ? []
      : await profileFigures(csv, csv.split("/").pop()!.replace(/\.csv$/, ""), work, {
        ...(profiles ? { profiles } : {}),
        rounds,
      });
    if (args.flags.processes === true || only) {
      const baseline = typeof args.flags.baseline === "string" ? args.flags.baseline : undefined;
      lines.push(
        "",
        ...await processFigures(csv, work, {
          ...(profiles ? { profiles } : {}),
          rounds,
          ...(baseline ? { baseline } : {}),
        }),
      );
    }
    await Deno.stdout.write(new TextEncoder().encode(lines.join("\n") + "\n"));
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}
