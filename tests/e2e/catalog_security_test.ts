/**
 * The catalog server's auth and SQL limits as users meet them, with real processes:
 * `catalog serve` with a JWT secret and the user store that `main.ts cluster
 * add-user` / `remove-user` write (a removed user is refused at once), and a query
 * DuckDB is slow to interrupt (the server answers 408 at its limit while another
 * query goes through). Every child is stopped in `finally`; nothing asserts a duration.
 */
import assert from "node:assert/strict";
import { until } from "../../internal/_test_utils.ts";
import { join } from "node:path";
import { LONG_UNINTERRUPTIBLE_SQL } from "../../catalog/_test_utils.ts";
import {
  type CatalogProcess,
  E2E_CATALOG_TMP,
  startCatalogServer,
  stopCatalogServer,
} from "./_catalog_server.ts";

const SECRET = "e2e catalog secret, at least 32 bytes long!";

/** `main.ts cluster <args>` as the `cli` task runs it. */
async function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--allow-read",
      "--allow-write",
      "--allow-env=PERMAFROST_*",
      "--allow-ffi",
      "--allow-net",
      "--allow-run=zpaq",
      "main.ts",
      "cluster",
      ...args,
    ],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

async function request(
  url: string,
  init: RequestInit & { token?: string } = {},
): Promise<
  { status: number; json: { error?: { code: string; message: string } } & Record<string, unknown> }
> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const res = await fetch(url, { ...init, headers });
  return { status: res.status, json: await res.json() };
}

/** Waits until the server's stderr holds a line matching `pattern`. */
function untilLogged(server: CatalogProcess, pattern: RegExp): Promise<true> {
  return until(`the server to log ${pattern}`, () => pattern.test(server.stderr()), {
    timeoutMs: 30_000,
    intervalMs: 50,
  });
}

Deno.test("catalog serve with a users db: cluster remove-user locks the user out of the catalog at once", async () => {
  await Deno.mkdir(E2E_CATALOG_TMP, { recursive: true });
  const dir = await Deno.makeTempDir({ dir: E2E_CATALOG_TMP, prefix: "users-" });
  const env = { PERMAFROST_JWT_SECRET: SECRET, PERMAFROST_USERS_DB: join(dir, "users.db") };
  try {
    const added = await cli(["add-user", "alice", "--can-thaw", "--namespace", "*"], env);
    assert.equal(added.code, 0, added.stderr);
    const token = added.stdout.trim();
    const server = await startCatalogServer(join(dir, "catalog.db"), { env });
    try {
      assert.doesNotMatch(server.stderr(), /without a user store/);
      const before = await request(`${server.url}/datasets`, { token });
      assert.equal(before.status, 200, JSON.stringify(before.json));

      const removed = await cli(["remove-user", "alice"], env);
      assert.equal(removed.code, 0, removed.stderr);

      for (const path of ["/datasets", "/stats"]) {
        const after = await request(`${server.url}${path}`, { token });
        assert.equal(after.status, 401, `${path}: ${JSON.stringify(after.json)}`);
        assert.equal(after.json.error?.code, "INVALID_TOKEN");
      }
      const sql = await request(`${server.url}/sql`, {
        method: "POST",
        token,
        body: JSON.stringify({ query: "select 1" }),
      });
      assert.equal(sql.status, 401);
    } finally {
      const status = await stopCatalogServer(server, "SIGTERM");
      assert.equal(status.code, 0, server.stderr());
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("catalog serve answers 408 at the SQL time limit while another query goes through", async () => {
  await Deno.mkdir(E2E_CATALOG_TMP, { recursive: true });
  const dir = await Deno.makeTempDir({ dir: E2E_CATALOG_TMP, prefix: "sqltime-" });
  try {
    const server = await startCatalogServer(join(dir, "catalog.db"), {
      // Long enough that the short query is answered first even on a loaded machine.
      args: ["--sql-timeout-ms", "3000", "--log-level", "debug"],
    });
    try {
      const sql = (query: string) =>
        request(`${server.url}/sql`, { method: "POST", body: JSON.stringify({ query }) });
      const order: string[] = [];
      const long = sql(LONG_UNINTERRUPTIBLE_SQL).then((r) => {
        order.push("long");
        return r;
      });
      // The long query holds a connection before the short one is sent.
      await untilLogged(server, /sql query running/);
      const quick = await sql("select 1 as one");
      order.push("select 1");
      assert.equal(quick.status, 200, JSON.stringify(quick.json));
      assert.deepEqual(quick.json.rows, [[1]]);
      const timedOut = await long;
      assert.equal(timedOut.status, 408, JSON.stringify(timedOut.json));
      assert.equal(timedOut.json.error?.code, "SQL_TIMEOUT");
      assert.deepEqual(order, ["select 1", "long"]);
      // Answered at the limit, not when DuckDB let go of the query.
      assert.doesNotMatch(server.stderr(), /interrupted sql query has stopped/);
    } finally {
      // A clean stop waits for DuckDB to give the interrupted query up.
      const status = await stopCatalogServer(server, "SIGTERM");
      assert.equal(status.code, 0, server.stderr());
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
