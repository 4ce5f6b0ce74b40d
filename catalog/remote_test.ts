/**
 * The catalog over archives in object storage, against a real S3 server (`s3rver`):
 * register an `s3://` archive and a prefix, read its chunks and columns, check its
 * integrity with ranged reads, and never answer from a stale index when the object is
 * replaced (the cached index is revalidated by ETag).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startS3rver } from "../tests/_s3rver.ts";
import { freeze } from "../ops/freeze.ts";
import { Catalog } from "./catalog.ts";
import { localBackend, storageBackend } from "./backend.ts";
import { priceClassOf } from "./cost.ts";
import { tempDir } from "./_test_utils.ts";

const server = await startS3rver("bkt");

async function csv(dir: string, name: string, rows: number): Promise<string> {
  const path = join(dir, `${name}.csv`);
  const lines = ["id,v"];
  for (let i = 0; i < rows; i++) lines.push(`${i},${(i * 7) % 31}`);
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
  return path;
}

Deno.test("catalog registers s3:// archives and prefixes, and checks them with ranged reads", async () => {
  const dir = await tempDir("remote");
  const catalog = await Catalog.open(join(dir, "catalog.db"));
  try {
    await freeze(await csv(dir, "a", 3000), "s3://bkt/data/a.pf", { chunkRows: 500, threads: 0 });
    await freeze(await csv(dir, "b", 1000), "s3://bkt/data/b.pf", { chunkRows: 500, threads: 0 });
    await freeze(await csv(dir, "c", 100), "s3://bkt/data/deep/c.pf", {
      chunkRows: 500,
      threads: 0,
    });
    const r = await catalog.register("s3://bkt/data/a.pf");
    assert.equal(r.created, true);
    assert.equal(r.dataset.name, "a");
    assert.equal(r.dataset.path, "s3://bkt/data/a.pf");
    assert.equal(r.dataset.rows, 3000);
    assert.equal((await catalog.chunks("a")).total, 6);
    assert.equal((await catalog.columns("a")).columns.length, 2);
    const ok = await catalog.integrityCheck("a");
    assert.equal(ok.ok, true, JSON.stringify(ok.problems));
    const all = await catalog.registerDir("s3://bkt/data", { recursive: true });
    assert.deepEqual(all.registered.map((e) => e.name), ["b", "c"]);
    assert.deepEqual(all.unchanged.map((e) => e.name), ["a"]);
    assert.deepEqual(all.failed, []);
    const flat = await catalog.registerDir("s3://bkt/data/");
    assert.deepEqual([...flat.registered, ...flat.unchanged].map((e) => e.name), ["a", "b"]);
  } finally {
    await catalog.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the storage backend revalidates its cached index by ETag: a replaced object is read again", async () => {
  const dir = await tempDir("remote-etag");
  try {
    const backend = storageBackend();
    await freeze(await csv(dir, "x", 200), "s3://bkt/x.pf", { chunkRows: 100, threads: 0 });
    const first = await backend.readIndex("s3://bkt/x.pf");
    assert.equal(first.footer.rows, 200);
    assert.equal(await backend.readIndex("s3://bkt/x.pf"), first, "answered from the cache");
    await freeze(await csv(dir, "y", 300), "s3://bkt/x.pf", { chunkRows: 100, threads: 0 });
    const second = await backend.readIndex("s3://bkt/x.pf");
    assert.equal(second.footer.rows, 300);
    assert.equal(await backend.size("s3://bkt/none.pf"), null);
    assert.deepEqual(await backend.list("s3://bkt", { recursive: false }), ["s3://bkt/x.pf"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("with --cache-ttl-s a cached index is used without asking the store until it expires", async () => {
  const dir = await tempDir("remote-ttl");
  try {
    let clock = 1_000_000;
    const backend = storageBackend({ cacheTtlS: 60, now: () => clock });
    await freeze(await csv(dir, "x", 200), "s3://bkt/t.pf", { chunkRows: 100, threads: 0 });
    const first = await backend.readIndex("s3://bkt/t.pf");
    await freeze(await csv(dir, "y", 300), "s3://bkt/t.pf", { chunkRows: 100, threads: 0 });
    clock += 59_000;
    assert.equal(await backend.readIndex("s3://bkt/t.pf"), first, "within the TTL: not asked");
    clock += 2_000;
    assert.equal(
      (await backend.readIndex("s3://bkt/t.pf")).footer.rows,
      300,
      "expired: read again",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an object's own storage class is what registration records (priced by band)", async () => {
  assert.deepEqual(
    [
      "STANDARD",
      "STANDARD_IA",
      "GLACIER_IR",
      "DEEP_ARCHIVE",
      "Hot",
      "Cool",
      "Archive",
      "NEARLINE",
      "COLDLINE",
      "?",
    ]
      .map(priceClassOf),
    [
      "standard",
      "infrequent",
      "archive",
      "deep_archive",
      "standard",
      "infrequent",
      "deep_archive",
      "infrequent",
      "archive",
      null,
    ],
  );
  const dir = await tempDir("remote-class");
  const backend = { ...localBackend(), storageClass: () => Promise.resolve("NEARLINE") };
  const catalog = await Catalog.open(join(dir, "catalog.db"), { backend });
  try {
    await freeze(await csv(dir, "n", 50), join(dir, "n.pf"), { threads: 0 });
    assert.equal((await catalog.register(join(dir, "n.pf"))).dataset.storage_class, "infrequent");
    await freeze(await csv(dir, "m", 60), join(dir, "m.pf"), { threads: 0 });
    const given = await catalog.register(join(dir, "m.pf"), { storageClass: "archive" });
    assert.equal(given.dataset.storage_class, "archive", "a class given wins");
  } finally {
    await catalog.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "catalog remote tests stop s3rver",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: () => server.stop(),
});
