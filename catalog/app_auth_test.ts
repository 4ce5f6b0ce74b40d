/**
 * The catalog server with auth on: the 401/403 matrix of every route, namespaces,
 * path confinement to the data roots, and body limits — all through `app.request`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { RBACManager } from "../auth/rbac.ts";
import { memoryUserStore } from "../auth/store.ts";
import { createLogger } from "../internal/log.ts";
import { resolveDataRoots } from "../internal/paths.ts";
import { createCatalogApp } from "./app.ts";
import { Catalog } from "./catalog.ts";
import { makeArchive, tempDir } from "./_test_utils.ts";

const SECRET = "catalog test secret, at least 32 bytes long";

type App = ReturnType<typeof createCatalogApp>;

interface World {
  app: App;
  dir: string;
  data: string;
  tokens: Record<"admin" | "alice" | "reader" | "thawer" | "bob" | "service" | "expired", string>;
  lines: string[];
}

async function withWorld(fn: (w: World) => Promise<void>): Promise<void> {
  const dir = await tempDir("auth");
  const data = join(dir, "data");
  await Deno.mkdir(join(data, "team-a"), { recursive: true });
  await Deno.mkdir(join(data, "team-b"), { recursive: true });
  await Deno.mkdir(join(dir, "outside"), { recursive: true });
  await makeArchive(join(data, "team-a"), "flights", 120, 50);
  await makeArchive(join(data, "team-a"), "sales", 60, 50);
  await makeArchive(join(data, "team-b"), "sales", 80, 50);
  await makeArchive(join(dir, "outside"), "secret", 30, 50);
  await Deno.symlink(join(dir, "outside", "secret.pf"), join(data, "team-a", "escape.pf"));
  await Deno.symlink(join(dir, "outside"), join(data, "team-a", "linked"));
  let now = Date.now();
  const rbac = new RBACManager({
    secret: SECRET,
    store: memoryUserStore(),
    now: () => new Date(now),
  });
  await rbac.addUser({ name: "admin", can_freeze: true, can_thaw: true, namespace: "*" });
  await rbac.addUser({ name: "alice", can_freeze: true, can_thaw: true, namespace: "team-a" });
  await rbac.addUser({ name: "reader", namespace: "team-a" });
  await rbac.addUser({ name: "thawer", can_thaw: true, namespace: "team-a" });
  await rbac.addUser({ name: "bob", can_freeze: true, can_thaw: true, namespace: "team-b" });
  const expired = await rbac.generateToken("alice", { expiresIn: 1 });
  now += 5000;
  const tokens = {
    admin: await rbac.generateToken("admin"),
    alice: await rbac.generateToken("alice"),
    reader: await rbac.generateToken("reader"),
    thawer: await rbac.generateToken("thawer"),
    bob: await rbac.generateToken("bob"),
    service: await rbac.generateServiceToken("worker-1"),
    expired,
  };
  const lines: string[] = [];
  const logger = createLogger({ component: "catalog", level: "warn", sink: (l) => lines.push(l) });
  const catalog = await Catalog.open(join(dir, "c.db"));
  try {
    const app = createCatalogApp({
      catalog,
      logger,
      rbac,
      dataRoots: await resolveDataRoots([data]),
      maxBodyBytes: 4096,
    });
    await fn({ app, dir, data, tokens, lines });
  } finally {
    await catalog.close();
    await Deno.remove(dir, { recursive: true });
  }
}

async function call(
  app: App,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> & { error?: { code: string } } }> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const init: RequestInit = { method, headers };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const res = await app.request(path, init);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/, `${method} ${path}`);
  return { status: res.status, json: await res.json() };
}

interface Route {
  method: string;
  path: string;
  body?: unknown;
  /**
   * Who gets 403 for lack of a right or of namespace `*` (the rest get 2xx; a
   * service token gets 403 everywhere).
   */
  forbidden: (keyof World["tokens"])[];
}

/** Every protected route, with a request that succeeds for an allowed caller. */
const ROUTES: Route[] = [
  { method: "GET", path: "/datasets", forbidden: [] },
  { method: "GET", path: "/datasets/flights", forbidden: [] },
  { method: "GET", path: "/datasets/flights/versions", forbidden: [] },
  { method: "GET", path: "/datasets/flights/chunks", forbidden: [] },
  { method: "GET", path: "/datasets/flights/integrity", forbidden: [] },
  { method: "GET", path: "/search?q=flights", forbidden: [] },
  { method: "GET", path: "/stats", forbidden: ["alice", "reader", "thawer"] },
  { method: "GET", path: "/cost_report", forbidden: ["alice", "reader", "thawer"] },
  {
    method: "POST",
    path: "/sql",
    body: { query: "select count(*) as n from datasets" },
    forbidden: ["alice", "reader", "thawer"],
  },
  {
    method: "POST",
    path: "/datasets/register",
    body: { path: "team-a/flights.pf", name: "flights" },
    forbidden: ["reader", "thawer"],
  },
  {
    method: "POST",
    path: "/datasets/register_dir",
    body: { dir: "team-a" },
    forbidden: ["reader", "thawer"],
  },
  {
    method: "DELETE",
    path: "/datasets/flights?version=v9",
    forbidden: ["reader", "thawer"],
  },
];

