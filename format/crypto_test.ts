import assert from "node:assert/strict";
import * as C from "./constants.ts";
import type { ArchiveHeader } from "./header.ts";
import {
  blockAad,
  decodeBase64,
  headerBinding,
  importDataKey,
  keyFingerprint,
  keyMatches,
  makeKeyCheck,
  openBlock,
  sealBlock,
  sealChunk,
} from "./crypto.ts";
import { FormatError } from "./errors.ts";
import type { EncodedChunk } from "./writer.ts";

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
const KEY = Uint8Array.from({ length: 32 }, (_, i) => i);
const AT = { chunk: 0, column: "c", offset: 0 };
const H = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

Deno.test("encryption constants never change", () => {
  // Like constants_test.ts: archives written today must open in ten years.
  assert.equal(C.KEY_SIZE, 32);
  assert.equal(C.NONCE_SIZE, 12);
  assert.equal(C.TAG_SIZE, 16);
  assert.equal(C.VERSION_MINOR_ENCRYPTED, 4);
  assert.equal(C.MAX_EDEK_SIZE, 8192);
  assert.ok(C.VERSION_MINOR_READ >= C.VERSION_MINOR_ENCRYPTED);
});

Deno.test("blockAad() lays out its fields as FORMAT.md §4.4 says", () => {
  const aad = blockAad({
    headerBinding: H,
    rowStart: 100_000,
    rows: 50_000,
    column: 3,
    rawLength: 123_456,
    predictor: "delta_zigzag",
  });
  assert.equal(
    hex(aad),
    "5046525a" + "01" + "04" + "0000" + H + "a086010000000000" + "50c30000" + "03000000" +
      "40e2010000000000" + hex(new TextEncoder().encode("delta_zigzag")),
  );
  assert.throws(
    () =>
      blockAad({
        headerBinding: H,
        rowStart: -1,
        rows: 1,
        column: 0,
        rawLength: 0,
        predictor: "x",
      }),
    (e: unknown) => e instanceof FormatError && e.code === "BAD_ARGUMENT",
  );
});

Deno.test("sealBlock() output is pinned for a fixed key and nonce (AES-256-GCM known answer)", async () => {
  const key = await importDataKey(KEY);
  const aad = blockAad({
    headerBinding: H,
    rowStart: 100_000,
    rows: 50_000,
    column: 3,
    rawLength: 123_456,
    predictor: "delta_zigzag",
  });
  const nonce = Uint8Array.from({ length: 12 }, (_, i) => 0xa0 + i);
  const sealed = await sealBlock(key, new TextEncoder().encode("permafrost"), aad, { nonce });
  assert.equal(
    hex(sealed),
    "a0a1a2a3a4a5a6a7a8a9aaab" + "967d0e4024ad70d01111" + "917497e380cb3482d201150ebff333b3",
  );
  assert.equal(
    new TextDecoder().decode(await openBlock(key, sealed, aad, AT)),
    "permafrost",
  );
});

Deno.test("openBlock() refuses a flipped bit, another place, another key and a short block", async (t) => {
  const key = await importDataKey(KEY);
  const ctx = {
    headerBinding: H,
    rowStart: 0,
    rows: 10,
    column: 1,
    rawLength: 99,
    predictor: "raw_text",
  };
  const sealed = await sealBlock(key, new Uint8Array(64).fill(7), blockAad(ctx));
  const isDecryptFailed = (e: unknown) => e instanceof FormatError && e.code === "DECRYPT_FAILED";
  await t.step("every flipped bit", async () => {
    for (let bit = 0; bit < sealed.length * 8; bit += 7) {
      const bad = sealed.slice();
      bad[bit >> 3]! ^= 1 << (bit & 7);
      await assert.rejects(openBlock(key, bad, blockAad(ctx), AT), isDecryptFailed);
    }
  });
  await t.step("another header, chunk, column, raw length or predictor", async () => {
    for (
      const other of [
        { ...ctx, headerBinding: H.replace("00", "01") },
        { ...ctx, rowStart: 10 },
        { ...ctx, rows: 11 },
        { ...ctx, column: 2 },
        { ...ctx, rawLength: 98 },
        { ...ctx, predictor: "category_u8" },
      ]
    ) {
      await assert.rejects(openBlock(key, sealed, blockAad(other), AT), isDecryptFailed);
    }
  });
  await t.step("another key", async () => {
    const other = await importDataKey(new Uint8Array(32).fill(9));
    await assert.rejects(openBlock(other, sealed, blockAad(ctx), AT), isDecryptFailed);
  });
  await t.step("shorter than nonce and tag", async () => {
    await assert.rejects(
      openBlock(key, sealed.subarray(0, 27), blockAad(ctx), AT),
      (e: unknown) => e instanceof FormatError && e.code === "CORRUPT",
    );
  });
});

