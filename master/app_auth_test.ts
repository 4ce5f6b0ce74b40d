/**
 * The master with auth on, through `app.request`: the 401/403 matrix of every
 * route, strangers refused on the worker-only routes, namespace isolation of jobs,
 * path confinement to the data roots, the "auth is off" warning, and a whole job
 * run by in-process workers that talk to the master with service tokens.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { RBACManager } from "../auth/rbac.ts";
import { memoryUserStore } from "../auth/store.ts";
import { MASTER_SERVICE_NAME } from "../cluster/service_token.ts";
import { WIRE_CONTENT_TYPE } from "../cluster/wire.ts";
import { resolveDataRoots } from "../internal/paths.ts";
import { createMasterApp } from "./app.ts";
import { Master } from "./master.ts";
import { JobStore } from "./store.ts";
import {
  fakeChunk,
  fakePrepare,
  FakeTransport,
  memoryLogger,
  tempDir,
  type TestCluster,
  testCluster,
  writeCsv,
} from "./_test_utils.ts";
import type { JobRecord, JobSummary, WorkerRecord } from "../client/types.ts";

const SECRET = "master test secret, at least 32 bytes long";

type Who =
  | "none"
  | "forged"
  | "expired"
  | "admin"
  | "alice"
  | "reader"
  | "bob"
  | "service"
  | "foreignService";

interface World {
  c: TestCluster;
  fake: FakeTransport;
  dir: string;
  data: string;
  tokens: Record<Exclude<Who, "none">, string>;
}

async function withWorld(
  fn: (w: World) => Promise<void>,
  options: { dataRoots?: boolean } = {},
): Promise<void> {
  const dir = await Deno.realPath(await tempDir("master-auth-"));
  const data = join(dir, "data");
  for (const d of ["team-a", "team-b"]) await Deno.mkdir(join(data, d), { recursive: true });
  await Deno.mkdir(join(dir, "outside"), { recursive: true });
  for (const p of ["src.csv", "team-a/src.csv", "team-b/src.csv"]) {
    await writeCsv(join(data, p), 20);
  }
  await writeCsv(join(dir, "outside", "secret.csv"), 20);
  await Deno.symlink(join(dir, "outside", "secret.csv"), join(data, "team-a", "escape.csv"));
  await Deno.symlink(join(dir, "outside"), join(data, "team-a", "linked"));
  let now = Date.now();
  const rbac = new RBACManager({
    secret: SECRET,
    store: memoryUserStore(),
    now: () => new Date(now),
  });
  await rbac.addUser({ name: "admin", can_freeze: true, can_thaw: true, namespace: "*" });
  await rbac.addUser({ name: "alice", can_freeze: true, namespace: "team-a" });
  await rbac.addUser({ name: "reader", namespace: "team-a" });
  await rbac.addUser({ name: "bob", can_freeze: true, namespace: "team-b" });
  const expired = await rbac.generateToken("alice", { expiresIn: 1 });
  now += 5000;
  const stranger = new RBACManager({ secret: "another secret, also at least 32 bytes" });
  const tokens = {
    forged: await stranger.generateToken({
      name: "admin",
      can_freeze: true,
      can_thaw: true,
      namespace: "*",
      created_at: "",
    }),
    foreignService: await stranger.generateServiceToken("w0"),
    expired,
    admin: await rbac.generateToken("admin"),
    alice: await rbac.generateToken("alice"),
    reader: await rbac.generateToken("reader"),
    bob: await rbac.generateToken("bob"),
    service: await rbac.generateServiceToken("w0"),
  };
  const fake = new FakeTransport();
  const c = await testCluster({
    workers: 0,
    master: { transport: fake, prepare: fakePrepare(2).prepare },
    auth: { rbac, dataRoots: options.dataRoots === false ? [] : await resolveDataRoots([data]) },
  });
  try {
    await fn({ c, fake, dir, data, tokens });
  } finally {
    await c.close();
    await Deno.remove(dir, { recursive: true });
  }
}

interface Answer {
  status: number;
  json: Record<string, unknown> & { error?: { code: string; message: string } };
}

async function call(
  w: World,
  who: Who,
  method: string,
  path: string,
  body?: unknown,
  type = "application/json",
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (who !== "none") headers.authorization = `Bearer ${w.tokens[who]}`;
  const init: RequestInit = { method, headers };
  if (body !== undefined) {
    headers["content-type"] = type;
    init.body = body instanceof Uint8Array
      ? body as Uint8Array<ArrayBuffer>
      : typeof body === "string"
      ? body
      : JSON.stringify(body);
  }
  const res = await w.c.masterApp.request(path, init);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/, `${method} ${path}`);
  return { status: res.status, json: await res.json() };
}

async function submit(w: World, who: Who, source: string, destination: string): Promise<Answer> {
  return await call(w, who, "POST", "/jobs", { source, destination });
}

async function jobOf(w: World, who: Who, source: string, destination: string): Promise<string> {
  const r = await submit(w, who, source, destination);
  assert.equal(r.status, 201, JSON.stringify(r.json));
  await w.c.master.settled();
  return r.json.job_id as string;
}

const STRANGERS: Who[] = ["none", "forged", "expired", "foreignService"];

Deno.test("master with auth: every route answers 401 without a valid token and 403 without the right", async (t) => {
  await withWorld(async (w) => {
    const registered = await call(w, "service", "POST", "/workers/register", {
      worker_id: "w0",
      url: "http://w0",
    });
    assert.equal(registered.status, 200);
    const job = await jobOf(w, "alice", "src.csv", "team-a/matrix.pf");
    const spec = w.fake.lastFor("w0");
    interface Route {
      method: string;
      path: string;
      body?: () => unknown;
      type?: string;
      /** Callers answered 403 (the others get past auth). */
      forbidden: Who[];
      /** Status of the callers that get past auth (default: any 2xx). */
      ok?: number;
      /** Callers answered 404: the job is another namespace's. */
      notFound?: Who[];
    }
    const users: Who[] = ["admin", "alice", "reader", "bob"];
    const routes: Route[] = [
      { method: "GET", path: "/jobs", forbidden: ["service"] },
      { method: "GET", path: `/jobs/${job}`, forbidden: ["service"], notFound: ["bob"] },
      { method: "GET", path: "/workers", forbidden: ["service"] },
      {
        method: "POST",
        path: "/jobs",
        body: () => ({ source: "team-a/src.csv", destination: `team-a/${crypto.randomUUID()}.pf` }),
        // bob may freeze, but not into team-a.
        forbidden: ["reader", "service", "bob"],
        ok: 201,
      },
      // Cancelling an unknown job: the callers that pass auth get 404.
      { method: "POST", path: "/jobs/nope/cancel", forbidden: ["reader", "service"], ok: 404 },
      { method: "DELETE", path: "/jobs/nope", forbidden: ["reader", "service"], ok: 404 },
      {
        method: "POST",
        path: "/workers/register",
        body: () => ({ worker_id: "w0", url: "http://w0" }),
        forbidden: users,
      },
      { method: "POST", path: "/workers/w0/heartbeat", forbidden: users },
      {
        method: "POST",
        path: `/tasks/nope/failed`,
        body: () => ({ lease: "x", worker_id: "w0", error: "boom" }),
        forbidden: users,
        ok: 404,
      },
      {
        method: "POST",
        path: `/tasks/nope/done`,
        body: () => new Uint8Array([1, 2, 3]),
        type: WIRE_CONTENT_TYPE,
        forbidden: users,
        ok: 404,
      },
      {
        method: "GET",
        path: `/tasks/${spec.task_id}/rows?lease=${spec.lease}`,
        forbidden: users,
        // The source is a fake layout: the master answers, but not with rows.
        ok: -1,
      },
    ];
    for (const r of routes) {
      await t.step(`${r.method} ${r.path.split("?")[0]}`, async () => {
        for (const who of [...STRANGERS, ...users, "service" as const]) {
          const res = await call(w, who, r.method, r.path, r.body?.(), r.type);
          const what = `${who}: ${JSON.stringify(res.json)}`;
          if (STRANGERS.includes(who)) {
            assert.equal(res.status, 401, what);
            assert.match(res.json.error!.code, /^(UNAUTHORIZED|INVALID_TOKEN|TOKEN_EXPIRED)$/);
          } else if (r.notFound?.includes(who)) {
            assert.equal(res.status, 404, what);
          } else if (r.forbidden.includes(who)) {
            assert.equal(res.status, 403, what);
            assert.equal(res.json.error!.code, "FORBIDDEN");
          } else if (r.ok === undefined) {
            assert.ok(res.status >= 200 && res.status < 300, what);
          } else if (r.ok === -1) {
            assert.ok(res.status !== 401 && res.status !== 403, what);
          } else {
            assert.equal(res.status, r.ok, what);
          }
        }
      });
    }
    await t.step("/health, the status page and the API docs need no token", async () => {
      for (const path of ["/health", "/openapi.json"]) {
        assert.equal((await call(w, "none", "GET", path)).status, 200, path);
      }
      for (const path of ["/docs", "/redoc"]) {
        const res = await w.c.masterApp.request(path);
        assert.equal(res.status, 200, path);
        assert.match(await res.text(), /<title>Permafrost master API/);
      }
      const page = await w.c.masterApp.request("/");
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.match(html, /permafrost_token/);
      assert.doesNotMatch(html, new RegExp(job));
    });
    await t.step("a 401 says how to authenticate", async () => {
      const res = await w.c.masterApp.request("/jobs");
      assert.equal(res.headers.get("www-authenticate")?.startsWith("Bearer"), true);
      await res.body?.cancel();
    });
  });
});

