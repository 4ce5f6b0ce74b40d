/**
 * A worker with auth on: its app's 401/403 matrix (only the cluster's service
 * tokens get in; `/health` is public), the "auth is off" warning, and the worker's
 * own service token on every request it makes to the master.
 */
import { until } from "../internal/_test_utils.ts";
import assert from "node:assert/strict";
import { RBACManager } from "../auth/rbac.ts";
import { INLINE_ENCODER } from "../format/chunk.ts";
import { MASTER_SERVICE_NAME, serviceToken } from "../cluster/service_token.ts";
import { memoryLogger } from "../master/_test_utils.ts";
import { createWorkerApp } from "./app.ts";
import { stuckRows, testSpec } from "./_test_utils.ts";
import { WorkerNode } from "./worker.ts";

const SECRET = "worker test secret, at least 32 bytes long";

/** A master that is never reached (the app tests do not start the node). */
const unreachable = (() => Promise.reject(new TypeError("no master"))) as typeof fetch;

Deno.test("worker with auth: every route but /health needs the cluster's service token", async (t) => {
  let now = Date.now();
  const rbac = new RBACManager({ secret: SECRET, now: () => new Date(now) });
  const stranger = new RBACManager({ secret: "another secret, also at least 32 bytes" });
  const user = (name: string, namespace: string) => ({
    name,
    can_freeze: true,
    can_thaw: true,
    namespace,
    created_at: "",
  });
  const expired = await rbac.generateServiceToken(MASTER_SERVICE_NAME, { expiresIn: 1 });
  now += 5000;
  const tokens: Record<string, string | null> = {
    none: null,
    forged: await stranger.generateServiceToken(MASTER_SERVICE_NAME),
    expired,
    admin: await rbac.generateToken(user("admin", "*")),
    alice: await rbac.generateToken(user("alice", "team-a")),
    master: await rbac.generateServiceToken(MASTER_SERVICE_NAME),
  };
  const expected: Record<string, number | "ok"> = {
    none: 401,
    forged: 401,
    expired: 401,
    admin: 403,
    alice: 403,
    master: "ok",
  };
  const node = new WorkerNode({
    masterUrl: "http://m",
    workerId: "w1",
    fetch: unreachable,
    logger: memoryLogger().logger,
    encoder: () => INLINE_ENCODER,
    readRows: stuckRows,
  });
  const app = createWorkerApp({ node, logger: memoryLogger().logger, rbac });
  const routes: [string, string, unknown][] = [
    ["POST", "/tasks", testSpec("t1")],
    ["POST", "/tasks/t1/cancel", {}],
    ["DELETE", "/tasks/t1", undefined],
    ["GET", "/openapi.json", undefined],
  ];
  try {
    for (const [method, path, body] of routes) {
      await t.step(`${method} ${path}`, async () => {
        for (const [who, token] of Object.entries(tokens)) {
          const before = node.state.task_id;
          const headers: Record<string, string> = { "content-type": "application/json" };
          if (token !== null) headers.authorization = `Bearer ${token}`;
          const res = await app.request(path, {
            method,
            headers,
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          const json = await res.json();
          const want = expected[who]!;
          if (want === "ok") assert.ok(res.ok, `${who}: ${JSON.stringify(json)}`);
          else {
            assert.equal(res.status, want, `${who}: ${JSON.stringify(json)}`);
            // Nothing a refused caller sent reached the worker: no task started or dropped.
            assert.equal(node.state.task_id, before, who);
          }
        }
      });
    }
    await t.step("the master's token started the task and then dropped it", () => {
      assert.equal(node.state.task_id, null);
    });
    await t.step("/health is public", async () => {
      const res = await app.request("/health");
      assert.equal(res.status, 200);
      assert.equal((await res.json()).worker_id, "w1");
    });
  } finally {
    await node.stop();
  }
});

Deno.test("worker without auth: its app logs one warning when it is built", async () => {
  const node = new WorkerNode({ masterUrl: "http://m", workerId: "w1", fetch: unreachable });
  const { logger, lines } = memoryLogger();
  const app = createWorkerApp({ node, logger });
  const warnings = lines.filter((l) => l.level === "warn");
  assert.equal(warnings.length, 1);
  assert.match(String(warnings[0]!.msg), /auth is off/);
  const res = await app.request("/tasks/x/cancel", { method: "POST" });
  assert.equal(res.status, 200);
  await res.body?.cancel();
  await node.stop();
});

Deno.test("WorkerNode sends its service token to the master, and says so when it is refused", async () => {
  const rbac = new RBACManager({ secret: SECRET });
  const stranger = new RBACManager({ secret: "another secret, also at least 32 bytes" });
  const seen: { path: string; sub: string | null }[] = [];
  let refuse = true;
  const master = (async (input: string | URL | Request, init?: RequestInit) => {
    const path = new URL(String(input)).pathname;
    const header = new Headers(init?.headers).get("authorization") ?? "";
    const who = await rbac.validateToken(header.replace(/^Bearer /, "")).catch(() => null);
    seen.push({ path, sub: who?.sub ?? null });
    if (refuse || who?.kind !== "service") {
      return Response.json({ error: { code: "INVALID_TOKEN", message: "bad signature" } }, {
        status: 401,
      });
    }
    if (path === "/workers/register") {
      return Response.json({ worker_id: "w:1", heartbeat_s: 0.01, url: "http://w", drop: [] });
    }
    return Response.json({ ok: true, drop: [] });
  }) as typeof fetch;
  const { logger, lines } = memoryLogger();
  // A worker id with ':' signs as 'w-1' (token names cannot hold ':').
  const node = new WorkerNode({
    masterUrl: "http://m",
    workerId: "w:1",
    fetch: master,
    logger,
    heartbeatS: 0.01,
    token: serviceToken(rbac, "w-1"),
    // No task thread: registration would wait for it to load (seconds on a busy CI).
    encoder: () => INLINE_ENCODER,
  });
  try {
    node.start("http://w");
    const error = await until(
      "the refusal to be logged as an error",
      () => lines.find((l) => l.level === "error"),
    );
    assert.match(String(error.msg), /refused this worker's token.*PERMAFROST_JWT_SECRET/);
    assert.equal(error.status, 401);
    refuse = false;
    await until("a heartbeat", () => seen.some((s) => s.path.endsWith("/heartbeat")));
    assert.ok(seen.some((s) => s.path === "/workers/w%3A1/heartbeat"), JSON.stringify(seen));
    assert.ok(seen.every((s) => s.sub === "service:w-1"), JSON.stringify(seen));
  } finally {
    await node.stop();
  }
  // And a worker holding another secret never gets in.
  const other = new WorkerNode({
    masterUrl: "http://m",
    workerId: "w2",
    fetch: master,
    logger: memoryLogger().logger,
    token: serviceToken(stranger, "w2"),
    encoder: () => INLINE_ENCODER,
  });
  seen.length = 0;
  other.start("http://w2");
  await until("a registration attempt", () => seen.length > 0);
  await other.stop();
  assert.equal(other.state.status, "registering");
  assert.ok(seen.length > 0, "it tried to register");
  assert.deepEqual(seen.map((s) => s.sub), seen.map(() => null));
});
