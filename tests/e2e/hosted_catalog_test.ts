/**
 * The hosted catalog (`catalog/hosted.ts`) as a host without native code or a disk runs
 * it: `deno serve` with exactly the permissions of `deno task catalog:hosted` — no
 * `--allow-ffi`, `--allow-write` or `--allow-run`, `--allow-read` only for its own
 * modules and duckdb-wasm's files — its records in Deno KV (the host's default KV,
 * kept apart per test by `--location`), archives in a real S3 server (`s3rver`).
 *
 * Through REST as a user calls it: register `s3://` archives, list/get/versions/
 * chunks/columns/search/stats, rows, `/sql` over the catalog and over datasets' rows,
 * integrity, removal; tokens confined to their namespace (other namespaces' data
 * refused through `/rows` and `/sql`); a corrupted archive is a typed error, never
 * rows; and a SIGKILL and restart keep every record.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { startS3rver } from "../_s3rver.ts";
import { freeze } from "../../ops/freeze.ts";
import { RBACManager } from "../../auth/rbac.ts";
import { hostedReadPaths } from "../../catalog/hosted_permissions.ts";
import { storeFor } from "../../storage/registry.ts";

const SECRET = "hosted catalog e2e secret, 32 bytes or more!";
const server = await startS3rver("lake");
const rbac = new RBACManager({ secret: SECRET });
const admin = await rbac.generateToken({
  name: "admin",
  can_freeze: true,
  can_thaw: true,
  namespace: "*",
  created_at: new Date().toISOString(),
});
const teamA = await rbac.generateToken({
  name: "ann",
  can_freeze: true,
  can_thaw: true,
  namespace: "team-a",
  created_at: new Date().toISOString(),
});

interface Hosted {
  url: string;
  child: Deno.ChildProcess;
  stderr: () => string;
}

/** Starts `deno serve catalog/hosted.ts` as the task does, on a free port. */
async function startHosted(location: string): Promise<Hosted> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "serve",
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--unstable-kv",
      "--location",
      location,
      "--allow-net",
      "--allow-sys=cpus",
      `--allow-read=${hostedReadPaths().join(",")}`,
      "--allow-env=PERMAFROST_*,AWS_*",
      "catalog/hosted.ts",
    ],
    env: {
      ...server.env,
      PERMAFROST_JWT_SECRET: SECRET,
      PERMAFROST_DATA_ROOTS: "s3://lake/",
      PERMAFROST_LOG_LEVEL: "warn",
      // duckdb-wasm thaws a dataset's rows on one thread: on a loaded machine the
      // default 5 s limit is too close to what the data queries below take.
      PERMAFROST_CATALOG_SQL_TIMEOUT_MS: "60000",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // deno serve says where it listens on stderr, with the catalog's own log lines.
  let err = "";
  const decoder = new TextDecoder();
  const listening = /Listening on http:\/\/[^\s/]+:(\d+)/;
  let heard: (port: string) => void = () => {};
  const port = new Promise<string>((resolve) => (heard = resolve));
  const reading = (async () => {
    for await (const chunk of child.stderr) {
      err += decoder.decode(chunk);
      const m = listening.exec(err);
      if (m) heard(m[1]!);
    }
  })();
  child.stdout.pipeTo(new WritableStream()).catch(() => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`hosted catalog did not start in 60 s: ${err}`));
    }, 60_000);
  });
  const exited = reading.then(() => {
    throw new Error(`hosted catalog exited: ${err}`);
  });
  try {
    const p = await Promise.race([port, late, exited]);
    return { url: `http://127.0.0.1:${p}`, child, stderr: () => err };
  } finally {
    clearTimeout(timer);
    exited.catch(() => {});
  }
}

async function stop(h: Hosted): Promise<void> {
  try {
    h.child.kill("SIGKILL");
  } catch {
    // gone already
  }
  await h.child.status;
}

async function call(
  h: Hosted,
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown>; text: string; type: string }> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${h.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const type = res.headers.get("content-type") ?? "";
  let json: Record<string, unknown> = {};
  if (type.startsWith("application/json")) json = JSON.parse(text);
  return { status: res.status, json, text, type };
}

function code(r: { json: Record<string, unknown> }): string | undefined {
  return (r.json.error as { code?: string } | undefined)?.code;
}

async function csv(dir: string, name: string, rows: number): Promise<string> {
  const path = join(dir, `${name}.csv`);
  const lines = ["id,day,delay,origin"];
  for (let i = 0; i < rows; i++) {
    const day = `2024-01-${String(1 + (i % 28)).padStart(2, "0")}`;
    lines.push(`${i},${day},${(i * 7) % 31 - 5},${["SEA", "SFO", "JFK"][i % 3]}`);
  }
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
  return path;
}