Deno.test("catalog app with auth: the 401/403 matrix of every route", async (t) => {
  await withWorld(async ({ app, tokens }) => {
    assert.equal(
      (await call(app, "POST", "/datasets/register", tokens.admin, { path: "team-a/flights.pf" }))
        .status,
      201,
    );
    await t.step("public paths answer without a token", async () => {
      for (const path of ["/", "/health", "/openapi.json"]) {
        assert.equal((await app.request(path)).status, 200, path);
      }
      for (
        const path of ["/docs", "/docs/swagger-ui.css", "/redoc", "/redoc/redoc.standalone.js"]
      ) {
        assert.equal((await app.request(path)).status, 200, path);
      }
    });
    for (const route of ROUTES) {
      await t.step(`${route.method} ${route.path}`, async () => {
        for (
          const [token, code] of [
            [undefined, "UNAUTHORIZED"],
            ["not-a-jwt", "INVALID_TOKEN"],
            [tokens.expired, "TOKEN_EXPIRED"],
          ] as const
        ) {
          const r = await call(app, route.method, route.path, token, route.body);
          assert.equal(r.status, 401, `${token?.slice(0, 10)}: ${JSON.stringify(r.json)}`);
          assert.equal(r.json.error?.code, code);
        }
        const service = await call(app, route.method, route.path, tokens.service, route.body);
        assert.equal(service.status, 403, `service: ${JSON.stringify(service.json)}`);
        assert.equal(service.json.error?.code, "FORBIDDEN");
        assert.match(
          JSON.stringify(service.json),
          /is for users: 'service:worker-1' holds a service token/,
        );
        for (const who of ["admin", "alice", "reader", "thawer"] as const) {
          const r = await call(app, route.method, route.path, tokens[who], route.body);
          if (route.forbidden.includes(who)) {
            assert.equal(r.status, 403, `${who}: ${JSON.stringify(r.json)}`);
            assert.equal(r.json.error?.code, "FORBIDDEN");
          } else {
            // A missing version of a visible dataset is the one 404 a right-holder gets here.
            const ok = r.status < 300 || (route.method === "DELETE" && r.status === 404);
            assert.ok(ok, `${who}: ${r.status} ${JSON.stringify(r.json)}`);
          }
        }
      });
    }
    await t.step("the OpenAPI document declares the bearer scheme", async () => {
      const doc = await (await app.request("/openapi.json")).json();
      assert.equal(doc.components.securitySchemes.bearerAuth.scheme, "bearer");
      assert.deepEqual(doc.paths["/datasets"].get.security, [{ bearerAuth: [] }]);
      assert.equal(doc.paths["/health"].get.security, undefined);
    });
  });
});

