/**
 * Test helpers: an in-process cluster (a master and N workers wired through their
 * apps' `request`, no sockets), a fake clock, a quiet logger, and small sources.
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { INLINE_ENCODER } from "../format/chunk.ts";
import { createLogger, type Logger } from "../internal/log.ts";
import { ClusterClient } from "../client/cluster_client.ts";
import { createWorkerApp, type WorkerEnv } from "../worker/app.ts";
import type { RBACManager } from "../auth/rbac.ts";
import { MASTER_SERVICE_NAME, serviceToken } from "../cluster/service_token.ts";
import { WorkerNode, type WorkerNodeDeps } from "../worker/worker.ts";
import { createMasterApp, type MasterEnv } from "./app.ts";
import { Master, type MasterDeps } from "./master.ts";
import { DispatchError, httpTransport, type WorkerTransport } from "./transport.ts";
import type { PrepareInput, PrepareResult } from "./prepare.ts";
import type { FieldJson, TaskSpec } from "../client/types.ts";
import { encodeChunkBody } from "../cluster/wire.ts";
import { JobStore } from "./store.ts";
import { layout, SCHEMA } from "./simulation.ts";

/** A clock tests move by hand. */
export class FakeClock {
  /** Current time, epoch ms. */
  t = Date.UTC(2026, 0, 1);
  /** The clock function. */
  now = (): number => this.t;
  /**
   * Moves time forward.
   *
   * @param ms Milliseconds.
   */
  advance(ms: number): void {
    this.t += ms;
  }
}

/**
 * A logger that keeps its lines (and prints nothing).
 *
 * @returns The logger and its lines.
 */
export function memoryLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    component: "test",
    level: "debug",
    sink: (l) => lines.push(JSON.parse(l)),
  });
  return { logger, lines };
}

/**
 * Makes a temp directory under the repo-local `.tmp/`.
 *
 * @param prefix Name prefix.
 * @returns Its path.
 */
export async function tempDir(prefix: string): Promise<string> {
  await Deno.mkdir(".tmp", { recursive: true });
  return await Deno.makeTempDir({ dir: ".tmp", prefix });
}

/**
 * Writes a CSV of `rows` rows: id, a sensor name, a reading with a null every
 * `nullEvery` rows, and a count.
 *
 * @param path Where.
 * @param rows Rows.
 * @param options `nullEvery` (default 0: no nulls), `badAt`/`badCell` (a cell that
 * breaks the inferred type of column `n`), `extraFieldAt` (a row with one field too many).
 */
export async function writeCsv(
  path: string,
  rows: number,
  options: { nullEvery?: number; badAt?: number; badCell?: string; extraFieldAt?: number } = {},
): Promise<void> {
  const lines = ["id,sensor,reading,n"];
  for (let i = 0; i < rows; i++) {
    const reading = options.nullEvery && i % options.nullEvery === 7
      ? ""
      : (20 + Math.sin(i / 50) * 5).toFixed(3);
    const n = i === options.badAt ? options.badCell ?? "oops" : String((i * 7919) % 1000);
    const extra = i === options.extraFieldAt ? ",extra" : "";
    lines.push(`${i},s${i % 5},${reading},${n}${extra}`);
  }
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
}

/** An in-process cluster. */
export interface TestCluster {
  master: Master;
  masterApp: OpenAPIHono<MasterEnv>;
  store: JobStore;
  nodes: WorkerNode[];
  client: ClusterClient;
  /** The workers' apps, by worker id. */
  workerApps: ReadonlyMap<string, OpenAPIHono<WorkerEnv>>;
  dataDir: string;
  /** Runs until nothing is in flight anywhere. */
  drain(): Promise<void>;
  /** Stops everything and deletes the data directory. */
  close(): Promise<void>;
}

/**
 * Starts a master and `workers` workers talking through `app.request`.
 *
 * @param options Worker count, master overrides, worker overrides.
 * @returns The cluster.
 */
