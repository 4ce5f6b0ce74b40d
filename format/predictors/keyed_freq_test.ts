/**
 * Tests of `keyed_freq.ts`: exact round trips (worked bytes, every dependency
 * type, random keys and values), and a typed error for every corrupted field.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Column } from "../column.ts";
import { FormatError } from "../errors.ts";
import { prng } from "../_test_utils.ts";
import { trialSize } from "../block_encode.ts";
import { freqRank, keyedFreq } from "./keyed_freq.ts";
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

Deno.test("keyedFreq matches int64, date and string, and uses dependencies", () => {
  for (const type of ["int64", "date", "string"] as const) {
    assert.ok(keyedFreq.matches(fieldOf(type)));
  }
  for (const type of ["timestamp", "float64", "bool", "json"] as const) {
    assert.ok(!keyedFreq.matches(fieldOf(type)));
  }
  assert.ok(keyedFreq.usesDeps && !keyedFreq.lossy && Object.isFrozen(keyedFreq));
});

Deno.test("keyedFreq.encode() writes the dictionary, new pairs and grouped ranks (worked example)", () => {
  const key = strings(["k", "j", "k", "k", "j", "k"]);
  const values = strings(["a", "a", "b", "b", "a", "b"]);
  const { bytes, decoded } = roundTrip(keyedFreq, values, [key]);
  assert.deepEqual(decoded, values);
  // Rows: k:a new (block-new), j:a new (block rank 1), k:b new (block-new),
  // k:b rank 2 (then b, count 2, swaps ahead of a), j:a rank 1, k:b rank 1.
  // Ranks grouped by key: k rows 0,2,3,5 = 0,0,2,1; j rows 1,4 = 0,1.
  // deno-fmt-ignore
  assert.deepEqual([...bytes], [
    6, // n
    2, // dictionary size
    1, 1, 0x61, 0x62, // raw_text lengths then UTF-8: "a", "b"
    3, // new pairs
    0, 1, 0, // their block ranks: new, a (1st), new
    0, // no escapes
    0, 0, 2, 1, 0, 1, // ranks, key k then key j
    0, // no escapes
  ]);
});

Deno.test("keyedFreq gives a key's usual value the smallest rank", () => {
  const n = 2000;
  const key = strings(Array.from({ length: n }, (_, i) => (i % 2 === 0 ? "OSL" : "JFK")));
  const dest = strings(
    Array.from({ length: n }, (_, i) => (i % 2 === 0 ? (i % 10 === 0 ? "TRD" : "BGO") : "LAX")),
  );
  const { bytes, decoded } = roundTrip(keyedFreq, dest, [key]);
  assert.deepEqual(decoded, dest);
  const ranks = bytes.subarray(bytes.length - n - 1, bytes.length - 1);
  // After the first rows every JFK row is rank 1, and OSL's rank 1 is BGO (4 of 5 rows).
  assert.equal(ranks.filter((r) => r === 1).length > 0.85 * n, true);
  assert.ok(ranks.every((r) => r <= 2));
});

Deno.test("keyedFreq round-trips random columns on one or two keys of every type", async (t) => {
  const nanBits = new Float64Array(
    BigUint64Array.of(0x7ff8000000000001n, 0x7ff8000000000002n).buffer,
  );
  for (let seed = 1; seed <= 40; seed++) {
    await t.step(`seed ${seed}`, () => {
      const next = prng(seed);
      const n = Math.floor(next() * 3000);
      const pick = <T>(xs: readonly T[]) =>
        Array.from({ length: n }, () => xs[Math.floor(next() * next() * xs.length)]!);
      const keyCount = 1 + Math.floor(next() * 300);
      const valueCount = 1 + Math.floor(next() * 700);
      const keyPool = Array.from({ length: keyCount }, (_, i) => i);
      const deps: Column[] = [
        strings(pick(keyPool.map((k) => `k${k}`))),
        ints(pick([0n, -1n, INT64_MIN, INT64_MAX, 2n ** 53n, 2n ** 53n + 1n, 7n])),
        floats(pick([0, -0, 1.5, NaN, nanBits[0]!, nanBits[1]!, Infinity])),
        { type: "bool", values: Uint8Array.from(pick([0, 1])), validity: null },
      ];
      const values = Array.from({ length: valueCount }, (_, i) => i);
      const targets: Column[] = [
        strings(pick(values.map((v) => (v % 7 === 0 ? `🧊${v}` : `v${v}`)))),
        ints(pick(values.map((v) => BigInt(v) * (v % 2 ? -(2n ** 40n) : 3n)))),
        ints(pick(values.map((v) => BigInt(18000 + v))), "date"),
      ];
      const a = deps[Math.floor(next() * deps.length)]!;
      const b = deps[Math.floor(next() * deps.length)]!;
      for (const target of targets) {
        assert.deepEqual(roundTrip(keyedFreq, target, [a]).decoded, target);
        assert.deepEqual(roundTrip(keyedFreq, target, [a, b]).decoded, target);
      }
    });
  }
});

Deno.test("keyedFreq keys a null dependency slot like its type's zero", () => {
  const target = ints([1n, 2n, 1n, 2n]);
  const withNulls: Column = {
    type: "int64",
    values: BigInt64Array.of(9n, 0n, 9n, 7n),
    validity: Uint8Array.of(0, 1, 0, 1),
  };
  const zeros: Column = { type: "int64", values: BigInt64Array.of(0n, 0n, 0n, 7n), validity: null };
  const a = encodeWith(keyedFreq, target, [withNulls]).bytes!;
  assert.deepEqual(a, encodeWith(keyedFreq, target, [zeros]).bytes!);
  assert.deepEqual(keyedFreq.decode(a, 4, { field: fieldOf("int64"), deps: [zeros] }), target);
});

Deno.test("keyedFreq.decode() throws CORRUPT on every damaged field", async (t) => {
  const field = fieldOf("string");
  const key = strings(["k", "j", "k", "k", "j", "k"]);
  const good = [6, 2, 1, 1, 0x61, 0x62, 3, 0, 1, 0, 0, 0, 0, 2, 1, 0, 1, 0];
  const decode = (bytes: number[], length = 6) =>
    keyedFreq.decode(Uint8Array.from(bytes), length, { field, deps: [key] });
  assert.deepEqual(decode(good).values, ["a", "a", "b", "b", "a", "b"]);
  await t.step("a rank past its key's list", () => {
    const bad = good.slice();
    bad[good.length - 5] = 3; // key k's third row (row 3): its list holds two values
    assertFormatError(() => decode(bad), "CORRUPT", /rank of at most 2 at row 3, found 3/);
  });
  await t.step("a block rank past the values seen", () => {
    const bad = good.slice();
    bad[9] = 2; // third new pair: only a is known
    assertFormatError(() => decode(bad), "CORRUPT", /value rank of at most 1/);
  });
  await t.step("a new-pair count that does not match the ranks", () => {
    const bad = [...good.slice(0, 6), 2, 0, 1, 0, ...good.slice(11)];
    assertFormatError(() => decode(bad), "CORRUPT", /more than 2 new pairs/);
  });
  await t.step("a dictionary value never used", () => {
    const bad = [6, 3, 1, 1, 1, 0x61, 0x62, 0x63, ...good.slice(6)];
    assertFormatError(() => decode(bad), "CORRUPT", /3 values, found 3 and 2/);
  });
  await t.step("a dictionary larger than the block", () => {
    assertFormatError(() => decode([6, 9, ...good.slice(2)]), "CORRUPT", /at most 6 dictionary/);
  });
  await t.step("truncated bytes", () => {
    for (let cut = 1; cut < good.length; cut++) {
      assert.throws(() => decode(good.slice(0, cut)), FormatError, `cut at ${cut}`);
    }
  });
  await t.step("a short dependency", () => {
    assertFormatError(
      () => keyedFreq.decode(Uint8Array.from(good), 6, { field, deps: [strings(["k"])] }),
      "CORRUPT",
      /dependency 0 to have 6 rows, found 1/,
    );
  });
});

Deno.test("keyedFreq stores a column correlated with its key smaller than keyed_rank", () => {
  const next = prng(7);
  const n = 20_000;
  const origins = Array.from({ length: n }, () => Math.floor(next() * next() * 60));
  // Each origin flies mostly to a few destinations of its own, in random order.
  const dests = origins.map((o) =>
    `D${(o * 17 + Math.floor(next() * next() * next() * 40)) % 200}`
  );
  const origin = strings(origins.map((o) => `O${o}`));
  const dest = strings(dests);
  const freq = roundTrip(keyedFreq, dest, [origin]);
  assert.deepEqual(freq.decoded, dest);
  const rank = roundTrip(keyedRank, dest, [origin]);
  assert.ok(
    trialSize(freq.bytes) < 0.9 * trialSize(rank.bytes),
    `keyed_freq ${trialSize(freq.bytes)} B, keyed_rank ${trialSize(rank.bytes)} B`,
  );
});

Deno.test("keyedFreq writes ranks of 255 and more as the byte 255 and a varint", () => {
  const n = 3000;
  const key = strings(Array.from({ length: n }, () => "one"));
  // 600 values, each first seen in the first 600 rows, then in reverse order: the
  // late rows reach far down the list.
  const values = ints(Array.from({ length: n }, (_, i) => BigInt(i < 600 ? i : 599 - (i % 600))));
  const { bytes, decoded } = roundTrip(keyedFreq, values, [key]);
  assert.deepEqual(decoded, values);
  const escapes = [...bytes.subarray(0, bytes.length)].filter((b) => b === 255).length;
  assert.ok(escapes > 100, `${escapes} escape bytes`);
});

Deno.test("freqRank writes the dictionary, new values and count-sorted ranks (worked example)", () => {
  const values = strings(["a", "b", "a", "c", "b", "a"]);
  const { bytes, decoded } = roundTrip(freqRank, values, []);
  assert.deepEqual(decoded, values);
  // Rows: a new, b new, a rank 1 (a, count 2, stays first), c new, b rank 2 (b, count
  // 2, swaps ahead of c but not of a), a rank 1.
  // deno-fmt-ignore
  assert.deepEqual([...bytes], [
    6, // n
    3, // dictionary size
    1, 1, 1, 0x61, 0x62, 0x63, // "a", "b", "c"
    3, // new pairs
    0, 0, 0, // each a new value
    0, // no escapes
    0, 0, 1, 0, 2, 1, // ranks
    0, // no escapes
  ]);
});

Deno.test("freqRank round-trips random columns, whole and as prefixes", async (t) => {
  for (let seed = 1; seed <= 30; seed++) {
    await t.step(`seed ${seed}`, () => {
      const next = prng(seed);
      const n = 1 + Math.floor(next() * 4000);
      const valueCount = 1 + Math.floor(next() * (seed % 3 === 0 ? 900 : 40));
      const pick = () => Math.floor(next() * next() * valueCount);
      const target = seed % 2 === 0
        ? strings(Array.from({ length: n }, () => `v${pick()}`))
        : ints(Array.from({ length: n }, () => BigInt(pick()) * -(2n ** 37n)));
      const bytes = encodeWith(freqRank, target, []).bytes;
      if (bytes === null) return; // over half the rows distinct: declined
      const field = fieldOf(target.type);
      assert.deepEqual(freqRank.decode(bytes, n, { field, deps: [] }), target);
      const rows = Math.floor(next() * n);
      const prefix = freqRank.decode(bytes, n, { field, deps: [], prefix: rows });
      assert.deepEqual([...prefix.values], [...target.values].slice(0, rows));
    });
  }
});

Deno.test("freqRank.decode() reads damaged ranks as the general loop does", async (t) => {
  const field = fieldOf("string");
  const good = [6, 3, 1, 1, 1, 0x61, 0x62, 0x63, 3, 0, 0, 0, 0, 0, 0, 1, 0, 2, 1, 0];
  const decode = (bytes: number[], prefix?: number) =>
    freqRank.decode(Uint8Array.from(bytes), 6, { field, deps: [], prefix });
  const damaged = (at: number, byte: number) => good.map((b, i) => (i === at ? byte : b));
  await t.step("a new pair naming a value already listed", () => {
    // The second new pair is block rank 1 ("a"): "a" is listed twice from then on,
    // and one dictionary value is never used.
    assertFormatError(() => decode(damaged(10, 1)), "CORRUPT", /3 values, found 3 and 2/);
    assert.deepEqual(decode(damaged(10, 1), 5).values, ["a", "a", "a", "b", "a"]);
  });
  await t.step("a block rank past the values seen", () => {
    assertFormatError(() => decode(damaged(10, 2)), "CORRUPT", /value rank of at most 1/);
  });
  await t.step("a rank past the list", () => {
    assertFormatError(() => decode(damaged(16, 3)), "CORRUPT", /rank of at most 2 at row 3/);
  });
  await t.step("fewer new pairs than new ranks", () => {
    assertFormatError(() => decode(damaged(8, 2)), "CORRUPT", /escaped values/);
  });
});
