/**
 * URIs are checked in one place, and the local store (plain paths and `file://`)
 * behaves as the object stores do: ranged reads cut at the end, listing, delete of a
 * missing file, and an upload invisible until `complete` (gone after `abort`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { StorageError } from "./errors.ts";
import { localStore } from "./local.ts";
import { rangedBody } from "./_http.ts";
import { storeFor } from "./registry.ts";
import { formatUri, isRemote, parseUri } from "./uri.ts";

Deno.test("parseUri() accepts object URIs and refuses what is not one, saying why", () => {
  assert.deepEqual(parseUri("s3://bkt/a/b.pf"), { scheme: "s3", bucket: "bkt", key: "a/b.pf" });
  assert.deepEqual(parseUri("GS://bkt/", { prefix: true }), {
    scheme: "gs",
    bucket: "bkt",
    key: "",
  });
  assert.equal(formatUri(parseUri("az://box/x/y")), "az://box/x/y");
  assert.ok(isRemote("s3://b/k") && !isRemote("file:///tmp/x") && !isRemote("data/x.pf"));
  for (
    const [text, message] of [
      ["s3:/bkt/x", /not an object URI/],
      ["ftp://bkt/x", /Unknown storage scheme 'ftp:\/\/'/],
      ["s3://B!/x", /no valid bucket name/],
      ["s3://bkt/a/../x", /'\.\.' segment/],
      ["s3://bkt/a//x", /empty path segment/],
      ["s3://bkt/dir/", /"directory"/],
      ["s3://bkt", /"directory"/],
    ] as const
  ) {
    assert.throws(() => parseUri(text), (e: unknown) => {
      assert.ok(e instanceof StorageError, text);
      assert.equal(e.code, "BAD_URI");
      assert.match(e.message, message);
      return true;
    });
  }
  assert.equal(storeFor("s3://bkt/x").scheme, "s3");
  assert.equal(storeFor("data/x.pf").scheme, "file");
});

Deno.test("the local store reads ranges, lists, deletes, and uploads atomically", async () => {
  const dir = await Deno.makeTempDir({ prefix: "permafrost-local-store-" });
  try {
    const store = localStore();
    const path = join(dir, "a.bin");
    const up = await store.upload(path);
    await up.putPart(new TextEncoder().encode("hello "));
    await up.putPart(new TextEncoder().encode("world"));
    assert.equal(await store.stat(path), null, "nothing visible before complete");
    assert.equal((await up.complete()).size, 11);
    const uri = pathToFileURL(path).href;
    assert.equal(
      new TextDecoder().decode((await store.read(uri, { offset: 6, length: 100 })).bytes),
      "world",
    );
    assert.equal((await store.read(path, { offset: 50, length: 5 })).bytes.length, 0);
    const gone = await store.upload(join(dir, "b.bin"));
    await gone.putPart(new Uint8Array(3));
    await gone.abort();
    assert.deepEqual(await store.list(dir), [path]);
    await store.delete(path);
    await store.delete(path);
    assert.equal(await store.stat(path), null);
    await assert.rejects(
      store.read(path),
      (e: unknown) => e instanceof StorageError && e.code === "NOT_FOUND",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rangedBody() reads a 206 with its total size, and a 416 as no bytes", async () => {
  const part = new Response(new Uint8Array([1, 2, 3]), {
    status: 206,
    headers: { "content-range": "bytes 5-7/20" },
  });
  assert.deepEqual(await rangedBody(part, { offset: 5 }), {
    bytes: new Uint8Array([1, 2, 3]),
    size: 20,
  });
  const past = new Response(null, { status: 416, headers: { "content-range": "bytes */0" } });
  assert.deepEqual(await rangedBody(past, { offset: 0 }), { bytes: new Uint8Array(0), size: 0 });
  const whole = new Response(new Uint8Array([9, 9]), { status: 200 });
  assert.deepEqual(await rangedBody(whole, undefined), { bytes: new Uint8Array([9, 9]), size: 2 });
});
