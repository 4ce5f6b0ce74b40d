/**
 * Tests of `lag1_zigzag.ts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { lag1Zigzag } from "./lag1_zigzag.ts";
import {
  assertFormatError,
  encodeWith,
  fieldOf,
  INT64_MAX,
  INT64_MIN,
  ints,
  roundTrip,
} from "./_test_utils.ts";

Deno.test("lag1Zigzag.decode() returns the encoded values", async (t) => {
  const cases: [string, bigint[]][] = [
    ["no rows", []],
    ["one row", [-7n]],
    ["two rows", [INT64_MIN, INT64_MAX]],
    ["a ramp", Array.from({ length: 100 }, (_, i) => 1_700_000_000_000_000n + BigInt(i) * 1000n)],
    ["int64 extremes", [INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, 0n, INT64_MAX]],
    ["noise", [5n, -3n, 2n ** 55n, 9n, -(2n ** 61n), 0n]],
  ];
  for (const [label, values] of cases) {
    await t.step(label, () => {
      for (const type of ["int64", "timestamp", "date"] as const) {
        const column = ints(values, type);
        assert.deepEqual(roundTrip(lag1Zigzag, column).decoded, column);
      }
    });
  }
});

Deno.test("lag1Zigzag.encode() turns a linear ramp into zeros after two rows", () => {
  const { bytes } = encodeWith(lag1Zigzag, ints([10n, 13n, 16n, 19n, 22n]));
  // dd = [10, 3-10=-7, 0, 0, 0] → zigzag [20, 13, 0, 0, 0]
  assert.deepEqual(bytes, Uint8Array.of(5, 1, 20, 13, 0, 0, 0));
});

Deno.test("lag1Zigzag.decode() throws CORRUPT on a wrong length or a bad width", () => {
  const field = fieldOf("int64");
  const { bytes } = encodeWith(lag1Zigzag, ints([10n, 13n]));
  assertFormatError(
    () => lag1Zigzag.decode(bytes!, 1, { field, deps: [] }),
    "CORRUPT",
    /expected 1 rows, found 2/,
  );
  assertFormatError(
    () => lag1Zigzag.decode(Uint8Array.of(2, 9, 0, 0), 2, { field, deps: [] }),
    "CORRUPT",
    /width/,
  );
});
