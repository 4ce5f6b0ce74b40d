import assert from "node:assert/strict";
import { join } from "node:path";
import { createLogger } from "../internal/log.ts";
import { createCatalogApp } from "./app.ts";
import type { Catalog } from "./catalog.ts";
import type { CatalogOptions } from "./options.ts";
import { createHash } from "node:crypto";
import { fakeIndex, logWatch, makeArchive, tempDir, UNINTERRUPTIBLE_SQL } from "./_test_utils.ts";

/**
 * The catalog's REST suite, run against each store: `app_test.ts` (a DuckDB file) and
 * `app_kv_test.ts` (Deno KV with the duckdb-wasm mirror). Where the two engines answer
 * differently by design (which statements are refused by name, how a query is stopped
 * at its time limit), the test says so and checks each engine's answer.
 *
 * @module
 */

/** A store the suite runs against. */
export interface RestSuite {
  /** Prefix of the test names. */
  label: string;
  /** The engine the store's SQL runs on. */
  engine: "duckdb" | "duckdb-wasm";
  /** Opens a fresh catalog whose records live in `dir`. */
  open(dir: string, options: CatalogOptions): Promise<Catalog>;
}

type App = ReturnType<typeof createCatalogApp>;

/**
 * Registers the suite's tests.
 *
 * @param suite The store.
 */
