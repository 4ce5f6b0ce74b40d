/**
 * The context API (`context.ts`) with its servers in this process (the master's and the
 * catalog's Hono apps, reached through `fetch`): a job submitted and waited for, the
 * archive registered in the catalog and its rows read back through it, SQL through the
 * catalog and locally; a context without a cluster or catalog, or closed, says so; a
 * catalog that is not there fails `open`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createCatalogApp } from "./catalog/app.ts";
import { Catalog } from "./catalog/catalog.ts";
import { createLogger } from "./internal/log.ts";
import { PermafrostError } from "./internal/errors.ts";
import { tempDir, testCluster, writeCsv } from "./master/_test_utils.ts";
import { thawTable } from "./ops/thaw.ts";
import { Permafrost } from "./context.ts";
import { CatalogError } from "./catalog/errors.ts";

Deno.test("a context submits to the cluster, registers in the catalog and reads rows through it", async () => {
  const dir = await tempDir("context-");
  const c = await testCluster({ workers: 2 });
  const catalog = await Catalog.open(join(dir, "c.db"));
  const catalogApp = createCatalogApp({
    catalog,
    logger: createLogger({ component: "catalog", level: "error", sink: () => {} }),
  });
  const fetch = ((input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    return Promise.resolve(
      url.host === "catalog"
        ? catalogApp.request(String(input), init)
        : c.masterApp.request(String(input), init),
    );
  }) as typeof globalThis.fetch;
  try {
    const pf = await Permafrost.open({
      cluster: "http://master",
      catalog: "http://catalog",
      fetch,
    });
    const csv = join(dir, "readings.csv");
    await writeCsv(csv, 6000, { nullEvery: 7 });
    const archive = join(dir, "readings.pf");
    const job = await pf.wait(await pf.submit(csv, archive, { chunkRows: 1000 }), {
      pollInterval: 5,
    });
    assert.equal(job.status, "DONE", job.error ?? "");
    assert.equal((await pf.audit(archive)).rows, 6000);

    const registered = await pf.registerDataset(archive, { name: "readings", version: "v1" });
    assert.equal(registered.created, true);
    assert.equal((await pf.dataset("readings")).rows, 6000);
    assert.deepEqual((await pf.datasets()).items.map((d) => d.name), ["readings"]);
    const rows = await pf.rows("readings", { where: "n < 10", columns: ["id", "n"] });
    const local = await thawTable(archive, { where: "n < 10", columns: ["id", "n"] });
    assert.equal(rows.numRows, local.numRows);
    assert.deepEqual(rows.toArray().map((r) => r.toJSON()), local.toArray().map((r) => r.toJSON()));
    const answer = await pf.sql("SELECT count(*) AS n FROM readings WHERE n < 10");
    assert.equal(Number(answer.rows[0]![0]), local.numRows);
    await assert.rejects(
      pf.dataset("nope"),
      (e: unknown) => e instanceof CatalogError && e.code === "NOT_FOUND",
    );

    await pf.register("r", archive);
    const t = await pf.query("SELECT max(id) AS m FROM r");
    assert.equal(Number(t.toArray()[0]!.m), 5999);
    const wasm = await Permafrost.open({ queryBackend: "duckdb-wasm" });
    await wasm.register("r", archive);
    assert.equal(Number((await wasm.query("SELECT max(id) AS m FROM r")).toArray()[0]!.m), 5999);
    wasm.close();
    const table = await pf.thaw(archive, undefined, { rows: { start: 0, end: 3 } });
    assert.equal(table.numRows, 3);
    pf.close();
    await assert.rejects(
      pf.query("SELECT 1"),
      (e: unknown) => e instanceof PermafrostError && e.code === "CLOSED",
    );
  } finally {
    await catalog.close();
    await c.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a context says what it lacks, and open fails on a server that is not there", async () => {
  const pf = await Permafrost.open();
  await assert.rejects(
    pf.submit("a.csv", "a.pf"),
    (e: unknown) => e instanceof PermafrostError && e.code === "NO_CLUSTER",
  );
  await assert.rejects(
    pf.datasets(),
    (e: unknown) => e instanceof PermafrostError && e.code === "NO_CATALOG",
  );
  await assert.rejects(
    Permafrost.open({ catalog: "http://127.0.0.1:9" }),
    (e: unknown) => e instanceof PermafrostError && e.code === "UNREACHABLE",
  );
  await assert.rejects(
    Permafrost.open({ cluster: "http://127.0.0.1:9" }),
    (e: unknown) => e instanceof PermafrostError && e.code === "UNREACHABLE",
  );
});
