/**
 * A cluster simulated in one process: the real master (its {@link Master}, Hono app,
 * job store and chunk staging on disk) and any number of fake workers that speak the
 * master's REST API through `app.request` (no sockets) and hand back a tiny chunk for
 * each task at once, taking the next task from the answer (`?next=1`) as real workers
 * do. Nothing is encoded and no source is read (the job is laid out by a stand-in
 * `prepare`), so what it costs is the master's own work: routing, checking, staging,
 * the store, scheduling, heartbeats.
 *
 * `bench/scheduler_sim.ts` times it (per task from 2 to 200 workers, heartbeats of
 * 1,000 workers); `simulation_test.ts` checks that every task is done exactly once.
 * No timer of its own and no clock but the master's: nothing here sleeps.
 *
 * @module
 */
import { join } from "node:path";
import { cpuUsage } from "node:process";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { FieldJson, JobRecord, TaskSpec, TaskWindow } from "../client/types.ts";
import { encodeChunkBodies, encodeChunkBody, WIRE_CONTENT_TYPE } from "../cluster/wire.ts";
import { createLogger } from "../internal/log.ts";
import { createMasterApp, type MasterEnv } from "./app.ts";
import { Master } from "./master.ts";
import type { PrepareInput, PrepareResult } from "./prepare.ts";
import { JobStore } from "./store.ts";
import type { WorkerTransport } from "./transport.ts";

/** What {@link simulateJob} and {@link simulateHeartbeats} need. */
export interface SimulationOptions {
  /** Fake workers. */
  workers: number;
  /** Tasks in the job. */
  tasks: number;
  /** A directory of its own for the store, the staging and the archive (left in place). */
  dir: string;
  /** Rows of each task (default 100). */
  rowsPerTask?: number;
  /**
   * Results each fake worker sends per request (default 1: `POST /tasks/{id}/done`,
   * one task held). Above 1 it holds twice as many tasks (`slots`) and sends its
   * results that many at a time (`POST /tasks/done`), as real workers do.
   */
  batch?: number;
}

/** What one simulated job gave. */
export interface SimulatedJob {
  /** The job as the master reports it once DONE. */
  job: JobRecord;
  /** The archive written. */
  archive: string;
  /** Done-reports the master accepted, per task id (each should be 1). */
  accepted: Map<string, number>;
  /** Tasks handed out by `POST /tasks` (the transport), the rest came in done answers. */
  dispatched: number;
  /** CPU seconds of this process from submission until the last task's chunk was accepted. */
  cpu_s: number;
  /** Of which in the fake workers' own code (building chunk bodies, reading answers). */
  fake_worker_s: number;
  /** Wall seconds of the same span. */
  wall_s: number;
  /** Wall seconds from the last chunk accepted to DONE (the archive written). */
  assembly_s: number;
}

/** What the heartbeats of a simulated cluster cost. */
export interface SimulatedHeartbeats {
  /** Heartbeats sent (workers × rounds). */
  heartbeats: number;
  /** CPU seconds of this process for them, with the master's clock ticks of those rounds. */
  cpu_s: number;
  /** Of which in the fake workers' own code. */
  fake_worker_s: number;
  /** Heartbeat interval the master asked for, in seconds. */
  heartbeat_s: number;
}

/** The one column every stand-in job has. */
export const SCHEMA: FieldJson[] = [{ name: "a", type: "int64", nullable: false }];
const QUIET = createLogger({ component: "simulation", level: "error", sink: () => {} });

/**
 * A stand-in `prepare`: `tasks` windows of `rows` rows (or the windows the input
 * names), one int64 column, nothing read.
 *
 * @param tasks Tasks per job.
 * @param rows Rows per task.
 * @returns The function.
 */
