/**
 * Tests of the float32 and float16 predictors (`float32_planes`, `float32_xor`,
 * `float16_planes`, `float16_xor`, and any later one registered for these types):
 * random bit patterns round-trip exactly, and a damaged block is a typed error.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Column } from "../column.ts";
import { FormatError } from "../errors.ts";
import { prng } from "../_test_utils.ts";
import { encodeWith, fieldOf, roundTrip } from "./_test_utils.ts";
import { PREDICTORS } from "./trial.ts";

const NARROW = ["float32", "float16"] as const;

/** Specials first (NaN payloads, signalling NaNs, ±0, ±inf, subnormals, extremes), then `n` random patterns or a smooth series. */
function column(type: (typeof NARROW)[number], n: number, seed: number, smooth: boolean): Column {
  const rand = prng(seed);
  const specials = type === "float32"
    ? [
      0x7fc00000,
      0x7fc12345,
      0x7f800001,
      0xffffffff,
      0,
      0x80000000,
      0x7f800000,
      0xff800000,
      1,
      0x807fffff,
      0x7f7fffff,
    ]
    : [0x7e00, 0x7e01, 0x7c01, 0xffff, 0, 0x8000, 0x7c00, 0xfc00, 1, 0x83ff, 0x7bff];
  const bits = type === "float32" ? new Uint32Array(n) : new Uint16Array(n);
  const f = new Float32Array(1);
  for (let i = 0; i < n; i++) {
    if (i < specials.length && rand() < 0.9) bits[i] = specials[i]!;
    else if (!smooth) bits[i] = Math.floor(rand() * (type === "float32" ? 2 ** 32 : 2 ** 16));
    else if (type === "float32") {
      f[0] = Math.round((100 + Math.sin(i / 30) * 10 + rand()) * 100) / 100;
      bits[i] = new Uint32Array(f.buffer)[0]!;
    } else bits[i] = 0x5640 + Math.floor(Math.sin(i / 30) * 20);
  }
  return type === "float32"
    ? { type, values: new Float32Array(bits.buffer), validity: null }
    : { type, values: bits as Uint16Array, validity: null };
}

function bitsOf(c: Column): number[] {
  const v = c.values as Float32Array | Uint16Array;
  return v instanceof Float32Array
    ? [...new Uint32Array(v.buffer, v.byteOffset, v.length)]
    : [...v];
}

for (const type of NARROW) {
  const predictors = PREDICTORS.filter((p) => p.matches(fieldOf(type)));
  Deno.test(`${type} predictors are registered, lossless and trial candidates`, () => {
    assert.ok(predictors.length >= 2, predictors.map((p) => p.id).join());
    for (const p of predictors) assert.equal(p.lossy, false, p.id);
  });
  for (const p of predictors) {
    Deno.test(`${p.id}.decode() returns every encoded bit pattern`, async (t) => {
      for (
        const [n, seed, smooth] of [
          [0, 1, false],
          [1, 2, false],
          [5000, 3, false],
          [5000, 4, true],
          [777, 5, true],
        ] as const
      ) {
        await t.step(`${n} rows, ${smooth ? "smooth" : "random bits"} (seed ${seed})`, () => {
          const input = column(type, n, seed, smooth);
          const { bytes } = encodeWith(p, input);
          // Only a decimal predictor may decline, and only values that are no decimals.
          if (bytes === null && !smooth && p.id.endsWith("_alp")) return;
          const { decoded } = roundTrip(p, input);
          assert.deepEqual(bitsOf(decoded), bitsOf(input));
        });
      }
    });
    Deno.test(`${p.id}.decode() throws a FormatError for a truncated or garbled block`, () => {
      const input = column(type, 300, 9, true);
      const { bytes } = roundTrip(p, input);
      const field = fieldOf(type);
      const rand = prng(99);
      for (let cut = 0; cut < bytes.length; cut += Math.max(1, Math.floor(bytes.length / 40))) {
        assert.throws(
          () => p.decode(bytes.subarray(0, cut), 300, { field, deps: [] }),
          FormatError,
        );
      }
      assert.throws(() => p.decode(bytes, 299, { field, deps: [] }), { code: "CORRUPT" });
      const longer = new Uint8Array(bytes.length + 1);
      longer.set(bytes);
      assert.throws(() => p.decode(longer, 300, { field, deps: [] }), { code: "CORRUPT" });
      // A flipped byte either decodes to 300 values or is a FormatError: never a crash.
      for (let k = 0; k < 200; k++) {
        const bad = bytes.slice();
        const at = Math.floor(rand() * bad.length);
        bad[at] = bad[at]! ^ (1 << Math.floor(rand() * 8));
        try {
          const out = p.decode(bad, 300, { field, deps: [] });
          assert.equal(out.values.length, 300);
        } catch (err) {
          assert.ok(err instanceof FormatError, String(err));
        }
      }
      assert.throws(
        () => p.decode(bytes, 300, { field: fieldOf("float64"), deps: [] }),
        { code: "CORRUPT" },
      );
    });
  }
}
