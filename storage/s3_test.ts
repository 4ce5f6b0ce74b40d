/**
 * The `s3://` store against a real S3 server (`s3rver`, started by the test):
 * ranged and suffix reads, list, delete, single and multipart uploads, abort, the
 * typed errors, and retries through a proxy that fails some requests — or all.
 */
import assert from "node:assert/strict";
import { startS3rver, startS3rverIn } from "../tests/_s3rver.ts";
import { ResumableUploadError, StorageError } from "./errors.ts";
import { PART_BYTES, s3Store } from "./s3.ts";
import { openRangeReader } from "./range_reader.ts";

const server = await startS3rver("bkt");
const env = (extra: Record<string, string> = {}) => (name: string) =>
  ({ ...server.env, ...extra } as Record<string, string | undefined>)[name];

async function rejectsWith(p: Promise<unknown>, code: string, message?: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof StorageError, String(e));
    assert.equal(e.code, code, e.message);
    if (message) assert.match(e.message, message);
    return true;
  });
}

async function put(store: ReturnType<typeof s3Store>, uri: string, bytes: Uint8Array) {
  const up = await store.upload(uri);
  await up.putPart(bytes);
  return await up.complete();
}

Deno.test("s3 store: upload, stat, ranged reads, list and delete", async () => {
  const store = s3Store({ env: env() });
  const bytes = new TextEncoder().encode("hello, object storage");
  const info = await put(store, "s3://bkt/dir/a.txt", bytes);
  assert.equal(info.size, bytes.length);
  assert.ok(info.etag);
  assert.deepEqual(await store.stat("s3://bkt/dir/a.txt"), info);
  assert.equal(await store.stat("s3://bkt/dir/none.txt"), null);
  const mid = await store.read("s3://bkt/dir/a.txt", { offset: 7, length: 6 });
  assert.equal(new TextDecoder().decode(mid.bytes), "object");
  assert.equal(mid.size, bytes.length);
  const end = await store.read("s3://bkt/dir/a.txt", { offset: bytes.length - 7, length: 100 });
  assert.equal(new TextDecoder().decode(end.bytes), "storage");
  await put(store, "s3://bkt/dir/sub/b.txt", bytes);
  assert.deepEqual(await store.list("s3://bkt/dir/"), ["s3://bkt/dir/a.txt"]);
  assert.deepEqual(await store.list("s3://bkt/dir/", { recursive: true }), [
    "s3://bkt/dir/a.txt",
    "s3://bkt/dir/sub/b.txt",
  ]);
  await store.delete("s3://bkt/dir/a.txt");
  await store.delete("s3://bkt/dir/a.txt"); // gone already: no error
  assert.equal(await store.stat("s3://bkt/dir/a.txt"), null);
});

Deno.test("s3 store: a multipart upload of several parts reads back whole; an aborted one leaves nothing", async () => {
  // Which requests asked for a storage class (the initiate of a multipart upload does).
  const classed: string[] = [];
  const store = s3Store({
    env: env(),
    fetch: (input, init) => {
      const req = input instanceof Request ? input : new Request(input, init);
      const cls = req.headers.get("x-amz-storage-class");
      if (cls) classed.push(`${req.method} ${new URL(req.url).search} ${cls}`);
      return fetch(req);
    },
  });
  const big = new Uint8Array(PART_BYTES * 2 + 12345);
  for (let i = 0; i < big.length; i += 4096) big[i] = (i / 4096) % 251;
  const up = await store.upload("s3://bkt/big.bin", { storageClass: "STANDARD_IA" });
  for (let at = 0; at < big.length; at += 3_000_000) {
    await up.putPart(big.subarray(at, at + 3_000_000));
  }
  const info = await up.complete();
  assert.equal(info.size, big.length);
  assert.deepEqual(classed, ["POST ?uploads STANDARD_IA"]);
  const back = await store.read("s3://bkt/big.bin");
  assert.deepEqual(back.bytes, big);
  const ranged = await openRangeReader("s3://bkt/big.bin", store);
  assert.equal(ranged.size, big.length);
  assert.deepEqual(
    await ranged.read(PART_BYTES - 3, 10),
    big.subarray(PART_BYTES - 3, PART_BYTES + 7),
  );
  assert.equal(ranged.requests, 3, "head and tail on open, then one range");

  const aborted = await store.upload("s3://bkt/never.bin");
  await aborted.putPart(big.subarray(0, PART_BYTES + 1));
  await aborted.abort();
  assert.equal(await store.stat("s3://bkt/never.bin"), null);
});

