/**
 * The master's scheduler in a simulation (`master/simulation.ts`): the real master
 * (app, store on disk, staging, scheduler) with in-process fake workers over
 * `app.request` (no sockets, nothing encoded), so what is timed is the master's own
 * work:
 *
 * - per task, a job of 2,000 tasks on 2, 10, 50 and 200 workers, whose results come
 *   each alone and four at a time (`POST /tasks/done`) (CPU of the process
 *   minus the fake workers' own code, median of 3 alternating rounds): the goal is a
 *   cost flat in the number of workers;
 * - heartbeats of 1,000 workers that each hold a task, with the master's clock ticks,
 *   as a share of one core at the master's heartbeat interval: the goal is < 5%.
 *
 * `deno task bench` calls {@link schedulerSimFigures}; alone:
 * `deno run --allow-read --allow-write --allow-env --allow-ffi --allow-sys bench/scheduler_sim.ts`.
 *
 * @module
 */
import { simulateHeartbeats, simulateJob } from "../master/simulation.ts";

const WORKERS = [2, 10, 50, 200] as const;
/** Results per request: each alone (a worker of one slot), and four at a time (8 slots), as workers send them by default. */
const BATCHES = [1, 4] as const;
const TASKS = 2000;
const ROUNDS = 3;
const HEARTBEAT_WORKERS = 1000;
const HEARTBEAT_ROUNDS = 10;

/** One worker count's runs. */
interface SimRow {
  workers: number;
  /** Results per request (1: each alone, one task held; 4: as real workers, 8 held). */
  batch: number;
  /** Master CPU µs per task, each round. */
  us: number[];
  /** Tasks per second of wall time (the master and its fake workers on one thread). */
  perS: number[];
  /** Every run did every task exactly once and ended DONE. */
  exact: boolean;
}

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

/**
 * Runs the simulation and describes it.
 *
 * @returns Markdown lines for `bench/RESULTS.md`.
 */
export async function schedulerSimFigures(): Promise<string[]> {
  const work = await Deno.makeTempDir({ prefix: "permafrost-scheduler-sim-" });
  try {
    const rows: SimRow[] = BATCHES.flatMap((batch) =>
      WORKERS.map((workers) => ({ workers, batch, us: [], perS: [], exact: true }))
    );
    let n = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const row of rows) {
        const dir = `${work}/job-${n++}`;
        const run = await simulateJob({
          workers: row.workers,
          tasks: TASKS,
          dir,
          batch: row.batch,
        });
        await Deno.remove(dir, { recursive: true });
        row.us.push((run.cpu_s - run.fake_worker_s) / TASKS * 1e6);
        row.perS.push(TASKS / run.wall_s);
        row.exact &&= run.job.status === "DONE" && run.accepted.size === TASKS &&
          [...run.accepted.values()].every((k) => k === 1) &&
          run.job.tasks.every((t) => t.attempts === 1);
      }
    }
    const hb = await simulateHeartbeats({
      workers: HEARTBEAT_WORKERS,
      rounds: HEARTBEAT_ROUNDS,
      dir: `${work}/heartbeats`,
    });
    const hbUs = (hb.cpu_s - hb.fake_worker_s) / hb.heartbeats * 1e6;
    const share = (hb.cpu_s - hb.fake_worker_s) / HEARTBEAT_ROUNDS / hb.heartbeat_s;
    const flat = (batch: number) => {
      const mine = rows.filter((r) => r.batch === batch);
      return median(mine.at(-1)!.us) / median(mine[0]!.us);
    };
    return [
      `Simulation (\`bench/scheduler_sim.ts\`, \`master/simulation.ts\`): the real master (app, job store ` +
      `on disk, staging, scheduler) with in-process fake workers over \`app.request\` (no sockets, ` +
      `nothing encoded, each chunk handed back at once). CPU of the process minus the fake workers' ` +
      `own code, median of ${ROUNDS} alternating rounds, a job of ${
        TASKS.toLocaleString("en-US")
      } tasks:`,
      "",
      "| workers | results per request | master CPU per task | rounds (µs) | tasks/s (wall, one thread) | every task done exactly once |",
      "|---|---|---|---|---|---|",
      ...rows.map((r) =>
        `| ${r.workers} | ${r.batch} | ${median(r.us).toFixed(0)} µs | ${
          r.us.map((x) => x.toFixed(0)).join(", ")
        } | ${median(r.perS).toFixed(0)} | ${r.exact} |`
      ),
      "",
      `- Per-task cost at 200 workers / at 2 workers: **${flat(1).toFixed(2)}×** with results ` +
      `sent alone, **${flat(4).toFixed(2)}×** four at a time (flat is 1).`,
      `- Heartbeats of ${
        HEARTBEAT_WORKERS.toLocaleString("en-US")
      } workers, each holding a task, ` +
      `${HEARTBEAT_ROUNDS} rounds with the master's clock ticks: ${hbUs.toFixed(0)} µs each, ` +
      `**${(share * 100).toFixed(1)}% of one core** at the ${hb.heartbeat_s} s heartbeat interval.`,
    ];
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const lines = await schedulerSimFigures();
  await Deno.stdout.write(new TextEncoder().encode(lines.join("\n") + "\n"));
}
