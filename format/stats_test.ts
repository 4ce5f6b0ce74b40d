/**
 * `columnStats`: the bounds of a 64-bit integer column, compared as halves without a
 * BigInt per value, are those of comparing the values themselves, nulls skipped; those
 * of texts with codes, taken from the entries their rows use, are those of the texts.
 */
import assert from "node:assert/strict";
import type { Column } from "./column.ts";
import { withCodes } from "./coded_strings.ts";
import { columnStats } from "./stats.ts";

function reference(values: BigInt64Array, validity: Uint8Array | null) {
  let min: bigint | null = null;
  let max: bigint | null = null;
  values.forEach((x, i) => {
    if (validity !== null && validity[i] === 0) return;
    if (min === null || x < min) min = x;
    if (max === null || x > max) max = x;
  });
  return { min: min === null ? null : String(min), max: max === null ? null : String(max) };
}

Deno.test("columnStats() bounds 64-bit integers as the values compare, nulls skipped", () => {
  let x = 17;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  const edges = [
    0n,
    -1n,
    1n,
    2n ** 32n - 1n,
    2n ** 32n,
    -(2n ** 32n),
    2n ** 63n - 1n,
    -(2n ** 63n),
  ];
  for (let round = 0; round < 200; round++) {
    const n = next() % 40;
    const values = new BigInt64Array(n);
    const withNulls = round % 3 === 0;
    const validity = withNulls ? new Uint8Array(n) : null;
    for (let i = 0; i < n; i++) {
      // Edges, values around 0 and around 2^32 (the same high half, low halves
      // apart), and anything.
      const pick = next() % 4;
      values[i] = pick === 0
        ? edges[next() % edges.length]!
        : pick === 1
        ? BigInt(next() % 2000 - 1000)
        : pick === 2
        ? 2n ** 32n * BigInt(next() % 3 - 1) + BigInt(next())
        : BigInt.asIntN(64, (BigInt(next()) << 33n) ^ BigInt(next()));
      if (validity) validity[i] = next() % 3 === 0 ? 0 : 1;
    }
    for (const type of ["int64", "timestamp", "date"] as const) {
      const column = { type, values, validity } as Column;
      const stats = columnStats(column);
      const want = reference(values, validity);
      assert.deepEqual([stats.min, stats.max], [want.min, want.max], `round ${round}`);
      assert.equal(stats.null_count, validity ? validity.filter((v) => v === 0).length : 0);
    }
  }
});

Deno.test("columnStats() bounds texts with codes as the texts compare: stale codes, unused entries and nulls", () => {
  const dictionary = ["mm", "b", "zz", "a", "q"];
  // Rows 0-5 are their code's entries; row 6's code is stale (its text is not entry 0);
  // "a" and "zz" are entries no present row uses (row 7, "a", is null).
  const values = ["mm", "b", "q", "mm", "b", "q", "c", "a", "mm"];
  const codes = new Uint32Array([0, 1, 4, 0, 1, 4, 0, 3, 0]);
  const cases: [Uint8Array | null, string, string][] = [
    [null, "a", "q"],
    [new Uint8Array([1, 1, 1, 1, 1, 1, 1, 0, 1]), "b", "q"],
    [new Uint8Array([1, 0, 1, 1, 0, 1, 0, 0, 1]), "mm", "q"],
    [new Uint8Array(9), "", ""],
  ];
  for (const [validity, min, max] of cases) {
    const plain: Column = { type: "string", values: [...values], validity };
    const coded: Column = {
      type: "string",
      values: withCodes([...values], codes, dictionary),
      validity,
    };
    const stats = columnStats(coded);
    assert.deepEqual(stats, columnStats(plain));
    if (min !== "") assert.deepEqual([stats.min, stats.max], [min, max]);
    else assert.deepEqual([stats.min, stats.max], [null, null]);
  }
  // A stale code past the dictionary's end is read as the text it is.
  const past: Column = {
    type: "string",
    values: withCodes(["b", "zzz"], new Uint32Array([1, 9]), dictionary),
    validity: null,
  };
  assert.deepEqual([columnStats(past).min, columnStats(past).max], ["b", "zzz"]);
});
