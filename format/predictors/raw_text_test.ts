/**
 * Tests of `raw_text.ts` (and of the text stream in `_text.ts`).
 *
 * @module
 */
import assert from "node:assert/strict";
import { FormatError } from "../errors.ts";
import { rawText } from "./raw_text.ts";
import { planTexts } from "./_text.ts";
import { assertFormatError, encodeWith, fieldOf, roundTrip, strings } from "./_test_utils.ts";

const field = fieldOf("string");

Deno.test("rawText.decode() returns the encoded strings", async (t) => {
  const cases: [string, string[]][] = [
    ["no rows", []],
    ["one empty string", [""]],
    ["ascii", ["alpha", "", "beta", "gamma delta"]],
    ["unicode", ["é", "日本語", "🧊🔥", "a\u0000b", "", "Ωmega", "\u{10FFFF}"]],
    ["a leading byte-order mark", ["\uFEFFhead", "\uFEFF"]],
    ["a long string", ["x".repeat(70_000), "y"]],
    [
      "mixed ascii and emoji",
      Array.from({ length: 300 }, (_, i) => (i % 3 ? `row ${i}` : `🚀${i}`)),
    ],
  ];
  for (const [label, values] of cases) {
    await t.step(label, () => {
      const column = strings(values);
      assert.deepEqual(roundTrip(rawText, column).decoded, column);
    });
  }
});

Deno.test("rawText.encode() writes the lengths, then the text", () => {
  const { bytes } = encodeWith(rawText, strings(["ab", "", "é"]));
  assert.deepEqual([...bytes!], [3, 2, 0, 2, 0x61, 0x62, 0xc3, 0xa9]);
});

Deno.test("rawText.encode() refuses a lone surrogate, naming the column and row", () => {
  for (const values of [["ok", "a\uD800", "\uDC00b"], ["ok", "x\uD83D", "\uDE00y"]]) {
    // The second pair would fuse into one character if the strings were joined.
    assert.throws(() => encodeWith(rawText, strings(values)), (err: unknown) => {
      assert.ok(err instanceof FormatError);
      assert.equal(err.code, "BAD_ARGUMENT");
      assert.match(err.message, /row 1 of column 'c'.*lone UTF-16 surrogate/);
      return true;
    });
  }
});

Deno.test("planTexts() measures each string as TextEncoder encodes it alone", () => {
  const samples = [
    ["", "a", "é", "€", "🧊", "\uD800\uDC00", "a😀b"],
    ["ascii", "only"],
  ];
  for (const values of samples) {
    const plan = planTexts(values);
    const alone = values.map((s) => new TextEncoder().encode(s));
    assert.deepEqual([...plan.lengths], alone.map((b) => b.length));
    assert.deepEqual(plan.text, Uint8Array.from(alone.flatMap((b) => [...b])));
  }
});

Deno.test("rawText.decode() throws CORRUPT on broken text", async (t) => {
  await t.step("lengths beyond the bytes", () => {
    assertFormatError(
      () => rawText.decode(Uint8Array.of(2, 1, 5, 0x61), 2, { field, deps: [] }),
      "CORRUPT",
      /need 6 bytes .* 1 left/,
    );
  });
  await t.step("more rows than length bytes", () => {
    assertFormatError(
      () => rawText.decode(Uint8Array.of(100, 0), 100, { field, deps: [] }),
      "CORRUPT",
      /expected at least 100 bytes of lengths, found 1/,
    );
  });
  await t.step("invalid UTF-8", () => {
    assertFormatError(
      () => rawText.decode(Uint8Array.of(1, 2, 0xc3, 0x28), 1, { field, deps: [] }),
      "CORRUPT",
      /invalid UTF-8/,
    );
  });
  await t.step("a boundary inside a character", () => {
    // "é" (c3 a9) cut into lengths 1 and 1: valid as a whole, not per string.
    assertFormatError(
      () => rawText.decode(Uint8Array.of(2, 1, 1, 0xc3, 0xa9), 2, { field, deps: [] }),
      "CORRUPT",
      /string 1 to start a UTF-8 character/,
    );
  });
  await t.step("trailing bytes", () => {
    assertFormatError(
      () => rawText.decode(Uint8Array.of(1, 1, 0x61, 0x62), 1, { field, deps: [] }),
      "CORRUPT",
      /trailing/,
    );
  });
});