export async function testCluster(
  options: {
    workers: number;
    master?: Partial<MasterDeps>;
    worker?: (i: number) => Partial<WorkerNodeDeps>;
    /** Auth on: the manager (master and workers share its secret) and the master's data roots. */
    auth?: { rbac: RBACManager; dataRoots?: readonly string[] };
    /** The client's token. */
    token?: string;
  },
): Promise<TestCluster> {
  const quiet = createLogger({ component: "test", level: "error", sink: () => {} });
  const store = await JobStore.open(":memory:");
  const dataDir = await tempDir("cluster-");
  const apps = new Map<string, OpenAPIHono<WorkerEnv>>();
  const rbac = options.auth?.rbac ?? null;
  const transport = httpTransport({
    token: rbac ? serviceToken(rbac, MASTER_SERVICE_NAME) : undefined,
    fetch: (url, init) => {
      const app = apps.get(new URL(String(url)).host);
      if (!app) return Promise.reject(new TypeError(`connection refused: ${url}`));
      return Promise.resolve(app.request(String(url), init));
    },
  });
  const master = Master.open({ store, dataDir, transport, logger: quiet, ...options.master });
  const masterApp = createMasterApp({
    master,
    logger: quiet,
    rbac,
    dataRoots: options.auth?.dataRoots,
  });
  const masterFetch =
    ((input: string | URL | Request, init?: RequestInit) =>
      Promise.resolve(masterApp.request(input as string, init))) as typeof fetch;
  const nodes: WorkerNode[] = [];
  for (let i = 0; i < options.workers; i++) {
    const node = new WorkerNode({
      masterUrl: "http://master",
      workerId: `w${i}`,
      fetch: masterFetch,
      logger: quiet,
      encoder: () => INLINE_ENCODER,
      token: rbac ? serviceToken(rbac, `w${i}`) : undefined,
      ...options.worker?.(i),
    });
    apps.set(`w${i}`, createWorkerApp({ node, logger: quiet, rbac }));
    nodes.push(node);
    node.start(`http://w${i}`);
  }
  for (let i = 0; i < 1000 && nodes.some((n) => n.state.status === "registering"); i++) {
    await new Promise((r) => setTimeout(r, 1));
  }
  const client = new ClusterClient("http://master", {
    fetch: (input, init) => masterApp.request(input, init),
    token: options.token,
  });
  async function drain(): Promise<void> {
    for (let round = 0; round < 10_000; round++) {
      await master.settled();
      await Promise.all(nodes.map((n) => n.idle()));
      await master.settled();
      if (nodes.every((n) => n.state.task_id === null)) {
        // One more turn: a report may have just scheduled more work.
        await new Promise((r) => setTimeout(r, 0));
        await master.settled();
        if (nodes.every((n) => n.state.task_id === null)) return;
      }
    }
    throw new Error("the cluster never settled");
  }
  return {
    master,
    masterApp,
    store,
    nodes,
    client,
    workerApps: apps,
    dataDir,
    drain,
    async close() {
      await Promise.all(nodes.map((n) => n.stop()));
      await master.close();
      store.close();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

/** A transport that records what the master sends and lets the test answer. */
export class FakeTransport implements WorkerTransport {
  /** Every task handed out, in order. */
  assigned: TaskSpec[] = [];
  /** Every drop request: worker URL and task. */
  cancelled: { url: string; taskId: string }[] = [];
  /** Make `assign` to this URL fail with this kind. */
  failing = new Map<string, "unreachable" | "busy" | "refused">();

  assign(url: string, spec: TaskSpec): Promise<void> {
    const kind = this.failing.get(url);
    if (kind) return Promise.reject(new DispatchError(kind, `fake ${kind}`));
    this.assigned.push({ ...spec, worker_id: spec.worker_id });
    return Promise.resolve();
  }

  cancel(url: string, taskId: string): Promise<void> {
    this.cancelled.push({ url, taskId });
    return Promise.resolve();
  }

  /** The last task handed to a worker. */
  lastFor(workerId: string): TaskSpec {
    const spec = this.assigned.findLast((s) => s.worker_id === workerId);
    if (!spec) throw new Error(`nothing was assigned to ${workerId}`);
    return spec;
  }
}

/** The schema fake jobs use. */
export const FAKE_SCHEMA: FieldJson[] = SCHEMA;

/**
 * A prepare function that lays a job out as `tasks` tasks of `rows` rows without
 * reading anything (the source file only has to exist).
 *
 * @param tasks Tasks per job.
 * @param rows Rows per task.
 * @returns The function, and the inputs it was called with.
 */
export function fakePrepare(
  tasks: number,
  rows = 10,
): { prepare: (input: PrepareInput) => Promise<PrepareResult>; calls: PrepareInput[] } {
  const calls: PrepareInput[] = [];
  const lay = layout(tasks, rows);
  const prepare = (input: PrepareInput): Promise<PrepareResult> => {
    calls.push(structuredClone(input));
    return lay(input);
  };
  return { prepare, calls };
}

/**
 * A frozen-chunk body a fake worker sends for a task.
 *
 * @param spec The task as handed out.
 * @param options Override rows or blocks.
 * @returns The body.
 */
export function fakeChunk(spec: TaskSpec, options: { rows?: number; blocks?: number } = {}) {
  const blocks = Array.from({ length: options.blocks ?? 1 }, () => ({
    bytes: Uint8Array.of(spec.index, 1, 2, 3),
    raw_length: 4,
    predictor: "raw_text",
  }));
  return encodeChunkBody(
    { task_id: spec.task_id, lease: spec.lease, worker_id: spec.worker_id },
    {
      rows: options.rows ?? spec.window.rows,
      blocks,
      stats: blocks.map(() => ({ min: null, max: null, null_count: 0 })),
    },
  );
}
