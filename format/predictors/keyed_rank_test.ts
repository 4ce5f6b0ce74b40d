/**
 * Tests of `keyed_rank.ts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Column } from "../column.ts";
import { codesOf, withCodes } from "../coded_strings.ts";
import { categoryU8 } from "./category_u8.ts";
import { keyedFreq } from "./keyed_freq.ts";
import { keyedRank } from "./keyed_rank.ts";
import {
  assertFormatError,
  encodeWith,
  fieldOf,
  floats,
  INT64_MAX,
  INT64_MIN,
  ints,
  roundTrip,
  strings,
} from "./_test_utils.ts";

const ROUTES: [string, string, bigint][] = [
  ["OSL", "JFK", 3690n],
  ["JFK", "OSL", 3690n],
  ["OSL", "LHR", 746n],
  ["LHR", "JFK", 3451n],
  ["OSL", "BGO", 199n],
];

function flights(rows: number): { origin: Column; dest: Column; distance: Column } {
  const picks = Array.from({ length: rows }, (_, i) => ROUTES[(i * 7 + (i >> 3)) % ROUTES.length]!);
  return {
    origin: strings(picks.map((r) => r[0])),
    dest: strings(picks.map((r) => r[1])),
    distance: ints(picks.map((r) => r[2])),
  };
}

Deno.test("keyedRank matches int64, date and string, and uses dependencies", () => {
  for (const type of ["int64", "date", "string"] as const) {
    assert.ok(keyedRank.matches(fieldOf(type)));
  }
  for (const type of ["timestamp", "float64", "bool"] as const) {
    assert.ok(!keyedRank.matches(fieldOf(type)));
  }
  assert.ok(keyedRank.usesDeps && !keyedRank.lossy && Object.isFrozen(keyedRank));
});

Deno.test("keyedRank codes a column determined by its keys as ranks 0 and 1", () => {
  const { origin, dest, distance } = flights(1000);
  const { bytes, decoded } = roundTrip(keyedRank, distance, [origin, dest]);
  assert.deepEqual(decoded, distance);
  const ranks = bytes.subarray(2, 1002); // after varint 1000
  assert.equal(ranks.filter((r) => r === 0).length, ROUTES.length);
  assert.ok(ranks.every((r) => r <= 1));
  // 5 literals, each fitting 2 bytes: [width 2][2 planes × 5]
  assert.equal(bytes.length, 2 + 1000 + 1 + 2 * 5);
});

Deno.test("keyedRank codes a string column on one dependency", () => {
  const { origin, dest } = flights(500);
  const { bytes, decoded } = roundTrip(keyedRank, dest, [origin]);
  assert.deepEqual(decoded, dest);
  const ranks = bytes.subarray(2, 502);
  assert.ok(ranks.every((r) => r <= 3), "OSL has three destinations, so ranks stay below 4");
});

Deno.test("keyedRank.encode() moves a value to the front of its key's list", () => {
  const key = strings(["k", "k", "k", "k", "k"]);
  const { bytes } = encodeWith(keyedRank, strings(["a", "b", "a", "a", "b"]), [key]);
  // ranks: a new, b new, a at 2, a at 1, b at 2; literals "a", "b"
  assert.deepEqual([...bytes!], [5, 0, 0, 2, 1, 2, 1, 1, 0x61, 0x62]);
});

Deno.test("keyedRank caps each key's list at 255 values", () => {
  const n = 1200;
  const key = strings(Array.from({ length: n }, () => "same"));
  const values = ints(Array.from({ length: n }, (_, i) => BigInt(i % 300)));
  const { bytes, decoded } = roundTrip(keyedRank, values, [key]);
  assert.deepEqual(decoded, values);
  // 300 values cycle through a 255-entry list: every row is a new literal.
  assert.ok(bytes.subarray(2, 2 + n).every((r) => r === 0));
  const within = ints(Array.from({ length: n }, (_, i) => BigInt(i % 255)));
  const second = roundTrip(keyedRank, within, [key]).bytes;
  assert.ok(second.subarray(2 + 255, 2 + n).every((r) => r === 255));
});

Deno.test("keyedRank.decode() returns the encoded values for dependencies of every type", async (t) => {
  const n = 400;
  const pick = <T>(xs: readonly T[]) =>
    Array.from({ length: n }, (_, i) => xs[(i * 13) % xs.length]!);
  const nanBits = new Float64Array(
    BigUint64Array.of(0x7ff8000000000001n, 0x7ff8000000000002n).buffer,
  );
  const deps: [string, Column][] = [
    ["string", strings(pick(["a", "b", "", "🧊"]))],
    ["int64", ints(pick([0n, -1n, INT64_MIN, INT64_MAX, 2n ** 53n, 2n ** 53n + 1n]))],
    ["date", ints(pick([19000n, 19001n]), "date")],
    ["timestamp", ints(pick([1n, 2n]), "timestamp")],
    ["float64", floats(pick([0, -0, 1.5, NaN, nanBits[0]!, nanBits[1]!, Infinity]))],
    ["bool", { type: "bool", values: Uint8Array.from(pick([0, 1])), validity: null }],
  ];
  const targets: [string, Column][] = [
    ["int64", ints(pick([5n, INT64_MIN, INT64_MAX, 7n, 2n ** 60n, -3n, 5n]))],
    ["date", ints(pick([18000n, 18001n, 18000n]), "date")],
    ["string", strings(pick(["x", "", "y", "ü", "x"]))],
  ];
  for (const [depLabel, dep] of deps) {
    for (const [targetLabel, target] of targets) {
      await t.step(`${targetLabel} on ${depLabel}`, () => {
        assert.deepEqual(roundTrip(keyedRank, target, [dep]).decoded, target);
        assert.deepEqual(roundTrip(keyedRank, target, [dep, deps[0]![1]]).decoded, target);
      });
    }
  }
});

Deno.test("keyedRank keys a null dependency slot like its type's zero", () => {
  const target = ints([1n, 2n, 1n, 2n]);
  const withNulls: Column = {
    type: "int64",
    values: BigInt64Array.of(9n, 0n, 9n, 7n),
    validity: Uint8Array.of(0, 1, 0, 1),
  };
  const zeros: Column = { type: "int64", values: BigInt64Array.of(0n, 0n, 0n, 7n), validity: null };
  const a = encodeWith(keyedRank, target, [withNulls]).bytes!;
  assert.deepEqual(a, encodeWith(keyedRank, target, [zeros]).bytes!);
  const decoded = keyedRank.decode(a, 4, { field: fieldOf("int64"), deps: [zeros] });
  assert.deepEqual(decoded, target);
});

Deno.test("keyedRank.decode() throws CORRUPT on a rank past its key's list", () => {
  const key = strings(["k", "k", "j"]);
  const field = fieldOf("string");
  // row 0 new "a"; row 1 rank 1 (ok); row 2 under key "j" rank 1 (list empty)
  assertFormatError(
    () => keyedRank.decode(Uint8Array.of(3, 0, 1, 1, 1, 0x61), 3, { field, deps: [key] }),
    "CORRUPT",
    /expected a rank of at most 0 at row 2, found 1/,
  );
});

Deno.test("keyedRank throws on a bad number or length of dependencies", async (t) => {
  const target = ints([1n, 2n]);
  await t.step("encode with no dependency", () => {
    assertFormatError(
      () => encodeWith(keyedRank, target, []),
      "BAD_ARGUMENT",
      /1 or 2 dependency columns, found 0/,
    );
  });
  await t.step("encode with three", () => {
    const k = strings(["a", "b"]);
    assertFormatError(() => encodeWith(keyedRank, target, [k, k, k]), "BAD_ARGUMENT", /found 3/);
  });
  await t.step("encode with a short dependency", () => {
    assertFormatError(
      () => encodeWith(keyedRank, target, [strings(["a"])]),
      "BAD_ARGUMENT",
      /dependency 0 to have 2 rows, found 1/,
    );
  });
  await t.step("decode with a short dependency", () => {
    const k = strings(["a", "b"]);
    const bytes = encodeWith(keyedRank, target, [k]).bytes!;
    assertFormatError(
      () => keyedRank.decode(bytes, 2, { field: fieldOf("int64"), deps: [strings(["a"])] }),
      "CORRUPT",
      /dependency 0 to have 2 rows, found 1/,
    );
  });
});

Deno.test("keyedRank.decode() throws CORRUPT when literals are missing", () => {
  const field = fieldOf("int64");
  const key = strings(["a", "b"]);
  assertFormatError(
    () => keyedRank.decode(Uint8Array.of(2, 0, 0, 1, 5), 2, { field, deps: [key] }),
    "CORRUPT",
    /need 2 bytes .* 1 left/,
  );
});

Deno.test("keyed decoders key dependencies a dictionary decoder built as their strings", () => {
  const { origin, dest, distance } = flights(3000);
  // The dependencies as a thaw has them: decoded by category_u8, with codes.
  const decoded = (column: Column): Column => {
    const field = { name: "d", type: "string", nullable: false } as const;
    const bytes = categoryU8.encode(column, { field, deps: [], warn: () => {} })!;
    const back = categoryU8.decode(bytes, 3000, { field, deps: [] });
    assert.ok(codesOf(back.values as string[]) !== undefined);
    return back;
  };
  const [o, d] = [decoded(origin), decoded(dest)];
  const field = fieldOf("int64");
  for (const predictor of [keyedRank, keyedFreq]) {
    const bytes = encodeWith(predictor, distance, [origin, dest]).bytes!;
    assert.deepEqual(predictor.decode(bytes, 3000, { field, deps: [o, d] }), distance);
    assert.deepEqual(predictor.decode(bytes, 3000, { field, deps: [d] }).values.length, 3000);
    // A values array changed after decoding: its codes no longer hold for that row,
    // and the keys follow the strings.
    const changed = decoded(origin);
    (changed.values as string[])[17] = "ZZZ";
    const plain = strings([...(changed.values as string[])]);
    const other = encodeWith(predictor, distance, [plain, dest]).bytes!;
    assert.deepEqual(predictor.decode(other, 3000, { field, deps: [changed, d] }), distance);
  }
});

Deno.test("keyedRank.encode() writes the same bytes for strings with codes (a CSV read's) as without", () => {
  const { origin, dest, distance } = flights(500);
  const coded = (column: Column): Column => {
    const values = [...(column.values as string[])];
    const dictionary = [...new Set(values)];
    const codes = new Uint32Array(values.map((v) => dictionary.indexOf(v)));
    codes[3] = (codes[3]! + 1) % dictionary.length; // a stale code: read by its text
    values[7] = values[7]!.split("").join(""); // another string of the same text
    return { ...column, values: withCodes(values, codes, dictionary) } as Column;
  };
  const field = fieldOf("string");
  const plain = keyedRank.encode(dest, { field, deps: [origin, distance], warn: () => {} });
  const withDictionaries = keyedRank.encode(coded(dest), {
    field,
    deps: [coded(origin), distance],
    warn: () => {},
  });
  assert.deepEqual(withDictionaries, plain);
  const pairs = keyedRank.encode(distance, {
    field: fieldOf("int64"),
    deps: [coded(origin), coded(dest)],
    warn: () => {},
  });
  assert.deepEqual(
    pairs,
    keyedRank.encode(distance, { field: fieldOf("int64"), deps: [origin, dest], warn: () => {} }),
  );
  assert.deepEqual(
    categoryU8.encode(coded(dest), { field, deps: [], warn: () => {} }),
    categoryU8.encode(dest, { field, deps: [], warn: () => {} }),
  );
});