Deno.test("master with auth: a stranger can neither register a worker nor report a task", async () => {
  await withWorld(async (w) => {
    for (const who of ["none", "forged", "foreignService", "alice", "admin"] as const) {
      const r = await call(w, who, "POST", "/workers/register", {
        worker_id: "evil",
        url: "http://evil",
      });
      assert.ok(r.status === 401 || r.status === 403, `${who}: ${r.status}`);
    }
    assert.deepEqual(w.c.master.workers(), []);
    assert.equal(
      (await call(w, "service", "POST", "/workers/register", { worker_id: "w0", url: "http://w0" }))
        .status,
      200,
    );
    const jobId = await jobOf(w, "alice", "src.csv", "team-a/out.pf");
    const spec = w.fake.lastFor("w0");
    // Even knowing the task's lease, a stranger's report changes nothing.
    const chunk = fakeChunk(spec);
    for (const who of ["none", "forged", "foreignService", "alice", "admin"] as const) {
      const failed = await call(w, who, "POST", `/tasks/${spec.task_id}/failed`, {
        lease: spec.lease,
        worker_id: "w0",
        error: "forged failure",
      });
      assert.ok(failed.status === 401 || failed.status === 403, `${who}: ${failed.status}`);
      const done = await call(
        w,
        who,
        "POST",
        `/tasks/${spec.task_id}/done`,
        chunk,
        WIRE_CONTENT_TYPE,
      );
      assert.ok(done.status === 401 || done.status === 403, `${who}: ${done.status}`);
      const beat = await call(w, who, "POST", "/workers/w0/heartbeat", {});
      assert.ok(beat.status === 401 || beat.status === 403, `${who}: ${beat.status}`);
    }
    let job = w.c.master.job(jobId);
    const task = job.tasks.find((t) => t.task_id === spec.task_id)!;
    assert.deepEqual([task.status, task.attempts, task.error], ["RUNNING", 1, null]);
    // The worker itself, with the cluster's token, is heard.
    const real = await call(w, "service", "POST", `/tasks/${spec.task_id}/failed`, {
      lease: spec.lease,
      worker_id: "w0",
      error: "real failure",
    });
    assert.equal(real.status, 200, JSON.stringify(real.json));
    job = w.c.master.job(jobId);
    assert.match(job.tasks.find((t) => t.task_id === spec.task_id)!.error ?? "", /real failure/);
  });
});

