/**
 * `deno task bench`: archive size and freeze/thaw speed on real data (the
 * `vega-datasets` npm package) against anchors — the Parquet file it ships,
 * `zstd -19` and `xz -9e` of the same rows as CSV — plus a 10-row slice read
 * against a full thaw, 1 vs 2 worker threads, and the cluster (`cluster_bench.ts`:
 * 1 vs 2 workers), and the scheduler (`cluster_bench.ts` with real processes,
 * `scheduler_sim.ts` simulated), and process start (`start_bench.ts`: the quick
 * commands' whole-process time next to `deno eval 1`), and thaw to CSV, Arrow and Parquet
 * against DuckDB copying the shipped Parquet (`thaw_bench.ts`), and the codec profiles
 * (`profile_bench.ts`: each in this process, once; `max_speed` also as whole processes
 * against DuckDB writing the same CSV as Parquet, 5 alternating rounds). Writes
 * `bench/RESULTS.md`.
 *
 * Times are wall-clock on a shared machine: read them as ratios within one run.
 * Anchors (`.csv`, `.csv.zst`, `.csv.xz`) are cached in `bench/.cache/`.
 *
 * Flags: `--quick` (skips zpaq and the largest anchors' xz), `--datasets a,b`,
 * `--sizes-only` (prints the archive-size table and stops; RESULTS.md is not written).
 *
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { audit, freeze, thaw } from "../mod.ts";
import { parseArgs } from "../internal/config.ts";
import { formatBytes } from "../internal/progress.ts";
import { openSource } from "../io/source.ts";
import { writeOutput } from "../io/output.ts";
import {
  type ClusterPair,
  clusterThroughput,
  schedulerLine,
  schedulerThroughput,
} from "./cluster_bench.ts";
import { schedulerSimFigures } from "./scheduler_sim.ts";
import { storageFigures } from "./storage_bench.ts";
import { sqlFigures } from "./sql_bench.ts";
import { thawFigures } from "./thaw_bench.ts";
import { processFigures, profileFigures } from "./profile_bench.ts";
import { startFigures } from "./start_bench.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const CACHE = join(HERE, ".cache");
const VEGA_VERSION = "3.2.1";

interface Dataset {
  name: string;
  file: string;
  /** Codecs to run (zpaq is slow: only where it finishes in reasonable time). */
  codecs: string[];
}

const DATASETS: Dataset[] = [
  { name: "flights-3m", file: "data/flights-3m.parquet", codecs: ["zstd", "lzma2", "zpaq"] },
  { name: "flights-200k", file: "data/flights-200k.arrow", codecs: ["zstd", "lzma2", "zpaq"] },
  { name: "seattle-weather", file: "data/seattle-weather.csv", codecs: ["zstd", "lzma2", "zpaq"] },
  { name: "stocks", file: "data/stocks.csv", codecs: ["zstd", "lzma2", "zpaq"] },
  { name: "airports", file: "data/airports.csv", codecs: ["zstd", "lzma2", "zpaq"] },
];

const enc = new TextEncoder();
function say(text: string): void {
  Deno.stderr.writeSync(enc.encode(text + "\n"));
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function run(
  cmd: string,
  args: string[],
  cwd?: string,
): Promise<{ ok: boolean; stderr: string }> {
  try {
    const out = await new Deno.Command(cmd, { args, cwd, stdout: "null", stderr: "piped" })
      .output();
    return { ok: out.success, stderr: new TextDecoder().decode(out.stderr) };
  } catch (e) {
    return { ok: false, stderr: String(e) };
  }
}

async function vegaRoot(): Promise<string> {
  const root = join(CACHE, `vega-datasets-${VEGA_VERSION}`, "package");
  if (await exists(join(root, "package.json"))) return root;
  await Deno.mkdir(join(CACHE, `vega-datasets-${VEGA_VERSION}`), { recursive: true });
  say(`fetching vega-datasets@${VEGA_VERSION} from the npm registry...`);
  const dir = join(CACHE, `vega-datasets-${VEGA_VERSION}`);
  const packed = await run("npm", ["pack", `vega-datasets@${VEGA_VERSION}`, "--silent"], dir);
  if (!packed.ok) throw new Error(`npm pack failed: ${packed.stderr}`);
  const untar = await run("tar", ["xzf", `vega-datasets-${VEGA_VERSION}.tgz`], dir);
  if (!untar.ok) throw new Error(`tar failed: ${untar.stderr}`);
  return root;
}

async function size(path: string): Promise<number | null> {
  try {
    return (await Deno.stat(path)).size;
  } catch {
    return null;
  }
}

/** The dataset's rows as CSV (the anchors' input and the freeze-speed yardstick). */
async function csvOf(source: string, name: string): Promise<string> {
  const path = join(CACHE, `${name}.csv`);
  if (await exists(path)) return path;
  if (source.endsWith(".csv")) {
    await Deno.copyFile(source, path);
    return path;
  }
  const opened = await openSource(source);
  try {
    await writeOutput(path, opened.schema, opened.batches());
  } finally {
    await opened.close();
  }
  return path;
}

async function anchor(csv: string, tool: "zstd" | "xz" | "zpaq"): Promise<number | null> {
  const out = `${csv}.${tool === "zstd" ? "zst" : tool}`;
  if (!(await exists(out))) {
    say(`  anchor: ${tool} of ${csv} (cached after the first run)...`);
    // zpaq -m5 is whole-file context mixing, ~0.2 MB/s: minutes for flights-3m, once.
    const args = tool === "zstd"
      ? ["-19", "-q", "-f", "-T1", "-o", out, csv]
      : tool === "xz"
      ? ["-9e", "-k", "-f", "-T1", csv]
      : ["a", out, csv, "-m5", "-threads", "1", "-noattributes"];
    const r = await run(tool, args);
    if (!r.ok) {
      say(`  ${tool} unavailable or failed: ${r.stderr.trim()}`);
      return null;
    }
  }
  return await size(out);
}

function mb(n: number | null): string {
  return n === null ? "n/a" : formatBytes(n);
}

async function timeIt<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const t = performance.now();
  const value = await fn();
  return { value, seconds: (performance.now() - t) / 1000 };
}

