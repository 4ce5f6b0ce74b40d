/**
 * Tests of `decimal_dms.ts`: coordinates and hours as the units they came from, bit
 * for bit, random values on each divisor's grid at every scale, exceptions,
 * declining off-grid data, and a typed error for every damaged field.
 *
 * @module
 */
import assert from "node:assert/strict";
import { prng } from "../_test_utils.ts";
import { decimalDms } from "./decimal_dms.ts";
import {
  assertFormatError,
  encodeWith,
  fieldOf,
  floatBits,
  floats,
  roundTrip,
} from "./_test_utils.ts";

const field = fieldOf("float64");

/** The decimal text a source prints for `units / divisor` at `digits` decimals. */
function printed(units: number, divisor: number, digits: number): number {
  return Number((units / divisor).toFixed(digits));
}

Deno.test("decimalDms matches float64 only and is lossless and self-contained", () => {
  assert.ok(decimalDms.matches(field));
  for (const type of ["float32", "int64", "string"] as const) {
    assert.ok(!decimalDms.matches(fieldOf(type)));
  }
  assert.ok(!decimalDms.usesDeps && !decimalDms.lossy && Object.isFrozen(decimalDms));
});

Deno.test("decimalDms keeps airports' coordinates bit for bit, smaller than their digits", () => {
  const values = [31.95376472, 30.68586111, 38.94574889, -104.5698933, -89.23450472, 0, 100];
  const { bytes, decoded } = roundTrip(decimalDms, floats(values));
  assert.deepEqual(floatBits(decoded.values as Float64Array), floatBits(Float64Array.from(values)));
  // n, divisor 3,600,000 as a varint, k = 8, mode 1, then k − d per row: -104.5698933
  // is on the grid at its own 7 decimals only (0 and 100 are on it at any scale).
  assert.deepEqual([...bytes.subarray(0, 5)], [7, 0x80, 0xdd, 0xdb, 0x01]);
  assert.deepEqual([...bytes.subarray(5, 14)], [8, 1, 0, 0, 0, 1, 0, 0, 0]);
  // Every row at the block's scale: mode 0 and no scale bytes.
  const lat = roundTrip(decimalDms, floats([31.95376472, 30.5, 30.68586111]));
  assert.deepEqual([...lat.bytes.subarray(5, 8)], [8, 0, 0]); // k, mode 0, no exceptions
  assert.deepEqual([...lat.decoded.values], [31.95376472, 30.5, 30.68586111]);
});

Deno.test("decimalDms round-trips random values on every divisor's grid, scale and sign", () => {
  const random = prng(0xd45);
  for (const divisor of [60, 600, 3600, 36_000, 360_000, 3_600_000]) {
    for (const digits of [2, 4, 6, 8]) {
      const values = Array.from({ length: 300 }, () => {
        const units = Math.floor(random() * 180 * divisor) * (random() < 0.5 ? -1 : 1);
        return printed(units, divisor, digits);
      });
      const { bytes } = encodeWith(decimalDms, floats(values));
      if (bytes === null) continue; // too coarse a print for this grid to be told apart
      const decoded = decimalDms.decode(bytes, values.length, { field, deps: [] });
      assert.deepEqual(
        floatBits(decoded.values as Float64Array),
        floatBits(Float64Array.from(values)),
        `divisor ${divisor}, ${digits} digits`,
      );
    }
  }
});

Deno.test("decimalDms keeps a few values off the grid as exceptions, NaN and -0 included", () => {
  const grid = Array.from({ length: 320 }, (_, i) => printed(i * 7919 + 13, 3600, 6));
  const odd = [NaN, -0, Infinity, 0.1234567, 1e300];
  const values = [...grid];
  odd.forEach((x, i) => (values[i * 50] = x));
  const { bytes, decoded } = roundTrip(decimalDms, floats(values));
  assert.deepEqual(floatBits(decoded.values as Float64Array), floatBits(Float64Array.from(values)));
  assert.deepEqual([...bytes.subarray(2, 4)], [0x90, 0x1c]); // n = 320 (2 bytes), divisor 3600
  // More than one row in 64 off the grid: declined.
  const noisy = [...grid];
  for (let i = 0; i < 10; i++) noisy[i * 20] = 0.123456789 + i;
  assert.equal(encodeWith(decimalDms, floats(noisy)).bytes, null);
  assert.equal(encodeWith(decimalDms, floats([])).bytes, null);
});

Deno.test("decimalDms.decode() refuses damaged blocks with CORRUPT", () => {
  const values = floats([31.95376472, -104.5698933, 0.5]);
  const { bytes } = roundTrip(decimalDms, values);
  const decode = (b: Uint8Array, length = 3) => () =>
    decimalDms.decode(b, length, { field, deps: [] });
  assertFormatError(decode(bytes, 4), "CORRUPT", /expected 4 rows/);
  const badDivisor = Uint8Array.of(bytes[0]!, 7, ...bytes.subarray(5));
  assertFormatError(decode(badDivisor), "CORRUPT", /divisor is 7/);
  const badScale = bytes.slice();
  badScale[5] = 10;
  assertFormatError(decode(badScale), "CORRUPT", /scale is 10/);
  const badMode = bytes.slice();
  badMode[6] = 2;
  assertFormatError(decode(badMode), "CORRUPT", /scale mode is 2/);
  const badOffset = bytes.slice();
  badOffset[7] = 9;
  assertFormatError(decode(badOffset), "CORRUPT", /row 0 has -1 decimals/);
  const tooManyExceptions = bytes.slice();
  tooManyExceptions[10] = 4;
  assertFormatError(decode(tooManyExceptions), "CORRUPT", /4 exceptions in 3 rows/);
  for (let cut = 0; cut < bytes.length; cut++) {
    assertFormatError(decode(bytes.subarray(0, cut)), "CORRUPT");
  }
  assertFormatError(decode(Uint8Array.of(...bytes, 0)), "CORRUPT");
});
