import assert from "node:assert/strict";
import { join } from "node:path";
import { RBACManager } from "../auth/rbac.ts";
import { openSqliteUserStore } from "../auth/sqlite_store.ts";
import { createLogger } from "../internal/log.ts";
import { createCatalogApp } from "./app.ts";
import { Catalog } from "./catalog.ts";
import { catalogSecurity, serveCatalog } from "./server.ts";
import { tempDir } from "./_test_utils.ts";

Deno.test("serveCatalog() prints its URL, serves the app and closes the catalog on shutdown", async () => {
  const dir = await tempDir("serve");
  const lines: string[] = [];
  const server = await serveCatalog({
    db: join(dir, "c.db"),
    port: 0,
    print: (l) => lines.push(l),
    logger: createLogger({ component: "catalog", sink: () => {} }),
  });
  try {
    assert.deepEqual(lines, [`Catalog serving at ${server.url} — docs: ${server.url}/docs`]);
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${server.url}/health`);
    assert.deepEqual(await res.json(), {
      status: "ok",
      version: JSON.parse(Deno.readTextFileSync("deno.json")).version,
      datasets: 0,
      versions: 0,
    });
  } finally {
    await server.shutdown();
  }
  await assert.rejects(server.catalog.stats(), { code: "CLOSED" });
  await Deno.remove(dir, { recursive: true });
});

Deno.test("serveCatalog() with a JWT secret answers 401 without a token, 200 with one", async () => {
  const dir = await tempDir("serve-auth");
  const lines: string[] = [];
  const server = await serveCatalog({
    db: join(dir, "c.db"),
    port: 0,
    jwtSecret: "a serve test secret of at least 32 bytes",
    dataRoots: [dir],
    print: () => {},
    logger: createLogger({ component: "catalog", level: "warn", sink: (l) => lines.push(l) }),
  });
  try {
    assert.equal((await (await fetch(`${server.url}/health`)).json()).status, "ok");
    const denied = await fetch(`${server.url}/datasets`);
    assert.equal(denied.status, 401);
    assert.equal(denied.headers.get("www-authenticate"), 'Bearer realm="permafrost"');
    await denied.body?.cancel();
    const token = await new RBACManager({ secret: "a serve test secret of at least 32 bytes" })
      .generateToken({
        name: "ops",
        can_freeze: false,
        can_thaw: false,
        namespace: "*",
        created_at: "",
      });
    const ok = await fetch(`${server.url}/datasets`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    assert.ok(!lines.some((l) => /auth is off|no data roots/.test(l)), lines.join("\n"));
    assert.ok(lines.some((l) => /without a user store/.test(l)), lines.join("\n"));
  } finally {
    await server.shutdown();
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("catalogSecurity() with a users db refuses a removed user's token at once", async () => {
  const dir = await tempDir("users");
  const secret = "a users-db test secret of at least 32 bytes";
  const usersDb = join(dir, "users.db");
  // What `cluster add-user` does: its own handle on the master's store file.
  const cli = openSqliteUserStore(usersDb);
  const admin = new RBACManager({ secret, store: cli });
  await admin.addUser({ name: "alice", can_freeze: true, can_thaw: true, namespace: "*" });
  const token = await admin.generateToken("alice");
  const lines: string[] = [];
  const logger = createLogger({ component: "catalog", level: "warn", sink: (l) => lines.push(l) });
  const security = await catalogSecurity({ jwtSecret: secret, usersDb }, logger);
  const catalog = await Catalog.open(join(dir, "c.db"));
  try {
    const app = createCatalogApp({ catalog, logger, rbac: security.rbac });
    const get = (path: string) =>
      app.request(path, { headers: { authorization: `Bearer ${token}` } });
    for (const path of ["/datasets", "/stats"]) assert.equal((await get(path)).status, 200, path);
    assert.ok(!lines.some((l) => /without a user store/.test(l)), lines.join("\n"));
    await admin.removeUser("alice");
    for (const path of ["/datasets", "/stats"]) {
      const r = await get(path);
      assert.equal(r.status, 401, path);
      const body = await r.json();
      assert.equal(body.error.code, "INVALID_TOKEN");
      assert.match(body.error.message, /'alice' no longer exists/);
    }
  } finally {
    await catalog.close();
    security.close();
    cli.close();
    await Deno.remove(dir, { recursive: true });
  }
});
