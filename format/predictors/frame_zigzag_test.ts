/**
 * Tests of `frame_zigzag.ts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { frameZigzag } from "./frame_zigzag.ts";
import {
  assertFormatError,
  encodeWith,
  fieldOf,
  INT64_MAX,
  INT64_MIN,
  ints,
  roundTrip,
} from "./_test_utils.ts";

Deno.test("frameZigzag.decode() returns the encoded values", async (t) => {
  const cases: [string, bigint[]][] = [
    ["no rows", []],
    ["one row", [INT64_MIN]],
    ["the whole int64 range", [INT64_MAX, INT64_MIN, 0n, -1n, 1n]],
    ["all negative", [-5n, -9n, -(2n ** 62n)]],
    ["repeated", [7n, 7n, 7n]],
    ["beyond 2^53", [2n ** 53n + 1n, 2n ** 53n - 1n, 2n ** 53n]],
  ];
  for (const [label, values] of cases) {
    await t.step(label, () => {
      for (const type of ["int64", "timestamp", "date"] as const) {
        const column = ints(values, type);
        assert.deepEqual(roundTrip(frameZigzag, column).decoded, column);
      }
    });
  }
});

Deno.test("frameZigzag.encode() stores the minimum and the offsets from it", () => {
  const { bytes } = encodeWith(frameZigzag, ints([-98n, -100n, 155n]));
  const view = new DataView(bytes!.buffer, bytes!.byteOffset);
  assert.equal(bytes![0], 3);
  assert.equal(view.getBigInt64(1, true), -100n);
  // offsets 2, 0, 255: one plane
  assert.deepEqual([...bytes!.subarray(9)], [1, 2, 0, 255]);
});

Deno.test("frameZigzag.encode() needs 8 planes for the full int64 range", () => {
  const { bytes } = encodeWith(frameZigzag, ints([INT64_MIN, INT64_MAX]));
  assert.equal(bytes![9], 8);
  assert.equal(bytes!.length, 1 + 8 + 1 + 16);
});

Deno.test("frameZigzag.decode() throws CORRUPT when the minimum is cut off", () => {
  const field = fieldOf("date");
  assertFormatError(
    () => frameZigzag.decode(Uint8Array.of(1, 0, 0, 0), 1, { field, deps: [] }),
    "CORRUPT",
    /frame minimum/,
  );
});
