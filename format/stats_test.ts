/**
 * `columnStats`: the bounds of a 64-bit integer column, compared as halves without a
 * BigInt per value, are those of comparing the values themselves, nulls skipped.
 */
import assert from "node:assert/strict";
import type { Column } from "./column.ts";
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
