/**
 * Cluster benchmarks, with real processes (`cli/spawn.ts`): a master and N
 * workers on this machine, a job submitted through `ClusterClient`, timed from
 * submission to DONE (process start-up excluded), then everything torn down.
 *
 * - {@link clusterThroughput}: one source with 1 or 2 workers, a fresh cluster's first
 *   job and the same cluster's second (`bench/run.ts`'s "1 vs 2 workers" line; the
 *   target is 2 workers ≥ 1.7× faster on 2 cores).
 * - {@link schedulerThroughput}: 1,000 tasks of 100 rows on 2 workers, in tasks per
 *   second end to end (target ≥ 1,000), split by the master's own timestamps into
 *   preparation (submission to the first hand-out), tasks (first hand-out to the last
 *   chunk staged) and assembly (to DONE: the archive written), with the CPU per task
 *   of the master and of the workers, and how much of it ran off their main threads
 *   (V8's optimising compiler and GC, mostly: a fresh process's first job pays there).
 *
 * Run directly: `deno run <perms> bench/cluster_bench.ts [source]` (default
 * flights-3m.parquet from the vega-datasets cache); `--scheduler [rounds]` runs only
 * the scheduler figure, `rounds` times (default 3); `--scheduler [rounds] --cpu-prof DIR`
 * also writes each process's V8 CPU profile (`deno run --cpu-prof`) under
 * `DIR/master` and `DIR/bench-N` when the cluster stops.
 *
 * @module
 */
import { join } from "node:path";
import { ClusterClient } from "../client/cluster_client.ts";
import type { JobCodec, JobRecord } from "../client/types.ts";
import {
  MAIN_ENTRY,
  MASTER_PERMISSIONS,
  type ServerProcess,
  spawnLocalMaster,
  spawnLocalWorker,
  WORKER_PERMISSIONS,
} from "../cli/spawn.ts";
import { spawnChildServer } from "../internal/child_server.ts";

const CACHE = new URL("./.cache/", import.meta.url).pathname;

/** What one timed job gave. */
export interface ClusterRun {
  /** Seconds from submission to DONE. */
  seconds: number;
  /** Rows frozen. */
  rows: number;
  /** Payload hash of the archive (equal to a local freeze's). */
  payload_sha256: string;
}

/**
 * CPU seconds a process has used (user + system), from `/proc/<pid>/stat` in clock
 * ticks of 1/100 s; null where there is no `/proc`.
 */
async function cpuSecondsOf(pid: number): Promise<number | null> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    // The fields after the command name (which may hold spaces) start after its ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/**
 * CPU milliseconds a process's threads other than its main one have used (V8's
 * compiler and GC threads, the runtime's I/O threads, Worker threads), from each
 * thread's `/proc/<pid>/task/<tid>/schedstat`; null where there is no `/proc`. A fresh
 * process's first job spends much of its extra CPU here (optimising compiles).
 */
async function backgroundCpuMsOf(pid: number): Promise<number | null> {
  try {
    let ns = 0;
    for await (const e of Deno.readDir(`/proc/${pid}/task`)) {
      if (e.name === String(pid)) continue;
      const stat = await Deno.readTextFile(`/proc/${pid}/task/${e.name}/schedstat`).catch(() => "");
      ns += Number(stat.split(" ")[0]) || 0;
    }
    return ns / 1e6;
  } catch {
    return null;
  }
}

/**
 * A master or worker as `spawnLocalMaster`/`spawnLocalWorker` start it, run under
 * `--cpu-prof` (its profile written to `profDir/<name>` when it exits).
 */
async function spawnProfiled(
  role: "master" | "worker",
  name: string,
  args: string[],
  profDir: string,
): Promise<ServerProcess> {
  const server = await spawnChildServer(MAIN_ENTRY, [role, "--host", "127.0.0.1", ...args], {
    permissions: [
      "--cpu-prof",
      `--cpu-prof-dir=${join(profDir, name)}`,
      ...(role === "master" ? MASTER_PERMISSIONS : WORKER_PERMISSIONS),
    ],
    ready: /(?:Master|Worker \S+) serving at (http:\/\/\S+)/,
    name: role,
  });
  return { ...server, role };
}