Deno.test("hosted catalog: REST on Deno KV and duckdb-wasm, no FFI, no disk; a restart keeps every record", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "permafrost-hosted-" });
  const location = `http://permafrost-hosted-${crypto.randomUUID()}.test/`;
  await freeze(await csv(dir, "flights", 3000), "s3://lake/team-a/flights.pf", {
    chunkRows: 500,
    threads: 0,
  });
  await freeze(await csv(dir, "flights2", 1000), "s3://lake/team-a/flights-v2.pf", {
    chunkRows: 500,
    threads: 0,
  });
  await freeze(await csv(dir, "secret", 200), "s3://lake/team-b/secret.pf", {
    chunkRows: 100,
    threads: 0,
  });
  let h = await startHosted(location);
  try {
    await t.step("health, and every route needs a token", async () => {
      const health = await call(h, "GET", "/health", null);
      assert.equal(health.status, 200);
      assert.equal((await call(h, "GET", "/datasets", null)).status, 401);
    });

    await t.step("register s3:// archives; versions of one name", async () => {
      const a = await call(h, "POST", "/datasets/register", teamA, {
        path: "s3://lake/team-a/flights.pf",
        name: "flights",
      });
      assert.equal(a.status, 201, a.text);
      assert.equal((a.json.dataset as { rows: number }).rows, 3000);
      const b = await call(h, "POST", "/datasets/register", teamA, {
        path: "s3://lake/team-a/flights-v2.pf",
        name: "flights",
      });
      assert.equal(b.status, 201, b.text);
      assert.equal((b.json.dataset as { version: string }).version, "v2");
      const again = await call(h, "POST", "/datasets/register", teamA, {
        path: "s3://lake/team-a/flights-v2.pf",
        name: "flights",
      });
      assert.equal(again.status, 200, again.text);
      const other = await call(h, "POST", "/datasets/register", teamA, {
        path: "s3://lake/team-b/secret.pf",
      });
      assert.equal(other.status, 403, other.text);
      const secret = await call(h, "POST", "/datasets/register", admin, {
        path: "s3://lake/team-b/secret.pf",
      });
      assert.equal(secret.status, 201, secret.text);
      const local = await call(h, "POST", "/datasets/register", admin, { path: "/etc/hosts" });
      assert.equal(local.status, 403, local.text);
    });

    await t.step("reads: list, get, versions, chunks, columns, search, stats", async () => {
      const list = await call(h, "GET", "/datasets", admin);
      assert.deepEqual((list.json.items as { name: string }[]).map((d) => d.name), [
        "flights",
        "secret",
      ]);
      const mine = await call(h, "GET", "/datasets", teamA);
      assert.deepEqual((mine.json.items as { name: string }[]).map((d) => d.name), ["flights"]);
      const got = await call(h, "GET", "/datasets/flights?version=v1", teamA);
      assert.equal(got.json.rows, 3000);
      assert.equal(got.json.versions, 2);
      const versions = await call(h, "GET", "/datasets/flights/versions", teamA);
      assert.deepEqual((versions.json.items as { version: string }[]).map((v) => v.version), [
        "v2",
        "v1",
      ]);
      const chunks = await call(h, "GET", "/datasets/flights/chunks?version=v1", teamA);
      assert.equal(chunks.json.total, 6);
      const columns = await call(h, "GET", "/datasets/flights/columns", teamA);
      assert.deepEqual(
        (columns.json.columns as { name: string }[]).map((c) => c.name),
        ["id", "day", "delay", "origin"],
      );
      const found = await call(h, "GET", "/search?q=flight", teamA);
      assert.deepEqual((found.json.items as { name: string }[]).map((x) => x.name), ["flights"]);
      const stats = await call(h, "GET", "/stats", admin);
      assert.equal(stats.status, 200, stats.text);
      assert.equal(stats.json.versions, 3);
      assert.equal((await call(h, "GET", "/datasets/secret", teamA)).status, 404);
    });

    await t.step("rows, streamed; other namespaces' rows refused", async () => {
      const rows = await call(
        h,
        "GET",
        "/datasets/flights/rows?version=v1&rows=10:13&columns=id,origin&format=csv",
        teamA,
      );
      assert.equal(rows.status, 200, rows.text);
      assert.equal(rows.text, "id,origin\n10,SFO\n11,JFK\n12,SEA\n");
      const bad = await call(h, "GET", "/datasets/flights/rows?rows=5:2", teamA);
      assert.equal(bad.status, 400, bad.text);
      const where = await call(h, "GET", "/datasets/flights/rows?where=nope%20%3D%201", teamA);
      assert.equal(where.status, 400, where.text);
      assert.match(where.text, /nope/);
      assert.equal((await call(h, "GET", "/datasets/secret/rows", teamA)).status, 404);
    });

    await t.step("/sql over the catalog (operators) and over datasets' rows", async () => {
      const meta = await call(h, "POST", "/sql", admin, {
        query: "select name, count(*) as n, sum(rows) as r from datasets group by 1 order by 1",
      });
      assert.equal(meta.status, 200, meta.text);
      assert.deepEqual(meta.json.rows, [["flights", 2, 4000], ["secret", 1, 200]]);
      const forbidden = await call(h, "POST", "/sql", teamA, {
        query: "select count(*) from datasets",
      });
      assert.equal(forbidden.status, 403, forbidden.text);
      const data = await call(h, "POST", "/sql", teamA, {
        query:
          "select origin, count(*) as n, min(id) as first, min(day) as day from flights group by 1 order by 1",
      });
      assert.equal(data.status, 200, data.text);
      assert.deepEqual(data.json.rows, [
        ["JFK", 333, 2, "2024-01-01"],
        ["SEA", 334, 0, "2024-01-01"],
        ["SFO", 333, 1, "2024-01-01"],
      ]);
      const old = await call(h, "POST", "/sql", teamA, {
        query: 'select count(*) as n from "flights@v1"',
      });
      assert.deepEqual(old.json.rows, [[3000]], old.text);
      // Another namespace's dataset is no dataset to this token: the query reads only
      // unknown names, which is a query over the catalog's tables, for operators only.
      const theirs = await call(h, "POST", "/sql", teamA, { query: "select * from secret" });
      assert.equal(theirs.status, 403, theirs.text);
      assert.equal(code(theirs), "FORBIDDEN");
      const mixed = await call(h, "POST", "/sql", teamA, {
        query: "select * from flights, secret",
      });
      assert.equal(mixed.status, 400, mixed.text);
      assert.doesNotMatch(mixed.text, /team-b/);
      const file = await call(h, "POST", "/sql", teamA, {
        query: "select * from flights, read_csv('/etc/passwd')",
      });
      assert.equal(file.status, 400, file.text);
      assert.equal(code(file), "SQL_REFUSED");
      const write = await call(h, "POST", "/sql", admin, { query: "delete from datasets" });
      assert.equal(code(write), "SQL_REFUSED", write.text);
    });

    await t.step(
      "a corrupted archive: integrity names it, rows and SQL are typed errors",
      async () => {
        const uri = "s3://lake/team-a/flights-v2.pf";
        const store = storeFor(uri);
        const { bytes } = await store.read(uri);
        const damaged = bytes.slice();
        damaged[damaged.length >> 1] = damaged[damaged.length >> 1]! ^ 0xff;
        const upload = await store.upload(uri);
        await upload.putPart(damaged);
        await upload.complete();
        assert.notEqual(
          createHash("sha256").update(bytes).digest("hex"),
          createHash("sha256").update(damaged).digest("hex"),
        );
        const report = await call(h, "GET", "/datasets/flights/integrity", teamA);
        assert.equal(report.json.ok, false, report.text);
        const sql = await call(h, "POST", "/sql", teamA, {
          query: "select count(*), sum(id), sum(delay), max(day), max(origin) from flights",
        });
        assert.ok(sql.status >= 400 && sql.status < 500, sql.text);
        assert.ok(!("rows" in sql.json), sql.text);
      },
    );

    await t.step("SIGKILL and restart: every record is still there", async () => {
      const before = await call(h, "GET", "/datasets?all_versions=true", admin);
      await stop(h);
      h = await startHosted(location);
      const after = await call(h, "GET", "/datasets?all_versions=true", admin);
      assert.equal(after.status, 200, after.text);
      assert.deepEqual(after.json, before.json);
      const removed = await call(h, "DELETE", "/datasets/flights?version=v1", teamA);
      assert.equal(removed.status, 200, removed.text);
      await stop(h);
      h = await startHosted(location);
      const versions = await call(h, "GET", "/datasets/flights/versions", teamA);
      assert.deepEqual((versions.json.items as { version: string }[]).map((v) => v.version), [
        "v2",
      ]);
    });
  } finally {
    await stop(h);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hosted catalog: the catalog's whole REST suite passes on the KV store with no FFI and no subprocess", async () => {
  // The suite makes its archives and its KV file under .tmp, so it may write there;
  // nothing else is granted that the hosted entry does not have (no --allow-ffi, no
  // --allow-run): DuckDB's native addon cannot load, and nothing needs it.
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "test",
      "-q",
      "--unstable-kv",
      "--allow-net",
      "--allow-env",
      "--allow-sys=cpus",
      "--allow-read",
      "--allow-write=.tmp",
      "catalog/app_kv_test.ts",
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, text.slice(-3000));
  assert.match(text, / \d+ passed .*\| 0 failed/);
});

Deno.test("hosted catalog: teardown of the S3 server", async () => {
  await server.stop();
});
