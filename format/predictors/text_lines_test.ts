/**
 * Tests of `text_lines.ts`: the worked bytes, random Unicode round trips, values
 * with line feeds declined, lone surrogates refused, and a typed error for every
 * damaged block.
 *
 * @module
 */
import assert from "node:assert/strict";
import { prng } from "../_test_utils.ts";
import { assertFormatError, encodeWith, fieldOf, roundTrip, strings } from "./_test_utils.ts";
import { textLines } from "./text_lines.ts";

const field = fieldOf("string");

Deno.test("textLines.encode() writes each value and a line feed (worked example)", () => {
  const { bytes, decoded } = roundTrip(textLines, strings(["ab", "", "é\r"]));
  assert.deepEqual(decoded.values, ["ab", "", "é\r"]);
  assert.deepEqual([...bytes], [3, 0x61, 0x62, 0x0a, 0x0a, 0xc3, 0xa9, 0x0d, 0x0a]);
});

Deno.test("textLines round-trips random Unicode values and keeps json columns json", () => {
  const random = prng(0x11e5);
  const pieces = ["a", "Z", " ", "\r", "\t", "é", "🧊", "\u2028", "\uFEFF", '"', "\\"];
  for (let round = 0; round < 50; round++) {
    const values = Array.from(
      { length: Math.floor(random() * 100) + 1 },
      () =>
        Array.from(
          { length: Math.floor(random() * 8) },
          () => pieces[Math.floor(random() * pieces.length)]!,
        ).join(""),
    );
    assert.deepEqual(roundTrip(textLines, strings(values)).decoded.values, values);
  }
  const json = { type: "json" as const, values: ['{"a":1}', "[]"], validity: null };
  const bytes = textLines.encode(json, { field: fieldOf("json"), deps: [], warn: () => {} })!;
  assert.deepEqual(textLines.decode(bytes, 2, { field: fieldOf("json"), deps: [] }), json);
});

Deno.test("textLines declines values with a line feed and refuses lone surrogates", () => {
  assert.equal(encodeWith(textLines, strings(["a", "b\nc"])).bytes, null);
  assert.equal(encodeWith(textLines, strings([])).bytes, null);
  assertFormatError(() => encodeWith(textLines, strings(["ok", "\uD800"])), "BAD_ARGUMENT");
});

Deno.test("textLines.decode() refuses damaged blocks with CORRUPT", () => {
  const { bytes } = roundTrip(textLines, strings(["ab", "c"]));
  const decode = (b: Uint8Array, length = 2) => () =>
    textLines.decode(b, length, { field, deps: [] });
  assertFormatError(decode(bytes, 3), "CORRUPT", /expected 3 rows/);
  for (let cut = 1; cut < bytes.length; cut++) {
    assertFormatError(decode(bytes.subarray(0, cut)), "CORRUPT");
  }
  assertFormatError(decode(Uint8Array.of(...bytes, 0x61)), "CORRUPT", /text after the last/);
  assertFormatError(decode(Uint8Array.of(...bytes, 0x0a)), "CORRUPT", /found 3 line feeds/);
  assertFormatError(decode(Uint8Array.of(2, 0x61, 0xff, 0x0a, 0x0a)), "CORRUPT", /invalid UTF-8/);
});
