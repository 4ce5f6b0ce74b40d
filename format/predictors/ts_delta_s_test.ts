/**
 * Tests of `ts_delta_s.ts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { tsDeltaS } from "./ts_delta_s.ts";
import {
  assertFormatError,
  encodeWith,
  fieldOf,
  INT64_MAX,
  INT64_MIN,
  ints,
  roundTrip,
} from "./_test_utils.ts";

const MINUTE_US = 60_000_000n;
const T0 = 1_700_000_000_000_000n;

function header(bytes: Uint8Array): { first: bigint; scale: bigint; width: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  while (bytes[at]! >= 0x80) at++;
  at++;
  return {
    first: view.getBigInt64(at, true),
    scale: view.getBigUint64(at + 8, true),
    width: bytes[at + 16]!,
  };
}

Deno.test("tsDeltaS matches timestamps only", () => {
  assert.ok(tsDeltaS.matches(fieldOf("timestamp")));
  for (const type of ["int64", "date", "float64", "bool", "string"] as const) {
    assert.ok(!tsDeltaS.matches(fieldOf(type)));
  }
});

Deno.test("tsDeltaS.decode() returns the encoded timestamps", async (t) => {
  const cases: [string, bigint[]][] = [
    ["no rows", []],
    ["one row", [T0]],
    [
      "a minute grid",
      Array.from(
        { length: 500 },
        (_, i) => T0 + BigInt(i % 7 === 0 ? 2 : 1) * BigInt(i) * MINUTE_US,
      ),
    ],
    ["all equal", [T0, T0, T0]],
    ["going backwards", [T0, T0 - MINUTE_US, T0 + 3n * MINUTE_US]],
    ["int64 extremes", [INT64_MIN, INT64_MAX, INT64_MIN, 0n, INT64_MAX]],
    ["huge deltas sharing a divisor", [0n, 2n ** 61n, -(2n ** 62n), 2n ** 62n, INT64_MIN]],
    ["huge deltas with gcd 1", [0n, 2n ** 60n + 1n, -(2n ** 62n), 3n]],
    ["small and huge deltas with a divisor", [0n, 6n, 2n ** 55n * 3n, 12n]],
    ["deltas just around 2^51", [0n, 2n ** 51n, 0n, 2n ** 51n - 2n, 2n ** 52n]],
  ];
  for (const [label, values] of cases) {
    await t.step(label, () => {
      const column = ints(values, "timestamp");
      assert.deepEqual(roundTrip(tsDeltaS, column).decoded, column);
    });
  }
});

Deno.test("tsDeltaS.encode() divides minute-grid deltas by the minute", () => {
  const values = [T0, T0 + MINUTE_US, T0 + 3n * MINUTE_US, T0 + 4n * MINUTE_US];
  const { bytes, warnings } = encodeWith(tsDeltaS, ints(values, "timestamp"));
  assert.deepEqual(header(bytes!), { first: T0, scale: MINUTE_US, width: 1 });
  // zigzag(1, 2, 1) = 2, 4, 2
  assert.deepEqual([...bytes!.subarray(bytes!.length - 3)], [2, 4, 2]);
  assert.deepEqual(warnings, []);
});

Deno.test("tsDeltaS.encode() stores scale 1 when all timestamps are equal", () => {
  const { bytes } = encodeWith(tsDeltaS, ints([T0, T0], "timestamp"));
  assert.deepEqual(header(bytes!), { first: T0, scale: 1n, width: 1 });
});

Deno.test("tsDeltaS.encode() finds a divisor of huge deltas with bigints", () => {
  const { bytes } = encodeWith(tsDeltaS, ints([0n, 2n ** 61n, -(2n ** 62n)], "timestamp"));
  assert.equal(header(bytes!).scale, 2n ** 61n);
});

Deno.test("tsDeltaS.encode() warns once when timestamps go backwards", () => {
  const values = [T0, T0 - 1n, T0 - 2n, T0 + 5n];
  const { bytes, warnings } = encodeWith(tsDeltaS, ints(values, "timestamp"));
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0]!.code, "NON_MONOTONIC_TIMESTAMPS");
  assert.equal(warnings[0]!.column, "c");
  assert.match(warnings[0]!.message, /row 1/);
  const decoded = tsDeltaS.decode(bytes!, 4, { field: fieldOf("timestamp"), deps: [] });
  assert.deepEqual([...decoded.values], values);
});

Deno.test("tsDeltaS.decode() throws CORRUPT on a zero scale or a wrong length", () => {
  const field = fieldOf("timestamp");
  const { bytes } = encodeWith(tsDeltaS, ints([T0, T0 + 10n], "timestamp"));
  const zeroScale = bytes!.slice();
  zeroScale.fill(0, 9, 17);
  assertFormatError(
    () => tsDeltaS.decode(zeroScale, 2, { field, deps: [] }),
    "CORRUPT",
    /scale of at least 1, found 0/,
  );
  assertFormatError(
    () => tsDeltaS.decode(bytes!, 3, { field, deps: [] }),
    "CORRUPT",
    /expected 3 rows, found 2/,
  );
  assertFormatError(
    () => tsDeltaS.decode(bytes!.subarray(0, 12), 2, { field, deps: [] }),
    "CORRUPT",
  );
});

Deno.test("tsDeltaS.decode() wraps products of a scale and a large quotient", () => {
  // Hand-built: first 0, scale 2^40, one delta of zigzag code 2^30 (= +2^29) → 2^69 wraps to 2^5·2^64 ≡ 0.
  const bytes = Uint8Array.of(2, ...new Uint8Array(8), 0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 0, 0, 0x40);
  const decoded = tsDeltaS.decode(bytes, 2, { field: fieldOf("timestamp"), deps: [] });
  assert.deepEqual([...decoded.values], [0n, BigInt.asIntN(64, 2n ** 69n)]);
});

Deno.test("tsDeltaS.decode() is exact on both sides of ±2^53 and with scales past 2^52", () => {
  const edge = 2n ** 53n;
  const series = [
    // Crossing 2^53 - 1 upwards and -(2^53 - 1) downwards, a step at a time.
    Array.from({ length: 9 }, (_, i) => edge - 5n + BigInt(i)),
    Array.from({ length: 9 }, (_, i) => -edge + 5n - BigInt(i)),
    // A first value past 2^53, then back below it.
    [edge + 1n, edge - 1n, 0n, 7n],
    // Steps of a scale above 2^52.
    [0n, 2n ** 52n + 3n, 2n * (2n ** 52n + 3n), 2n ** 52n + 3n],
    // Minutes in microseconds, then one value far away.
    [T0, T0 + MINUTE_US, T0 + 2n * MINUTE_US, INT64_MAX, INT64_MIN, T0],
  ];
  for (const values of series) {
    const column = ints(values, "timestamp");
    const { decoded } = roundTrip(tsDeltaS, column);
    assert.deepEqual(decoded, column, values.join(","));
    const bytes = encodeWith(tsDeltaS, column).bytes!;
    const field = fieldOf("timestamp");
    const prefix = tsDeltaS.decode(bytes, values.length, { field, deps: [], prefix: 3 });
    assert.deepEqual([...prefix.values], values.slice(0, 3));
  }
});