Deno.test("master with auth: users see and cancel only their namespace's jobs; '*' sees all", async (t) => {
  await withWorld(async (w) => {
    await call(w, "service", "POST", "/workers/register", { worker_id: "w0", url: "http://w0" });
    const a = await jobOf(w, "alice", "team-a/src.csv", "team-a/a.pf");
    const b = await jobOf(w, "bob", "team-b/src.csv", "team-b/b.pf");
    const ids = async (who: Who) =>
      ((await call(w, who, "GET", "/jobs")).json as unknown as JobSummary[]).map((j) => j.job_id)
        .sort();
    await t.step("jobs record their submitter", async () => {
      const job = (await call(w, "alice", "GET", `/jobs/${a}`)).json as unknown as JobRecord;
      assert.deepEqual([job.namespace, job.submitted_by], ["team-a", "alice"]);
      assert.equal(job.destination, join(await Deno.realPath(w.data), "team-a", "a.pf"));
    });
    await t.step("lists are filtered", async () => {
      assert.deepEqual(await ids("alice"), [a]);
      assert.deepEqual(await ids("reader"), [a]);
      assert.deepEqual(await ids("bob"), [b]);
      assert.deepEqual(await ids("admin"), [a, b].sort());
    });
    await t.step("another namespace's job is not found", async () => {
      for (
        const [method, path] of [["GET", `/jobs/${a}`], ["POST", `/jobs/${a}/cancel`], [
          "DELETE",
          `/jobs/${a}`,
        ]] as const
      ) {
        const r = await call(w, "bob", method, path);
        assert.equal(r.status, 404, `${method} ${path}`);
        assert.equal(r.json.error!.code, "JOB_NOT_FOUND");
      }
      assert.equal(w.c.master.job(a).status !== "CANCELLED", true);
    });
    await t.step("the task a worker runs shows only to who sees its job", async () => {
      const running = (who: Who) =>
        call(w, who, "GET", "/workers").then((r) =>
          (r.json as unknown as WorkerRecord[]).find((x) => x.worker_id === "w0")!.task_id
        );
      const task = w.c.master.workers()[0]!.task_id!;
      assert.equal(w.c.master.taskJobId(task), a);
      assert.equal(await running("alice"), task);
      assert.equal(await running("admin"), task);
      assert.equal(await running("bob"), null);
    });
    await t.step("owners cancel their own; '*' cancels anyone's", async () => {
      assert.equal((await call(w, "reader", "POST", `/jobs/${a}/cancel`)).status, 403);
      assert.equal((await call(w, "alice", "POST", `/jobs/${a}/cancel`)).json.status, "CANCELLED");
      assert.equal((await call(w, "admin", "DELETE", `/jobs/${b}`)).json.status, "CANCELLED");
    });
  });
});