export function layout(
  tasks: number,
  rows: number,
): (input: PrepareInput) => Promise<PrepareResult> {
  return (input) => {
    const windows: TaskWindow[] = input.windows ?? Array.from({ length: tasks }, (_, i) => ({
      unit: "rows" as const,
      start: i * rows,
      end: (i + 1) * rows,
      span_rows: rows,
      skip: 0,
      rows,
      batch_rows: rows,
    }));
    return Promise.resolve({
      bytes: 1,
      rows: windows.length * rows,
      windows,
      schema: SCHEMA,
      plans: { a: { deps: [], quantization: "QUANT_NONE" } },
      codec: "zstd",
      autoReason: null,
      types: { ...input.types },
      widened: [],
    });
  };
}

/** CPU seconds this process has used (user + system). */
function cpuSeconds(): number {
  const { user, system } = cpuUsage();
  return (user + system) / 1e6;
}

/** The fake workers' side: registering, reporting, heartbeats, and the time it spends. */
class FakeWorkers {
  readonly app: OpenAPIHono<MasterEnv>;
  /** Seconds spent in the fake workers' own code. */
  ownSeconds = 0;
  accepted = new Map<string, number>();
  dispatched = 0;
  /** The task each worker holds (heartbeat simulation: never reported). */
  holding = new Map<string, TaskSpec>();
  #report: boolean;
  #batch: number;
  #loops = new Set<Promise<void>>();
  #failure: unknown = null;
  /** Batched workers: the tasks each holds, and which of them has its loop running. */
  #queues = new Map<string, TaskSpec[]>();
  #working = new Set<string>();

  constructor(app: OpenAPIHono<MasterEnv>, report: boolean, batch = 1) {
    this.app = app;
    this.#report = report;
    this.#batch = batch;
  }

  #start(work: () => Promise<void>): void {
    const loop = Promise.resolve().then(work).catch((err) => {
      this.#failure ??= err;
    }).finally(() => this.#loops.delete(loop));
    this.#loops.add(loop);
  }

  /** The transport the master hands tasks through: each lands on its fake worker. */
  transport(): WorkerTransport {
    return {
      assign: (url, spec) => {
        this.dispatched++;
        const workerId = new URL(url).host;
        if (!this.#report) {
          this.holding.set(workerId, spec);
          return Promise.resolve();
        }
        // The worker starts once the master's call has returned, as over HTTP.
        if (this.#batch > 1) {
          const queue = this.#queues.get(workerId) ?? [];
          this.#queues.set(workerId, queue);
          queue.push(spec);
          if (!this.#working.has(workerId)) {
            this.#working.add(workerId);
            this.#start(() => this.#workBatched(workerId, queue));
          }
        } else {
          this.#start(() => this.#work(spec));
        }
        return Promise.resolve();
      },
      cancel: () => Promise.resolve(),
    };
  }

