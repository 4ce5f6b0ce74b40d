/**
 * The cluster as users run it: a master and workers as real processes
 * (`main.ts master|worker`, explicit permissions, ports from the OS), driven
 * through `ClusterClient`. Heartbeats are 0.2 s so failures are noticed quickly;
 * nothing asserts a duration. Every child is killed in `finally`.
 */
import assert from "node:assert/strict";
import { until } from "../../internal/_test_utils.ts";
import { join } from "node:path";
import { ClusterClient } from "../../client/cluster_client.ts";
import type { JobRecord } from "../../client/types.ts";
import { type ServerProcess, spawnLocalMaster, spawnLocalWorker } from "../../cli/spawn.ts";
import { freeze } from "../../ops/freeze.ts";
import { readArchiveIndex } from "../../format/reader.ts";

/** `until()` with the patience real processes on a busy machine need. */
const waitFor = <T>(what: string, check: () => Promise<T | undefined | null | false>) =>
  until(what, check, { timeoutMs: 60000, intervalMs: 50 });

const HEARTBEAT_S = "0.2";

async function tempDir(prefix: string): Promise<string> {
  await Deno.mkdir(".tmp", { recursive: true });
  return await Deno.makeTempDir({ dir: ".tmp", prefix });
}

/** A CSV of `rows` rows with a null now and then; `extraFieldAt` breaks one row. */
async function writeCsv(path: string, rows: number, extraFieldAt = -1): Promise<void> {
  const parts = ["id,sensor,reading,n\n"];
  for (let i = 0; i < rows; i++) {
    const reading = i % 97 === 5 ? "" : (20 + Math.sin(i / 40) * 5).toFixed(3);
    parts.push(`${i},s${i % 5},${reading},${(i * 7919) % 1000}${i === extraFieldAt ? ",x" : ""}\n`);
  }
  await Deno.writeTextFile(path, parts.join(""));
}

class Cluster {
  master!: ServerProcess;
  workers: ServerProcess[] = [];
  client!: ClusterClient;
  constructor(readonly dataDir: string) {}

  async startMaster(port = 0): Promise<void> {
    this.master = await spawnLocalMaster({
      dataDir: this.dataDir,
      port: port,
      args: ["--heartbeat-s", HEARTBEAT_S, "--log-level", "debug"],
    });
    this.client = new ClusterClient(this.master.url);
  }

  async addWorker(id: string, extra: string[] = []): Promise<ServerProcess> {
    const w = await spawnLocalWorker({ master: this.master.url, id: id, args: extra });
    this.workers.push(w);
    await waitFor(`${id} to register`, async () => {
      const workers = await this.client.listWorkers();
      return workers.some((x) => x.worker_id === id && x.status !== "offline");
    });
    return w;
  }

  async stop(): Promise<void> {
    await Promise.allSettled([
      ...this.workers.map((w) => w.stop("SIGKILL")),
      this.master?.stop("SIGKILL"),
    ]);
  }

  /** Everything the children wrote, for failure messages. */
  logs(): string {
    return [this.master, ...this.workers].filter(Boolean).map((p) =>
      `--- ${p.role} ${p.url}\n${p.lines.slice(-40).join("\n")}`
    ).join("\n");
  }
}

/**
 * Waits for a job to end; after 120 s fails with where the job stands (a job that
 * never ends is a finding, not a hang).
 */
async function waitDone(client: ClusterClient, jobId: string): Promise<JobRecord> {
  try {
    return await client.wait(jobId, { pollInterval: 50, signal: AbortSignal.timeout(120_000) });
  } catch (err) {
    const job = await client.job(jobId).catch(() => null);
    const tasks = job?.tasks.map((t) => `${t.index}:${t.status}/${t.attempts}@${t.worker_id}`);
    throw new Error(
      `job ${jobId} did not end within 120 s (${job?.status}; tasks ${tasks?.join(" ")})`,
      { cause: err },
    );
  }
}