export function restSuite(suite: RestSuite): void {
  async function withApp(
    fn: (app: App, dir: string, catalog: Catalog) => Promise<void>,
  ): Promise<void> {
    const dir = await tempDir("app");
    const catalog = await suite.open(dir, { sql: { maxRows: 50, timeoutMs: 2000 } });
    const logger = createLogger({ component: "catalog", level: "error", sink: () => {} });
    try {
      await fn(createCatalogApp({ catalog, logger, maxBodyBytes: 4096 }), dir, catalog);
    } finally {
      await catalog.close();
      await Deno.remove(dir, { recursive: true });
    }
  }

  async function call(
    app: App,
    method: string,
    path: string,
    body?: unknown,
    contentType = "application/json",
  ): Promise<
    {
      status: number;
      json: Record<string, unknown> & { error?: { code: string; message: string } };
    }
  > {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body);
      init.headers = { "content-type": contentType };
    }
    const res = await app.request(path, init);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/, `${method} ${path}`);
    return { status: res.status, json: await res.json() };
  }

  function assertError(
    r: { status: number; json: { error?: { code: string } } },
    status: number,
    code: string,
  ) {
    assert.equal(r.status, status, JSON.stringify(r.json));
    assert.equal(r.json.error?.code, code, JSON.stringify(r.json));
    assert.equal(typeof (r.json.error as { message?: unknown }).message, "string");
  }

  Deno.test(`${suite.label}: catalog app registers archives over POST /datasets/register`, async (t) => {
    await withApp(async (app, dir) => {
      const path = await makeArchive(dir, "flights", 120, 50);
      await t.step("201 with the new version", async () => {
        const r = await call(app, "POST", "/datasets/register", {
          path,
          name: "flights",
          version: "2001-h1",
        });
        assert.equal(r.status, 201);
        assert.equal(r.json.created, true);
        const ds = r.json.dataset as {
          name: string;
          version: string;
          rows: number;
          chunks: number;
        };
        assert.deepEqual([ds.name, ds.version, ds.rows, ds.chunks], ["flights", "2001-h1", 120, 3]);
      });
      await t.step("200 when the same archive is registered again", async () => {
        const r = await call(app, "POST", "/datasets/register", {
          path,
          name: "flights",
          version: "2001-h1",
        });
        assert.equal(r.status, 200);
        assert.equal(r.json.created, false);
      });
      await t.step("curl -d sends a form content type: still JSON", async () => {
        const r = await call(
          app,
          "POST",
          "/datasets/register",
          JSON.stringify({ path, name: "flights2" }),
          "application/x-www-form-urlencoded",
        );
        assert.equal(r.status, 201);
      });
      await t.step("409 when the version holds other content", async () => {
        const other = await makeArchive(dir, "other", 30, 50);
        assertError(
          await call(app, "POST", "/datasets/register", {
            path: other,
            name: "flights",
            version: "2001-h1",
          }),
          409,
          "CONFLICT",
        );
      });
      await t.step("422 for a missing file or a non-archive", async () => {
        assertError(
          await call(app, "POST", "/datasets/register", { path: join(dir, "no.pf") }),
          422,
          "ARCHIVE_UNREADABLE",
        );
        await Deno.writeTextFile(join(dir, "x.pf"), "secret: hunter2 and more");
        const foreign = await call(app, "POST", "/datasets/register", { path: join(dir, "x.pf") });
        assertError(foreign, 422, "ARCHIVE_UNREADABLE");
        assert.match(foreign.json.error!.message, /BAD_MAGIC.*not a Permafrost archive/);
        // The file's first bytes are not echoed, as text or as hex.
        assert.doesNotMatch(foreign.json.error!.message, /secret|73 65 63 72/);
      });
      await t.step("400 for a bad body", async () => {
        const missing = await call(app, "POST", "/datasets/register", { name: "x" });
        assertError(missing, 400, "INVALID_REQUEST");
        assert.deepEqual(
          (missing.json.error as unknown as { fields: { path: string }[] }).fields.map((f) =>
            f.path
          ),
          ["path"],
        );
        assertError(
          await call(app, "POST", "/datasets/register", { path, name: "a b" }),
          400,
          "INVALID_REQUEST",
        );
        assertError(await call(app, "POST", "/datasets/register", "{not json"), 400, "BAD_REQUEST");
        assertError(
          await call(app, "POST", "/datasets/register", { path, storage_class: "x" }),
          400,
          "INVALID_ARGUMENT",
        );
      });
      await t.step("413 for a body over the limit", async () => {
        assertError(
          await call(app, "POST", "/datasets/register", { path: "x".repeat(5000) }),
          413,
          "PAYLOAD_TOO_LARGE",
        );
      });
    });
  });

  Deno.test(`${suite.label}: catalog app registers a directory over POST /datasets/register_dir`, async () => {
    await withApp(async (app, dir) => {
      const data = join(dir, "data");
      await Deno.mkdir(data);
      await makeArchive(data, "a", 20, 10);
      await makeArchive(data, "b", 20, 10);
      await Deno.writeTextFile(join(data, "bad.pf"), "nope");
      const r = await call(app, "POST", "/datasets/register_dir", { dir: data });
      assert.equal(r.status, 200);
      assert.deepEqual((r.json.registered as { name: string }[]).map((e) => e.name), ["a", "b"]);
      assert.equal((r.json.failed as unknown[]).length, 1);
      assertError(
        await call(app, "POST", "/datasets/register_dir", { dir: join(dir, "none") }),
        400,
        "INVALID_ARGUMENT",
      );
      assertError(await call(app, "POST", "/datasets/register_dir", {}), 400, "INVALID_REQUEST");
    });
  });

  Deno.test(`${suite.label}: catalog app lists, gets, pages and removes datasets`, async (t) => {
    await withApp(async (app, _dir, catalog) => {
      for (const n of ["alpha", "beta", "gamma"]) {
        await catalog.registerIndex(fakeIndex(n, { rows: 400 }));
      }
      await catalog.registerIndex(fakeIndex("alpha", { seed: "2" }), { version: "2024" });
      await t.step("GET /datasets pages and filters", async () => {
        const r = await call(app, "GET", "/datasets?limit=2&offset=1");
        assert.equal(r.status, 200);
        assert.deepEqual((r.json.items as { name: string }[]).map((d) => d.name), [
          "beta",
          "gamma",
        ]);
        assert.deepEqual([r.json.total, r.json.limit, r.json.offset], [3, 2, 1]);
        assert.equal((await call(app, "GET", "/datasets?all_versions=true")).json.total, 4);
        assert.equal((await call(app, "GET", "/datasets?prefix=g")).json.total, 1);
        assert.equal((await call(app, "GET", "/datasets?codec=lzma2")).json.total, 0);
        assertError(await call(app, "GET", "/datasets?limit=5000"), 400, "INVALID_REQUEST");
        assertError(await call(app, "GET", "/datasets?all_versions=maybe"), 400, "INVALID_REQUEST");
      });
      await t.step("GET /datasets/{name} answers the latest version", async () => {
        const r = await call(app, "GET", "/datasets/alpha");
        assert.equal(r.status, 200);
        assert.deepEqual([r.json.version, r.json.versions], ["2024", 2]);
        assert.equal((await call(app, "GET", "/datasets/alpha?version=v1")).json.version, "v1");
        assertError(await call(app, "GET", "/datasets/nope"), 404, "NOT_FOUND");
        assertError(await call(app, "GET", "/datasets/alpha?version=v7"), 404, "NOT_FOUND");
      });
      await t.step("GET /datasets/{name}/versions", async () => {
        const r = await call(app, "GET", "/datasets/alpha/versions");
        assert.deepEqual((r.json.items as { version: string }[]).map((v) => v.version), [
          "2024",
          "v1",
        ]);
        assertError(await call(app, "GET", "/datasets/nope/versions"), 404, "NOT_FOUND");
      });
      await t.step(
        "GET /datasets/{name}/versions says how each version's schema changed",
        async () => {
          await catalog.registerIndex(fakeIndex("delta"));
          await catalog.registerIndex(fakeIndex("delta", { seed: "2", columns: ["city"] }));
          await catalog.registerIndex(fakeIndex("delta", { seed: "3" }));
          type V = {
            version: string;
            schema_changes: { column: string; kind: string; compatible: boolean }[] | null;
          };
          const all = (await call(app, "GET", "/datasets/delta/versions")).json.items as V[];
          assert.deepEqual(
            all.map((
              v,
            ) => [
              v.version,
              v.schema_changes?.map((c) => [c.column, c.kind, c.compatible]) ?? null,
            ]),
            [["v3", [["city", "removed", true]]], ["v2", [["city", "added", true]]], ["v1", null]],
          );
          const middle = await call(app, "GET", "/datasets/delta/versions?limit=1&offset=1");
          assert.deepEqual(
            (middle.json.items as V[]).map((v) => [v.version, v.schema_changes?.length]),
            [["v2", 1]],
            "the change is against the version before, also past the page",
          );
          await catalog.remove("delta");
        },
      );
      await t.step("GET /datasets/{name}/chunks", async () => {
        const r = await call(app, "GET", "/datasets/beta/chunks?rows=150:210&limit=10");
        assert.equal(r.status, 200);
        assert.deepEqual((r.json.items as { chunk: number }[]).map((c) => c.chunk), [1, 2]);
        assert.equal(r.json.version, "v1");
        assertError(
          await call(app, "GET", "/datasets/beta/chunks?rows=abc"),
          400,
          "INVALID_REQUEST",
        );
        assertError(
          await call(app, "GET", "/datasets/beta/chunks?rows=9:1"),
          400,
          "INVALID_ARGUMENT",
        );
        assertError(await call(app, "GET", "/datasets/nope/chunks"), 404, "NOT_FOUND");
      });
      await t.step("DELETE /datasets/{name}", async () => {
        const one = await call(app, "DELETE", "/datasets/alpha?version=v1");
        assert.deepEqual(one.json, { name: "alpha", removed: ["v1"] });
        const all = await call(app, "DELETE", "/datasets/gamma");
        assert.deepEqual(all.json, { name: "gamma", removed: ["v1"] });
        assertError(await call(app, "DELETE", "/datasets/gamma"), 404, "NOT_FOUND");
        assert.equal((await call(app, "GET", "/datasets")).json.total, 2);
      });
    });
  });

  Deno.test(`${suite.label}: catalog app checks integrity over GET /datasets/{name}/integrity`, async () => {
    await withApp(async (app, dir) => {
      const path = await makeArchive(dir, "s", 100, 25);
      assert.equal((await call(app, "POST", "/datasets/register", { path })).status, 201);
      const ok = await call(app, "GET", "/datasets/s/integrity");
      assert.equal(ok.status, 200);
      assert.equal(ok.json.ok, true);
      assert.equal(ok.json.chunks_checked, 4);
      const bytes = await Deno.readFile(path);
      bytes[(ok.json as { bytes_checked: number }).bytes_checked > 0 ? 1000 % bytes.length : 0]! ^=
        1;
      await Deno.writeFile(path, bytes);
      const bad = await call(app, "GET", "/datasets/s/integrity");
      assert.equal(bad.status, 200);
      assert.equal(bad.json.ok, false);
      assert.ok((bad.json.problems as unknown[]).length > 0);
      assertError(await call(app, "GET", "/datasets/nope/integrity"), 404, "NOT_FOUND");
    });
  });

  Deno.test(`${suite.label}: catalog app serves its page at / (no data in it, nothing from a CDN)`, async () => {
    await withApp(async (app, _dir, catalog) => {
      await catalog.registerIndex(fakeIndex("secret-name"));
      const res = await app.request("/");
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /text\/html/);
      const html = await res.text();
      assert.match(html, /<title>Permafrost catalog<\/title>/);
      // Nothing loads from elsewhere (the SVG namespace is a name, not a fetch).
      assert.ok(!/(src|href)=["']?https?:/.test(html), "no external asset");
      assert.ok(!/fetch\(["']https?:/.test(html), "no external fetch");
      assert.doesNotMatch(html, /secret-name/);
      for (
        const path of [
          "stats",
          "cost_report",
          "datasets?limit=100",
          "/columns",
          "/chunks?limit=100",
        ]
      ) {
        assert.ok(html.includes(path), `the page reads ${path}`);
      }
    });
  });

  Deno.test(`${suite.label}: catalog app answers each column's bytes at GET /datasets/{name}/columns`, async () => {
    await withApp(async (app, dir) => {
      const path = await makeArchive(dir, "s", 100, 25);
      assert.equal((await call(app, "POST", "/datasets/register", { path })).status, 201);
      const r = await call(app, "GET", "/datasets/s/columns?version=v1");
      assert.equal(r.status, 200);
      const columns = r.json.columns as { name: string; stored_bytes: number; share: number }[];
      assert.deepEqual(columns.map((c) => c.name), ["ts", "sensor", "reading"]);
      assert.equal(columns.reduce((n, c) => n + c.stored_bytes, 0), r.json.stored_bytes);
      assertError(await call(app, "GET", "/datasets/s/columns?version=v9"), 404, "NOT_FOUND");
      assertError(await call(app, "GET", "/datasets/nope/columns"), 404, "NOT_FOUND");
    });
  });

  Deno.test(`${suite.label}: catalog app answers /health, /stats, /cost_report and /search`, async (t) => {
    await withApp(async (app, _dir, catalog) => {
      await catalog.registerIndex(fakeIndex("flights", { columns: ["origin"] }));
      await catalog.registerIndex(fakeIndex("weather", { codec: "lzma2" }), {
        storageClass: "archive",
      });
      await t.step("/health", async () => {
        const r = await call(app, "GET", "/health");
        assert.deepEqual(r.json, {
          status: "ok",
          version: JSON.parse(Deno.readTextFileSync("deno.json")).version,
          datasets: 2,
          versions: 2,
        });
      });
      await t.step("/stats", async () => {
        const r = await call(app, "GET", "/stats");
        assert.equal(r.json.datasets, 2);
        assert.deepEqual((r.json.by_codec as { codec: string }[]).map((g) => g.codec), [
          "lzma2",
          "zstd",
        ]);
      });
      await t.step("/cost_report", async () => {
        const r = await call(app, "GET", "/cost_report");
        assert.equal(r.json.currency, "USD");
        assert.deepEqual(
          (r.json.storage_classes as { storage_class: string }[]).map((l) => l.storage_class),
          ["archive", "standard"],
        );
      });
      await t.step("/search", async () => {
        const r = await call(app, "GET", "/search?q=flight");
        assert.deepEqual((r.json.items as { name: string }[]).map((h) => h.name), ["flights"]);
        assertError(await call(app, "GET", "/search"), 400, "INVALID_REQUEST");
        assertError(await call(app, "GET", "/search?q=%20"), 400, "INVALID_REQUEST");
      });
    });
  });

  Deno.test(`${suite.label}: catalog app runs and refuses SQL over POST /sql`, async (t) => {
    await withApp(async (app, _dir, catalog) => {
      await catalog.registerIndex(fakeIndex("flights"));
      await t.step("a SELECT", async () => {
        const r = await call(app, "POST", "/sql", {
          query: "select name, sum(rows) from datasets group by 1",
        });
        assert.equal(r.status, 200);
        assert.deepEqual(r.json.rows, [["flights", 250]]);
      });
      for (
        const q of [
          "select * from read_csv('/etc/passwd')",
          "COPY datasets TO 'x.csv'",
          "ATTACH 'x.db'",
          "INSTALL httpfs",
          "SET threads = 1",
          "PRAGMA version",
          "DROP TABLE datasets",
          "DELETE FROM datasets",
          "select 1; select 2",
          // The DuckDB store binds the query and refuses every name but its tables; the
          // mirror holds nothing but the catalog's tables, so there is nothing to hide.
          ...(suite.engine === "duckdb"
            ? [
              "select * from (with catalog_meta as (select 1) select 1) t, catalog_meta",
              "select * from (with pragma_database_list as (select 1) select 1) t, pragma_database_list",
              "select * from (with duckdb_databases as (select 1) select 1) t, duckdb_databases",
            ]
            : [
              "select * from read_text('/etc/hosts')",
              "select * from read_parquet('x.parquet')",
            ]),
        ]
      ) {
        await t.step(`400 for ${q}`, async () => {
          assertError(await call(app, "POST", "/sql", { query: q }), 400, "SQL_REFUSED");
        });
      }
      await t.step("400 for a failing query and a missing query", async () => {
        assertError(
          await call(app, "POST", "/sql", { query: "select nope from datasets" }),
          400,
          "SQL_FAILED",
        );
        assertError(await call(app, "POST", "/sql", {}), 400, "INVALID_REQUEST");
      });
    });
  });

  Deno.test({
    name:
      `${suite.label}: catalog app answers 408 at the SQL time limit without holding up other queries`,
    ignore: suite.engine !== "duckdb",
  }, async () => {
    const dir = await tempDir("app-sqltime");
    const watch = logWatch();
    const logger = createLogger({ component: "catalog", level: "debug", sink: watch.sink });
    const catalog = await suite.open(dir, { logger, sql: { timeoutMs: 300 } });
    try {
      const app = createCatalogApp({ catalog, logger });
      await catalog.registerIndex(fakeIndex("flights"));
      const order: string[] = [];
      const running = watch.lines.length;
      const long = call(app, "POST", "/sql", { query: UNINTERRUPTIBLE_SQL }).then((r) => {
        order.push("long");
        return r;
      });
      await watch.until(/sql query running/, running);
      const quick = await call(app, "POST", "/sql", { query: "select 1 as one" });
      order.push("select 1");
      assert.equal(quick.status, 200, JSON.stringify(quick.json));
      assert.deepEqual(quick.json.rows, [[1]]);
      const listed = await call(app, "GET", "/datasets");
      assert.equal(listed.status, 200, "the catalog's own reads go on");
      const timedOut = await long;
      assertError(timedOut, 408, "SQL_TIMEOUT");
      assert.match(timedOut.json.error!.message, /300 ms/);
      assert.deepEqual(order, ["select 1", "long"]);
      // DuckDB had not stopped yet when the answer came: it was not waited for.
      assert.ok(
        !watch.lines.some((l) => /interrupted sql query has stopped/.test(l)),
        "408 came only after DuckDB stopped the query",
      );
    } finally {
      await catalog.close();
      await Deno.remove(dir, { recursive: true });
    }
  });

  Deno.test({
    name: `${suite.label}: catalog app stops a query at the SQL time limit and goes on answering`,
    ignore: suite.engine !== "duckdb-wasm",
  }, async () => {
    const dir = await tempDir("app-sqltime-wasm");
    const logger = createLogger({ component: "catalog", level: "error", sink: () => {} });
    const catalog = await suite.open(dir, { logger, sql: { timeoutMs: 400 } });
    try {
      const app = createCatalogApp({ catalog, logger });
      await catalog.registerIndex(fakeIndex("flights"));
      // duckdb-wasm runs one query at a time in steps of ~100 ms and checks the limit
      // between them: this one needs seconds, so it is cancelled at 400 ms.
      const slow = await call(app, "POST", "/sql", {
        query: "select sum(hash(i)) from range(3000000000) t(i)",
      });
      assertError(slow, 408, "SQL_TIMEOUT");
      assert.match(slow.json.error!.message, /400 ms/);
      const quick = await call(app, "POST", "/sql", {
        query: "select count(*) as n from datasets",
      });
      assert.deepEqual(quick.json.rows, [[1]], JSON.stringify(quick.json));
      assert.equal((await call(app, "GET", "/datasets")).status, 200);
    } finally {
      await catalog.close();
      await Deno.remove(dir, { recursive: true });
    }
  });

  Deno.test(`${suite.label}: catalog app cuts /sql answers at the byte limit`, async (t) => {
    const dir = await tempDir("app-sqlbytes");
    const logger = createLogger({ component: "catalog", level: "error", sink: () => {} });
    const maxBytes = 10_000;
    const catalog = await suite.open(dir, { logger, sql: { maxBytes } });
    try {
      const app = createCatalogApp({ catalog, logger });
      await catalog.registerIndex(fakeIndex("t", { rows: 1000, chunkRows: 10 }));
      await t.step("rows past the limit are cut, truncated: true", async () => {
        const r = await call(app, "POST", "/sql", {
          query: "select chunk, repeat('x', 1000) as pad from chunks order by chunk",
        });
        assert.equal(r.status, 200, JSON.stringify(r.json).slice(0, 300));
        assert.equal(r.json.truncated, true);
        assert.equal(r.json.max_bytes, maxBytes);
        const rows = r.json.rows as unknown[][];
        assert.ok(rows.length > 0 && rows.length < 100, `${rows.length} rows`);
        assert.ok(new TextEncoder().encode(JSON.stringify(rows)).length <= maxBytes);
        assert.deepEqual(
          rows.map((row) => row[0]),
          rows.map((_, i) => i),
          "in order, none skipped",
        );
      });
      await t.step("multi-byte text counts in UTF-8 bytes", async () => {
        const r = await call(app, "POST", "/sql", {
          query: "select repeat('é', 1000) as pad from chunks",
        });
        assert.equal(r.json.truncated, true);
        assert.ok(new TextEncoder().encode(JSON.stringify(r.json.rows)).length <= maxBytes);
      });
      await t.step("a first row over the limit is 400 SQL_TOO_LARGE", async () => {
        const r = await call(app, "POST", "/sql", { query: "select repeat('x', 20000) as big" });
        assertError(r, 400, "SQL_TOO_LARGE");
        assert.match(r.json.error!.message, /--sql-max-bytes/);
      });
      await t.step("a small answer is whole", async () => {
        const r = await call(app, "POST", "/sql", { query: "select count(*) from chunks" });
        assert.deepEqual([r.json.rows, r.json.truncated], [[[100]], false]);
      });
    } finally {
      await catalog.close();
      await Deno.remove(dir, { recursive: true });
    }
  });

  Deno.test(`${suite.label}: catalog app names what is wrong with a path or a damaged archive`, async (t) => {
    await withApp(async (app, dir) => {
      await t.step("a directory points to register_dir", async () => {
        const r = await call(app, "POST", "/datasets/register", { path: dir });
        assertError(r, 400, "INVALID_ARGUMENT");
        assert.match(r.json.error!.message, /is a directory/);
        assert.match(r.json.error!.message, /POST \/datasets\/register_dir/);
      });
      await t.step(
        "a path the server may not read is 403 naming it, not Deno's prompt",
        async () => {
          for (const path of ["/proc/self/environ", "/proc/self/mem"]) {
            const r = await call(app, "POST", "/datasets/register", { path });
            assertError(r, 403, "PATH_NOT_ALLOWED");
            assert.ok(r.json.error!.message.includes(`'${path}'`), r.json.error!.message);
            assert.doesNotMatch(r.json.error!.message, /allow-all|run again/);
          }
          const d = await call(app, "POST", "/datasets/register_dir", {
            dir: "/proc/self/environ",
          });
          assert.doesNotMatch(JSON.stringify(d.json), /allow-all|run again/);
        },
      );
      await t.step("a damaged archive: registration and integrity name the file", async () => {
        const path = await makeArchive(dir, "damaged", 100, 50);
        assert.equal((await call(app, "POST", "/datasets/register", { path })).status, 201);
        // Break the header's JSON and give it a matching hash: the reader's CORRUPT.
        const bytes = await Deno.readFile(path);
        const length = new DataView(bytes.buffer).getUint32(12, true);
        bytes[16] = "[".charCodeAt(0);
        bytes.set(
          createHash("sha256").update(bytes.subarray(16, 16 + length)).digest(),
          16 + length,
        );
        await Deno.writeFile(path, bytes);
        const copy = join(dir, "damaged-copy.pf");
        await Deno.writeFile(copy, bytes);
        const r = await call(app, "POST", "/datasets/register", { path: copy });
        assertError(r, 422, "ARCHIVE_UNREADABLE");
        assert.ok(r.json.error!.message.includes(copy), r.json.error!.message);
        assert.match(r.json.error!.message, /CORRUPT/);
        const report = await call(app, "GET", "/datasets/damaged/integrity");
        const problem =
          (report.json.problems as { kind: string; actual: string; message: string }[])
            .find((p) => p.kind === "UNREADABLE");
        assert.ok(problem, JSON.stringify(report.json));
        assert.equal(problem.actual, "CORRUPT");
        assert.ok(problem.message.includes(path), problem.message);
      });
    });
  });

  Deno.test(`${suite.label}: catalog app serves /openapi.json listing every endpoint, /docs and /redoc`, async (t) => {
    await withApp(async (app) => {
      const doc = await (await app.request("/openapi.json")).json();
      await t.step("the document lists every endpoint", () => {
        assert.equal(doc.openapi, "3.1.0");
        assert.equal(doc.info.title, "Permafrost catalog API");
        const endpoints = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
          .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
          .sort();
        assert.deepEqual(endpoints, [
          "DELETE /datasets/{name}",
          "GET /cost_report",
          "GET /datasets",
          "GET /datasets/{name}",
          "GET /datasets/{name}/chunks",
          "GET /datasets/{name}/columns",
          "GET /datasets/{name}/integrity",
          "GET /datasets/{name}/rows",
          "GET /datasets/{name}/versions",
          "GET /health",
          "GET /search",
          "GET /stats",
          "POST /datasets/register",
          "POST /datasets/register_dir",
          "POST /sql",
        ]);
        for (
          const name of ["Dataset", "Chunk", "Error", "SqlResult", "CostReport", "IntegrityReport"]
        ) {
          assert.ok(doc.components.schemas[name], `component ${name}`);
        }
        assert.ok(doc.paths["/datasets/{name}"].get.responses["404"]);
      });
      await t.step("/docs is Swagger UI with local assets", async () => {
        const res = await app.request("/docs");
        assert.equal(res.status, 200);
        const html = await res.text();
        assert.match(html, /<title>Permafrost catalog API — docs<\/title>/);
        assert.ok(!/https?:\/\//.test(html), "no external URL in /docs");
        for (
          const asset of ["/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js", "/docs/init.js"]
        ) {
          assert.ok(html.includes(asset));
          const a = await app.request(asset);
          assert.equal(a.status, 200, asset);
          assert.ok((await a.text()).length > 100 || asset.endsWith("init.js"));
        }
      });
      await t.step("/redoc is ReDoc with its local bundle", async () => {
        const html = await (await app.request("/redoc")).text();
        assert.match(html, /<redoc spec-url="\/openapi.json">/);
        assert.ok(!/https?:\/\//.test(html));
        const js = await app.request("/redoc/redoc.standalone.js");
        assert.equal(js.status, 200);
        assert.match(js.headers.get("content-type") ?? "", /javascript/);
        assert.ok((await js.text()).length > 100_000);
      });
      await t.step("unknown paths answer 404 JSON", async () => {
        assertError(await call(app, "GET", "/nowhere"), 404, "NOT_FOUND");
      });
    });
  });
}
