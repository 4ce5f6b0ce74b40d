/**
 * Tests of `codecs/auto.ts`: which codec wins, ties, the reason and the sizes.
 *
 * @module
 */
import assert from "node:assert/strict";
import { AUTO_CANDIDATES, chooseCodec } from "./auto.ts";
import type { Codec } from "./codec.ts";
import { CodecError } from "./errors.ts";
import { lzma2 } from "./lzma2.ts";
import { zstd } from "./zstd.ts";

/** A stand-in codec whose output length is a fixed fraction of the input. */
function fakeCodec(id: string, ratio: number): Codec {
  return {
    id,
    code: 0x70,
    levels: { min: 1, max: 1, default: 1 },
    encode: (data) => Promise.resolve(new Uint8Array(Math.ceil(data.length * ratio))),
    decode: () => Promise.reject(new Error("not used")),
  };
}

function csv(rows: number): Uint8Array {
  return new TextEncoder().encode(
    Array.from({ length: rows }, (_, i) => `${i},${["red", "green", "blue"][i % 3]},${i * 3}\n`)
      .join(""),
  );
}

Deno.test("AUTO_CANDIDATES are zstd and lzma2, without zpaq", () => {
  assert.deepEqual(AUTO_CANDIDATES, [zstd, lzma2]);
  assert.ok(Object.isFrozen(AUTO_CANDIDATES));
});

Deno.test("chooseCodec() picks the smallest total and reports every size", async () => {
  const samples = [csv(1000), csv(200)];
  const choice = await chooseCodec(samples, undefined, { rows: 1000 });
  let zstdTotal = 0;
  let lzmaTotal = 0;
  for (const sample of samples) {
    zstdTotal += (await zstd.encode(sample)).length;
    lzmaTotal += (await lzma2.encode(sample)).length;
  }
  assert.deepEqual(choice.sizes, { zstd: zstdTotal, lzma2: lzmaTotal });
  const expected = lzmaTotal < zstdTotal
    ? `lzma2: ${lzmaTotal} B vs zstd ${zstdTotal} B`
    : `zstd: ${zstdTotal} B vs lzma2 ${lzmaTotal} B`;
  assert.equal(choice.codec, lzmaTotal < zstdTotal ? lzma2 : zstd);
  assert.equal(choice.reason, `${expected} on a 1000-row sample`);
});

Deno.test("chooseCodec() prefers the faster codec when sizes tie", async () => {
  const slowFirst = [fakeCodec("zpaq", 0.5), fakeCodec("lzma2", 0.5), fakeCodec("zstd", 0.5)];
  const choice = await chooseCodec([new Uint8Array(100)], slowFirst, { rows: 10 });
  assert.equal(choice.codec.id, "zstd");
  assert.equal(
    choice.reason,
    "zstd: 50 B vs lzma2 50 B, zpaq 50 B on a 10-row sample (tie: the faster codec wins)",
  );
});

Deno.test("chooseCodec() ranks unknown codecs after known ones on a tie, in candidate order", async () => {
  const candidates = [fakeCodec("b", 0.5), fakeCodec("a", 0.5), fakeCodec("lzma2", 0.5)];
  const choice = await chooseCodec([new Uint8Array(10)], candidates);
  assert.equal(choice.codec.id, "lzma2");
  assert.match(choice.reason, /^lzma2: 5 B vs b 5 B, a 5 B on a sample of 1 block \(10 B\)/);
});

Deno.test("chooseCodec() includes zpaq only when passed as a candidate", async () => {
  const zpaqLike = fakeCodec("zpaq", 0.01);
  const without = await chooseCodec([csv(100)]);
  assert.ok(!("zpaq" in without.sizes));
  const withZpaq = await chooseCodec([csv(100)], [zstd, lzma2, zpaqLike]);
  assert.equal(withZpaq.codec, zpaqLike);
  assert.deepEqual(Object.keys(withZpaq.sizes), ["zstd", "lzma2", "zpaq"]);
});

Deno.test("chooseCodec() describes the sample by blocks and bytes without a row count", async () => {
  const choice = await chooseCodec([new Uint8Array(3), new Uint8Array(4)], [fakeCodec("x", 1)]);
  assert.equal(choice.reason, "x: 7 B (only candidate) on a sample of 2 blocks (7 B)");
});

Deno.test("chooseCodec() throws RangeError when the candidates are empty or repeat an id", async () => {
  await assert.rejects(chooseCodec([csv(10)], []), RangeError);
  await assert.rejects(chooseCodec([csv(10)], [zstd, zstd]), RangeError);
});

Deno.test("chooseCodec() passes on a candidate's CodecError", async () => {
  const broken: Codec = {
    id: "zpaq",
    code: 0x03,
    levels: { min: 1, max: 5, default: 5 },
    encode: () => Promise.reject(new CodecError("BINARY_MISSING", "Cannot run 'zpaq'")),
    decode: () => Promise.reject(new Error("not used")),
  };
  await assert.rejects(chooseCodec([csv(10)], [zstd, broken]), {
    name: "CodecError",
    code: "BINARY_MISSING",
  });
});
