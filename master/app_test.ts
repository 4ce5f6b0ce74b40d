/**
 * The master's HTTP layer through `app.request()`: every bad request is a 4xx JSON
 * error and the master keeps serving; and whole jobs run by in-process workers
 * (their apps wired to the master's, no sockets) give the local freeze's payload.
 */
import { until } from "../internal/_test_utils.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { freeze } from "../ops/freeze.ts";
import { readArchiveIndex } from "../format/reader.ts";
import { tempDir, testCluster, writeCsv } from "./_test_utils.ts";
import { encodeChunkBodies, encodeChunkBody } from "../cluster/wire.ts";

async function jsonOf(res: Response): Promise<Record<string, unknown>> {
  assert.match(res.headers.get("content-type") ?? "", /json/);
  return await res.json();
}

Deno.test("createMasterApp() answers bad requests with 4xx JSON errors and keeps serving", async (t) => {
  const dir = await tempDir("app-bad-");
  const c = await testCluster({ workers: 0 });
  const source = join(dir, "a.csv");
  await writeCsv(source, 10);
  const app = c.masterApp;
  const post = (path: string, body: string, type = "application/json") =>
    app.request(path, { method: "POST", headers: { "content-type": type }, body });
  try {
    const cases: [string, () => Response | Promise<Response>, number, string][] = [
      [
        "missing source",
        () => post("/jobs", JSON.stringify({ destination: "x.pf" })),
        400,
        "INVALID_REQUEST",
      ],
      [
        "source not found",
        () =>
          post(
            "/jobs",
            JSON.stringify({ source: join(dir, "no.csv"), destination: join(dir, "x.pf") }),
          ),
        400,
        "SOURCE_NOT_FOUND",
      ],
      [
        "unknown codec",
        () =>
          post("/jobs", JSON.stringify({ source, destination: join(dir, "x.pf"), codec: "gzip" })),
        400,
        "INVALID_REQUEST",
      ],
      [
        "chunk_rows 0",
        () =>
          post("/jobs", JSON.stringify({ source, destination: join(dir, "x.pf"), chunk_rows: 0 })),
        400,
        "INVALID_REQUEST",
      ],
      [
        "chunk_rows huge",
        () =>
          post(
            "/jobs",
            JSON.stringify({ source, destination: join(dir, "x.pf"), chunk_rows: 1e12 }),
          ),
        400,
        "INVALID_REQUEST",
      ],
      [
        "chunk_rows not an integer",
        () =>
          post(
            "/jobs",
            JSON.stringify({ source, destination: join(dir, "x.pf"), chunk_rows: 1.5 }),
          ),
        400,
        "INVALID_REQUEST",
      ],
      [
        "unknown field",
        () =>
          post("/jobs", JSON.stringify({ source, destination: join(dir, "x.pf"), chunkRows: 5 })),
        400,
        "INVALID_REQUEST",
      ],
      ["malformed JSON", () => post("/jobs", "{nope"), 400, "BAD_REQUEST"],
      ["JSON that is not an object", () => post("/jobs", "[1,2]"), 400, "INVALID_REQUEST"],
      ["unknown job", () => app.request("/jobs/nope"), 404, "JOB_NOT_FOUND"],
      // No wait for a job that does not exist: the 404 comes at once.
      ["unknown job, waiting", () => app.request("/jobs/nope?wait_s=55"), 404, "JOB_NOT_FOUND"],
      ["wait_s not a number", () => app.request("/jobs/nope?wait_s=soon"), 400, "INVALID_REQUEST"],
      ["wait_s over 55", () => app.request("/jobs/nope?wait_s=56"), 400, "INVALID_REQUEST"],
      ["wait_s negative", () => app.request("/jobs/nope?wait_s=-1"), 400, "INVALID_REQUEST"],
      ["cancel unknown job", () => post("/jobs/nope/cancel", ""), 404, "JOB_NOT_FOUND"],
      [
        "delete unknown job",
        () => app.request("/jobs/nope", { method: "DELETE" }),
        404,
        "JOB_NOT_FOUND",
      ],
      [
        "done for an unknown task",
        () => post("/tasks/nope/done", "PFCHUNK1....", "application/vnd.permafrost.frame"),
        404,
        "TASK_NOT_FOUND",
      ],
      ["done as JSON", () => post("/tasks/nope/done", "{}"), 415, "UNSUPPORTED_MEDIA_TYPE"],
      [
        "results with a bad frame",
        () => post("/tasks/done", "PFDONES1....", "application/vnd.permafrost.frame"),
        422,
        "BAD_CHUNK",
      ],
      ["results as JSON", () => post("/tasks/done", "{}"), 415, "UNSUPPORTED_MEDIA_TYPE"],
      [
        "failed for an unknown task",
        () =>
          post("/tasks/nope/failed", JSON.stringify({ lease: "l", worker_id: "w", error: "x" })),
        404,
        "TASK_NOT_FOUND",
      ],
      [
        "failed without a lease",
        () => post("/tasks/nope/failed", JSON.stringify({ error: "x" })),
        400,
        "INVALID_REQUEST",
      ],
      ["rows without a lease", () => app.request("/tasks/nope/rows"), 400, "BAD_REQUEST"],
      [
        "heartbeat of an unknown worker",
        () => post("/workers/ghost/heartbeat", ""),
        404,
        "WORKER_NOT_FOUND",
      ],
      [
        "heartbeat with a bad body",
        () => post("/workers/ghost/heartbeat", JSON.stringify({ running: 5 })),
        400,
        "BAD_REQUEST",
      ],
      [
        "register with a bad url",
        () => post("/workers/register", JSON.stringify({ worker_id: "w", url: "nope" })),
        400,
        "INVALID_REQUEST",
      ],
      [
        "register with a bad id",
        () => post("/workers/register", JSON.stringify({ worker_id: "a b", url: "http://x" })),
        400,
        "INVALID_REQUEST",
      ],
      ["unknown path", () => app.request("/nope"), 404, "NOT_FOUND"],
      [
        "body over 1 MiB",
        () => post("/jobs", JSON.stringify({ source: "x".repeat(2 << 20), destination: "y" })),
        413,
        "PAYLOAD_TOO_LARGE",
      ],
    ];
    for (const [name, call, status, code] of cases) {
      await t.step(`${name}: ${status} ${code}`, async () => {
        const res = await call();
        const body = await jsonOf(res);
        assert.equal(res.status, status, JSON.stringify(body));
        const error = body.error as { code: string; message: string };
        assert.equal(error.code, code);
        assert.ok(error.message.length > 0);
      });
    }
    await t.step("a done-report with a garbage body for a real task is a 422", async () => {
      c.master.register({ worker_id: "w", url: "http://w" });
      const res = await post("/jobs", JSON.stringify({ source, destination: join(dir, "y.pf") }));
      assert.equal(res.status, 201);
      const { job_id } = await res.json();
      await c.master.settled();
      const job = await c.client.job(job_id);
      const bad = await post(
        `/tasks/${job_id}-t0/done`,
        "PFCHUNK1garbage",
        "application/vnd.permafrost.frame",
      );
      assert.equal(bad.status, 422, JSON.stringify(job));
      assert.equal((await jsonOf(bad) as { error: { code: string } }).error.code, "BAD_CHUNK");
    });
    await t.step("results for an unknown task: each refused in its own outcome", async () => {
      const chunk = {
        rows: 1,
        blocks: [{ bytes: Uint8Array.of(1), raw_length: 1, predictor: "raw" }],
        stats: [{ min: 1, max: 1, null_count: 0 }],
      };
      const body = encodeChunkBodies(
        ["nope", "nope2"].map((id) =>
          encodeChunkBody({ task_id: id, lease: "l", worker_id: "w" }, chunk)
        ),
      );
      const res = await app.request("/tasks/done?next=2", {
        method: "POST",
        headers: { "content-type": "application/vnd.permafrost.frame" },
        body: body as Uint8Array<ArrayBuffer>,
      });
      assert.equal(res.status, 200);
      const answer = await res.json();
      assert.deepEqual(
        answer.results.map((r: { task_id: string; error: { code: string; status: number } }) => [
          r.task_id,
          r.error.code,
          r.error.status,
        ]),
        [["nope", "TASK_NOT_FOUND", 404], ["nope2", "TASK_NOT_FOUND", 404]],
      );
      assert.equal(answer.next, undefined);
    });
    await t.step("the master still serves", async () => {
      const res = await app.request("/health");
      assert.equal(res.status, 200);
      assert.equal((await res.json()).status, "ok");
    });
  } finally {
    await c.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createMasterApp() serves the status page and the OpenAPI document", async () => {
  const c = await testCluster({ workers: 0 });
  try {
    const page = await c.masterApp.request("/");
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type") ?? "", /text\/html/);
    const html = await page.text();
    assert.match(html, /<title>Permafrost master<\/title>/);
    assert.match(html, /setTimeout\(refresh, 1000\)/);
    const doc = await (await c.masterApp.request("/openapi.json")).json();
    for (const path of ["/jobs", "/jobs/{job_id}", "/workers", "/workers/register", "/health"]) {
      assert.ok(doc.paths[path], `${path} in the OpenAPI document`);
    }
    // /docs and /redoc render that document with assets served here (no CDN).
    const docs = await (await c.masterApp.request("/docs")).text();
    assert.match(docs, /<title>Permafrost master API — docs<\/title>/);
    assert.ok(!/https?:\/\//.test(docs), "no external URL in /docs");
    for (const asset of ["/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js", "/redoc"]) {
      const res = await c.masterApp.request(asset);
      assert.equal(res.status, 200, asset);
      await res.body?.cancel();
    }
  } finally {
    await c.close();
  }
});

Deno.test("a job run by 1, 2 and 3 in-process workers has the local freeze's payload", async (t) => {
  const dir = await tempDir("app-hash-");
  const source = join(dir, "readings.csv");
  await writeCsv(source, 3000, { nullEvery: 113 });
  const local = await freeze(source, join(dir, "local.pf"), { chunkRows: 256, threads: 0 });
  try {
    for (const workers of [1, 2, 3]) {
      await t.step(`${workers} worker(s)`, async () => {
        const c = await testCluster({ workers });
        try {
          const dest = join(dir, `cluster-${workers}.pf`);
          const id = await c.client.freeze(source, dest, { chunkRows: 256 });
          await c.drain();
          const job = await c.client.job(id);
          assert.equal(job.status, "DONE", job.error ?? "");
          assert.equal(job.payload_sha256, local.payload_sha256);
          assert.equal(job.total_rows, 3000);
          assert.equal(new Set(job.tasks.map((x) => x.worker_id)).size, workers);
          const index = await readArchiveIndex(dest);
          assert.equal(index.footer.payload_sha256, local.payload_sha256);
          assert.deepEqual(index.header, (await readArchiveIndex(join(dir, "local.pf"))).header);
        } finally {
          await c.close();
        }
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a value beyond the type sample widens its column on the cluster as in a local freeze", async () => {
  const dir = await tempDir("app-widen-");
  const source = join(dir, "late.csv");
  // Column n is an integer in the 10,000-row inference sample; row 14,000 holds text.
  await writeCsv(source, 16_000, { badAt: 14_000, badCell: "n/a" });
  const local = await freeze(source, join(dir, "local.pf"), { chunkRows: 3000, threads: 0 });
  assert.deepEqual(local.widened_columns, ["n"]);
  const c = await testCluster({ workers: 2 });
  try {
    const id = await c.client.freeze(source, join(dir, "cluster.pf"), { chunkRows: 3000 });
    await c.drain();
    const job = await c.client.job(id);
    assert.equal(job.status, "DONE", job.error ?? "");
    assert.deepEqual(job.widened_columns, ["n"]);
    assert.equal(job.payload_sha256, local.payload_sha256);
    assert.ok(job.tasks.every((x) => x.attempts === 1), "restarting is not a failed attempt");
  } finally {
    await c.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("workers that cannot read the source fetch their rows from the master", async () => {
  const dir = await tempDir("app-remote-");
  const source = join(dir, "readings.csv");
  await writeCsv(source, 2000, { nullEvery: 50 });
  const local = await freeze(source, join(dir, "local.pf"), { chunkRows: 300, threads: 0 });
  const c = await testCluster({ workers: 2, worker: () => ({ read: "master" }) });
  try {
    const id = await c.client.freeze(source, join(dir, "cluster.pf"), { chunkRows: 300 });
    await c.drain();
    const job = await c.client.job(id);
    assert.equal(job.status, "DONE", job.error ?? "");
    assert.equal(job.payload_sha256, local.payload_sha256);
  } finally {
    await c.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a task that always fails ends its job FAILED after 3 attempts while another job finishes", async () => {
  const dir = await tempDir("app-fail-");
  const bad = join(dir, "bad.csv");
  const good = join(dir, "good.csv");
  // Beyond the 10,000-row sample, so the job starts and one task fails every time.
  await writeCsv(bad, 12_000, { extraFieldAt: 11_500 });
  await writeCsv(good, 3000);
  const c = await testCluster({ workers: 2 });
  try {
    const badId = await c.client.freeze(bad, join(dir, "bad.pf"), { chunkRows: 2000 });
    const goodId = await c.client.freeze(good, join(dir, "good.pf"), { chunkRows: 1000 });
    await c.drain();
    const failed = await c.client.job(badId);
    assert.equal(failed.status, "FAILED");
    assert.equal(failed.tasks[5]!.attempts, 3);
    assert.equal(failed.tasks[5]!.status, "FAILED");
    assert.match(failed.error!, /after 3 attempts: PARSE_FAILED/);
    assert.equal((await c.client.job(goodId)).status, "DONE");
    await assert.rejects(Deno.stat(join(dir, "bad.pf")));
  } finally {
    await c.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("GET /jobs/{id}?wait_s= answers at once when the master stops waiting (it is closing)", async () => {
  const dir = await tempDir("app-wait-");
  const source = join(dir, "a.csv");
  await writeCsv(source, 100);
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const c = await testCluster({
    workers: 1,
    worker: () => ({ readRows: () => gate.then(() => Promise.reject(new Error("released"))) }),
  });
  try {
    const jobId = await c.client.freeze(source, join(dir, "a.pf"), { chunkRows: 50 });
    let answered: Response | null = null;
    const held = Promise.resolve(c.masterApp.request(`/jobs/${jobId}?wait_s=55`))
      .then((res) => (answered = res));
    // Until the request is answered (its handler registers its wait on a later
    // turn), for 10 s at most where the wait would hold it 55 s.
    await until("the held request to be answered", () => {
      c.master.stopWaiting();
      return answered !== null;
    }, { intervalMs: 20 });
    const job = await jsonOf(await held);
    assert.equal(job.job_id, jobId);
    assert.notEqual(job.status, "DONE");
  } finally {
    release();
    await c.close();
    await Deno.remove(dir, { recursive: true });
  }
});
