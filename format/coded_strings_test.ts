/**
 * Tests of `coded_strings.ts`: codes are found only for the array they were recorded
 * for, and `codedUtf8` gives the bytes and offsets of encoding each row, or null
 * whenever a row cannot be trusted to its code.
 *
 * @module
 */
import assert from "node:assert/strict";
import { codedUtf8, codesOf, withCodes } from "./coded_strings.ts";

const dictionary = ["LAX", "", "ü", "🧊", "a,b"];
const codes = [0, 1, 2, 3, 4, 0, 0, 3, 2, 1];

function column(): string[] {
  return withCodes(codes.map((c) => dictionary[c]!), Uint8Array.from(codes), dictionary);
}

/** What encoding each value gives: the bytes end to end and each one's end. */
function expected(values: readonly string[]): { bytes: Uint8Array; offsets: Int32Array } {
  const encoded = values.map((v) => new TextEncoder().encode(v));
  const offsets = new Int32Array(values.length + 1);
  encoded.forEach((b, i) => (offsets[i + 1] = offsets[i]! + b.length));
  const bytes = new Uint8Array(offsets[values.length]!);
  encoded.forEach((b, i) => bytes.set(b, offsets[i]!));
  return { bytes, offsets };
}

Deno.test("codesOf() finds the codes of the array they were recorded for only", () => {
  const values = column();
  assert.deepEqual([...codesOf(values)!.codes], codes);
  assert.equal(codesOf([...values]), undefined);
  // Codes of another length than the values are not recorded.
  assert.equal(codesOf(withCodes(["a"], Uint8Array.of(0, 0), ["a"])), undefined);
});

Deno.test("codedUtf8() gives the bytes and offsets of encoding each row", () => {
  const values = column();
  const offsets = new Int32Array(values.length + 1);
  const bytes = codedUtf8(values, values.length, offsets)!;
  const want = expected(values);
  assert.deepEqual(bytes, want.bytes);
  assert.deepEqual(offsets, want.offsets);
  assert.equal(bytes.buffer.byteLength, bytes.length);
});

Deno.test("codedUtf8() is null when a row cannot be trusted to its code", async (t) => {
  await t.step("no codes", () => {
    assert.equal(codedUtf8(["a"], 1, new Int32Array(2)), null);
  });
  await t.step("a row changed after decoding", () => {
    const values = column();
    values[4] = "changed";
    assert.equal(codedUtf8(values, values.length, new Int32Array(values.length + 1)), null);
  });
  await t.step("an entry a row uses holds a lone surrogate", () => {
    const values = withCodes(["ok", "bad\ud800"], Uint8Array.of(0, 1), ["ok", "bad\ud800"]);
    assert.equal(codedUtf8(values, 2, new Int32Array(3)), null);
    // An entry no row uses does not matter.
    const unused = withCodes(["ok", "ok"], Uint8Array.of(0, 0), ["ok", "bad\ud800"]);
    assert.deepEqual(codedUtf8(unused, 2, new Int32Array(3)), new TextEncoder().encode("okok"));
  });
});