async function withCluster<T>(
  workers: number,
  fn: (
    client: ClusterClient,
    dir: string,
    pids: { master: number; workers: number[] },
  ) => Promise<T>,
  profDir?: string,
): Promise<T> {
  await Deno.mkdir(CACHE, { recursive: true });
  const dir = await Deno.makeTempDir({ dir: CACHE, prefix: "cluster-bench-" });
  const children: ServerProcess[] = [];
  try {
    const quiet = ["--log-level", "warn"];
    const master = profDir
      ? await spawnProfiled("master", "master", [
        "--port",
        "0",
        "--data-dir",
        join(dir, "master"),
        ...quiet,
      ], profDir)
      : await spawnLocalMaster({ dataDir: join(dir, "master"), args: quiet });
    children.push(master);
    for (let i = 0; i < workers; i++) {
      const id = `bench-${i + 1}`;
      children.push(
        profDir
          ? await spawnProfiled("worker", id, [
            "--master",
            master.url,
            "--port",
            "0",
            "--worker-id",
            id,
            ...quiet,
          ], profDir)
          : await spawnLocalWorker({ master: master.url, id, args: quiet }),
      );
    }
    const client = new ClusterClient(master.url);
    for (let i = 0; i < 600 && (await client.health()).idle_workers < workers; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    return await fn(client, dir, {
      master: master.child.pid,
      workers: children.slice(1).map((c) => c.child.pid),
    });
  } finally {
    await Promise.allSettled(children.map((c) => c.stop()));
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

async function timedJob(
  client: ClusterClient,
  source: string,
  destination: string,
  options: { codec?: JobCodec; chunkRows?: number },
): Promise<ClusterRun & { job: JobRecord }> {
  const started = performance.now();
  const jobId = await client.freeze(source, destination, options);
  // The master answers the wait as soon as the job ends (`?wait_s=`): no polling
  // load on the machine being measured, and no poll interval in the figure.
  const job = await client.wait(jobId, { pollInterval: 5000 });
  const seconds = (performance.now() - started) / 1000;
  if (job.status !== "DONE") throw new Error(`cluster job ${job.status}: ${job.error}`);
  return { seconds, rows: job.total_rows ?? 0, payload_sha256: job.payload_sha256 ?? "", job };
}

/** A cluster's first job (fresh processes) and its second (the same processes, warm). */
export interface ClusterPair {
  /** The first job on the fresh cluster. */
  fresh: ClusterRun;
  /** The next job, as a cluster that has been running serves every job after its first. */
  running: ClusterRun;
}

/**
 * Freezes `source` (zstd, 50,000-row chunks) twice on a fresh master with `workers`
 * workers: the first job pays the start of every process (modules compiled on first
 * use, the source opened by each thread), the second is what a running cluster does.
 *
 * @param source The source file.
 * @param workers 1 or 2.
 * @returns Both jobs' seconds from submission to DONE, rows and payload hashes.
 */
export async function clusterThroughput(source: string, workers: 1 | 2): Promise<ClusterPair> {
  return await withCluster(workers, async (client, dir) => {
    const job = (name: string) =>
      timedJob(client, source, join(dir, name), { codec: "zstd", chunkRows: 50_000 });
    const { job: _fresh, ...fresh } = await job("fresh.pf");
    const { job: _running, ...running } = await job("running.pf");
    return { fresh, running };
  });
}

/** The scheduler figure: one job of 1,000 tasks of 100 rows on 2 workers. */
export interface SchedulerRun extends ClusterRun {
  /** Whether the payload equals a local freeze's of the same source and options. */
  same_payload: boolean;
  /** Tasks per second, submission to DONE. */
  tasks_per_s: number;
  /** Seconds from submission to the first task handed out (the master's clock). */
  prepare_s: number;
  /** Seconds from the first task handed out to the last chunk staged. */
  tasks_s: number;
  /** Seconds from the last chunk staged to DONE (the archive written). */
  assembly_s: number;
  /** CPU the master process used for the job, in ms per task (null without `/proc`). */
  master_cpu_ms_per_task: number | null;
  /** CPU the worker processes used (all threads, summed), in ms per task. */
  workers_cpu_ms_per_task: number | null;
  /** Of `master_cpu_ms_per_task`, what threads other than its main one used. */
  master_background_cpu_ms_per_task: number | null;
  /** Of `workers_cpu_ms_per_task`, what threads other than their main ones used. */
  workers_background_cpu_ms_per_task: number | null;
}

/**
 * Scheduler overhead: 1,000 tasks of 100 rows each (3 columns, zstd) on 2 workers,
 * `rounds` jobs on one cluster (the first also pays for the processes' warm-up).
 *
 * @param rounds Jobs to run (default 1).
 * @param profDir Where the processes write their CPU profiles (default: not profiled).
 * @returns Each job's tasks per second end to end, and its phases.
 */
export async function schedulerThroughput(
  rounds = 1,
  profDir?: string,
): Promise<SchedulerRun[]> {
  return await withCluster(2, async (client, dir, pids) => {
    const source = join(dir, "small.csv");
    const lines = ["id,v,label"];
    for (let i = 0; i < 100_000; i++) lines.push(`${i},${(i * 31) % 977},k${i % 9}`);
    await Deno.writeTextFile(source, lines.join("\n") + "\n");
    // The payload every job must have (untimed, in this process).
    const { freeze } = await import("../ops/freeze.ts");
    const local = await freeze(source, join(dir, "local.pf"), { codec: "zstd", chunkRows: 100 });
    const runs: SchedulerRun[] = [];
    for (let round = 0; round < rounds; round++) {
      const cpu = async () => {
        const all = await Promise.all([pids.master, ...pids.workers].map(cpuSecondsOf));
        return all.some((x) => x === null) ? null : all as number[];
      };
      const background = async () => {
        const all = await Promise.all([pids.master, ...pids.workers].map(backgroundCpuMsOf));
        return all.some((x) => x === null) ? null : all as number[];
      };
      const before = await cpu();
      const bgBefore = await background();
      const { job, ...run } = await timedJob(client, source, join(dir, `small-${round}.pf`), {
        codec: "zstd",
        chunkRows: 100,
      });
      const after = await cpu();
      const bgAfter = await background();
      const used = before && after ? after.map((x, i) => x - before[i]!) : null;
      const bgUsed = bgBefore && bgAfter ? bgAfter.map((x, i) => x - bgBefore[i]!) : null;
      const perTask = (s: number) => s / job.tasks.length * 1000;
      const ms = (iso: string | null | undefined) => iso ? Date.parse(iso) : NaN;
      const firstOut = Math.min(...job.tasks.map((t) => ms(t.started_at)));
      const lastIn = Math.max(...job.tasks.map((t) => ms(t.finished_at)));
      runs.push({
        ...run,
        same_payload: run.payload_sha256 === local.payload_sha256,
        tasks_per_s: job.tasks.length / run.seconds,
        prepare_s: (firstOut - ms(job.created_at)) / 1000,
        tasks_s: (lastIn - firstOut) / 1000,
        assembly_s: (ms(job.finished_at) - lastIn) / 1000,
        master_cpu_ms_per_task: used ? perTask(used[0]!) : null,
        workers_cpu_ms_per_task: used ? perTask(used.slice(1).reduce((a, b) => a + b, 0)) : null,
        master_background_cpu_ms_per_task: bgUsed ? perTask(bgUsed[0]! / 1000) : null,
        workers_background_cpu_ms_per_task: bgUsed
          ? perTask(bgUsed.slice(1).reduce((a, b) => a + b, 0) / 1000)
          : null,
      });
    }
    return runs;
  }, profDir);
}

/**
 * A scheduler run as one line.
 *
 * @param r The run.
 * @returns Its figures.
 */
export function schedulerLine(r: SchedulerRun): string {
  const cpu = r.master_cpu_ms_per_task === null || r.workers_cpu_ms_per_task === null
    ? ""
    : `; CPU per task: master ${r.master_cpu_ms_per_task.toFixed(2)} ms, workers ${
      r.workers_cpu_ms_per_task.toFixed(2)
    } ms${
      r.master_background_cpu_ms_per_task === null ||
        r.workers_background_cpu_ms_per_task === null
        ? ""
        : ` (off the main threads: ${r.master_background_cpu_ms_per_task.toFixed(2)} ms, ${
          r.workers_background_cpu_ms_per_task.toFixed(2)
        } ms)`
    }`;
  return `${r.seconds.toFixed(2)} s end to end, **${r.tasks_per_s.toFixed(0)} tasks/s** ` +
    `(preparation ${r.prepare_s.toFixed(2)} s, tasks ${r.tasks_s.toFixed(2)} s = ${
      (1000 / r.tasks_s).toFixed(0)
    } tasks/s, assembly ${
      r.assembly_s.toFixed(2)
    } s${cpu}; same payload as a local freeze: ${r.same_payload})`;
}

function out(line: string): void {
  Deno.stdout.writeSync(new TextEncoder().encode(line + "\n"));
}

if (import.meta.main && Deno.args[0] === "--scheduler") {
  const at = Deno.args.indexOf("--cpu-prof");
  const profDir = at >= 0 ? Deno.args[at + 1] : undefined;
  if (at >= 0 && !profDir) throw new Error("--cpu-prof needs a directory");
  const rounds = Deno.args[1] && !Deno.args[1].startsWith("--") ? Number(Deno.args[1]) : 3;
  const runs = await schedulerThroughput(rounds, profDir);
  out(`scheduler: 1000 tasks x 100 rows on 2 workers, ${runs.length} jobs on one cluster:`);
  for (const r of runs) out(`  ${schedulerLine(r)}`);
} else if (import.meta.main) {
  const source = Deno.args[0] ??
    join(CACHE, "vega-datasets-3.2.1", "package", "data", "flights-3m.parquet");
  const one = await clusterThroughput(source, 1);
  const two = await clusterThroughput(source, 2);
  const rate = (r: ClusterRun) => `${(r.rows / r.seconds / 1e3).toFixed(0)}k rows/s`;
  out(`${source}: ${one.fresh.rows} rows`);
  for (const which of ["fresh", "running"] as const) {
    out(`  ${which} cluster`);
    out(`    1 worker : ${one[which].seconds.toFixed(2)} s  ${rate(one[which])}`);
    out(`    2 workers: ${two[which].seconds.toFixed(2)} s  ${rate(two[which])}`);
    out(`    speed-up : ${(one[which].seconds / two[which].seconds).toFixed(2)}x`);
  }
  const hashes = new Set(
    [one, two].flatMap((p) => [p.fresh, p.running].map((r) => r.payload_sha256)),
  );
  out(`  same payload: ${hashes.size === 1}`);
  const sched = await schedulerThroughput(3);
  out(`scheduler: 1000 tasks x 100 rows on 2 workers, 3 jobs on one cluster:`);
  for (const r of sched) out(`  ${schedulerLine(r)}`);
}
