/**
 * The `gs://` store against `tests/_gcs_server.ts`, a server speaking GCS's JSON API,
 * resumable uploads and OAuth JWT-bearer grant (no GCS emulator can be had from our
 * registries; see its header): tokens from a service-account key file and from the
 * metadata server, emulator mode without tokens, ranged reads, paged listing, delete,
 * chunked resumable uploads with a storage class, retries, a cancelled session, and
 * the archive operations on `gs://` URIs end to end.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startGcsServer } from "../tests/_gcs_server.ts";
import { CHUNK_BYTES, gcsStore } from "./gs.ts";
import { ResumableUploadError, StorageError } from "./errors.ts";
import { openRangeReader } from "./range_reader.ts";
import { freeze } from "../ops/freeze.ts";
import { thaw } from "../ops/thaw.ts";

Deno.test("gs store: a service-account token, then upload, stat, ranged reads, paged list, delete", async () => {
  const server = await startGcsServer({ buckets: ["bkt"] });
  try {
    const store = gcsStore({
      endpoint: server.url,
      env: (n) => (n === "GOOGLE_APPLICATION_CREDENTIALS" ? "/key.json" : undefined),
      readFile: () => Promise.resolve(server.keyFile),
    });
    const big = new Uint8Array(CHUNK_BYTES * 2 + 4321);
    for (let i = 0; i < big.length; i += 512) big[i] = (i / 512) % 249;
    const up = await store.upload("gs://bkt/data/big.bin", { storageClass: "NEARLINE" });
    for (let at = 0; at < big.length; at += 3_000_000) {
      await up.putPart(big.subarray(at, at + 3_000_000));
    }
    const info = await up.complete();
    assert.equal(info.size, big.length);
    assert.equal(info.storageClass, "NEARLINE");
    assert.deepEqual((await store.read("gs://bkt/data/big.bin")).bytes, big);
    const ranged = await openRangeReader("gs://bkt/data/big.bin", store);
    assert.deepEqual(
      await ranged.read(CHUNK_BYTES - 2, 4),
      big.subarray(CHUNK_BYTES - 2, CHUNK_BYTES + 2),
    );
    for (const name of ["a", "b", "c", "sub/d"]) {
      const u = await store.upload(`gs://bkt/data/${name}.txt`);
      await u.putPart(new TextEncoder().encode(name));
      await u.complete();
    }
    assert.deepEqual(await store.list("gs://bkt/data/"), [
      "gs://bkt/data/a.txt",
      "gs://bkt/data/b.txt",
      "gs://bkt/data/big.bin",
      "gs://bkt/data/c.txt",
    ]);
    assert.equal((await store.list("gs://bkt/data/", { recursive: true })).length, 5);
    await store.delete("gs://bkt/data/a.txt");
    await store.delete("gs://bkt/data/a.txt");
    assert.equal(await store.stat("gs://bkt/data/a.txt"), null);
    const aborted = await store.upload("gs://bkt/never.bin");
    await aborted.putPart(big.subarray(0, CHUNK_BYTES + 1));
    await aborted.abort();
    assert.equal(await store.stat("gs://bkt/never.bin"), null);
    assert.equal(server.sessions(), 0);
  } finally {
    await server.stop();
  }
});

Deno.test("gs store: the metadata server's token, the emulator without one, retries, and typed errors", async () => {
  const server = await startGcsServer({ buckets: ["bkt"], failEvery: 4 });
  try {
    const host = new URL(server.url).host;
    const store = gcsStore({
      endpoint: server.url,
      env: (n) => (n === "GCE_METADATA_HOST" ? host : undefined),
      baseBackoffMs: 1,
    });
    const up = await store.upload("gs://bkt/x.txt");
    await up.putPart(new TextEncoder().encode("through the flaky server"));
    await up.complete();
    assert.equal(
      new TextDecoder().decode((await store.read("gs://bkt/x.txt")).bytes),
      "through the flaky server",
    );
    const fails = (p: Promise<unknown>, code: string, message: RegExp) =>
      assert.rejects(p, (e: unknown) => {
        assert.ok(e instanceof StorageError, String(e));
        assert.equal(e.code, code, e.message);
        assert.match(e.message, message);
        return true;
      });
    await fails(store.read("gs://bkt/none.txt"), "NOT_FOUND", /no such object/);
    const wrongKey = gcsStore({
      endpoint: server.url,
      env: (n) => (n === "GOOGLE_APPLICATION_CREDENTIALS" ? "/k" : undefined),
      readFile: () =>
        Promise.resolve(
          server.keyFile.replace(/"client_email":"[^"]+"/, '"client_email":"someone@else"'),
        ),
    });
    await fails(
      wrongKey.stat("gs://bkt/x.txt"),
      "MISSING_CREDENTIALS",
      /token endpoint answered 400/,
    );
  } finally {
    await server.stop();
  }
  const emulator = await startGcsServer({ buckets: ["bkt"], emulator: true });
  try {
    const store = gcsStore({
      env: (n) => (n === "STORAGE_EMULATOR_HOST" ? emulator.url : undefined),
    });
    const up = await store.upload("gs://bkt/e.txt");
    await up.putPart(new Uint8Array(10));
    assert.equal((await up.complete()).size, 10);
  } finally {
    await emulator.stop();
  }
  const down = gcsStore({
    env: (n) => (n === "STORAGE_EMULATOR_HOST" ? "127.0.0.1:9" : undefined),
    baseBackoffMs: 1,
  });
  const up = await down.upload("gs://bkt/down.bin");
  await assert.rejects(
    up.complete(),
    (e: unknown) => e instanceof ResumableUploadError && e.code === "UPLOAD_FAILED",
  );
});

Deno.test("archive operations on gs:// URIs: freeze, thaw a slice", async () => {
  const server = await startGcsServer({ buckets: ["bkt"], emulator: true });
  Deno.env.set("STORAGE_EMULATOR_HOST", server.url);
  const dir = await Deno.makeTempDir({ prefix: "permafrost-gs-ops-" });
  try {
    const csv = join(dir, "a.csv");
    await Deno.writeTextFile(
      csv,
      "id,v\n" + Array.from({ length: 2000 }, (_, i) => `${i},${i % 7}`).join("\n") + "\n",
    );
    const local = await freeze(csv, join(dir, "a.pf"), { chunkRows: 500, threads: 0 });
    const remote = await freeze(csv, "gs://bkt/a.pf", { chunkRows: 500, threads: 0 });
    assert.equal(remote.payload_sha256, local.payload_sha256);
    await thaw("gs://bkt/a.pf", join(dir, "s.csv"), { rows: { start: 700, end: 702 } });
    assert.equal(await Deno.readTextFile(join(dir, "s.csv")), "id,v\n700,0\n701,1\n");
  } finally {
    Deno.env.delete("STORAGE_EMULATOR_HOST");
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
