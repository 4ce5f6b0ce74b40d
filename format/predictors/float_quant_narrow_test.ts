/**
 * Tests of `float_quant_narrow.ts`: the float32/float16-stored quantizers decode to
 * exactly what the wide quantizers of their level decode to, in fewer bytes, decline
 * what they cannot hold, and refuse damaged blocks with a FormatError.
 *
 * @module
 */
import assert from "node:assert/strict";
import { FormatError } from "../errors.ts";
import { prng } from "../_test_utils.ts";
import { encodeWith, fieldOf, floatBits, roundTrip } from "./_test_utils.ts";
import { QUANTIZER_FOR } from "./float_quant.ts";
import {
  floatQuantLowF16,
  floatQuantMediumF32,
  MAX_EXCEPTION_SHARE,
  NARROW_QUANTIZER_FOR,
} from "./float_quant_narrow.ts";

const LEVELS = ["QUANT_MEDIUM", "QUANT_LOW"] as const;

function fromBits(bits: readonly bigint[]): number[] {
  return [...new Float64Array(BigUint64Array.from(bits).buffer)];
}

/** A series of `n` values around `center` with a few specials sprinkled in. */
function series(n: number, seed: number, center: number, spread: number): Float64Array {
  const rand = prng(seed);
  const specials = [
    ...fromBits([0x7ff8000000000001n, 0x7ff0000000000001n, 0xfff8000000000000n]),
    0,
    -0,
    Infinity,
    -Infinity,
  ];
  let walk = center;
  return Float64Array.from({ length: n }, (_, i) => {
    if (i % 97 === 5) return specials[i % specials.length]!;
    walk += (rand() - 0.5) * spread;
    return walk;
  });
}

for (const level of LEVELS) {
  const narrow = NARROW_QUANTIZER_FOR[level]!;
  const wide = QUANTIZER_FOR[level]!;
  Deno.test(`${narrow.id} decodes to exactly what ${wide.id} decodes to`, async (t) => {
    const cases: [string, Float64Array][] = [
      ["no rows", new Float64Array(0)],
      ["one row", Float64Array.of(Math.PI)],
      ["prices", series(5000, 1, 100, 0.5)],
      ["large magnitudes", series(5000, 2, 3e6, 1e4)],
      ["tiny magnitudes", series(3000, 3, 1e-6, 1e-8)],
      ["around zero", series(3000, 4, 0, 1)],
      ["near the float32 limit", series(500, 5, 3.4e38, 1e30)],
    ];
    for (const [label, values] of cases) {
      await t.step(label, () => {
        const column = { type: "float64" as const, values, validity: null };
        const expected = roundTrip(wide, column).decoded.values as Float64Array;
        const bytes = encodeWith(narrow, column).bytes;
        if (bytes === null) return; // declined: the writer uses the wide quantizer
        const decoded = narrow.decode(bytes, values.length, {
          field: fieldOf("float64"),
          deps: [],
        });
        assert.deepEqual(floatBits(decoded.values as Float64Array), floatBits(expected));
      });
    }
  });

  Deno.test(`${narrow.id} stores fewer bytes than ${wide.id}`, () => {
    const column = { type: "float64" as const, values: series(10_000, 6, 250, 2), validity: null };
    const small = encodeWith(narrow, column).bytes!;
    const large = encodeWith(wide, column).bytes!;
    assert.ok(small.length < large.length, `${small.length} vs ${large.length}`);
  });

  Deno.test(`${narrow.id}.decode() throws a FormatError for a truncated or garbled block`, () => {
    const field = fieldOf("float64");
    const column = { type: "float64" as const, values: series(400, 7, 10, 0.1), validity: null };
    const bytes = encodeWith(narrow, column).bytes!;
    for (let cut = 0; cut < bytes.length; cut += 7) {
      assert.throws(
        () => narrow.decode(bytes.subarray(0, cut), 400, { field, deps: [] }),
        FormatError,
      );
    }
    assert.throws(() => narrow.decode(bytes, 401, { field, deps: [] }), { code: "CORRUPT" });
    const rand = prng(8);
    for (let k = 0; k < 300; k++) {
      const bad = bytes.slice();
      const at = Math.floor(rand() * bad.length);
      bad[at] = bad[at]! ^ (1 << Math.floor(rand() * 8));
      try {
        assert.equal(narrow.decode(bad, 400, { field, deps: [] }).values.length, 400);
      } catch (err) {
        assert.ok(err instanceof FormatError, String(err));
      }
    }
  });
}

Deno.test("floatQuantLowF16.encode() declines values spanning more binades than a half holds", () => {
  const values = Float64Array.from({ length: 100 }, (_, i) => 10 ** (i % 40 - 20));
  assert.equal(
    encodeWith(floatQuantLowF16, { type: "float64", values, validity: null }).bytes,
    null,
  );
  // A handful of outliers are exceptions, not a reason to decline.
  const some = Float64Array.from(
    { length: 100 },
    (_, i) => i < 100 / MAX_EXCEPTION_SHARE - 1 ? 1e-300 : i,
  );
  assert.notEqual(
    encodeWith(floatQuantLowF16, { type: "float64", values: some, validity: null }).bytes,
    null,
  );
  // A huge outlier does not push the other values out of the halves' range either.
  const huge = Float64Array.from({ length: 100 }, (_, i) => (i === 3 ? 1e300 : 1000 + i));
  const column = { type: "float64" as const, values: huge, validity: null };
  const bytes = encodeWith(floatQuantLowF16, column).bytes!;
  assert.ok(bytes !== null && bytes.length < 2 * 100 + 20, "one exception, not a fallback");
  const back = floatQuantLowF16.decode(bytes, 100, { field: fieldOf("float64"), deps: [] });
  assert.deepEqual(
    floatBits(back.values as Float64Array),
    floatBits(roundTrip(QUANTIZER_FOR.QUANT_LOW!, column).decoded.values as Float64Array),
  );
});

Deno.test("floatQuantMediumF32.decode() refuses exception rows out of order or past the end", () => {
  const field = fieldOf("float64");
  const values = Float64Array.from({ length: 16 }, (_, i) => (i === 1 || i === 3 ? NaN : i));
  const bytes = encodeWith(floatQuantMediumF32, { type: "float64", values, validity: null }).bytes!;
  // [n=16][64 plane bytes][e=2][row 1][8 bytes][row 3][8 bytes]
  const at = 1 + 64;
  assert.deepEqual([bytes[at], bytes[at + 1], bytes[at + 10]], [2, 1, 3]);
  const swapped = bytes.slice();
  swapped[at + 1] = 3;
  swapped[at + 10] = 1;
  const past = bytes.slice();
  past[at + 10] = 16;
  const count = bytes.slice();
  count[at] = 17;
  for (const bad of [swapped, past, count]) {
    assert.throws(() => floatQuantMediumF32.decode(bad, 16, { field, deps: [] }), {
      code: "CORRUPT",
    });
  }
  const good = floatQuantMediumF32.decode(bytes, 16, { field, deps: [] }).values as Float64Array;
  assert.deepEqual(floatBits(good), floatBits(values), "NaN rows keep their bits");
});
