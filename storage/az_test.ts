/**
 * The `az://` store against a real Azure Blob server (Azurite, started by the test):
 * Shared Key signing, ranged reads, list, delete, single and block-list uploads with
 * an access tier, an aborted upload leaving nothing, typed errors — and the archive
 * operations on `az://` URIs end to end.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startAzurite } from "../tests/_azurite.ts";
import { azureStore, BLOCK_BYTES } from "./az.ts";
import { StorageError } from "./errors.ts";
import { openRangeReader } from "./range_reader.ts";
import { freeze } from "../ops/freeze.ts";
import { thaw } from "../ops/thaw.ts";
import { verify } from "../ops/inspect.ts";

const server = await startAzurite("box");
const env = (extra: Record<string, string> = {}) => (name: string) =>
  ({ ...server.env, ...extra } as Record<string, string | undefined>)[name];

Deno.test("az store: upload, stat with tier, ranged reads, list and delete", async () => {
  const store = azureStore({ env: env() });
  const bytes = new TextEncoder().encode("hello, blob storage");
  const up = await store.upload("az://box/dir/a.txt", { storageClass: "Cool" });
  await up.putPart(bytes);
  const info = await up.complete();
  assert.equal(info.size, bytes.length);
  assert.equal(info.storageClass, "Cool");
  assert.equal(await store.stat("az://box/dir/none.txt"), null);
  const mid = await store.read("az://box/dir/a.txt", { offset: 7, length: 4 });
  assert.equal(new TextDecoder().decode(mid.bytes), "blob");
  assert.equal(mid.size, bytes.length);
  const sub = await store.upload("az://box/dir/sub/b.txt");
  await sub.putPart(bytes);
  await sub.complete();
  assert.deepEqual(await store.list("az://box/dir/"), ["az://box/dir/a.txt"]);
  assert.deepEqual(await store.list("az://box/dir/", { recursive: true }), [
    "az://box/dir/a.txt",
    "az://box/dir/sub/b.txt",
  ]);
  await store.delete("az://box/dir/a.txt");
  await store.delete("az://box/dir/a.txt");
  assert.equal(await store.stat("az://box/dir/a.txt"), null);
});

Deno.test("az store: a block-list upload reads back whole; an aborted one leaves nothing", async () => {
  const store = azureStore({ env: env() });
  const big = new Uint8Array(BLOCK_BYTES * 2 + 999);
  for (let i = 0; i < big.length; i += 1000) big[i] = (i / 1000) % 253;
  const up = await store.upload("az://box/big.bin");
  for (let at = 0; at < big.length; at += 5_000_000) {
    await up.putPart(big.subarray(at, at + 5_000_000));
  }
  assert.equal((await up.complete()).size, big.length);
  assert.deepEqual((await store.read("az://box/big.bin")).bytes, big);
  const ranged = await openRangeReader("az://box/big.bin", store);
  assert.deepEqual(
    await ranged.read(BLOCK_BYTES - 5, 10),
    big.subarray(BLOCK_BYTES - 5, BLOCK_BYTES + 5),
  );
  const aborted = await store.upload("az://box/never.bin");
  await aborted.putPart(big.subarray(0, BLOCK_BYTES + 1));
  await aborted.abort();
  assert.equal(await store.stat("az://box/never.bin"), null);
});

Deno.test("az store: typed errors say what to fix and never show the key", async () => {
  const failsWith = (p: Promise<unknown>, code: string, message: RegExp) =>
    assert.rejects(p, (e: unknown) => {
      assert.ok(e instanceof StorageError, String(e));
      assert.equal(e.code, code, e.message);
      assert.match(e.message, message);
      return true;
    });
  await failsWith(
    azureStore({ env: () => undefined }).stat("az://box/x"),
    "MISSING_CREDENTIALS",
    /AZURE_STORAGE_CONNECTION_STRING/,
  );
  const store = azureStore({ env: env() });
  await failsWith(store.read("az://box/missing.pf"), "NOT_FOUND", /no such object/);
  await failsWith(store.read("az://nobox/x.pf"), "NOT_FOUND", /no such bucket or container/);
  const wrongKey = btoa("not the account key, 32 bytes..!");
  const conn = server.env.AZURE_STORAGE_CONNECTION_STRING!.replace(
    /AccountKey=[^;]+/,
    `AccountKey=${wrongKey}`,
  );
  await assert.rejects(
    azureStore({ env: env({ AZURE_STORAGE_CONNECTION_STRING: conn }) }).read("az://box/big.bin"),
    (e: unknown) => {
      assert.ok(e instanceof StorageError);
      assert.equal(e.code, "ACCESS_DENIED");
      assert.ok(!e.message.includes(wrongKey));
      return true;
    },
  );
});

Deno.test("archive operations on az:// URIs: freeze, verify, thaw a slice", async () => {
  const dir = await Deno.makeTempDir({ prefix: "permafrost-az-ops-" });
  try {
    const csv = join(dir, "a.csv");
    await Deno.writeTextFile(
      csv,
      "id,v\n" + Array.from({ length: 3000 }, (_, i) => `${i},${i % 13}`).join("\n") + "\n",
    );
    const local = await freeze(csv, join(dir, "a.pf"), { chunkRows: 500, threads: 0 });
    const remote = await freeze(csv, "az://box/archives/a.pf", {
      chunkRows: 500,
      threads: 0,
      storageClass: "Cool",
    });
    assert.equal(remote.payload_sha256, local.payload_sha256);
    assert.equal(
      (await azureStore({ env: env() }).stat("az://box/archives/a.pf"))?.storageClass,
      "Cool",
    );
    assert.equal((await verify("az://box/archives/a.pf")).ok, true);
    await thaw("az://box/archives/a.pf", join(dir, "slice.csv"), {
      rows: { start: 1000, end: 1003 },
    });
    assert.equal(
      await Deno.readTextFile(join(dir, "slice.csv")),
      "id,v\n1000,12\n1001,0\n1002,1\n",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "azurite stops",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: () => server.stop(),
});
