import assert from "node:assert/strict";
import { until } from "../internal/_test_utils.ts";
import { join } from "node:path";
import { tempDir, testCluster, writeCsv } from "../master/_test_utils.ts";
import { readTaskRows } from "../cluster/task_source.ts";
import { ClusterClient } from "./cluster_client.ts";
import { JobError } from "./errors.ts";

Deno.test("ClusterClient drives a job through the master's app", async (t) => {
  const dir = await tempDir("client-");
  const source = join(dir, "a.csv");
  await writeCsv(source, 1200);
  const c = await testCluster({ workers: 2 });
  try {
    await t.step("health()", async () => {
      assert.deepEqual(await c.client.health(), {
        status: "ok",
        version: JSON.parse(Deno.readTextFileSync("deno.json")).version,
        workers: 2,
        idle_workers: 2,
        offline_workers: 0,
        active_jobs: 0,
        heartbeat_s: 5,
      });
    });
    let jobId = "";
    await t.step("freeze() returns the job id; wait() polls until DONE", async () => {
      jobId = await c.client.freeze(source, join(dir, "a.pf"), { codec: "zstd", chunkRows: 500 });
      assert.match(jobId, /^[0-9a-f]{12}$/);
      const seen: string[] = [];
      const job = await c.client.wait(jobId, {
        pollInterval: 5,
        onProgress: (j) => seen.push(j.status),
      });
      assert.equal(job.status, "DONE");
      assert.equal(job.tasks.length, 3);
      assert.equal(seen.at(-1), "DONE");
    });
    await t.step("listJobs() and listWorkers()", async () => {
      const jobs = await c.client.listJobs();
      assert.deepEqual(jobs.map((j) => [j.job_id, j.status]), [[jobId, "DONE"]]);
      assert.ok(!("tasks" in jobs[0]!));
      const workers = await c.client.listWorkers();
      assert.deepEqual(workers.map((w) => w.worker_id).sort(), ["w0", "w1"]);
      assert.equal(workers.reduce((n, w) => n + w.tasks_done, 0), 3);
      // One job: each worker that did a task of it counts it once.
      for (const w of workers) assert.equal(w.jobs_done, w.tasks_done > 0 ? 1 : 0);
    });
    await t.step("cancel() of a DONE job is JOB_FINISHED", async () => {
      await assert.rejects(c.client.cancel(jobId), (e: unknown) => {
        assert.ok(e instanceof JobError);
        assert.equal(e.code, "JOB_FINISHED");
        assert.equal(e.status, 409);
        return true;
      });
    });
    await t.step("job() of an unknown id is JOB_NOT_FOUND", async () => {
      await assert.rejects(c.client.job("nope"), { name: "JobError", code: "JOB_NOT_FOUND" });
    });
    await t.step(
      "a request the master's validation refuses is REQUEST_FAILED naming its code",
      async () => {
        await assert.rejects(
          c.client.freeze(source, join(dir, "b.pf"), { chunkRows: 0 }),
          (e: unknown) => {
            assert.ok(e instanceof JobError);
            assert.equal(e.code, "REQUEST_FAILED");
            assert.match(e.message, /400 INVALID_REQUEST: .*chunk_rows/);
            return true;
          },
        );
      },
    );
  } finally {
    await c.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ClusterClient.wait() learns the end of a job at once: the master holds the answer until then", async () => {
  const dir = await tempDir("client-wait-");
  const source = join(dir, "a.csv");
  await writeCsv(source, 300);
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const c = await testCluster({
    workers: 1,
    worker: () => ({
      readRows: async (read) => {
        await gate;
        return await readTaskRows(read);
      },
    }),
  });
  try {
    const jobId = await c.client.freeze(source, join(dir, "a.pf"), { chunkRows: 100 });
    const asked: string[] = [];
    const client = new ClusterClient("http://master", {
      fetch: (input, init) => {
        asked.push(new URL(String(input)).search);
        return Promise.resolve(c.masterApp.request(String(input), init));
      },
    });
    // One request, held by the master while the job runs; were it answered at once,
    // the next one would come 20 s later, after the signal gave up.
    const waiting = client.wait(jobId, {
      pollInterval: 20_000,
      signal: AbortSignal.timeout(10_000),
    });
    await until("the first wait request", () => asked.length >= 1);
    assert.equal(asked.length, 1);
    release();
    const job = await waiting;
    assert.equal(job.status, "DONE");
    assert.deepEqual(asked, ["?wait_s=20"]);
    // A finished job is answered at once, whatever the wait asked.
    assert.equal((await client.job(jobId, { waitS: 55 })).status, "DONE");
  } finally {
    release();
    await c.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ClusterClient says UNREACHABLE when nothing answers", async () => {
  const client = new ClusterClient("http://127.0.0.1:1/", {
    fetch: () => Promise.reject(new TypeError("connection refused")),
  });
  assert.equal(client.url, "http://127.0.0.1:1");
  await assert.rejects(client.health(), (e: unknown) => {
    assert.ok(e instanceof JobError);
    assert.equal(e.code, "UNREACHABLE");
    assert.match(e.message, /connection refused/);
    return true;
  });
});

Deno.test("ClusterClient.wait() stops when its signal aborts", async () => {
  const client = new ClusterClient("http://m", {
    fetch: () => Response.json({ job_id: "j", status: "RUNNING", tasks: [] }),
  });
  const controller = new AbortController();
  const waiting = client.wait("j", { pollInterval: 60_000, signal: controller.signal });
  controller.abort(new Error("enough"));
  await assert.rejects(waiting, /enough/);
});

Deno.test("ClusterClient sends its token", async () => {
  let auth: string | null = null;
  const client = new ClusterClient("http://m", {
    token: "t0k",
    fetch: (_url, init) => {
      auth = new Headers(init?.headers).get("authorization");
      return Response.json({ status: "ok" });
    },
  });
  await client.health();
  assert.equal(auth, "Bearer t0k");
});
