/**
 * Tests of `codecs/registry.ts`: what is registered, and lookups that fail.
 *
 * @module
 */
import assert from "node:assert/strict";
import { CodecError } from "./errors.ts";
import { lzma2 } from "./lzma2.ts";
import { CODEC_IDS, codecByCode, codecById, CODECS } from "./registry.ts";
import { zpaq } from "./zpaq.ts";
import { zpaqWasm } from "./zpaq_wasm.ts";
import { zstd } from "./zstd.ts";

Deno.test("CODECS lists zstd, lzma2, zpaq and zpaqwasm with their wire codes", () => {
  assert.deepEqual(CODECS.map((c) => [c.id, c.code]), [
    ["zstd", 0x01],
    ["lzma2", 0x02],
    ["zpaq", 0x03],
    ["zpaqwasm", 0x04],
  ]);
  assert.deepEqual(CODEC_IDS, ["zstd", "lzma2", "zpaq", "zpaqwasm"]);
});

Deno.test("each registered codec is its module's: id, code, levels, binary", () => {
  const modules = [zstd, lzma2, zpaq, zpaqWasm];
  for (const [i, codec] of CODECS.entries()) {
    const impl = modules[i]!;
    assert.deepEqual(
      { id: codec.id, code: codec.code, levels: codec.levels, binary: codec.binary },
      { id: impl.id, code: impl.code, levels: impl.levels, binary: impl.binary },
    );
    assert.ok(Object.isFrozen(codec.levels), codec.id);
  }
});

Deno.test("a registered codec encodes and decodes as its module does", async () => {
  const raw = new TextEncoder().encode("permafrost ".repeat(500));
  for (const [codec, impl] of [[codecById("zstd"), zstd], [codecById("zpaqwasm"), zpaqWasm]]) {
    const packed = await codec!.encode(raw, 1);
    assert.deepEqual(packed, await impl!.encode(raw, 1), codec!.id);
    assert.deepEqual(await codec!.decode(packed, raw.length), raw, codec!.id);
  }
  await assert.rejects(codecById("zstd").decode(new Uint8Array(3), 1), { code: "DECODE_FAILED" });
});

Deno.test("CODECS is frozen and its ids and codes are unique", () => {
  assert.ok(Object.isFrozen(CODECS));
  assert.ok(Object.isFrozen(CODEC_IDS));
  assert.throws(() => (CODECS as unknown as unknown[]).push(zstd), TypeError);
  for (const codec of CODECS) assert.ok(Object.isFrozen(codec), codec.id);
  assert.equal(new Set(CODECS.map((c) => c.id)).size, CODECS.length);
  assert.equal(new Set(CODECS.map((c) => c.code)).size, CODECS.length);
});

Deno.test("codecById() returns each registered codec", () => {
  for (const codec of CODECS) assert.equal(codecById(codec.id), codec);
});

Deno.test("codecByCode() returns each registered codec", () => {
  for (const codec of CODECS) assert.equal(codecByCode(codec.code), codec);
});

Deno.test("codecById() throws UNKNOWN_CODEC naming the id and the known ones", () => {
  assert.throws(() => codecById("brotli"), (err: unknown) => {
    assert.ok(err instanceof CodecError);
    assert.equal(err.code, "UNKNOWN_CODEC");
    assert.equal(
      err.message,
      "Cannot find codec 'brotli': known codecs are 'zstd', 'lzma2', 'zpaq', 'zpaqwasm'",
    );
    return true;
  });
  for (const id of ["", "ZSTD", "auto", "toString", "__proto__"]) {
    assert.throws(() => codecById(id), { name: "CodecError", code: "UNKNOWN_CODEC" });
  }
});

Deno.test("codecByCode() throws UNKNOWN_CODEC naming the code and the known ones", () => {
  assert.throws(() => codecByCode(0x7f), (err: unknown) => {
    assert.ok(err instanceof CodecError);
    assert.equal(err.code, "UNKNOWN_CODEC");
    assert.equal(
      err.message,
      "Cannot find codec with wire code 0x7f: known codecs are 'zstd' (0x01), 'lzma2' (0x02), 'zpaq' (0x03), 'zpaqwasm' (0x04)",
    );
    return true;
  });
  for (const code of [0, -1, 256, 1.5, Number.NaN]) {
    assert.throws(() => codecByCode(code), { name: "CodecError", code: "UNKNOWN_CODEC" });
  }
});