Deno.test("makeKeyCheck() tells the right key from a wrong one", async () => {
  const key = await importDataKey(KEY);
  const check = await makeKeyCheck(key);
  assert.equal(decodeBase64(check, "key_check").length, 28);
  assert.equal(await keyMatches(key, check), true);
  assert.equal(await keyMatches(await importDataKey(new Uint8Array(32)), check), false);
  await assert.rejects(
    keyMatches(key, "AAAA"),
    (e: unknown) => e instanceof FormatError && e.code === "CORRUPT",
  );
});

Deno.test("importDataKey() refuses a key that is not 32 bytes", async () => {
  for (const n of [0, 16, 31, 33, 64]) {
    await assert.rejects(
      importDataKey(new Uint8Array(n)),
      (e: unknown) => e instanceof FormatError && e.code === "BAD_ARGUMENT",
    );
  }
});

Deno.test("sealChunk() encrypts every block, marks it sealed and blanks min/max", async () => {
  const chunk: EncodedChunk = {
    rows: 3,
    blocks: [
      { bytes: new Uint8Array([1, 2, 3]), raw_length: 10, predictor: "delta_zigzag" },
      { bytes: new Uint8Array([4, 5]), raw_length: 8, predictor: "raw_text" },
    ],
    stats: [
      { min: "1", max: "3", null_count: 0 },
      { min: "secret", max: "secrets", null_count: 1 },
    ],
  };
  const sealed = await sealChunk(chunk, { dataKey: KEY, headerBinding: H, rowStart: 6 });
  assert.deepEqual(sealed.stats, [
    { min: null, max: null, null_count: 0 },
    { min: null, max: null, null_count: 1 },
  ]);
  const key = await importDataKey(KEY);
  for (let i = 0; i < 2; i++) {
    const b = sealed.blocks[i]!;
    assert.equal(b.sealed, true);
    assert.equal(b.bytes.length, chunk.blocks[i]!.bytes.length + 28);
    const aad = blockAad({
      headerBinding: H,
      rowStart: 6,
      rows: 3,
      column: i,
      rawLength: b.raw_length,
      predictor: b.predictor,
    });
    assert.deepEqual(await openBlock(key, b.bytes, aad, AT), chunk.blocks[i]!.bytes);
  }
  await assert.rejects(
    sealChunk(sealed, { dataKey: KEY, headerBinding: H, rowStart: 6 }),
    (e: unknown) => e instanceof FormatError && e.code === "BAD_ARGUMENT",
  );
});

Deno.test("keyFingerprint() is stable and distinct per key", () => {
  assert.match(keyFingerprint(KEY), /^sha256:[0-9a-f]{32}$/);
  assert.equal(keyFingerprint(KEY), keyFingerprint(KEY.slice()));
  assert.notEqual(keyFingerprint(KEY), keyFingerprint(new Uint8Array(32)));
});

Deno.test("headerBinding() covers how blocks decode, not the key wrapping or metadata", () => {
  const h: ArchiveHeader = {
    format: "permafrost",
    version: "1.4",
    schema: {
      fields: [{
        name: "id",
        nullable: false,
        type: { name: "int", bitWidth: 64, isSigned: true },
        children: [],
      }],
    },
    codec: "zstd",
    auto_reason: null,
    chunk_rows: 2,
    columns: { id: { deps: [], quantization: "QUANT_NONE" } },
    lossy_columns: [],
    primary_key: null,
    partition: null,
    encryption: {
      algorithm: "AES-256-GCM",
      key_provider: "raw",
      key_id: null,
      edek: null,
      key_check: "A".repeat(40),
    },
    metadata: {},
  };
  const pinned = "6cc5afce9be0c1701ec66ea2294275c041366f37c837303fade9ffc9cc662d7c";
  assert.equal(headerBinding(h), pinned);
  const e = h.encryption!;
  for (
    const same of [
      { ...h, metadata: { description: "x" }, auto_reason: "why", version: "1.5" },
      { ...h, encryption: { ...e, key_provider: "local", key_id: "sha256:00", edek: "AAAA" } },
    ]
  ) {
    assert.equal(headerBinding(same), pinned);
  }
  for (
    const other of [
      { ...h, codec: "lzma2" },
      { ...h, chunk_rows: 3 },
      { ...h, primary_key: "id" },
      { ...h, lossy_columns: ["id"] },
      { ...h, partition: { day: "1" } },
      { ...h, columns: { id: { deps: [], quantization: "QUANT_LOW" as const } } },
      { ...h, encryption: { ...e, key_check: "B".repeat(40) } },
    ]
  ) {
    assert.notEqual(headerBinding(other), pinned);
  }
  assert.throws(
    () => headerBinding({ ...h, encryption: null }),
    (err: unknown) => err instanceof FormatError && err.code === "BAD_ARGUMENT",
  );
});
