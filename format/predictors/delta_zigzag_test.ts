/**
 * Tests of `delta_zigzag.ts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { deltaZigzag } from "./delta_zigzag.ts";
import {
  assertFormatError,
  encodeWith,
  fieldOf,
  INT64_MAX,
  INT64_MIN,
  ints,
  roundTrip,
} from "./_test_utils.ts";

Deno.test("deltaZigzag matches int64, timestamp and date only", () => {
  for (const type of ["int64", "timestamp", "date"] as const) {
    assert.ok(deltaZigzag.matches(fieldOf(type)));
  }
  for (const type of ["float64", "bool", "string"] as const) {
    assert.ok(!deltaZigzag.matches(fieldOf(type)));
  }
  assert.equal(deltaZigzag.id, "delta_zigzag");
  assert.ok(!deltaZigzag.lossy && !deltaZigzag.usesDeps && Object.isFrozen(deltaZigzag));
});

Deno.test("deltaZigzag.decode() returns the encoded values", async (t) => {
  const cases: [string, bigint[]][] = [
    ["no rows", []],
    ["one row", [42n]],
    ["a sorted run", [1000n, 1001n, 1003n, 1003n, 1010n]],
    ["int64 extremes next to each other", [INT64_MAX, INT64_MIN, INT64_MAX, 0n, INT64_MIN, -1n]],
    ["values beyond 2^53", [2n ** 60n + 1n, 2n ** 60n + 3n, -(2n ** 62n) + 7n]],
  ];
  for (const [label, values] of cases) {
    await t.step(label, () => {
      for (const type of ["int64", "timestamp", "date"] as const) {
        const column = ints(values, type);
        assert.deepEqual(roundTrip(deltaZigzag, column).decoded, column);
      }
    });
  }
});

Deno.test("deltaZigzag.encode() stores a sorted run in one byte plane", () => {
  const { bytes } = encodeWith(deltaZigzag, ints([5n, 6n, 8n, 7n]));
  // [n=4][width 1][zigzag deltas: 5→10, 1→2, 2→4, -1→1]
  assert.deepEqual(bytes, Uint8Array.of(4, 1, 10, 2, 4, 1));
});

Deno.test("deltaZigzag.encode() leaves its input untouched", () => {
  const column = ints([3n, 1n, INT64_MIN]);
  const copy = column.values.slice();
  encodeWith(deltaZigzag, column);
  assert.deepEqual(column.values, copy);
});

Deno.test("deltaZigzag.decode() throws CORRUPT when the bytes do not hold the rows", async (t) => {
  const { bytes } = encodeWith(deltaZigzag, ints([1n, 2n, 3n]));
  const field = fieldOf("int64");
  await t.step("one row too many", () => {
    assertFormatError(
      () => deltaZigzag.decode(bytes!, 4, { field, deps: [] }),
      "CORRUPT",
      /expected 4 rows, found 3/,
    );
  });
  await t.step("truncated", () => {
    assertFormatError(
      () => deltaZigzag.decode(bytes!.subarray(0, 4), 3, { field, deps: [] }),
      "CORRUPT",
    );
  });
  await t.step("a trailing byte", () => {
    const longer = Uint8Array.of(...bytes!, 0);
    assertFormatError(
      () => deltaZigzag.decode(longer, 3, { field, deps: [] }),
      "CORRUPT",
      /trailing/,
    );
  });
  await t.step("a negative length", () => {
    assertFormatError(() => deltaZigzag.decode(bytes!, -1, { field, deps: [] }), "CORRUPT");
  });
  await t.step("a float column", () => {
    assertFormatError(
      () => deltaZigzag.decode(bytes!, 3, { field: fieldOf("float64"), deps: [] }),
      "CORRUPT",
      /found 'float64'/,
    );
  });
});

Deno.test("deltaZigzag.encode() throws BAD_ARGUMENT for a string column", () => {
  assertFormatError(
    () =>
      deltaZigzag.encode({ type: "string", values: ["a"], validity: null }, {
        field: fieldOf("string"),
        deps: [],
        warn: () => {},
      }),
    "BAD_ARGUMENT",
  );
});
