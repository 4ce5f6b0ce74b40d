/**
 * `GET /datasets/{name}/rows` through the catalog's app (`app.request`, no socket): the
 * rows of a registered archive as CSV, JSON lines and an Arrow stream, equal to a local
 * thaw of the same archive for every slice, column list and `where`; an older version by
 * `?version=`; bad columns, filters, ranges and formats refused with a 400 before any
 * row is sent; a missing dataset 404; a damaged archive is never served as rows.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import * as arrow from "apache-arrow";
import { createLogger } from "../internal/log.ts";
import { thaw, thawTable } from "../ops/thaw.ts";
import { createCatalogApp } from "./app.ts";
import { Catalog } from "./catalog.ts";
import { makeArchive, tempDir } from "./_test_utils.ts";

async function world(
  fn: (w: { app: ReturnType<typeof createCatalogApp>; dir: string }) => Promise<void>,
) {
  const dir = await tempDir("rows");
  const catalog = await Catalog.open(join(dir, "c.db"));
  try {
    const app = createCatalogApp({
      catalog,
      logger: createLogger({ component: "catalog", level: "error", sink: () => {} }),
    });
    await fn({ app, dir });
  } finally {
    await catalog.close();
    await Deno.remove(dir, { recursive: true });
  }
}

async function register(app: ReturnType<typeof createCatalogApp>, path: string, version: string) {
  const res = await app.request("/datasets/register", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ path, name: "sensors", version }),
  });
  assert.equal(res.status, 201, await res.text());
}

Deno.test("rows come back as a local thaw gives them, in every format, slice, column list and filter", async () => {
  await world(async ({ app, dir }) => {
    const archive = await makeArchive(dir, "sensors", 1200, 100);
    await register(app, archive, "v1");
    const cases: { query: string; opts: Parameters<typeof thaw>[2] }[] = [
      { query: "", opts: {} },
      { query: "rows=150:420", opts: { rows: { start: 150, end: 420 } } },
      { query: "columns=reading,sensor", opts: { columns: ["reading", "sensor"] } },
      {
        query: `where=${encodeURIComponent("sensor = 's2' and reading > 900")}`,
        opts: { where: "sensor = 's2' and reading > 900" },
      },
    ];
    for (const { query, opts } of cases) {
      for (const format of ["csv", "jsonl"] as const) {
        const res = await app.request(`/datasets/sensors/rows?format=${format}&${query}`);
        assert.equal(res.status, 200, `${format} ${query}`);
        assert.match(res.headers.get("content-type")!, format === "csv" ? /^text\/csv/ : /ndjson/);
        const local = join(dir, `local.${format}`);
        await thaw(archive, local, { ...opts, format, overwrite: true });
        assert.equal(await res.text(), await Deno.readTextFile(local), `${format} ${query}`);
      }
      const res = await app.request(`/datasets/sensors/rows?format=arrow&${query}`);
      assert.equal(res.headers.get("content-type"), "application/vnd.apache.arrow.stream");
      const served = arrow.tableFromIPC(new Uint8Array(await res.arrayBuffer()));
      const expected = await thawTable(archive, opts);
      assert.equal(served.numRows, expected.numRows, query);
      assert.deepEqual(
        served.toArray().map((r) => r.toJSON()),
        expected.toArray().map((r) => r.toJSON()),
      );
    }
    // Default format: CSV.
    const plain = await app.request("/datasets/sensors/rows?rows=0:2");
    assert.equal((await plain.text()).split("\n").length, 4);
  });
});

Deno.test("an older version by ?version=, and bad requests refused before any row", async () => {
  await world(async ({ app, dir }) => {
    await Deno.mkdir(join(dir, "a"));
    await Deno.mkdir(join(dir, "b"));
    await register(app, await makeArchive(join(dir, "a"), "s", 30, 10), "v1");
    await register(app, await makeArchive(join(dir, "b"), "s", 50, 10), "v2");
    const count = async (q: string) =>
      (await (await app.request(`/datasets/sensors/rows?format=jsonl${q}`)).text()).trim().split(
        "\n",
      ).length;
    assert.equal(await count(""), 50);
    assert.equal(await count("&version=v1"), 30);
    for (
      const [q, code, pattern] of [
        ["columns=nope", 400, /Cannot thaw column "nope"/],
        ["where=" + encodeURIComponent("reading >"), 400, /Cannot use --where/],
        ["rows=10:5", 400, /START:END/],
        ["rows=a:b", 400, /START:END/],
        ["format=xlsx", 400, /format/],
        ["version=v9", 404, /v9/],
      ] as const
    ) {
      const res = await app.request(`/datasets/sensors/rows?${q}`);
      assert.equal(res.status, code, q);
      const body = await res.json();
      assert.match(`${body.error.code} ${body.error.message}`, pattern, q);
    }
    assert.equal((await app.request("/datasets/nope/rows")).status, 404);
  });
});

Deno.test("a damaged archive is never served as rows: the body is cut, not wrong", async () => {
  await world(async ({ app, dir }) => {
    const archive = await makeArchive(dir, "bad", 600, 100);
    await register(app, archive, "v1");
    const bytes = await Deno.readFile(archive);
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff; // a payload byte
    await Deno.writeFile(archive, bytes);
    const res = await app.request("/datasets/sensors/rows");
    if (res.status === 200) {
      await assert.rejects(res.text(), "the body is aborted at the bad chunk");
    } else {
      assert.ok(res.status >= 400 && res.status < 500, String(res.status));
    }
  });
});

async function sql(app: ReturnType<typeof createCatalogApp>, query: string, token?: string) {
  const res = await app.request("/sql", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, json: await res.json() };
}

Deno.test("POST /sql reads datasets' rows by name (and name@version), thawing only what the query names", async () => {
  await world(async ({ app, dir }) => {
    await Deno.mkdir(join(dir, "a"));
    await register(app, await makeArchive(join(dir, "a"), "s", 40, 10), "v1");
    const archive = await makeArchive(dir, "sensors", 1200, 100);
    await register(app, archive, "v2");
    const r = await sql(
      app,
      "SELECT sensor, count(*) AS n, sum(reading) AS total FROM sensors GROUP BY 1 ORDER BY 1",
    );
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(r.json.columns.map((c: { name: string }) => c.name), ["sensor", "n", "total"]);
    assert.deepEqual(r.json.rows.map((row: unknown[]) => [row[0], Number(row[1])]), [
      ["s0", 300],
      ["s1", 300],
      ["s2", 300],
      ["s3", 300],
    ]);
    const local = await thawTable(archive);
    const expected = local.toArray().filter((row) => row.sensor === "s2")
      .reduce((t, row) => t + Number(row.reading), 0);
    assert.equal(Number(r.json.rows[2][2]), expected);
    const old = await sql(app, `SELECT count(*) AS n FROM "sensors@v1"`);
    assert.equal(old.status, 200, JSON.stringify(old.json));
    assert.equal(Number(old.json.rows[0][0]), 40);
    const joined = await sql(
      app,
      `SELECT count(*) AS n FROM sensors a JOIN "sensors@v1" b ON a.ts = b.ts`,
    );
    assert.equal(Number(joined.json.rows[0][0]), 40);
    // The catalog's own tables still answer as before.
    const meta = await sql(app, "SELECT name, version FROM datasets ORDER BY version");
    assert.deepEqual(meta.json.rows, [["sensors", "v1"], ["sensors", "v2"]]);
  });
});

Deno.test("POST /sql over datasets stays sandboxed: no file functions, no mixing, no unknown names", async () => {
  await world(async ({ app, dir }) => {
    await register(app, await makeArchive(dir, "sensors", 100, 50), "v1");
    for (
      const [query, code] of [
        ["SELECT * FROM sensors, read_csv('/etc/passwd')", "SQL_REFUSED"],
        ["SELECT * FROM sensors s, glob('/*') g", "SQL_REFUSED"],
        ["SELECT current_setting('threads') FROM sensors", "SQL_REFUSED"],
        ["SELECT count(*) FROM sensors, datasets", "SQL_REFUSED"],
        ["SELECT count(*) FROM nope", "SQL_REFUSED"],
        ["COPY sensors TO '/tmp/x.csv'", "SQL_REFUSED"],
      ] as const
    ) {
      const r = await sql(app, query);
      assert.equal(r.status, 400, `${query}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.error.code, code, `${query}: ${JSON.stringify(r.json)}`);
    }
  });
});
