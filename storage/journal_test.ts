/**
 * The upload journal (`journal.ts`) against `tests/_gcs_server.ts` (GCS resumable
 * sessions) and local files: an upload is written down once the store gives it an id
 * and forgotten when it completes or is aborted; `collectUploads` aborts the uploads
 * whose process is gone (the server's session is really cancelled), leaves running
 * ones alone unless they are older than asked, lists without aborting on a dry run,
 * keeps what it could not abort, and removes only an upload's own temp file locally.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startGcsServer } from "../tests/_gcs_server.ts";
import { StorageError } from "./errors.ts";
import { CHUNK_BYTES, gcsStore } from "./gs.ts";
import { collectUploads, journaled } from "./journal.ts";
import { localStore } from "./local.ts";

const state = await Deno.makeTempDir({ prefix: "permafrost-journal-" });
Deno.env.set("PERMAFROST_STATE_DIR", state);
const server = await startGcsServer({ buckets: ["bkt"], emulator: true });
const store = gcsStore({ env: (n) => (n === "STORAGE_EMULATOR_HOST" ? server.url : undefined) });

async function entries(): Promise<{ uri: string; id: string; pid: number }[]> {
  const dir = join(state, "uploads");
  const names = await Array.fromAsync(Deno.readDir(dir)).catch(() => []);
  return await Promise.all(
    names.map(async (e) => JSON.parse(await Deno.readTextFile(join(dir, e.name)))),
  );
}

/** An upload with one chunk sent: the session exists and is written down. */
async function halfUpload(uri: string) {
  const up = journaled(store, uri, await store.upload(uri));
  await up.putPart(new Uint8Array(CHUNK_BYTES + 10).fill(7));
  return up;
}

Deno.test("an upload is written down while in flight, and forgotten when it completes or is aborted", async () => {
  const up = await halfUpload("gs://bkt/a.bin");
  const [entry, ...more] = await entries();
  assert.equal(more.length, 0);
  assert.equal(entry!.uri, "gs://bkt/a.bin");
  assert.equal(entry!.id, up.id);
  assert.equal(entry!.pid, Deno.pid);
  assert.equal((await Deno.stat(join(state, "uploads"))).mode! & 0o777, 0o700);
  await up.complete();
  assert.deepEqual(await entries(), []);
  assert.equal(server.objects.get("bkt/a.bin")?.bytes.length, CHUNK_BYTES + 10);

  const dropped = await halfUpload("gs://bkt/b.bin");
  assert.equal(server.sessions(), 1);
  await dropped.abort();
  assert.deepEqual(await entries(), []);
  assert.equal(server.sessions(), 0);
});

Deno.test("collectUploads() aborts the uploads whose process is gone", async () => {
  await halfUpload("gs://bkt/k1.bin");
  await halfUpload("gs://other/k2.bin").catch(() => {}); // no such bucket: nothing written down
  assert.equal(server.sessions(), 1);
  const options = { storeFor: () => store };
  // Its process runs (this one): left alone.
  const running = await collectUploads(options);
  assert.deepEqual(running.map((u) => u.state), ["in_progress"]);
  // Gone: a dry run lists it and changes nothing; then it is aborted.
  const gone = { ...options, isRunning: () => false };
  const dry = await collectUploads({ ...gone, dryRun: true });
  assert.deepEqual(dry.map((u) => [u.uri, u.state]), [["gs://bkt/k1.bin", "orphaned"]]);
  assert.equal(server.sessions(), 1);
  assert.deepEqual(await collectUploads({ ...gone, prefix: "gs://bkt/other/" }), []);
  const done = await collectUploads(gone);
  assert.deepEqual(done.map((u) => [u.uri, u.state, u.pid]), [[
    "gs://bkt/k1.bin",
    "aborted",
    Deno.pid,
  ]]);
  assert.equal(server.sessions(), 0, "the session was cancelled on the server");
  assert.deepEqual(await entries(), []);
  assert.deepEqual(await collectUploads(gone), []);
  // Running but older than asked: aborted too.
  await halfUpload("gs://bkt/k3.bin");
  const stale = await collectUploads({ ...options, olderThanMs: 0 });
  assert.deepEqual(stale.map((u) => u.state), ["aborted"]);
  assert.equal(server.sessions(), 0);
});

Deno.test("an abort that fails is reported and stays written down for the next run", async () => {
  await halfUpload("gs://bkt/f.bin");
  const down = gcsStore({
    env: (n) => (n === "STORAGE_EMULATOR_HOST" ? "127.0.0.1:9" : undefined),
    baseBackoffMs: 1,
  });
  const failed = await collectUploads({ storeFor: () => down, isRunning: () => false });
  assert.equal(failed.length, 1);
  assert.equal(failed[0]!.state, "failed");
  assert.match(failed[0]!.error!, /gs:\/\/bkt\/f\.bin/);
  assert.equal((await entries()).length, 1);
  // A session URL on another host is never sent our request.
  const elsewhere = await collectUploads({
    storeFor: () => gcsStore({ env: () => undefined, endpoint: "http://127.0.0.2:1" }),
    isRunning: () => false,
  });
  assert.equal(elsewhere[0]!.state, "failed");
  assert.match(elsewhere[0]!.error!, /is not on http:\/\/127\.0\.0\.2:1/);
  const retried = await collectUploads({ storeFor: () => store, isRunning: () => false });
  assert.deepEqual(retried.map((u) => u.state), ["aborted"]);
  assert.equal(server.sessions(), 0);
});

Deno.test("a local upload left by a killed process is its temp file, and only that is removed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "permafrost-journal-local-" });
  try {
    const local = localStore();
    const target = join(dir, "out.pf");
    const up = journaled(local, target, await local.upload(target));
    await up.putPart(new Uint8Array(100));
    const [temp] = await Array.fromAsync(Deno.readDir(dir));
    assert.match(temp!.name, /^\.[0-9a-f]{8}\.upload-tmp$/);
    const done = await collectUploads({ storeFor: () => local, isRunning: () => false });
    assert.deepEqual(done.map((u) => u.state), ["aborted"]);
    assert.deepEqual(await Array.fromAsync(Deno.readDir(dir)), []);
    await Deno.writeTextFile(join(dir, "keep.txt"), "x");
    await assert.rejects(
      local.abortUpload(target, "../keep.txt"),
      (e: unknown) => e instanceof StorageError && e.code === "BAD_URI",
    );
    await assert.rejects(local.abortUpload(target, "keep.txt"), StorageError);
    assert.equal(await Deno.readTextFile(join(dir, "keep.txt")), "x");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "journal tests clean up",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await server.stop();
    await Deno.remove(state, { recursive: true });
  },
});