Deno.test("cluster e2e: the archive's payload equals a local freeze with 1, 2 and 3 workers", async () => {
  const dir = await tempDir("e2e-hash-");
  const source = join(dir, "readings.csv");
  await writeCsv(source, 40_000);
  const local = await freeze(source, join(dir, "local.pf"), { chunkRows: 2000, threads: 0 });
  const cluster = new Cluster(join(dir, "master"));
  try {
    await cluster.startMaster();
    for (const n of [1, 2, 3]) {
      // The third worker fetches its rows from the master, as one without the source would.
      await cluster.addWorker(`w${n}`, n === 3 ? ["--read", "master"] : []);
      const dest = join(dir, `cluster-${n}.pf`);
      const id = await cluster.client.freeze(source, dest, { chunkRows: 2000 });
      const job = await waitDone(cluster.client, id);
      assert.equal(job.status, "DONE", `${job.error}\n${cluster.logs()}`);
      assert.equal(job.payload_sha256, local.payload_sha256, `${n} worker(s)`);
      assert.equal((await readArchiveIndex(dest)).footer.payload_sha256, local.payload_sha256);
      assert.equal(new Set(job.tasks.map((t) => t.worker_id)).size, n);
    }
  } finally {
    await cluster.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cluster e2e: SIGKILL a worker mid-job: the job is DONE with the same payload, the worker offline", async () => {
  const dir = await tempDir("e2e-kill-");
  const source = join(dir, "readings.csv");
  await writeCsv(source, 120_000);
  const local = await freeze(source, join(dir, "local.pf"), { chunkRows: 1500, threads: 0 });
  const cluster = new Cluster(join(dir, "master"));
  try {
    await cluster.startMaster();
    await cluster.addWorker("keeper");
    const victim = await cluster.addWorker("victim");
    const id = await cluster.client.freeze(source, join(dir, "out.pf"), { chunkRows: 1500 });
    // Kill it while it holds a task, after some chunks are done.
    await waitFor("the victim to hold a task mid-job", async () => {
      const job = await cluster.client.job(id);
      const done = job.tasks.filter((t) => t.status === "DONE").length;
      return done >= 3 && job.tasks.some((t) => t.status === "RUNNING" && t.worker_id === "victim");
    });
    victim.kill("SIGKILL");
    const job = await waitDone(cluster.client, id);
    assert.equal(job.status, "DONE", `${job.error}\n${cluster.logs()}`);
    assert.equal(job.payload_sha256, local.payload_sha256);
    const workers = await waitFor("the victim to be offline", async () => {
      const w = await cluster.client.listWorkers();
      return w.find((x) => x.worker_id === "victim")?.status === "offline" && w;
    });
    assert.equal(workers.find((x) => x.worker_id === "keeper")?.status, "idle");
    // Re-queued, not counted as a failure: no task needed more than one counted attempt.
    assert.ok(job.tasks.every((t) => t.attempts === 1), JSON.stringify(job.tasks));
  } finally {
    await cluster.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cluster e2e: a task that always fails ends its job FAILED after exactly 3 attempts while another job finishes", async () => {
  const dir = await tempDir("e2e-fail-");
  const bad = join(dir, "bad.csv");
  const good = join(dir, "good.csv");
  // The broken row is past the 10,000-row type sample: the job starts, one task always fails.
  await writeCsv(bad, 14_000, 12_345);
  await writeCsv(good, 14_000);
  const cluster = new Cluster(join(dir, "master"));
  try {
    await cluster.startMaster();
    await cluster.addWorker("a");
    await cluster.addWorker("b");
    const badId = await cluster.client.freeze(bad, join(dir, "bad.pf"), { chunkRows: 2000 });
    const goodId = await cluster.client.freeze(good, join(dir, "good.pf"), { chunkRows: 2000 });
    const failed = await waitDone(cluster.client, badId);
    assert.equal(failed.status, "FAILED", cluster.logs());
    const task = failed.tasks[6]!;
    assert.equal(task.status, "FAILED");
    assert.equal(task.attempts, 3);
    assert.match(
      failed.error!,
      /Task 6 \(rows 12000:14000\) failed after 3 attempts: PARSE_FAILED: .*5 fields, the header has 4/,
    );
    const done = await waitDone(cluster.client, goodId);
    assert.equal(done.status, "DONE");
    await assert.rejects(Deno.stat(join(dir, "bad.pf")));
  } finally {
    await cluster.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cluster e2e: SIGKILL the master mid-job and start it again: the job resumes and finishes", async () => {
  const dir = await tempDir("e2e-restart-");
  const source = join(dir, "readings.csv");
  await writeCsv(source, 150_000);
  const local = await freeze(source, join(dir, "local.pf"), { chunkRows: 1500, threads: 0 });
  const cluster = new Cluster(join(dir, "master"));
  try {
    await cluster.startMaster();
    await cluster.addWorker("a");
    await cluster.addWorker("b");
    const id = await cluster.client.freeze(source, join(dir, "out.pf"), { chunkRows: 1500 });
    const before = await waitFor("some chunks done", async () => {
      const job = await cluster.client.job(id);
      return job.tasks.filter((t) => t.status === "DONE").length >= 5 && job;
    });
    const port = Number(new URL(cluster.master.url).port);
    await cluster.master.stop("SIGKILL");
    await cluster.startMaster(port);
    const job = await waitDone(cluster.client, id);
    assert.equal(job.status, "DONE", `${job.error}\n${cluster.logs()}`);
    assert.equal(job.payload_sha256, local.payload_sha256);
    // No chunk that was DONE before the kill was frozen again.
    for (const t of before.tasks.filter((x) => x.status === "DONE")) {
      const now = job.tasks[t.index]!;
      assert.deepEqual([now.attempts, now.worker_id], [t.attempts, t.worker_id], `task ${t.index}`);
    }
    const workers = await cluster.client.listWorkers();
    assert.deepEqual(workers.map((w) => w.worker_id).sort(), ["a", "b"]);
  } finally {
    await cluster.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cluster e2e: cancel a running job: CANCELLED, no archive, staged chunks gone, workers idle", async () => {
  const dir = await tempDir("e2e-cancel-");
  const source = join(dir, "readings.csv");
  await writeCsv(source, 150_000);
  const cluster = new Cluster(join(dir, "master"));
  try {
    await cluster.startMaster();
    await cluster.addWorker("a");
    await cluster.addWorker("b");
    const dest = join(dir, "out.pf");
    const id = await cluster.client.freeze(source, dest, { chunkRows: 1000, codec: "lzma2" });
    await waitFor("the job to be running with chunks staged", async () => {
      const job = await cluster.client.job(id);
      return job.status === "RUNNING" && job.tasks.some((t) => t.status === "DONE");
    });
    const answer = await cluster.client.cancel(id);
    assert.deepEqual(answer, { job_id: id, status: "CANCELLED" });
    const job = await cluster.client.job(id);
    assert.equal(job.status, "CANCELLED");
    assert.ok(job.tasks.every((t) => t.status === "DONE" || t.status === "CANCELLED"));
    await waitFor("both workers idle", async () => {
      const w = await cluster.client.listWorkers();
      return w.length === 2 && w.every((x) => x.status === "idle");
    });
    await waitFor("the staged chunks to be removed", async () => {
      return await Deno.stat(join(dir, "master", "staging", id)).then(() => false, () => true);
    });
    await assert.rejects(Deno.stat(dest));
    // Nothing appears later either: the job stays CANCELLED.
    const health = await cluster.client.health();
    assert.equal(health.active_jobs, 0);
    assert.equal((await cluster.client.job(id)).status, "CANCELLED");
    await assert.rejects(Deno.stat(dest));
  } finally {
    await cluster.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cluster e2e: bad requests get 4xx JSON errors and the master keeps serving", async () => {
  const dir = await tempDir("e2e-bad-");
  const cluster = new Cluster(join(dir, "master"));
  try {
    await cluster.startMaster();
    const url = cluster.master.url;
    const post = (path: string, body: string) =>
      fetch(`${url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
    const cases: [Promise<Response>, number][] = [
      [post("/jobs", JSON.stringify({ destination: "x.pf" })), 400],
      [
        post(
          "/jobs",
          JSON.stringify({ source: join(dir, "none.csv"), destination: join(dir, "x.pf") }),
        ),
        400,
      ],
      [post("/jobs", JSON.stringify({ source: "a.csv", destination: "x.pf", codec: "rar" })), 400],
      [post("/jobs", JSON.stringify({ source: "a.csv", destination: "x.pf", chunk_rows: 0 })), 400],
      [
        post(
          "/jobs",
          JSON.stringify({ source: "a.csv", destination: "x.pf", chunk_rows: 10 ** 12 }),
        ),
        400,
      ],
      [post("/jobs", "{not json"), 400],
      [fetch(`${url}/jobs/does-not-exist`), 404],
      [
        fetch(`${url}/tasks/nope/done`, {
          method: "POST",
          headers: { "content-type": "application/vnd.permafrost.frame" },
          body: new Uint8Array(20),
        }),
        404,
      ],
    ];
    for (const [pending, status] of cases) {
      const res = await pending;
      const body = await res.json();
      assert.equal(res.status, status, JSON.stringify(body));
      assert.equal(typeof body.error.code, "string");
      assert.equal(typeof body.error.message, "string");
    }
    assert.equal((await cluster.client.health()).status, "ok");
  } finally {
    await cluster.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