Deno.test("catalog app with auth: a token sees and changes only its namespace", async (t) => {
  await withWorld(async ({ app, tokens }) => {
    const register = (who: keyof World["tokens"], path: string, name?: string) =>
      call(app, "POST", "/datasets/register", tokens[who], name ? { path, name } : { path });
    assert.equal((await register("alice", "team-a/flights.pf")).status, 201);
    assert.equal((await register("bob", "team-b/sales.pf")).status, 201);

    await t.step("lists and reads", async () => {
      const names = async (who: keyof World["tokens"]) =>
        ((await call(app, "GET", "/datasets", tokens[who])).json.items as { name: string }[])
          .map((d) => d.name);
      assert.deepEqual(await names("alice"), ["flights"]);
      assert.deepEqual(await names("reader"), ["flights"]);
      assert.deepEqual(await names("bob"), ["sales"]);
      assert.deepEqual(await names("admin"), ["flights", "sales"]);
      const list = await call(app, "GET", "/datasets", tokens.alice);
      assert.equal(list.json.total, 1);
      assert.equal((await call(app, "GET", "/datasets/sales", tokens.alice)).status, 404);
      assert.equal((await call(app, "GET", "/datasets/sales/versions", tokens.alice)).status, 404);
      assert.equal((await call(app, "GET", "/datasets/sales/chunks", tokens.alice)).status, 404);
      assert.equal((await call(app, "GET", "/datasets/sales/integrity", tokens.alice)).status, 404);
      assert.equal((await call(app, "GET", "/datasets/sales", tokens.bob)).status, 200);
    });
    await t.step("search hides other namespaces", async () => {
      const hits = async (who: keyof World["tokens"]) =>
        ((await call(app, "GET", "/search?q=sales", tokens[who])).json.items as unknown[]).length;
      assert.equal(await hits("alice"), 0);
      assert.equal(await hits("bob"), 1);
      assert.equal(await hits("admin"), 1);
    });
    await t.step("another namespace's paths and names are refused", async () => {
      const r = await register("alice", "team-b/sales.pf");
      assert.equal(r.status, 403);
      assert.equal(r.json.error?.code, "FORBIDDEN");
      const name = await register("alice", "team-a/sales.pf");
      assert.equal(name.status, 403, "the name 'sales' belongs to team-b");
      assert.equal((await register("alice", "team-a/sales.pf", "sales-a")).status, 201);
      assert.equal((await call(app, "DELETE", "/datasets/sales", tokens.alice)).status, 404);
      assert.equal((await call(app, "GET", "/datasets/sales", tokens.bob)).status, 200);
      const dir = await call(app, "POST", "/datasets/register_dir", tokens.alice, {
        dir: "team-b",
      });
      assert.equal(dir.status, 403);
    });
    await t.step("register_dir in one's namespace", async () => {
      const r = await call(app, "POST", "/datasets/register_dir", tokens.alice, { dir: "team-a" });
      assert.equal(r.status, 200);
      const failed = r.json.failed as { path: string; error: { code: string } }[];
      assert.deepEqual(
        failed.map((f) => f.error.code),
        ["FORBIDDEN"],
        "team-a/sales.pf as 'sales'",
      );
      const paths = [
        ...(r.json.registered as { path: string }[]),
        ...(r.json.unchanged as { path: string }[]),
      ]
        .map((e) => e.path);
      assert.ok(paths.every((p) => !p.includes("outside")), "symlinks are not followed");
    });
    await t.step("remove", async () => {
      const r = await call(app, "DELETE", "/datasets/flights", tokens.alice);
      assert.equal(r.status, 200);
      assert.deepEqual(r.json.removed, ["v1"]);
    });
  });
});

Deno.test("catalog app with auth: register and register_dir stay inside the data roots", async (t) => {
  await withWorld(async ({ app, tokens, dir, data }) => {
    const attempts: [string, string, string][] = [
      ["path", "../outside/secret.pf", "PATH_OUTSIDE_ROOT"],
      ["path", "team-a/../../outside/secret.pf", "PATH_OUTSIDE_ROOT"],
      ["path", join(dir, "outside", "secret.pf"), "PATH_OUTSIDE_ROOT"],
      ["path", "/etc/passwd", "PATH_OUTSIDE_ROOT"],
      ["path", "team-a/escape.pf", "PATH_OUTSIDE_ROOT"],
      ["path", "team-a/linked/secret.pf", "PATH_OUTSIDE_ROOT"],
      ["path", "team-a/x\u0000.pf", "PATH_INVALID"],
      ["dir", "..", "PATH_OUTSIDE_ROOT"],
      ["dir", join(dir, "outside"), "PATH_OUTSIDE_ROOT"],
      ["dir", "team-a/linked", "PATH_OUTSIDE_ROOT"],
    ];
    for (const [field, value, code] of attempts) {
      for (const who of ["admin", "alice"] as const) {
        await t.step(`${who}: ${field} ${JSON.stringify(value)} → ${code}`, async () => {
          const route = field === "path" ? "/datasets/register" : "/datasets/register_dir";
          const r = await call(app, "POST", route, tokens[who], { [field]: value });
          assert.equal(r.status, code === "PATH_INVALID" ? 400 : 403, JSON.stringify(r.json));
          assert.equal(r.json.error?.code, code);
          const target = join(dir, "outside");
          if (!value.includes(target)) {
            assert.ok(!JSON.stringify(r.json).includes(target), "a symlink's target is not told");
          }
        });
      }
    }
    await t.step("a path the server may not read is 403 in the catalog's words", async () => {
      const attempts: [string, string][] = [["path", "/proc/self/environ"], ["dir", "/proc/self"]];
      for (const [field, value] of attempts) {
        const route = field === "path" ? "/datasets/register" : "/datasets/register_dir";
        const r = await call(app, "POST", route, tokens.admin, { [field]: value });
        assert.equal(r.status, 403, JSON.stringify(r.json));
        assert.ok(
          ["PATH_NOT_ALLOWED", "PATH_OUTSIDE_ROOT"].includes(r.json.error!.code),
          r.json.error!.code,
        );
        assert.ok(JSON.stringify(r.json).includes(value), JSON.stringify(r.json));
        assert.doesNotMatch(JSON.stringify(r.json), /allow-all|run again/);
      }
    });
    await t.step("absolute paths inside a root are fine", async () => {
      const r = await call(app, "POST", "/datasets/register", tokens.alice, {
        path: join(data, "team-a", "flights.pf"),
      });
      assert.equal(r.status, 201);
    });
    const list = await call(app, "GET", "/datasets", tokens.admin);
    assert.deepEqual((list.json.items as { name: string }[]).map((d) => d.name), ["flights"]);
  });
});

