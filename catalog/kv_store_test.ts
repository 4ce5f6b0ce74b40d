/**
 * The Deno KV store's own promises (`kv_store.ts`), beyond the REST suite it shares
 * with the DuckDB store: two catalogs on one KV see each other's writes; racing
 * registrations of one name both land, as distinct versions; a version too large for
 * one KV value is split and read back whole; what the store wrote reads the same from
 * its mirror as the DuckDB store's tables; parts a dead writer left are deleted once
 * old, and never while young; a KV written by a newer schema is refused.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Catalog } from "./catalog.ts";
import { KvStore, PART_BYTES } from "./kv_store.ts";
import { fakeIndex, tempDir } from "./_test_utils.ts";
import { CatalogError } from "./errors.ts";

async function kvCatalog(path: string): Promise<Catalog> {
  return await Catalog.open(new KvStore(await Deno.openKv(path)));
}

Deno.test("KvStore: two catalogs on one KV see each other's writes and race safely", async () => {
  const dir = await tempDir("kv-two");
  const path = join(dir, "c.kv");
  const a = await kvCatalog(path);
  const b = await kvCatalog(path);
  try {
    await a.registerIndex(fakeIndex("flights"));
    assert.equal((await b.get("flights")).version, "v1", "b sees a's registration");
    // Both register other content under the same name at once: one commit loses its
    // check, catches up and decides again, so the two become v2 and v3.
    const [x, y] = await Promise.all([
      a.registerIndex(fakeIndex("flights", { seed: "x" })),
      b.registerIndex(fakeIndex("flights", { seed: "y" })),
    ]);
    assert.deepEqual(
      [x.dataset.version, y.dataset.version].sort(),
      ["v2", "v3"],
    );
    for (const c of [a, b]) {
      const page = await c.versions("flights");
      assert.deepEqual(page.items.map((v) => v.version), ["v3", "v2", "v1"]);
    }
    await b.remove("flights", { version: "v1" });
    await assert.rejects(a.get("flights", { version: "v1" }), /No version 'v1'/);
    assert.equal((await a.sql("select count(*) as n from chunks")).rows[0]![0], 6);
  } finally {
    await a.close();
    await b.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("KvStore: a version larger than one KV value is stored in parts and read back whole", async () => {
  const dir = await tempDir("kv-big");
  const path = join(dir, "c.kv");
  const columns = Array.from({ length: 30 }, (_, i) => `c${i}`);
  const index = fakeIndex("wide", { rows: 40_000, chunkRows: 100, columns });
  let catalog = await kvCatalog(path);
  try {
    await catalog.registerIndex(index);
    await catalog.close();
    const kv = await Deno.openKv(path);
    let parts = 0;
    for await (const _ of kv.list({ prefix: ["permafrost", "catalog", "blob"] })) parts++;
    kv.close();
    assert.ok(parts > 3, `${parts} parts of at most ${PART_BYTES} bytes`);
    catalog = await kvCatalog(path);
    const chunks = await catalog.chunks("wide", { limit: 1000 });
    assert.equal(chunks.total, 400);
    assert.deepEqual(
      chunks.items.map((c) => c.sha256),
      index.footer.chunks.map((c) => c.sha256),
    );
    const stats = await catalog.sql(
      "select count(*) from chunk_stats where dataset = 'wide' and column_name = 'c29'",
    );
    assert.deepEqual(stats.rows, [[400]]);
  } finally {
    await catalog.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("KvStore: records read the same as the DuckDB store's", async () => {
  const dir = await tempDir("kv-same");
  const kv = await kvCatalog(join(dir, "c.kv"));
  const db = await Catalog.open(join(dir, "c.db"));
  try {
    for (const c of [kv, db]) {
      await c.registerIndex(fakeIndex("a", { metadata: { description: "first" } }), {
        version: "2024",
      });
      await c.registerIndex(fakeIndex("b", { columns: ["city"] }));
    }
    const strip = (o: unknown) =>
      JSON.parse(JSON.stringify(o), (k, v) => (k === "registered_at" ? "-" : v));
    assert.deepEqual(strip(await kv.list()), strip(await db.list()));
    assert.deepEqual(strip(await kv.get("a")), strip(await db.get("a")));
    assert.deepEqual(await kv.chunks("b"), await db.chunks("b"));
    assert.deepEqual(await kv.columns("b"), await db.columns("b"));
    assert.deepEqual(await kv.search("city"), await db.search("city"));
    assert.deepEqual(await kv.stats(), await db.stats());
    assert.deepEqual(strip(await kv.costReport()), strip(await db.costReport()));
    const q = "select chunk, column_name, min, max, null_count from chunk_stats " +
      "where dataset = 'b' order by chunk, column_name";
    assert.deepEqual((await kv.sql(q)).rows, (await db.sql(q)).rows);
  } finally {
    await kv.close();
    await db.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("KvStore: parts a dead writer left are deleted once old, never while young", async () => {
  const dir = await tempDir("kv-stray");
  const path = join(dir, "c.kv");
  try {
    const kv = await Deno.openKv(path);
    const old = `${Date.now() - 3_600_000}-dead`;
    const young = `${Date.now()}-committing`;
    await kv.set(["permafrost", "catalog", "blob", old, 0], new Uint8Array([1]));
    await kv.set(["permafrost", "catalog", "blob", young, 0], new Uint8Array([2]));
    kv.close();
    const catalog = await kvCatalog(path);
    await catalog.close();
    const after = await Deno.openKv(path);
    const ids: string[] = [];
    for await (const e of after.list({ prefix: ["permafrost", "catalog", "blob"] })) {
      ids.push(String(e.key.at(-2)));
    }
    after.close();
    assert.deepEqual(ids, [young]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("KvStore: a KV written by a newer schema is refused, not misread", async () => {
  const dir = await tempDir("kv-newer");
  const path = join(dir, "c.kv");
  try {
    const kv = await Deno.openKv(path);
    await kv.set(["permafrost", "catalog", "meta"], { schema_version: 99, seq: 0 });
    kv.close();
    await assert.rejects(
      kvCatalog(path),
      (err) => err instanceof CatalogError && err.code === "DB_FAILED" && /99/.test(err.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
