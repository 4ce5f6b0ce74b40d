/**
 * Tests of `_parse.ts`'s fast timestamp scan: `scanSeconds19` reads a 19-character
 * `YYYY-MM-DD HH:MM:SS` as `scanTimestamp` does, and refuses what it refuses.
 *
 * @module
 */
import assert from "node:assert/strict";
import { forgetLastDate, scanSeconds19, scanTimestamp, timestampParts } from "./_parse.ts";

/** What scanTimestamp makes of the 19 characters at 0: seconds, or NaN. */
function reference(text: string): number {
  const parts = timestampParts();
  return scanTimestamp(text, 0, 19, parts) && parts.nanos === 0 && !parts.offset
    ? parts.seconds
    : NaN;
}

Deno.test("scanSeconds19 reads what scanTimestamp reads, and refuses the rest", () => {
  const texts = [
    "2001-01-01 00:01:00",
    "1970-01-01T00:00:00",
    "0000-01-01 00:00:00",
    "9999-12-31 23:59:59",
    "2024-02-29 12:00:00",
    "2023-02-29 12:00:00",
    "1900-02-29 12:00:00",
    "2000-02-29 12:00:00",
    "2001-04-31 00:00:00",
    "2001-00-10 00:00:00",
    "2001-13-10 00:00:00",
    "2001-01-00 00:00:00",
    "2001-01-32 00:00:00",
    "2001-01-01 24:00:00",
    "2001-01-01 23:60:00",
    "2001-01-01 23:59:60",
    "2001-01-01x00:00:00",
    "2001/01/01 00:00:00",
    "2001-01-01 00-00-00",
    "20a1-01-01 00:00:00",
    "2001-0b-01 00:00:00",
    "2001-01-0: 00:00:00",
    "2001-01-01 0/:00:00",
    "-001-01-01 00:00:00",
  ];
  // Random texts of digits and a few other characters in every place, too.
  let seed = 5;
  const random = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const alphabet = "0123456789012345678901234567890123456789/:-T ";
  for (let i = 0; i < 5000; i++) {
    const chars = [..."2001-01-01 00:00:00"];
    for (let k = random(4); k > 0; k--) chars[random(19)] = alphabet[random(alphabet.length)]!;
    texts.push(chars.join(""));
  }
  for (const text of texts) {
    // Once after another date, once after the same (its day count is kept).
    forgetLastDate();
    const first = scanSeconds19(text, 0);
    const again = scanSeconds19(text, 0);
    const expected = reference(text);
    assert.ok(Object.is(first, expected) || first === expected, `${text}: ${first} vs ${expected}`);
    assert.ok(Object.is(again, expected) || again === expected, `${text} again`);
  }
  // At an offset within a longer text; a text cut short.
  assert.equal(scanSeconds19("x,2001-01-01 00:01:00,", 2), 978307260);
  assert.ok(Number.isNaN(scanSeconds19("x,2001-01-01 00:01:0", 2)));
  assert.ok(Number.isNaN(scanSeconds19("2001-01-01 00:01:", 0)));
});
