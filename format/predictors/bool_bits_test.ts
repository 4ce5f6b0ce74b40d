/**
 * Tests of `bool_bits.ts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Column } from "../column.ts";
import { boolBits } from "./bool_bits.ts";
import { assertFormatError, encodeWith, fieldOf, roundTrip } from "./_test_utils.ts";

function bools(values: number[]): Column {
  return { type: "bool", values: Uint8Array.from(values), validity: null };
}

Deno.test("boolBits.decode() returns the encoded flags for every length up to 17", () => {
  for (let n = 0; n <= 17; n++) {
    const column = bools(Array.from({ length: n }, (_, i) => (i * 5 + 3) % 3 === 0 ? 1 : 0));
    assert.deepEqual(roundTrip(boolBits, column).decoded, column);
  }
});

Deno.test("boolBits.encode() packs rows least significant bit first", () => {
  const { bytes } = encodeWith(boolBits, bools([1, 0, 0, 0, 0, 0, 0, 1, 1, 1]));
  assert.deepEqual([...bytes!], [10, 0x81, 0x03]);
});

Deno.test("boolBits.encode() reads any non-zero byte as true", () => {
  const { decoded } = roundTrip(boolBits, bools([2, 0, 255]));
  assert.deepEqual([...decoded.values as Uint8Array], [1, 0, 1]);
});

Deno.test("boolBits.decode() throws CORRUPT on set padding bits or a wrong length", () => {
  const field = fieldOf("bool");
  assertFormatError(
    () => boolBits.decode(Uint8Array.of(3, 0x0f), 3, { field, deps: [] }),
    "CORRUPT",
    /5 padding bits after row 2 to be 0, found 0x1/,
  );
  assertFormatError(
    () => boolBits.decode(Uint8Array.of(3, 0x07), 4, { field, deps: [] }),
    "CORRUPT",
    /expected 4 rows, found 3/,
  );
  assertFormatError(
    () => boolBits.decode(Uint8Array.of(9, 0xff), 9, { field, deps: [] }),
    "CORRUPT",
    /need 2 bytes/,
  );
});