  async register(workers: number): Promise<string[]> {
    const ids = Array.from({ length: workers }, (_, i) => `sim-${String(i).padStart(4, "0")}`);
    for (const id of ids) {
      const res = await this.app.request("/workers/register", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          worker_id: id,
          url: `http://${id}`,
          ...(this.#batch > 1 ? { slots: 2 * this.#batch } : {}),
        }),
      });
      if (res.status !== 200) throw new Error(`register ${id}: ${res.status} ${await res.text()}`);
      await res.body?.cancel();
    }
    return ids;
  }

  /** Runs a task and each next one the master puts in its answers. */
  async #work(first: TaskSpec): Promise<void> {
    let spec: TaskSpec | undefined = first;
    while (spec) {
      let t = performance.now();
      const body = fakeChunkBody(spec);
      this.ownSeconds += (performance.now() - t) / 1000;
      const res = await this.app.request(`/tasks/${encodeURIComponent(spec.task_id)}/done?next=1`, {
        method: "POST",
        headers: { "content-type": WIRE_CONTENT_TYPE },
        body: body as Uint8Array<ArrayBuffer>,
      });
      const text = await res.text();
      t = performance.now();
      if (res.status !== 200) throw new Error(`done ${spec.task_id}: ${res.status} ${text}`);
      this.accepted.set(spec.task_id, (this.accepted.get(spec.task_id) ?? 0) + 1);
      spec = (JSON.parse(text) as { next?: TaskSpec }).next;
      this.ownSeconds += (performance.now() - t) / 1000;
    }
  }

  /**
   * Sends the results of the tasks a batched worker holds, `batch` at a time, and
   * takes the next tasks of each answer, until it holds none.
   */
  async #workBatched(workerId: string, queue: TaskSpec[]): Promise<void> {
    try {
      while (queue.length > 0) {
        let t = performance.now();
        const specs = queue.splice(0, this.#batch);
        const body = encodeChunkBodies(specs.map((spec) => fakeChunkBody(spec)));
        this.ownSeconds += (performance.now() - t) / 1000;
        const res = await this.app.request(`/tasks/done?next=${specs.length}`, {
          method: "POST",
          headers: { "content-type": WIRE_CONTENT_TYPE },
          body: body as Uint8Array<ArrayBuffer>,
        });
        const text = await res.text();
        t = performance.now();
        if (res.status !== 200) throw new Error(`done ${workerId}: ${res.status} ${text}`);
        const answer = JSON.parse(text) as {
          results: { task_id: string; ok: boolean }[];
          next?: TaskSpec;
          next_more?: TaskSpec[];
        };
        for (const r of answer.results) {
          if (!r.ok) throw new Error(`done ${r.task_id}: ${JSON.stringify(r)}`);
          this.accepted.set(r.task_id, (this.accepted.get(r.task_id) ?? 0) + 1);
        }
        if (answer.next) queue.push(answer.next, ...(answer.next_more ?? []));
        this.ownSeconds += (performance.now() - t) / 1000;
      }
    } finally {
      this.#working.delete(workerId);
    }
  }

  /** Resolves once no fake worker has a task left; throws the first failure. */
  async idle(): Promise<void> {
    while (this.#loops.size > 0) await Promise.all([...this.#loops]);
    if (this.#failure) throw this.#failure;
  }

  /** One heartbeat of each worker, saying the task it holds. */
  async heartbeats(ids: string[]): Promise<void> {
    for (const id of ids) {
      let t = performance.now();
      const held = this.holding.get(id);
      const body = JSON.stringify({
        running: held ? { task_id: held.task_id, lease: held.lease } : null,
      });
      this.ownSeconds += (performance.now() - t) / 1000;
      const res = await this.app.request(`/workers/${id}/heartbeat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      const text = await res.text();
      t = performance.now();
      if (res.status !== 200) throw new Error(`heartbeat ${id}: ${res.status} ${text}`);
      const { drop } = JSON.parse(text) as { drop: string[] };
      if (drop.length > 0) {
        throw new Error(`heartbeat ${id}: the master dropped ${drop.join(", ")}`);
      }
      this.ownSeconds += (performance.now() - t) / 1000;
    }
  }
}

/** The tiny chunk a fake worker hands back for a task. */
function fakeChunkBody(spec: TaskSpec): Uint8Array {
  return encodeChunkBody(
    { task_id: spec.task_id, lease: spec.lease, worker_id: spec.worker_id },
    {
      rows: spec.window.rows,
      blocks: [{
        bytes: Uint8Array.of(spec.index & 255, 1, 2, 3),
        raw_length: 4,
        predictor: "raw_text",
      }],
      stats: [{ min: null, max: null, null_count: 0 }],
    },
  );
}

async function openMaster(
  dir: string,
  tasks: number,
  rows: number,
  report: boolean,
  batch = 1,
) {
  await Deno.mkdir(dir, { recursive: true });
  const source = join(dir, "source.csv");
  await Deno.writeTextFile(source, "a\n1\n");
  const store = await JobStore.open(join(dir, "jobs.db"));
  let workers: FakeWorkers | null = null;
  const master = Master.open({
    store,
    dataDir: join(dir, "data"),
    logger: QUIET,
    prepare: layout(tasks, rows),
    transport: {
      assign: (url, spec) => workers!.transport().assign(url, spec),
      cancel: () => Promise.resolve(),
    },
  });
  const app = createMasterApp({ master, logger: QUIET });
  workers = new FakeWorkers(app, report, batch);
  return {
    master,
    store,
    app,
    workers,
    source,
    async close() {
      await master.close();
      store.close();
    },
  };
}

async function submit(app: OpenAPIHono<MasterEnv>, source: string, destination: string) {
  const res = await app.request("/jobs", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ source, destination, chunk_rows: 100 }),
  });
  if (res.status !== 201) throw new Error(`submit: ${res.status} ${await res.text()}`);
  return (await res.json()).job_id as string;
}

/**
 * Runs one job of `tasks` tasks on `workers` fake workers, from submission to DONE.
 *
 * @param options Workers, tasks, rows per task, directory.
 * @returns The job, what was accepted per task, and CPU and wall time.
 */
export async function simulateJob(options: SimulationOptions): Promise<SimulatedJob> {
  const rows = options.rowsPerTask ?? 100;
  const sim = await openMaster(options.dir, options.tasks, rows, true, options.batch ?? 1);
  try {
    const archive = join(options.dir, "out.pf");
    await sim.workers.register(options.workers);
    const cpu0 = cpuSeconds();
    const wall0 = performance.now();
    const jobId = await submit(sim.app, sim.source, archive);
    // Preparation (the stand-in) runs in the background; the first tasks go out after it.
    await sim.master.settled();
    await sim.workers.idle();
    const cpu_s = cpuSeconds() - cpu0;
    const wall1 = performance.now();
    await sim.master.untilFinished(jobId, 600_000);
    const assembly_s = (performance.now() - wall1) / 1000;
    await sim.master.settled();
    return {
      job: sim.master.job(jobId),
      archive,
      accepted: sim.workers.accepted,
      dispatched: sim.workers.dispatched,
      cpu_s,
      fake_worker_s: sim.workers.ownSeconds,
      wall_s: (wall1 - wall0) / 1000,
      assembly_s,
    };
  } finally {
    await sim.close();
  }
}

/**
 * Registers `workers` fake workers, gives each one task of a job (which it holds and
 * never reports), then sends `rounds` heartbeats from each, with the master's clock
 * ticks of those rounds (`server.ts` ticks every second at most).
 *
 * @param options Workers, rounds, directory.
 * @returns What the heartbeats cost.
 */
export async function simulateHeartbeats(
  options: { workers: number; rounds: number; dir: string },
): Promise<SimulatedHeartbeats> {
  const sim = await openMaster(options.dir, options.workers, 100, false);
  try {
    const ids = await sim.workers.register(options.workers);
    const jobId = await submit(sim.app, sim.source, join(options.dir, "out.pf"));
    await sim.master.settled();
    if (sim.master.job(jobId).phase !== "freezing") throw new Error("the job did not start");
    if (sim.workers.holding.size !== options.workers) {
      throw new Error(`${sim.workers.holding.size} of ${options.workers} workers got a task`);
    }
    const heartbeatS = sim.master.heartbeatS;
    const ticksPerRound = Math.ceil(heartbeatS / Math.min(1, heartbeatS / 4));
    const own0 = sim.workers.ownSeconds;
    const cpu0 = cpuSeconds();
    for (let round = 0; round < options.rounds; round++) {
      await sim.workers.heartbeats(ids);
      for (let i = 0; i < ticksPerRound; i++) sim.master.tick();
    }
    return {
      heartbeats: options.workers * options.rounds,
      cpu_s: cpuSeconds() - cpu0,
      fake_worker_s: sim.workers.ownSeconds - own0,
      heartbeat_s: heartbeatS,
    };
  } finally {
    await sim.close();
  }
}