const SIZE_HEADER =
  "| dataset | CSV | shipped | zstd -19 CSV | xz -9e CSV | zpaq -m5 CSV | ours zstd | ours lzma2 | ours zpaq | ours max_compression | vs shipped | vs zstd -19 | vs xz -9e | vs zpaq -m5 |";
const SIZE_RULE = "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|";

/**
 * Fails at once when a permission a later step needs is missing, rather than at that
 * step, minutes into the run (RESULTS.md is written only at the end).
 */
function checkPermissions(): void {
  if (Deno.permissions.querySync({ name: "sys", kind: "cpus" }).state !== "granted") {
    throw new Error(
      "The benchmarks need --allow-sys=cpus (the SQL figures run duckdb-wasm, which counts the cores): run them as `deno task bench`",
    );
  }
}

async function main(): Promise<void> {
  checkPermissions();
  const args = parseArgs(Deno.args, { boolean: ["quick", "sizes-only"], string: ["datasets"] });
  const quick = args.flags.quick === true;
  const only = typeof args.flags.datasets === "string" ? args.flags.datasets.split(",") : null;
  await Deno.mkdir(CACHE, { recursive: true });
  const root = await vegaRoot();
  const work = await Deno.makeTempDir({ dir: CACHE, prefix: "run-" });
  const sizeRows: string[] = [];
  const speedRows: string[] = [];
  const notes: string[] = [];
  const storage: string[] = [];
  const sql: string[] = [];
  const profiles: string[] = [];
  const scheduler: string[] = [];
  const start: string[] = [];
  const thawVsDuckdb: string[] = [];
  try {
    for (const ds of DATASETS) {
      if (only && !only.includes(ds.name)) continue;
      const source = join(root, ds.file);
      say(`${ds.name}:`);
      const csv = await csvOf(source, ds.name);
      const csvBytes = (await size(csv))!;
      const shipped = await size(source);
      const zst = await anchor(csv, "zstd");
      const xz = quick && csvBytes > 50e6 ? null : await anchor(csv, "xz");
      const zp = quick && csvBytes > 50e6 ? null : await anchor(csv, "zpaq");
      const ours: Record<string, number | null> = {};
      for (const codec of ds.codecs) {
        if (quick && codec === "zpaq") continue;
        const archive = join(work, `${ds.name}.${codec}.pf`);
        say(`  freeze --codec ${codec}...`);
        const { value: s, seconds } = await timeIt(() => freeze(source, archive, { codec }));
        ours[codec] = s.archive_bytes;
        const { seconds: thawSeconds } = await timeIt(() =>
          thaw(archive, join(work, `${ds.name}.${codec}.csv`))
        );
        await Deno.remove(join(work, `${ds.name}.${codec}.csv`));
        // Sub-megabyte inputs measure process start-up, not throughput.
        if (csvBytes >= 1e6) {
          speedRows.push(
            `| ${ds.name} | ${codec} | ${s.rows.toLocaleString("en-US")} | ${
              (csvBytes / 1e6 / seconds).toFixed(1)
            } | ${(csvBytes / 1e6 / thawSeconds).toFixed(1)} |`,
          );
        }
      }
      {
        // The smallest profile: zstd, lzma2 or zpaqwasm per column, 500,000-row chunks.
        const archive = join(work, `${ds.name}.max.pf`);
        say("  freeze --profile max_compression...");
        const { value: s, seconds } = await timeIt(() =>
          freeze(source, archive, { profile: "max_compression" })
        );
        ours.max_compression = s.archive_bytes;
        if (csvBytes >= 1e6) {
          const { seconds: thawSeconds } = await timeIt(() =>
            thaw(archive, join(work, `${ds.name}.max.csv`))
          );
          await Deno.remove(join(work, `${ds.name}.max.csv`));
          speedRows.push(
            `| ${ds.name} | max_compression profile | ${s.rows.toLocaleString("en-US")} | ${
              (csvBytes / 1e6 / seconds).toFixed(1)
            } | ${(csvBytes / 1e6 / thawSeconds).toFixed(1)} |`,
          );
        }
      }
      const best = Math.min(...Object.values(ours).filter((v): v is number => v !== null));
      const vs = (anchorBytes: number | null) =>
        anchorBytes === null ? "n/a" : `${(anchorBytes / best).toFixed(2)}×`;
      sizeRows.push(
        `| ${ds.name} | ${mb(csvBytes)} | ${mb(shipped)} (${ds.file.split(".").pop()}) | ${
          mb(zst)
        } | ${mb(xz)} | ${mb(zp)} | ${mb(ours.zstd ?? null)} | ${mb(ours.lzma2 ?? null)} | ${
          mb(ours.zpaq ?? null)
        } | ${mb(ours.max_compression ?? null)} | ${vs(shipped)} | ${vs(zst)} | ${vs(xz)} | ${
          vs(zp)
        } |`,
      );
    }
    if (args.flags["sizes-only"] === true) {
      // The size table alone, printed: it refreshes RESULTS.md's table without a full run.
      Deno.stdout.writeSync(enc.encode([SIZE_HEADER, SIZE_RULE, ...sizeRows].join("\n") + "\n"));
      return;
    }

    // Slice read and threads, on the biggest dataset run.
    const main = DATASETS.find((d) => !only || only.includes(d.name))!;
    const source = join(root, main.file);
    const archive = join(work, `${main.name}.slice.pf`);
    await freeze(source, archive, { codec: "zstd" });
    const rows = (await audit(archive)).rows;
    const mid = Math.floor(rows / 2);
    const full = await timeIt(() => thaw(archive, join(work, "full.arrow")));
    const slice = await timeIt(() =>
      thaw(archive, join(work, "slice.arrow"), { rows: { start: mid, end: mid + 10 } })
    );
    notes.push(
      `- 10-row slice (rows ${mid}..${
        mid + 10
      }) of ${main.name} (zstd): ${slice.value.chunks_read} chunk(s) read, ` +
        `${(slice.seconds * 1000).toFixed(1)} ms vs ${
          (full.seconds * 1000).toFixed(0)
        } ms for a full thaw to Arrow ` +
        `(**${(full.seconds / slice.seconds).toFixed(0)}× faster**).`,
    );
    if (source.endsWith(".parquet")) {
      say("  thaw to CSV, Arrow and Parquet vs DuckDB from the shipped Parquet...");
      thawVsDuckdb.push(
        ...await thawFigures(archive, source, {
          work,
          expectedCsv: await csvOf(source, main.name),
        }),
      );
    }
    say("  process start: quick commands vs deno eval 1...");
    const small = join(work, "seattle-weather.start.pf");
    await freeze(join(root, "data", "seattle-weather.csv"), small, { codec: "zstd" });
    start.push(
      ...await startFigures({
        big: archive,
        bigName: main.name,
        slice: `${mid}:${mid + 10}`,
        small,
        work,
      }),
    );
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    // Alternate 1 and 2 worker threads three times and take medians: the machine is shared.
    const one: number[] = [];
    const two: number[] = [];
    const hashes = new Set<string>();
    for (let round = 0; round < 3; round++) {
      for (const [threads, into] of [[1, one], [2, two]] as const) {
        const run = await timeIt(() =>
          freeze(source, join(work, `t${threads}.pf`), { codec: "zstd", threads })
        );
        into.push(run.seconds);
        hashes.add(run.value.payload_sha256);
      }
    }
    notes.push(
      `- Freeze of ${main.name} (zstd), median of 3 alternating runs: 1 worker thread (it reads and encodes every chunk) ${
        median(one).toFixed(1)
      } s ` +
        `(${one.map((x) => x.toFixed(1)).join(", ")}), 2 worker threads ${
          median(two).toFixed(1)
        } s ` +
        `(${two.map((x) => x.toFixed(1)).join(", ")}): **${
          (median(one) / median(two)).toFixed(2)
        }×** on ` +
        `${navigator.hardwareConcurrency} cores. Payload hashes equal: ${hashes.size === 1}.`,
    );
    // The cluster: real master and worker processes, 1 vs 2 workers alternated, medians.
    say(`  cluster: ${main.name} with 1 and 2 workers...`);
    const oneWorker: ClusterPair[] = [];
    const twoWorkers: ClusterPair[] = [];
    for (let round = 0; round < 3; round++) {
      oneWorker.push(await clusterThroughput(source, 1));
      twoWorkers.push(await clusterThroughput(source, 2));
    }
    const localHash = [...hashes][0];
    const clusterHashes = new Set(
      [...oneWorker, ...twoWorkers].flatMap((
        p,
      ) => [p.fresh.payload_sha256, p.running.payload_sha256]),
    );
    const line = (which: keyof ClusterPair) => {
      const one = oneWorker.map((p) => p[which].seconds);
      const two = twoWorkers.map((p) => p[which].seconds);
      const list = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(", ");
      return `1 worker ${median(one).toFixed(1)} s (${list(one)}), 2 workers ${
        median(two).toFixed(1)
      } s (${list(two)}): **${(median(one) / median(two)).toFixed(2)}×**`;
    };
    notes.push(
      `- Cluster freeze of ${main.name} (zstd, 50,000-row tasks, real processes on this machine), ` +
        `submission to DONE, median of 3 alternating rounds. A running cluster (each cluster's ` +
        `second job): ${line("running")}. A fresh cluster (its first job, which also pays for ` +
        `compiling the code and opening the source in every process): ${line("fresh")}. ` +
        `Payload equal to the local freeze's: ${
          clusterHashes.size === 1 && clusterHashes.has(localHash!)
        }.`,
    );
    say("  cluster: scheduler overhead...");
    const sched = await schedulerThroughput(3);
    scheduler.push(
      `Real processes (\`cluster_bench.ts\`): a master and 2 workers on this machine, jobs of ` +
        `1,000 tasks of 100 rows (3 columns, zstd) one after another on one cluster, submission ` +
        `to DONE, phases from the master's timestamps (goal: ≥ 1,000 tasks/s end to end):`,
      "",
      ...sched.map((r, i) => `- job ${i + 1}: ${schedulerLine(r)}`),
      "",
    );
    say("  scheduler: simulation...");
    scheduler.push(...await schedulerSimFigures());
    say("  object storage: s3rver vs local disk...");
    storage.push(...await storageFigures(source, main.name));
    if (source.endsWith(".parquet")) {
      say("  SQL over the archive vs DuckDB on the shipped Parquet...");
      sql.push(...await sqlFigures(source));
    }
    say("  codec profiles...");
    const csv = await csvOf(source, main.name);
    profiles.push(...await profileFigures(csv, main.name, work));
    // The freeze goal's figure as a user meets it: whole processes, alternated.
    say("  codec profiles: max_speed against DuckDB, whole processes...");
    profiles.push("", ...await processFigures(csv, work, { profiles: ["max_speed"], rounds: 5 }));
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }

  const md = [
    "# Benchmark results",
    "",
    `Written by \`deno task bench\` on ${
      new Date().toISOString().slice(0, 10)
    } (vega-datasets ${VEGA_VERSION}, ` +
    `${navigator.hardwareConcurrency} cores, Deno ${Deno.version.deno}). Sizes in decimal units (1 MB = 10^6 bytes). ` +
    "Anchors: the file the package ships, and `zstd -19` / `xz -9e` / whole-file `zpaq -m5` of the same rows as CSV. " +
    "The last four columns are the anchor's size divided by our smallest archive (higher is better for us).",
    "",
    "## Archive size",
    "",
    SIZE_HEADER,
    SIZE_RULE,
    ...sizeRows,
    "",
    "## Speed (MB of CSV per second; inputs of 1 MB and more; one run on a shared machine)",
    "",
    "| dataset | codec | rows | freeze MB/s | thaw to CSV MB/s |",
    "|---|---|---|---|---|",
    ...speedRows,
    "",
    "## Slices, threads and the cluster",
    "",
    ...notes,
    "",
    "## Thaw vs DuckDB",
    "",
    ...thawVsDuckdb,
    "",
    "## Object storage",
    "",
    ...storage,
    "",
    "## SQL over archives",
    "",
    ...sql,
    "",
    "## Codec profiles",
    "",
    ...profiles,
    "",
    "## Scheduler",
    "",
    ...scheduler,
    "",
    "## Process start",
    "",
    ...start,
    "",
  ].join("\n");
  await Deno.writeTextFile(join(HERE, "RESULTS.md"), md);
  say(md);
}

if (import.meta.main) await main();