Deno.test("s3 store: typed errors say what to fix and never show a secret", async () => {
  const secret = "wrong-secret-value-1234";
  await rejectsWith(
    s3Store({ env: env({ AWS_ACCESS_KEY_ID: "" }) }).stat("s3://bkt/x"),
    "MISSING_CREDENTIALS",
    /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
  );
  const store = s3Store({ env: env() });
  await rejectsWith(store.read("s3://bkt/missing.pf"), "NOT_FOUND", /no such object/);
  await rejectsWith(store.read("s3://nobucket/x.pf"), "NOT_FOUND", /no such bucket/);
  await rejectsWith(store.stat("s3://bkt/dir/"), "BAD_URI", /"directory"/);
  await rejectsWith(store.stat("s3://bkt/a/../b"), "BAD_URI", /'\.\.'/);
  await put(store, "s3://bkt/there.pf", new Uint8Array(10));
  const denied = s3Store({
    env: env({ AWS_ACCESS_KEY_ID: "NOBODY", AWS_SECRET_ACCESS_KEY: secret }),
  });
  await assert.rejects(denied.read("s3://bkt/there.pf"), (e: unknown) => {
    assert.ok(e instanceof StorageError);
    assert.equal(e.code, "ACCESS_DENIED");
    assert.ok(!e.message.includes(secret), e.message);
    return true;
  });
});

Deno.test("s3 store: requests that fail now and then are retried; a store that stays down aborts the upload", async () => {
  // A proxy in front of s3rver that answers every third request 503.
  let n = 0;
  const flaky = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    if (++n % 3 === 0) return new Response("<Error><Code>SlowDown</Code></Error>", { status: 503 });
    const url = new URL(req.url);
    return await fetch(`${server.endpoint}${url.pathname}${url.search}`, {
      method: req.method,
      headers: req.headers,
      body: req.body,
    });
  });
  try {
    // Signatures cover the host: the proxy forwards the same Host header.
    const store = s3Store({
      env: env({ AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${flaky.addr.port}` }),
      baseBackoffMs: 1,
      fetch: (input, init) => fetch(input, init),
    });
    const bytes = new Uint8Array(PART_BYTES + 100).fill(7);
    const up = await store.upload("s3://bkt/flaky.bin");
    await up.putPart(bytes);
    await up.complete();
    assert.deepEqual((await s3Store({ env: env() }).read("s3://bkt/flaky.bin")).bytes, bytes);
    assert.ok(n > 6, "requests went through the proxy");
  } finally {
    await flaky.shutdown();
  }
  // Nothing listens here: every part fails, the upload is aborted.
  const down = s3Store({
    env: env({ AWS_ENDPOINT_URL_S3: "http://127.0.0.1:9" }),
    baseBackoffMs: 1,
  });
  const up = await down.upload("s3://bkt/down.bin");
  await assert.rejects(up.complete(), (e: unknown) => {
    assert.ok(e instanceof ResumableUploadError, String(e));
    assert.equal(e.code, "UPLOAD_FAILED");
    assert.match(e.message, /s3:\/\/bkt\/down\.bin.*failed 3 times.*nothing was written there/);
    return true;
  });
  assert.equal(await s3Store({ env: env() }).stat("s3://bkt/down.bin"), null);
});

Deno.test("s3 store: a server killed in the middle of an upload leaves no object behind", async () => {
  const victim = await startS3rver("bkt");
  let parts = 0;
  // In front of the server: the second part of the upload kills it (SIGKILL).
  const proxy = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const url = new URL(req.url);
    if (url.searchParams.has("partNumber") && ++parts === 2) victim.kill();
    try {
      return await fetch(`${victim.endpoint}${url.pathname}${url.search}`, {
        method: req.method,
        headers: req.headers,
        body: req.body,
      });
    } catch {
      return new Response("gone", { status: 502 });
    }
  });
  try {
    const store = s3Store({
      env: env({ ...victim.env, AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${proxy.addr.port}` }),
      baseBackoffMs: 1,
    });
    const up = await store.upload("s3://bkt/half.bin");
    await assert.rejects(
      (async () => {
        await up.putPart(new Uint8Array(PART_BYTES * 3).fill(1));
        await up.complete();
      })(),
      (e: unknown) => e instanceof ResumableUploadError && e.part === 2,
    );
    // The same data, served again: the object never became visible.
    const again = await startS3rverIn(victim.dir, ["bkt"]);
    try {
      assert.equal(await s3Store({ env: env(again.env) }).stat("s3://bkt/half.bin"), null);
    } finally {
      await again.stop();
    }
  } finally {
    await proxy.shutdown();
    await victim.stop();
  }
});

Deno.test({
  name: "s3 test server stops",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => server.stop(),
});
