import assert from "node:assert/strict";
import { Hono } from "hono";
import { createErrorHandler } from "../../internal/http_error.ts";
import { createLogger } from "../../internal/log.ts";
import { RBACManager } from "../rbac.ts";
import { memoryUserStore } from "../store.ts";
import type { ClusterUser } from "../types.ts";
import {
  type AuthEnv,
  bearerAuth,
  requireClaim,
  requireService,
  requireUser,
  seesNamespace,
} from "./index.ts";

const SECRET = "a test secret that is at least 32 bytes long";

function user(name: string, rights: Partial<ClusterUser> = {}): ClusterUser {
  return {
    name,
    can_freeze: false,
    can_thaw: false,
    namespace: "team-a",
    created_at: new Date(0).toISOString(),
    ...rights,
  };
}

function app(rbac: RBACManager | null, lines: string[] = []) {
  const logger = createLogger({ component: "test", sink: (l) => lines.push(l) });
  const a = new Hono<AuthEnv>();
  a.onError(createErrorHandler());
  a.use(bearerAuth({ rbac, publicPaths: ["/health", "/docs", "/docs/*"], logger }));
  a.get("/health", (c) => c.json({ ok: true, auth: c.get("auth") }));
  a.get("/docs/app.js", (c) => c.text("js"));
  a.get("/me", (c) => c.json(c.get("auth")));
  a.post("/freeze", requireClaim("can_freeze"), (c) => c.json({ ok: true }));
  a.post("/thaw", requireClaim("can_thaw"), (c) => c.json({ ok: true }));
  a.post("/internal", requireService(), (c) => c.json({ ok: true }));
  a.post("/people", requireUser(), (c) => c.json({ ok: true }));
  return a;
}

async function call(a: Hono<AuthEnv>, method: string, path: string, token?: string) {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = token;
  const res = await a.request(path, { method, headers });
  return { status: res.status, res, body: await res.json() };
}

Deno.test("bearerAuth() answers 401 without a valid token and lets public paths through", async (t) => {
  const c = { t: Date.parse("2024-01-01T00:00:00Z") };
  const rbac = new RBACManager({ secret: SECRET, now: () => new Date(c.t) });
  const a = app(rbac);
  const good = await rbac.generateToken(user("alice"), { expiresIn: "1h" });
  await t.step("public paths need no token", async () => {
    assert.equal((await call(a, "GET", "/health")).status, 200);
    assert.equal((await a.request("/docs/app.js")).status, 200);
  });
  for (
    const [name, header, code] of [
      ["no header", undefined, "UNAUTHORIZED"],
      ["empty header", "", "UNAUTHORIZED"],
      ["another scheme", `Basic ${btoa("alice:pw")}`, "INVALID_TOKEN"],
      ["no token after Bearer", "Bearer ", "INVALID_TOKEN"],
      ["a forged token", `Bearer ${good.slice(0, -3)}abc`, "INVALID_TOKEN"],
      [
        "a token of another secret",
        `Bearer ${await new RBACManager({ secret: "y".repeat(40) }).generateToken(user("alice"))}`,
        "INVALID_TOKEN",
      ],
    ] as const
  ) {
    await t.step(`${name}: 401 ${code} with a Bearer challenge`, async () => {
      const r = await call(a, "GET", "/me", header);
      assert.equal(r.status, 401);
      assert.equal(r.body.error.code, code);
      assert.equal(typeof r.body.error.message, "string");
      assert.match(r.res.headers.get("www-authenticate") ?? "", /^Bearer realm="permafrost"$/);
    });
  }
  await t.step("the scheme is case-insensitive; claims land in c.get('auth')", async () => {
    const r = await call(a, "GET", "/me", `bearer ${good}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.sub, "alice");
    assert.equal(r.body.namespace, "team-a");
  });
  await t.step("an expired token: 401 TOKEN_EXPIRED", async () => {
    c.t += 3601_000;
    const r = await call(a, "GET", "/me", `Bearer ${good}`);
    assert.equal(r.status, 401);
    assert.equal(r.body.error.code, "TOKEN_EXPIRED");
  });
});

Deno.test("requireClaim(), requireService() and requireUser() answer 403 without the right", async (t) => {
  const rbac = new RBACManager({ secret: SECRET, store: memoryUserStore() });
  const a = app(rbac);
  await rbac.addUser({ name: "freezer", can_freeze: true, namespace: "a" });
  await rbac.addUser({ name: "thawer", can_thaw: true, namespace: "a" });
  const tokens = {
    freezer: `Bearer ${await rbac.generateToken("freezer")}`,
    thawer: `Bearer ${await rbac.generateToken("thawer")}`,
    service: `Bearer ${await rbac.generateServiceToken("worker-1")}`,
  };
  const matrix: [keyof typeof tokens, string, number][] = [
    ["freezer", "/freeze", 200],
    ["freezer", "/thaw", 403],
    ["freezer", "/internal", 403],
    ["thawer", "/freeze", 403],
    ["thawer", "/thaw", 200],
    ["thawer", "/internal", 403],
    ["service", "/freeze", 403],
    ["service", "/thaw", 403],
    ["service", "/internal", 200],
    ["freezer", "/people", 200],
    ["thawer", "/people", 200],
    ["service", "/people", 403],
  ];
  for (const [who, path, status] of matrix) {
    await t.step(`${who} POST ${path} → ${status}`, async () => {
      const r = await call(a, "POST", path, tokens[who]);
      assert.equal(r.status, status, JSON.stringify(r.body));
      if (status === 403) assert.equal(r.body.error.code, "FORBIDDEN");
    });
  }
  await t.step("a removed user's token is refused at once", async () => {
    await rbac.removeUser("thawer");
    assert.equal((await call(a, "POST", "/thaw", tokens.thawer)).status, 401);
  });
});

Deno.test("bearerAuth({rbac: null}) turns auth off and warns once, at build time", async () => {
  const lines: string[] = [];
  const a = app(null, lines);
  assert.equal(lines.length, 1);
  assert.match(JSON.parse(lines[0]!).msg, /auth is off/);
  assert.equal(JSON.parse(lines[0]!).level, "warn");
  for (const path of ["/freeze", "/thaw", "/internal", "/people"]) {
    assert.equal((await call(a, "POST", path)).status, 200);
  }
  assert.equal((await call(a, "GET", "/me")).body, null);
  assert.equal(lines.length, 1);
});

Deno.test("bearerAuth() refuses a malformed public path at build time", () => {
  assert.throws(() => bearerAuth({ rbac: null, publicPaths: ["health"] }), TypeError);
});

Deno.test("seesNamespace() lets '*' and auth-off see everything, others only their own", () => {
  const who = { kind: "user" as const, sub: "a", can_freeze: true, can_thaw: true, exp: 0 };
  assert.equal(seesNamespace(null, null), true);
  assert.equal(seesNamespace({ ...who, namespace: "*" }, null), true);
  assert.equal(seesNamespace({ ...who, namespace: "a" }, "a"), true);
  assert.equal(seesNamespace({ ...who, namespace: "a" }, "b"), false);
  assert.equal(seesNamespace({ ...who, namespace: "a" }, ""), false);
  assert.equal(seesNamespace({ ...who, namespace: "a" }, null), false);
});
