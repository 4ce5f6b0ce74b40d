/**
 * Tests of `category_u8.ts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { categoryU8 } from "./category_u8.ts";
import { assertFormatError, encodeWith, fieldOf, roundTrip, strings } from "./_test_utils.ts";

const field = fieldOf("string");

Deno.test("categoryU8.decode() returns the encoded strings", async (t) => {
  const cases: [string, string[]][] = [
    ["no rows", []],
    ["one row", ["x"]],
    ["repeats", ["OSL", "JFK", "OSL", "", "JFK", "🛫", ""]],
    ["exactly 256 distinct", Array.from({ length: 1000 }, (_, i) => `v${(i * 7) % 256}`)],
  ];
  for (const [label, values] of cases) {
    await t.step(label, () => {
      const column = strings(values);
      assert.deepEqual(roundTrip(categoryU8, column).decoded, column);
    });
  }
});

Deno.test("categoryU8.encode() writes the dictionary in first-appearance order, then codes", () => {
  const { bytes } = encodeWith(categoryU8, strings(["b", "a", "b", "b"]));
  assert.deepEqual([...bytes!], [4, 2, 1, 1, 0x62, 0x61, 0, 1, 0, 0]);
});

Deno.test("categoryU8.encode() returns null above 256 distinct values", () => {
  const values = Array.from({ length: 257 }, (_, i) => `v${i}`);
  assert.equal(encodeWith(categoryU8, strings(values)).bytes, null);
});

Deno.test("categoryU8.decode() throws CORRUPT on bad codes or dictionary sizes", async (t) => {
  await t.step("a code past the dictionary", () => {
    assertFormatError(
      () => categoryU8.decode(Uint8Array.of(2, 1, 1, 0x61, 0, 1), 2, { field, deps: [] }),
      "CORRUPT",
      /expected codes below 1, found 1 at row 1/,
    );
  });
  await t.step("a dictionary of 257 values", () => {
    assertFormatError(
      () => categoryU8.decode(Uint8Array.of(1, 0x81, 0x02), 1, { field, deps: [] }),
      "CORRUPT",
      /found 257/,
    );
  });
  await t.step("an empty dictionary with rows", () => {
    assertFormatError(
      () => categoryU8.decode(Uint8Array.of(1, 0, 0), 1, { field, deps: [] }),
      "CORRUPT",
      /1 to 256 values, found 0/,
    );
  });
  await t.step("missing codes", () => {
    assertFormatError(
      () => categoryU8.decode(Uint8Array.of(3, 1, 1, 0x61, 0, 0), 3, { field, deps: [] }),
      "CORRUPT",
      /codes/,
    );
  });
});