Deno.test("catalog app with auth: bodies over the limit are 413, strangers get 401 first", async () => {
  await withWorld(async ({ app, tokens }) => {
    const big = JSON.stringify({ query: `select 1 -- ${"x".repeat(5000)}` });
    const r = await call(app, "POST", "/sql", tokens.admin, big);
    assert.equal(r.status, 413);
    assert.equal(r.json.error?.code, "PAYLOAD_TOO_LARGE");
    assert.equal((await call(app, "POST", "/sql", undefined, big)).status, 401);
  });
});

Deno.test("catalog app without a secret logs that auth is off, and namespaced rules do not apply", async () => {
  const dir = await tempDir("noauth");
  const lines: string[] = [];
  const catalog = await Catalog.open(join(dir, "c.db"));
  try {
    const app = createCatalogApp({
      catalog,
      logger: createLogger({ component: "catalog", level: "warn", sink: (l) => lines.push(l) }),
    });
    assert.ok(lines.some((l) => /auth is off/.test(JSON.parse(l).msg)), lines.join("\n"));
    assert.equal((await app.request("/stats")).status, 200);
  } finally {
    await catalog.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("catalog app with auth: rows need can_thaw and the namespace, and the path is checked where it is read", async () => {
  await withWorld(async ({ app, data, dir, tokens }) => {
    const get = (token: string | undefined, path = "/datasets/flights/rows?rows=0:3") =>
      app.request(path, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    assert.equal(
      (await call(app, "POST", "/datasets/register", tokens.alice, { path: "team-a/flights.pf" }))
        .status,
      201,
    );
    const ok = await get(tokens.thawer);
    assert.equal(ok.status, 200);
    assert.equal((await ok.text()).trim().split("\n").length, 4, "a header and 3 rows");
    assert.equal((await get(undefined)).status, 401);
    for (const who of ["reader", "service"] as const) {
      const r = await get(tokens[who]);
      assert.equal(r.status, 403, who);
      assert.equal((await r.json()).error.code, "FORBIDDEN");
    }
    assert.equal((await get(tokens.bob)).status, 404, "another namespace's dataset is not there");
    // Registered, then swapped for a link out of the data roots: refused when read.
    await Deno.copyFile(join(data, "team-a", "sales.pf"), join(data, "team-a", "swap.pf"));
    assert.equal(
      (await call(app, "POST", "/datasets/register", tokens.alice, { path: "team-a/swap.pf" }))
        .status,
      201,
    );
    await Deno.remove(join(data, "team-a", "swap.pf"));
    await Deno.symlink(join(dir, "outside", "secret.pf"), join(data, "team-a", "swap.pf"));
    const swapped = await get(tokens.alice, "/datasets/swap/rows");
    assert.ok(swapped.status >= 400 && swapped.status < 500, String(swapped.status));
    const body = await swapped.json();
    assert.equal(body.error.code, "PATH_OUTSIDE_ROOT", JSON.stringify(body));
  });
});

Deno.test("catalog app with auth: POST /sql over datasets' rows sees only the caller's namespace", async () => {
  await withWorld(async ({ app, tokens }) => {
    assert.equal(
      (await call(app, "POST", "/datasets/register", tokens.alice, { path: "team-a/flights.pf" }))
        .status,
      201,
    );
    const query = { query: "SELECT count(*) AS n FROM flights" };
    const alice = await call(app, "POST", "/sql", tokens.alice, query);
    assert.equal(alice.status, 200, JSON.stringify(alice.json));
    assert.equal(Number((alice.json.rows as unknown[][])[0]![0]), 120);
    assert.equal((await call(app, "POST", "/sql", tokens.thawer, query)).status, 200);
    assert.equal(
      (await call(app, "POST", "/sql", tokens.reader, query)).status,
      403,
      "no can_thaw",
    );
    // Another namespace's dataset is not a table it can read.
    const bob = await call(app, "POST", "/sql", tokens.bob, query);
    assert.equal(bob.status, 403, JSON.stringify(bob.json));
  });
});
