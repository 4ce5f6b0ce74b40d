/**
 * Tests of `_ints.ts`: word arithmetic, zigzag, byte planes and varints.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ByteReader, ByteWriter } from "../_bytes.ts";
import { FormatError } from "../errors.ts";
import {
  bigIntsFromWords,
  deltasOf,
  planesSize,
  planeWidth,
  prefixSumInPlace,
  readPlanes,
  unzigzag64,
  unzigzagInPlace,
  varintSize,
  wordsOf,
  writePlanes,
  writeVarint,
  zigzag64,
  zigzagInPlace,
} from "./_ints.ts";
import { assertFormatError, INT64_MAX, INT64_MIN } from "./_test_utils.ts";

const EXTREMES = [
  0n,
  1n,
  -1n,
  2n,
  -2n,
  INT64_MAX,
  INT64_MIN,
  INT64_MIN + 1n,
  2n ** 53n + 1n,
  -(2n ** 53n) - 1n,
  2n ** 32n,
  2n ** 32n - 1n,
  -(2n ** 32n),
  123456789012345678n,
];

Deno.test("zigzag64() maps small magnitudes of both signs to small codes", () => {
  assert.deepEqual([0n, -1n, 1n, -2n, 2n].map(zigzag64), [0n, 1n, 2n, 3n, 4n]);
  assert.equal(zigzag64(INT64_MAX), 2n ** 64n - 2n);
  assert.equal(zigzag64(INT64_MIN), 2n ** 64n - 1n);
  for (const v of EXTREMES) assert.equal(unzigzag64(zigzag64(v)), v);
});

Deno.test("zigzagInPlace() agrees with zigzag64() and unzigzagInPlace() undoes it", () => {
  const values = BigInt64Array.from(EXTREMES);
  const words = wordsOf(values).slice();
  zigzagInPlace(words);
  const codes = new BigUint64Array(bigIntsFromWords(words.slice()).buffer);
  assert.deepEqual([...codes], EXTREMES.map(zigzag64));
  unzigzagInPlace(words);
  assert.deepEqual(bigIntsFromWords(words), values);
});

Deno.test("deltasOf() wraps mod 2^64 and prefixSumInPlace() undoes it", () => {
  const values = BigInt64Array.from(EXTREMES);
  const d = deltasOf(wordsOf(values));
  const expected = EXTREMES.map((v, i) => BigInt.asIntN(64, v - (i === 0 ? 0n : EXTREMES[i - 1]!)));
  assert.deepEqual([...bigIntsFromWords(d.slice())], expected);
  prefixSumInPlace(d);
  assert.deepEqual(bigIntsFromWords(d), values);
});

Deno.test("wordsOf() does not copy and leaves its input untouched", () => {
  const values = BigInt64Array.of(5n, -5n);
  const words = wordsOf(values);
  assert.equal(words.buffer, values.buffer);
  deltasOf(words);
  assert.deepEqual(values, BigInt64Array.of(5n, -5n));
});

Deno.test("planeWidth() returns the bytes of the largest value, at least 1", async (t) => {
  const width = (vs: bigint[]) => planeWidth(wordsOf(asInt64Array(vs)));
  await t.step("no values", () => assert.equal(width([]), 0));
  await t.step("all zero", () => assert.equal(width([0n, 0n]), 1));
  await t.step("one byte", () => assert.equal(width([0n, 255n]), 1));
  await t.step("two bytes", () => assert.equal(width([256n]), 2));
  await t.step("four bytes", () => assert.equal(width([2n ** 32n - 1n]), 4));
  await t.step("five bytes", () => assert.equal(width([2n ** 32n]), 5));
  await t.step("eight bytes", () => assert.equal(width([2n ** 64n - 1n]), 8));
});

function asInt64Array(values: bigint[]): BigInt64Array {
  return BigInt64Array.from(values.map((v) => BigInt.asIntN(64, v)));
}

Deno.test("writePlanes() stores byte p of every value in plane p", () => {
  const words = wordsOf(BigInt64Array.of(0x0102n, 0x0304n, 0x05n));
  const width = planeWidth(words);
  const out = new Uint8Array(planesSize(words, width));
  writePlanes(words, width, out, 0);
  assert.deepEqual([...out], [2, 0x02, 0x04, 0x05, 0x01, 0x03, 0x00]);
});

Deno.test("readPlanes() returns what writePlanes() wrote for every width", () => {
  for (let w = 1; w <= 8; w++) {
    const top = 2n ** BigInt(8 * w) - 1n;
    const values = asInt64Array([0n, top, top >> 1n, 1n, top - 7n]);
    const words = wordsOf(values);
    const width = planeWidth(words);
    assert.equal(width, w);
    const out = new Uint8Array(planesSize(words, width));
    writePlanes(words, width, out, 0);
    const back = readPlanes(new ByteReader(out, "test"), values.length);
    assert.deepEqual(bigIntsFromWords(back), values);
  }
});

Deno.test("readPlanes() throws CORRUPT on a bad width or missing bytes", async (t) => {
  await t.step("width 9", () => {
    assertFormatError(
      () => readPlanes(new ByteReader(Uint8Array.of(9, 0, 0), "test"), 1),
      "CORRUPT",
      /expected a width from 1 to 8, found 9/,
    );
  });
  await t.step("width 0 for one value", () => {
    assertFormatError(
      () => readPlanes(new ByteReader(Uint8Array.of(0), "test"), 1),
      "CORRUPT",
      /found 0/,
    );
  });
  await t.step("width 0 for 2^40 values does not allocate", () => {
    assertFormatError(
      () => readPlanes(new ByteReader(Uint8Array.of(0), "test"), 2 ** 40),
      "CORRUPT",
    );
  });
  await t.step("too few plane bytes", () => {
    assertFormatError(
      () => readPlanes(new ByteReader(Uint8Array.of(2, 1, 2, 3), "test"), 2),
      "CORRUPT",
      /need 4 bytes .* 3 left/,
    );
  });
  await t.step("no width byte", () => {
    assert.throws(() => readPlanes(new ByteReader(new Uint8Array(0), "test"), 0), FormatError);
  });
});

Deno.test("writeVarint() writes what ByteWriter.varint() writes and varintSize() counts it", () => {
  for (const v of [0, 1, 127, 128, 300, 16383, 16384, 2 ** 31, 2 ** 32 + 5, 2 ** 53 - 1]) {
    const w = new ByteWriter();
    w.varint(v);
    const out = new Uint8Array(varintSize(v));
    assert.equal(writeVarint(out, 0, v), out.length);
    assert.deepEqual(out, w.finish());
    assert.equal(new ByteReader(out, "test").varint(), v);
  }
});
