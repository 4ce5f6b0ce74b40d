/**
 * Thaw against DuckDB, as a user runs each: whole processes, one after the other,
 * alternated over rounds. Ours: `permafrost thaw ARCHIVE OUT` (the CLI as `deno task
 * cli` runs it) to CSV, Arrow IPC and Parquet. DuckDB (the project's own
 * `@duckdb/node-api`): `COPY (SELECT * FROM 'shipped.parquet') TO OUT` as CSV and as
 * Parquet (zstd), in a process of its own. Wall time, CPU time (user + system of the
 * process and its threads) and peak resident memory (GNU time's `%M`, where
 * `/usr/bin/time` exists), minimum and median over the rounds; the output of every
 * run is hashed, and ours must not change from round to round (nor from the CSV the
 * size table was measured on, when given). `deno task bench` calls
 * {@link thawFigures}; alone:
 *
 * ```
 * deno run -A bench/thaw_bench.ts ARCHIVE SHIPPED.parquet [--rounds 5] [--csv EXPECTED.csv] [--baseline DIR] [--outputs csv,arrow]
 * ```
 *
 * `--baseline DIR` (a checkout of an earlier commit, e.g. `git archive REV | tar -x -C DIR`)
 * adds its CLI's three thaws to the same alternation, as `before → …` lines: a before/after
 * comparison measured in the same minutes, with both outputs hashed. `--outputs csv,arrow`
 * measures only those of our outputs (DuckDB → CSV, the anchor, always runs).
 *
 * @module
 */
import { join } from "node:path";
import {
  cliRunArgs,
  duckCommand,
  hasGnuTime,
  hashFile,
  type ProcessCase as Case,
  type ProcessRun as Run,
  runProcess,
} from "./_process.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** DuckDB's side: one COPY in a fresh process, like `duckdb -c "COPY ..."`. */
const DUCK_SCRIPT = `
import { DuckDBInstance } from "@duckdb/node-api";
const [source, out, format] = Deno.args;
const db = await DuckDBInstance.create(":memory:");
const c = await db.connect();
const quote = (s) => "'" + s.replaceAll("'", "''") + "'";
const options = format === "csv" ? "(FORMAT csv)" : "(FORMAT parquet, COMPRESSION zstd)";
await c.run("COPY (SELECT * FROM " + quote(source) + ") TO " + quote(out) + " " + options);
`;

/** One measured process. */
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const min = (xs: number[]) => Math.min(...xs);

/**
 * Thaws an archive to CSV, Arrow IPC and Parquet with the CLI, and DuckDB copies the
 * shipped Parquet to CSV and Parquet, alternating, `rounds` times.
 *
 * @param archive The archive of the shipped file (frozen with the default settings).
 * @param shipped The shipped Parquet file.
 * @param options Rounds; the CSV our thaw must reproduce byte for byte.
 * @returns Markdown lines for RESULTS.md.
 */
