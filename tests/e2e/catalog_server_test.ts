/**
 * The catalog server as a user runs it: `deno run <permissions> main.ts
 * catalog serve --db ... --port 0` in a subprocess. Registers real archives over HTTP, checks that
 * a second server on the same file fails at start, kills the first with SIGKILL and
 * checks that a restarted server still has everything, and opens `/docs` and
 * `/redoc` in headless Chromium (skipped, with one line, when Chromium is absent).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { makeArchive } from "../../catalog/_test_utils.ts";
import {
  catalogPermissions,
  E2E_CATALOG_TMP,
  startCatalogServer,
  stopCatalogServer,
} from "./_catalog_server.ts";
import { renderPage, requireTool } from "../../internal/_test_utils.ts";

const TMP = E2E_CATALOG_TMP;
const CHROMIUM = requireTool("chromium", "tests/e2e/catalog_server_test.ts");

async function post(
  url: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  // curl -d sends this content type; the server must still read JSON.
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

async function get(url: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url);
  return { status: res.status, json: await res.json() };
}

Deno.test("catalog server keeps every registration across SIGKILL and refuses a second owner", async () => {
  await Deno.mkdir(TMP, { recursive: true });
  const dir = await Deno.makeTempDir({ dir: TMP, prefix: "restart-" });
  const data = join(dir, "data");
  await Deno.mkdir(data);
  const flights = await makeArchive(dir, "flights", 500, 100);
  await makeArchive(data, "sensors", 200, 50);
  await makeArchive(data, "meters", 120, 50);
  const db = join(dir, "catalog.db");

  const first = await startCatalogServer(db);
  try {
    const reg = await post(`${first.url}/datasets/register`, {
      path: flights,
      name: "flights",
      version: "2001-h1",
    });
    assert.equal(reg.status, 201, JSON.stringify(reg.json));
    const dirReg = await post(`${first.url}/datasets/register_dir`, { dir: data });
    assert.equal(dirReg.status, 200);
    assert.equal((dirReg.json.registered as unknown[]).length, 2);
    // Concurrent registrations over HTTP, all kept.
    const many = await Promise.all(
      Array.from(
        { length: 20 },
        (_, i) => post(`${first.url}/datasets/register`, { path: flights, name: `copy${i}` }),
      ),
    );
    assert.ok(many.every((r) => r.status === 201));

    // A second server on the same file fails at start with a clear message.
    const second = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-q",
        ...catalogPermissions(),
        "main.ts",
        "catalog",
        "serve",
        "--db",
        db,
        "--port",
        "0",
      ],
      stdout: "null",
      stderr: "piped",
    });
    const out = await second.output();
    const message = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, message);
    assert.match(message, /already owns it/);
  } finally {
    const status = await stopCatalogServer(first, "SIGKILL");
    assert.equal(status.signal, "SIGKILL");
  }

  const restarted = await startCatalogServer(db);
  try {
    const ds = await get(`${restarted.url}/datasets/flights`);
    assert.equal(ds.status, 200);
    assert.deepEqual([ds.json.version, ds.json.rows, ds.json.chunks], ["2001-h1", 500, 5]);
    const list = await get(`${restarted.url}/datasets?limit=100`);
    assert.equal(list.json.total, 23);
    const chunks = await get(`${restarted.url}/datasets/sensors/chunks`);
    assert.equal(chunks.json.total, 4);
    const integrity = await get(`${restarted.url}/datasets/flights/integrity`);
    assert.equal(integrity.json.ok, true, JSON.stringify(integrity.json));
    const sql = await post(`${restarted.url}/sql`, { query: "select count(*) from datasets" });
    assert.deepEqual(sql.json.rows, [[23]]);
  } finally {
    // SIGTERM is a clean stop: exit code 0.
    const status = await stopCatalogServer(restarted, "SIGTERM");
    assert.equal(status.code, 0, restarted.stderr());
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("catalog serve exits 2 on a usage error", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      ...catalogPermissions(),
      "main.ts",
      "catalog",
      "serve",
      "--db",
      join(TMP, "usage.db"),
      "--port",
      "99999",
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  const message = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 2);
  assert.match(message, /--port \/ PERMAFROST_CATALOG_PORT/);
  assert.match(message, /see 'permafrost catalog serve --help'/);
});

Deno.test({
  name: "catalog /docs and /redoc render their title in headless Chromium",
  ignore: CHROMIUM === null,
  async fn() {
    await Deno.mkdir(TMP, { recursive: true });
    const dir = await Deno.makeTempDir({ dir: TMP, prefix: "docs-" });
    const server = await startCatalogServer(join(dir, "catalog.db"));
    try {
      for (
        const [page, rendered] of [["/docs", /class="title"[^>]*>\s*Permafrost catalog API/], [
          "/redoc",
          /<h1[^>]*>\s*Permafrost catalog API/,
        ]] as const
      ) {
        const dom = await renderPage(CHROMIUM!, `${server.url}${page}`, {
          screenshot: `.tmp/screenshots/catalog${page.replace("/", "-")}.png`,
        });
        assert.match(dom, rendered, `${page} did not render its title:\n${dom.slice(0, 2000)}`);
      }
    } finally {
      await stopCatalogServer(server, "SIGTERM");
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "catalog page at / shows totals, charts, datasets, search and a dataset's columns in headless Chromium",
  ignore: CHROMIUM === null,
  async fn() {
    await Deno.mkdir(TMP, { recursive: true });
    const dir = await Deno.makeTempDir({ dir: TMP, prefix: "page-" });
    const sensors = await makeArchive(dir, "sensors", 400, 100);
    const meters = await makeArchive(dir, "meters", 200, 50);
    const server = await startCatalogServer(join(dir, "catalog.db"));
    try {
      assert.equal((await post(`${server.url}/datasets/register`, { path: sensors })).status, 201);
      const r = await post(`${server.url}/datasets/register`, {
        path: meters,
        storage_class: "archive",
        description: "electricity <meters>",
      });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      const dom = await renderPage(CHROMIUM!, `${server.url}/?dataset=sensors`, {
        screenshot: ".tmp/screenshots/catalog-page.png",
        windowSize: "1400,1300",
      });
      assert.match(dom, /<div id="updated">updated /);
      // Totals and the two charts: one bar per codec, three per storage class.
      assert.match(dom, /<div class="muted"><b>2<\/b>datasets<\/div>/);
      const byCodec = dom.slice(dom.indexOf('id="by-codec"'), dom.indexOf('id="cost"'));
      assert.equal([...byCodec.matchAll(/<rect class="a"/g)].length, 1, byCodec.slice(0, 500));
      const cost = dom.slice(dom.indexOf('id="cost"'), dom.indexOf('id="datasets"'));
      assert.match(cost, />standard<\/text>/);
      assert.match(cost, />archive<\/text>/);
      assert.equal([...cost.matchAll(/<rect class="[abc]"/g)].length, 6);
      // The datasets, text as text (the description's markup is not markup).
      assert.match(
        dom,
        /<tr class="pick chosen" data-name="sensors"><td>sensors<\/td><td>v1<\/td><td class="num">400<\/td>/,
      );
      assert.match(dom, /<td>electricity &lt;meters&gt;<\/td>/);
      // The dataset picked: its columns as bars, its versions and chunks.
      assert.match(dom, /<h2 id="detail-title">sensors<\/h2>/);
      const columns = dom.slice(dom.indexOf('id="columns"'), dom.indexOf('id="versions"'));
      for (const name of ["ts", "sensor", "reading"]) {
        assert.match(columns, new RegExp(`>${name} · [^<]+ · \\d+%</text>`), name);
      }
      assert.equal([...columns.matchAll(/<rect class="a"/g)].length, 3);
      const chunks = dom.slice(dom.indexOf('id="chunks"'));
      assert.equal([...chunks.matchAll(/<tr>/g)].length, 4, "4 chunks of 100 rows");
      // A search narrows the list.
      const found = await renderPage(CHROMIUM!, `${server.url}/?q=meters`);
      assert.match(found, /data-name="meters"/);
      assert.doesNotMatch(found, /data-name="sensors"/);
    } finally {
      await stopCatalogServer(server, "SIGTERM");
      await Deno.remove(dir, { recursive: true });
    }
  },
});
