/**
 * Tests of `_utf8.ts`: streaming decoding that locates the first invalid byte.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Utf8Chunks, validPrefix } from "./_utf8.ts";

const encoder = new TextEncoder();

Deno.test("validPrefix() stops at the first invalid sequence", () => {
  const b = (...xs: number[]) => new Uint8Array(xs);
  assert.equal(validPrefix(encoder.encode("aé€😀")), 10);
  assert.equal(validPrefix(b(0x61, 0xff)), 1);
  assert.equal(validPrefix(b(0x61, 0xc0, 0x80)), 1, "overlong");
  assert.equal(validPrefix(b(0xe0, 0x80, 0x80)), 0, "overlong 3-byte");
  assert.equal(validPrefix(b(0xed, 0xa0, 0x80)), 0, "surrogate");
  assert.equal(validPrefix(b(0xf4, 0x90, 0x80, 0x80)), 0, "above U+10FFFF");
  assert.equal(validPrefix(b(0x61, 0xe2, 0x82)), 1, "cut off by the end");
});

Deno.test("Utf8Chunks.decode() gives the valid text and the file offset of a bad byte", () => {
  const euro = encoder.encode("€"); // e2 82 ac
  const u = new Utf8Chunks(100, true);
  assert.deepEqual(u.decode(new Uint8Array([0x61, euro[0]!])), { text: "a", bad: -1 });
  assert.deepEqual(u.decode(new Uint8Array([euro[1]!])), { text: "", bad: -1 });
  assert.deepEqual(u.decode(new Uint8Array([euro[2]!, 0x62, 0xff, 0x63])), {
    text: "€b",
    bad: 105,
  });
});

Deno.test("Utf8Chunks.decode() reports a sequence cut off by the end of input", () => {
  const u = new Utf8Chunks(0, false);
  assert.deepEqual(u.decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61, 0xe2, 0x82])), {
    text: "a",
    bad: -1,
  });
  assert.deepEqual(u.decode(undefined), { text: "", bad: 4 });
});
