/**
 * Tests of `text_within.ts`: the worked bytes, word boundaries (punctuation,
 * accents, emoji, 255 words), random round trips against random sources, nulls in
 * the dependency, and a typed error for every damaged field.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Column } from "../column.ts";
import { prng } from "../_test_utils.ts";
import { assertFormatError, encodeWith, fieldOf, roundTrip, strings } from "./_test_utils.ts";
import { textWithin } from "./text_within.ts";

const field = fieldOf("string");

Deno.test("textWithin matches text columns and uses one dependency", () => {
  assert.ok(textWithin.matches(fieldOf("string")) && textWithin.matches(fieldOf("json")));
  for (const type of ["int64", "float64", "bool"] as const) {
    assert.ok(!textWithin.matches(fieldOf(type)));
  }
  assert.ok(textWithin.usesDeps && !textWithin.lossy && Object.isFrozen(textWithin));
});

Deno.test("textWithin.encode() writes word indexes, spans and literals (worked example)", () => {
  const names = strings([
    "Perry-Warsaw",
    "Livingston Municipal",
    "Meadow Lake",
    "St. Louis Lambert",
  ]);
  const cities = strings(["Warsaw", "Livingston", "Colorado Springs", "St. Louis"]);
  const { bytes, decoded } = roundTrip(textWithin, cities, [names]);
  assert.deepEqual(decoded, cities);
  // deno-fmt-ignore
  assert.deepEqual([...bytes], [
    4, // n
    1, 0, 255, 0, // first word: "Warsaw" is word 1, "Livingston" word 0, a literal, "St" word 0
    0, 0, 1, // spans of the three matches: one word, one word, two words ("St. Louis")
    16, ...new TextEncoder().encode("Colorado Springs"), // the literal, as raw_text
  ]);
});

Deno.test("textWithin cuts words at ASCII punctuation only, and declines when nothing matches", () => {
  const names = strings(["Zürich-Kloten (ZRH)", "🧊 Ice Field", "a  b", "x"]);
  const cities = strings(["Zürich", "Ice Field", "a  b", ""]);
  const { bytes, decoded } = roundTrip(textWithin, cities, [names]);
  assert.deepEqual(decoded, cities);
  assert.deepEqual([...bytes.subarray(1, 5)], [0, 1, 0, 255]); // the empty value is a literal
  assert.equal(encodeWith(textWithin, strings(["q", "r"]), [strings(["a", "b"])]).bytes, null);
  // Not a word boundary: "ich" inside "Zürich" is a literal.
  const inner = roundTrip(textWithin, strings(["ich", "Ice"]), [strings(["Zürich", "Ice"])]);
  assert.deepEqual([...inner.bytes.subarray(1, 3)], [255, 0]);
});

Deno.test("textWithin names words up to the 255th and keeps later ones literal", () => {
  const words = Array.from({ length: 300 }, (_, i) => `w${i}`);
  const source = words.join(" ");
  const targets = ["w0", "w254", "w255", "w299", words.slice(10, 270).join(" ")];
  const { bytes, decoded } = roundTrip(
    textWithin,
    strings(targets),
    [strings(targets.map(() => source))],
  );
  assert.deepEqual(decoded.values, targets);
  assert.deepEqual([...bytes.subarray(1, 6)], [0, 254, 255, 255, 255]);
});

Deno.test("textWithin round-trips random values against random sources", () => {
  const random = prng(0x7e47);
  const alphabet = ["a", "b", "Ö", "-", " ", "/", "🧊", "1", ".", "'"];
  const word = () =>
    Array.from(
      { length: 1 + Math.floor(random() * 4) },
      () => alphabet[Math.floor(random() * alphabet.length)]!,
    ).join("");
  for (let round = 0; round < 40; round++) {
    const n = 1 + Math.floor(random() * 200);
    const sources: string[] = [];
    const values: string[] = [];
    for (let i = 0; i < n; i++) {
      const source = Array.from({ length: Math.floor(random() * 6) }, word).join(" ");
      sources.push(source);
      // Cut at code points: a value is Unicode text (a lone surrogate is refused).
      const points = [...source];
      const from = Math.floor(random() * points.length);
      values.push(
        random() < 0.6 ? points.slice(from, from + Math.floor(random() * 12)).join("") : word(),
      );
    }
    const validity = round % 3 === 0
      ? Uint8Array.from(sources, () => (random() < 0.2 ? 0 : 1))
      : null;
    const dep: Column = { type: "string", values: sources, validity };
    const column = strings(values);
    const { bytes } = encodeWith(textWithin, column, [dep]);
    if (bytes === null) continue;
    assert.deepEqual(textWithin.decode(bytes, n, { field, deps: [dep] }), column, `round ${round}`);
  }
});

Deno.test("textWithin reads a null dependency slot as the empty string", () => {
  const dep: Column = {
    type: "string",
    values: ["Perry Field", "Perry Field"],
    validity: Uint8Array.of(1, 0),
  };
  const column = strings(["Perry", "Perry"]);
  const { bytes, decoded } = roundTrip(textWithin, column, [dep]);
  assert.deepEqual(decoded, column);
  assert.deepEqual([...bytes.subarray(1, 3)], [0, 255]);
});

Deno.test("textWithin.decode() refuses damaged blocks and missing dependencies with CORRUPT", () => {
  const names = strings(["Perry-Warsaw", "Meadow Lake"]);
  const cities = strings(["Warsaw", "Colorado"]);
  const { bytes } = roundTrip(textWithin, cities, [names]);
  const decode = (b: Uint8Array, deps: readonly Column[] = [names], length = 2) => () =>
    textWithin.decode(b, length, { field, deps });
  assertFormatError(decode(bytes, []), "CORRUPT", /one text dependency/);
  assertFormatError(decode(bytes, [strings(["a"])]), "CORRUPT", /one text dependency/);
  assertFormatError(
    decode(bytes, [{ type: "int64", values: new BigInt64Array(2), validity: null }]),
    "CORRUPT",
  );
  assertFormatError(
    decode(bytes, [names], 3),
    "CORRUPT",
    /dependency of 3 rows, found string of 2/,
  );
  assertFormatError(
    () => textWithin.decode(bytes, 3, { field, deps: [strings(["a", "b", "c"])] }),
    "CORRUPT",
    /expected 3 rows, found 2/,
  );
  const wordTooFar = bytes.slice();
  wordTooFar[1] = 2; // "Perry-Warsaw" has words 0 and 1
  assertFormatError(decode(wordTooFar), "CORRUPT", /row 0 names words 2\.\.2/);
  const spanTooLong = bytes.slice();
  spanTooLong[3] = 1;
  assertFormatError(decode(spanTooLong), "CORRUPT", /row 0 names words 1\.\.2/);
  for (let cut = 0; cut < bytes.length; cut++) {
    assertFormatError(decode(bytes.subarray(0, cut)), "CORRUPT");
  }
  assertFormatError(decode(Uint8Array.of(...bytes, 0)), "CORRUPT");
});
