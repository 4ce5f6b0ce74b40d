/**
 * Tests of `_keys.ts`: key ids taken from dependencies' dictionary codes
 * (`coded_strings.ts`) are the ids their strings give, whatever the dictionaries hold.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Column, Field } from "../column.ts";
import { withCodes } from "../coded_strings.ts";
import { prng } from "../_test_utils.ts";
import { denseIds, depKeyIds, depKeys, intIds, intTokens, keyIds } from "./_keys.ts";

const FIELD: Field = { name: "c", type: "int64", nullable: false };

/** A string column of `rows` codes into `dictionary`, with the codes recorded. */
function coded(dictionary: string[], rows: number, next: () => number): Column {
  const codes = Uint32Array.from({ length: rows }, () => Math.floor(next() * dictionary.length));
  const values = Array.from(codes, (c) => dictionary[c]!);
  return { type: "string", values: withCodes(values, codes, dictionary), validity: null };
}

function byStrings(deps: Column[]): { ids: Int32Array; count: number } {
  const plain = deps.map((d): Column => ({ ...d, values: [...(d.values as string[])] } as Column));
  const [a, b] = depKeys("test", plain, plain[0]!.values.length, FIELD, false);
  return keyIds(a, b);
}

Deno.test("depKeyIds() of coded dependencies gives the ids of their strings", async (t) => {
  const dictionaries: Record<string, string[]> = {
    distinct: ["OSL", "JFK", "LAX", "BGO", "TRD"],
    "with duplicates": ["OSL", "JFK", "OSL", "LAX", "JFK"],
    "one entry": ["X"],
    wide: Array.from({ length: 300 }, (_, i) => `k${i}`),
  };
  for (const [name, first] of Object.entries(dictionaries)) {
    await t.step(name, () => {
      for (let seed = 1; seed <= 5; seed++) {
        const next = prng(seed);
        const rows = 1 + Math.floor(next() * 2000);
        const a = coded(first, rows, next);
        const b = coded(["BGO", "LAX", "OSL", "SVG"], rows, next);
        assert.deepEqual(depKeyIds("test", [a], rows, FIELD, false), byStrings([a]));
        assert.deepEqual(depKeyIds("test", [a, b], rows, FIELD, false), byStrings([a, b]));
        assert.deepEqual(depKeyIds("test", [b, a], rows, FIELD, false), byStrings([b, a]));
        // A row changed after decoding: keyed by its string, not by its code.
        (a.values as string[])[rows - 1] = "changed";
        assert.deepEqual(depKeyIds("test", [a, b], rows, FIELD, false), byStrings([a, b]));
        assert.deepEqual(depKeyIds("test", [a], rows, FIELD, false), byStrings([a]));
      }
    });
  }
});

Deno.test("intIds() numbers int64 values as denseIds of their tokens does", () => {
  const cases: bigint[][] = [
    [],
    [5n, -3n, 5n, 0n, -3n, 7n],
    Array.from({ length: 3000 }, (_, i) => BigInt((i * 37) % 101) - 50n),
    [1n, 1n << 60n, 1n, -(1n << 60n)], // beyond ±2^53: tokens
    [0n, 1n << 40n, 0n], // a range far wider than the block: tokens
  ];
  for (const values of cases) {
    const column = BigInt64Array.from(values);
    assert.deepEqual(intIds(column), denseIds(intTokens(column, null)));
  }
});