Deno.test("master with auth: job paths are confined to the data roots and the user's namespace", async (t) => {
  await withWorld(async (w) => {
    const outside = join(w.dir, "outside");
    const cases: [string, Who, string, string, number, string][] = [
      ["the issue's example", "alice", "src.csv", "team-a/out.pf", 201, ""],
      ["both in the namespace", "alice", "team-a/src.csv", "team-a/sub/../out2.pf", 201, ""],
      ["'*' writes anywhere under a root", "admin", "team-b/src.csv", "team-a/adm.pf", 201, ""],
      ["destination climbs out", "alice", "src.csv", "../outside/x.pf", 403, "PATH_OUTSIDE_ROOT"],
      [
        "destination .. inside team-a",
        "alice",
        "src.csv",
        "team-a/../../x.pf",
        403,
        "PATH_OUTSIDE_ROOT",
      ],
      [
        "absolute destination elsewhere",
        "alice",
        "src.csv",
        join(outside, "x.pf"),
        403,
        "PATH_OUTSIDE_ROOT",
      ],
      [
        "destination through a symlink out",
        "alice",
        "src.csv",
        "team-a/linked/x.pf",
        403,
        "PATH_OUTSIDE_ROOT",
      ],
      ["'*' is confined too", "admin", "src.csv", "../outside/x.pf", 403, "PATH_OUTSIDE_ROOT"],
      ["destination in another namespace", "alice", "src.csv", "team-b/x.pf", 403, "FORBIDDEN"],
      ["destination directly in the root", "alice", "src.csv", "x.pf", 403, "FORBIDDEN"],
      ["source in another namespace", "alice", "team-b/src.csv", "team-a/x.pf", 403, "FORBIDDEN"],
      [
        "source outside",
        "alice",
        join(outside, "secret.csv"),
        "team-a/x.pf",
        403,
        "PATH_OUTSIDE_ROOT",
      ],
      ["source .. out", "alice", "../outside/secret.csv", "team-a/x.pf", 403, "PATH_OUTSIDE_ROOT"],
      ["source symlink out", "alice", "team-a/escape.csv", "team-a/x.pf", 403, "PATH_OUTSIDE_ROOT"],
      ["a NUL in a path", "alice", "src.csv", "team-a/x\u0000.pf", 400, "PATH_INVALID"],
    ];
    for (const [name, who, source, destination, status, code] of cases) {
      await t.step(name, async () => {
        const r = await submit(w, who, source, destination);
        assert.equal(r.status, status, JSON.stringify(r.json));
        if (code !== "") assert.equal(r.json.error!.code, code);
      });
    }
    await t.step("a relative path resolves against the data root, not the cwd sent", async () => {
      const r = await call(w, "alice", "POST", "/jobs", {
        source: "src.csv",
        destination: "team-a/cwd.pf",
        cwd: outside,
      });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      const job = w.c.master.job(r.json.job_id as string);
      const root = await Deno.realPath(w.data);
      assert.deepEqual([job.source, job.destination], [
        join(root, "src.csv"),
        join(root, "team-a", "cwd.pf"),
      ]);
    });
    await w.c.master.settled();
  });
});