export async function thawFigures(
  archive: string,
  shipped: string,
  options: {
    rounds?: number;
    expectedCsv?: string;
    work: string;
    baseline?: string;
    outputs?: readonly string[];
  },
): Promise<string[]> {
  const rounds = options.rounds ?? 5;
  const work = options.work;
  const duck = join(work, "duck_copy.ts");
  await Deno.writeTextFile(duck, DUCK_SCRIPT);
  const runArgs = await cliRunArgs();
  const baselineRunArgs = options.baseline ? await cliRunArgs(options.baseline) : [];
  const ours = (ext: string, tree?: string): Case => ({
    label: `${tree ? "before" : "ours"} → ${ext}`,
    output: join(work, `${tree ? "before" : "thaw"}.${ext}`),
    command: [
      Deno.execPath(),
      ...(tree ? baselineRunArgs : runArgs),
      tree ? join(tree, "main.ts") : MAIN,
      "thaw",
      archive,
      join(work, `${tree ? "before" : "thaw"}.${ext}`),
      "--force",
    ],
  });
  const theirs = (ext: "csv" | "parquet"): Case => ({
    label: `DuckDB → ${ext}`,
    output: join(work, `duck.${ext}`),
    command: duckCommand(duck, [shipped, join(work, `duck.${ext}`), ext]),
  });
  const base = options.baseline;
  const outputs = new Set(options.outputs ?? ["csv", "arrow", "parquet"]);
  const cases: Case[] = [
    ...(base ? [ours("csv", base)] : []),
    ours("csv"),
    theirs("csv"),
    ...(base ? [ours("arrow", base)] : []),
    ours("arrow"),
    ...(base ? [ours("parquet", base)] : []),
    ours("parquet"),
    theirs("parquet"),
  ].filter((c) => c.label.startsWith("DuckDB → csv") || outputs.has(c.label.split("→ ")[1]!));
  const gnuTime = await hasGnuTime();
  const runs = new Map<string, Run[]>(cases.map((c) => [c.label, []]));
  // Warm the page cache and Deno's module cache for every command once, unmeasured.
  for (const c of cases) await runProcess(c);
  for (let r = 0; r < rounds; r++) {
    for (const c of cases) runs.get(c.label)!.push(await runProcess(c, gnuTime));
  }
  for (const c of cases) await Deno.remove(c.output).catch(() => {});
  const expected = options.expectedCsv ? await hashFile(options.expectedCsv) : null;
  const wall = (label: string) => median(runs.get(label)!.map((x) => x.seconds));
  const duckCsv = wall("DuckDB → csv");
  const duckParquet = outputs.has("parquet") ? wall("DuckDB → parquet") : NaN;
  const lines = [
    `Whole processes, ${rounds} rounds alternating the commands after one unmeasured round (page and module caches warm), ` +
    `on ${navigator.hardwareConcurrency} cores. Ours: \`permafrost thaw ${
      archive.split("/").pop()
    } OUT\` ` +
    `(default settings: a Worker thread per core). DuckDB: \`COPY (SELECT * FROM '${
      shipped.split("/").pop()
    }') TO OUT\` ` +
    `through \`@duckdb/node-api\` in a process of its own (its own threads, one per core). ` +
    `CPU is user + system time of the process and its threads; peak memory is the maximum resident set.`,
    "",
    "| command | output | wall median (min) | CPU median | peak memory | vs DuckDB, same output | output SHA-256 (first 12) | same every round |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const c of cases) {
    const xs = runs.get(c.label)!;
    const hashes = new Set(xs.map((x) => x.sha256));
    const ext = c.label.split("→ ")[1]!;
    const anchor = !c.label.startsWith("DuckDB")
      ? ext === "csv" ? duckCsv : ext === "parquet" ? duckParquet : duckCsv
      : null;
    const ratio = anchor === null
      ? "—"
      : `${(wall(c.label) / anchor).toFixed(2)}×${ext === "arrow" ? " (of DuckDB → CSV)" : ""}`;
    const peak = xs[0]!.peakKb === null
      ? "n/a"
      : `${(median(xs.map((x) => x.peakKb!)) / 1024).toFixed(0)} MB`;
    lines.push(
      `| ${c.label} | ${(xs[0]!.bytes / 1e6).toFixed(1)} MB | ${
        median(xs.map((x) => x.seconds)).toFixed(2)
      } s (${min(xs.map((x) => x.seconds)).toFixed(2)} s) | ${
        median(xs.map((x) => x.cpuSeconds)).toFixed(2)
      } s | ${peak} | ${ratio} | ${[...hashes][0]!.slice(0, 12)} | ${hashes.size === 1} |`,
    );
  }
  if (base) {
    lines.push(
      "",
      `- Against the baseline \`${base}\`, in the same rounds (median wall, CPU, peak memory; output):`,
    );
    for (const ext of ["csv", "arrow", "parquet"].filter((x) => outputs.has(x))) {
      const was = runs.get(`before → ${ext}`)!;
      const now = runs.get(`ours → ${ext}`)!;
      const cpu = (xs: Run[]) => median(xs.map((x) => x.cpuSeconds)).toFixed(2);
      const peak = (xs: Run[]) =>
        xs[0]!.peakKb === null
          ? "n/a"
          : `${(median(xs.map((x) => x.peakKb!)) / 1024).toFixed(0)} MB`;
      const same = was.every((x) => now.every((y) => y.sha256 === x.sha256));
      lines.push(
        `  - ${ext}: ${median(was.map((x) => x.seconds)).toFixed(2)} s → ${
          median(now.map((x) => x.seconds)).toFixed(2)
        } s wall, ${cpu(was)} s → ${cpu(now)} s CPU, ${peak(was)} → ${
          peak(now)
        }; byte-identical: **${same}**`,
      );
    }
  }
  if (expected) {
    const csv = runs.get("ours → csv")!;
    lines.push(
      "",
      `- Our CSV is byte-identical to the CSV the size table measured (${
        expected.bytes.toLocaleString("en-US")
      } bytes, ` +
        `SHA-256 ${expected.sha256.slice(0, 12)}…): **${
          csv.every((x) => x.sha256 === expected.sha256)
        }**.`,
    );
  }
  return lines;
}

if (import.meta.main) {
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < Deno.args.length; i++) {
    const a = Deno.args[i]!;
    if (a.startsWith("--")) flags.set(a, Deno.args[++i] ?? "");
    else positional.push(a);
  }
  const [archive, shipped] = positional;
  const flag = (name: string) => flags.get(name);
  if (!archive || !shipped) {
    throw new Error(
      "usage: bench/thaw_bench.ts ARCHIVE SHIPPED.parquet [--rounds N] [--csv EXPECTED.csv] [--baseline DIR] [--outputs csv,arrow,parquet]",
    );
  }
  const work = await Deno.makeTempDir({ prefix: "permafrost-thaw-bench-" });
  try {
    const lines = await thawFigures(archive, shipped, {
      rounds: Number(flag("--rounds") ?? 5),
      expectedCsv: flag("--csv"),
      baseline: flag("--baseline"),
      outputs: flag("--outputs")?.split(","),
      work,
    });
    Deno.stdout.writeSync(new TextEncoder().encode(lines.join("\n") + "\n"));
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}