Deno.test("master with auth and no data roots: only namespace '*' may submit", async () => {
  await withWorld(async (w) => {
    const source = join(w.data, "src.csv");
    const r = await submit(w, "alice", source, join(w.data, "team-a", "x.pf"));
    assert.equal(r.status, 403);
    assert.match(r.json.error!.message, /no data roots/);
    assert.equal((await submit(w, "admin", source, join(w.dir, "anywhere.pf"))).status, 201);
    await w.c.master.settled();
  }, { dataRoots: false });
});

Deno.test("master without auth: one warning at start, paths still confined to data roots, cwd honoured", async () => {
  const dir = await Deno.realPath(await tempDir("master-noauth-"));
  const store = await JobStore.open(":memory:");
  const master = Master.open({
    store,
    dataDir: join(dir, "m"),
    transport: new FakeTransport(),
    prepare: fakePrepare(1).prepare,
  });
  try {
    await writeCsv(join(dir, "a.csv"), 5);
    const { logger, lines } = memoryLogger();
    const open = createMasterApp({ master, logger });
    const warnings = lines.filter((l) => l.level === "warn");
    assert.equal(warnings.length, 1);
    assert.match(String(warnings[0]!.msg), /auth is off/);
    const post = (app: typeof open, body: unknown) =>
      app.request("/jobs", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const res = await post(open, { source: "a.csv", destination: "a.pf", cwd: dir });
    assert.equal(res.status, 201);
    const job = master.job((await res.json()).job_id);
    assert.deepEqual([job.source, job.destination, job.namespace], [
      join(dir, "a.csv"),
      join(dir, "a.pf"),
      null,
    ]);
    const relativeCwd = await post(open, { source: "a.csv", destination: "b.pf", cwd: "rel" });
    assert.equal(relativeCwd.status, 400);
    await relativeCwd.body?.cancel();
    const confined = createMasterApp({
      master,
      logger,
      dataRoots: await resolveDataRoots([await Deno.makeTempDir({ dir })]),
    });
    const out = await post(confined, { source: join(dir, "a.csv"), destination: "../x.pf" });
    assert.equal(out.status, 403);
    assert.equal((await out.json()).error.code, "PATH_OUTSIDE_ROOT");
    await master.settled();
  } finally {
    await master.close();
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("master with auth: in-process workers run a whole job with service tokens both ways", async () => {
  const dir = await tempDir("master-auth-run-");
  const data = join(dir, "data");
  await Deno.mkdir(join(data, "team-a"), { recursive: true });
  await writeCsv(join(data, "team-a", "in.csv"), 500, { nullEvery: 7 });
  const rbac = new RBACManager({ secret: SECRET, store: memoryUserStore() });
  await rbac.addUser({ name: "alice", can_freeze: true, namespace: "team-a" });
  const c = await testCluster({
    workers: 2,
    auth: { rbac, dataRoots: await resolveDataRoots([data]) },
    token: await rbac.generateToken("alice"),
  });
  try {
    assert.deepEqual(c.master.workers().map((x) => x.worker_id).sort(), ["w0", "w1"]);
    const id = await c.client.freeze("team-a/in.csv", "team-a/out.pf", { chunkRows: 100 });
    await c.drain();
    const job = await c.client.wait(id, { pollInterval: 5 });
    assert.equal(job.status, "DONE", job.error ?? "");
    assert.equal(job.total_rows, 500);
    assert.equal(new Set(job.tasks.map((t) => t.worker_id)).size, 2);
    // A worker app refuses the master's calls without the master's token.
    const worker = await (await fetchWorker(c, "w0", "")).json();
    assert.equal(worker.error.code, "UNAUTHORIZED");
    assert.equal((await fetchWorker(c, "w0", await rbac.generateToken("alice"))).status, 403);
    const res = await fetchWorker(c, "w0", await rbac.generateServiceToken(MASTER_SERVICE_NAME));
    assert.equal(res.status, 200);
    await res.body?.cancel();
  } finally {
    await c.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/** `POST /tasks/x/cancel` on a worker app, with a token or none. */
async function fetchWorker(c: TestCluster, id: string, token: string): Promise<Response> {
  const headers: Record<string, string> = {};
  if (token !== "") headers.authorization = `Bearer ${token}`;
  return await c.workerApps.get(id)!.request("/tasks/x/cancel", { method: "POST", headers });
}
