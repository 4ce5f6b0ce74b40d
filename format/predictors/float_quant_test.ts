/**
 * Tests of `float_quant.ts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Quantization } from "./predictor.ts";
import {
  floatQuantHigh,
  floatQuantLow,
  floatQuantMedium,
  maxQuantizationError,
  QUANT_MANTISSA_BITS,
  QUANT_MAX_RELATIVE_ERROR,
  QUANTIZER_FOR,
} from "./float_quant.ts";
import { assertFormatError, encodeWith, fieldOf, floatBits, roundTrip } from "./_test_utils.ts";

const LEVELS: [Quantization, typeof floatQuantHigh][] = [
  ["QUANT_HIGH", floatQuantHigh],
  ["QUANT_MEDIUM", floatQuantMedium],
  ["QUANT_LOW", floatQuantLow],
];

function quantize(level: Quantization, values: number[]): Float64Array {
  const predictor = QUANTIZER_FOR[level]!;
  const column = { type: "float64" as const, values: Float64Array.from(values), validity: null };
  return roundTrip(predictor, column).decoded.values as Float64Array;
}

function bits(x: number): bigint {
  return floatBits(Float64Array.of(x))[0]!;
}

Deno.test("QUANTIZER_FOR maps each level to its lossy predictor", () => {
  assert.equal(QUANTIZER_FOR.QUANT_NONE, null);
  assert.equal(QUANTIZER_FOR.QUANT_HIGH, floatQuantHigh);
  assert.equal(QUANTIZER_FOR.QUANT_MEDIUM, floatQuantMedium);
  assert.equal(QUANTIZER_FOR.QUANT_LOW, floatQuantLow);
  assert.deepEqual(LEVELS.map(([, p]) => p.id), [
    "float_quant_high",
    "float_quant_medium",
    "float_quant_low",
  ]);
  for (const [, p] of LEVELS) {
    assert.ok(p.lossy && !p.usesDeps && Object.isFrozen(p));
    assert.ok(p.matches(fieldOf("float64")) && !p.matches(fieldOf("int64")));
  }
  assert.ok(Object.isFrozen(QUANTIZER_FOR));
  assert.deepEqual(QUANT_MAX_RELATIVE_ERROR, {
    QUANT_NONE: 0,
    QUANT_HIGH: 2 ** -37,
    QUANT_MEDIUM: 2 ** -24,
    QUANT_LOW: 2 ** -11,
  });
});

Deno.test("float quantizers keep NaN payloads, infinities and zeros bit for bit", () => {
  const column = new Float64Array(
    BigUint64Array.of(
      0x0000000000000000n, // +0
      0x8000000000000000n, // -0
      0x7ff0000000000000n, // +Infinity
      0xfff0000000000000n, // -Infinity
      0x7ff8000000000000n, // NaN
      0x7ff8000000000001n, // NaN, payload in plane 0
      0xfff0000000000123n, // negative signalling NaN, payload in planes 0-1
      0x7ff0000000000001n, // signalling NaN that would read as Infinity without its payload
      0x7ff7ffffffffffffn, // every payload bit set
    ).buffer,
  );
  for (const [level] of LEVELS) {
    const out =
      roundTrip(QUANTIZER_FOR[level]!, { type: "float64", values: column, validity: null }).decoded;
    assert.deepEqual(floatBits(out.values as Float64Array), floatBits(column), level);
  }
});

Deno.test("float quantizers store low NaN payloads after the planes", () => {
  const column = new Float64Array(BigUint64Array.of(0n, 0x7ff0000000000201n).buffer);
  const { bytes } = encodeWith(floatQuantLow, { type: "float64", values: column, validity: null });
  // [n=2][planes 5..7 × 2][e=1][row 1][planes 0..4 of row 1]
  assert.deepEqual([...bytes!], [2, 0, 0, 0, 0xf0, 0, 0x7f, 1, 1, 0x01, 0x02, 0, 0, 0]);
});

Deno.test("float quantizers' decode() throws CORRUPT on bad NaN payload rows", () => {
  const field = fieldOf("float64");
  const head = [2, 0, 0, 0, 0xf0, 0, 0x7f];
  const payload = [0x01, 0x02, 0, 0, 0];
  assertFormatError(
    () => floatQuantLow.decode(Uint8Array.of(...head, 1, 2, ...payload), 2, { field, deps: [] }),
    "CORRUPT",
    /row from 0 to 1, found 2/,
  );
  assertFormatError(
    () =>
      floatQuantLow.decode(Uint8Array.of(...head, 2, 1, ...payload, 1, ...payload), 2, {
        field,
        deps: [],
      }),
    "CORRUPT",
    /row from 2 to 1, found 1/,
  );
  assertFormatError(
    () => floatQuantLow.decode(Uint8Array.of(...head, 3), 2, { field, deps: [] }),
    "CORRUPT",
    /at most 2 NaN payloads, found 3/,
  );
});

Deno.test("float quantizers stay within the documented error", () => {
  let seed = 12345;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const values: number[] = [
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    Number.MIN_VALUE,
    2 ** -1022,
    2 ** -1023 * 1.3,
  ];
  for (let i = 0; i < 5000; i++) {
    values.push((random() - 0.5) * 10 ** Math.floor(random() * 40 - 20));
  }
  for (const [level] of LEVELS) {
    const out = quantize(level, values);
    values.forEach((x, i) => {
      const y = out[i]!;
      assert.ok(Number.isFinite(y), `${level}: ${x} became ${y}`);
      assert.ok(Math.abs(y - x) <= maxQuantizationError(level, x), `${level}: ${x} became ${y}`);
      assert.equal(bits(y) >> 63n, bits(x) >> 63n, `${level}: sign of ${x}`);
    });
  }
});

Deno.test("float quantizers round half to even and may carry into the exponent", () => {
  const k = QUANT_MANTISSA_BITS.QUANT_LOW; // 10 kept bits: quantum 2^-10 in [1, 2)
  const q = 2 ** -k;
  assert.deepEqual([...quantize("QUANT_LOW", [1 + q / 2, 1 + 1.5 * q, 1 + q / 2 + 2 ** -40])], [
    1,
    1 + 2 * q,
    1 + q,
  ]);
  assert.deepEqual([...quantize("QUANT_LOW", [2 - q / 4, -(2 - q / 4)])], [2, -2]);
  const m = QUANT_MANTISSA_BITS.QUANT_MEDIUM;
  assert.deepEqual([...quantize("QUANT_MEDIUM", [1 + 2 ** -(m + 1), 1 + 3 * 2 ** -(m + 1)])], [
    1,
    1 + 2 * 2 ** -m,
  ]);
  const h = QUANT_MANTISSA_BITS.QUANT_HIGH;
  assert.deepEqual([...quantize("QUANT_HIGH", [1 + 2 ** -(h + 1), 1 + 2 ** -(h + 1) + 2 ** -52])], [
    1,
    1 + 2 ** -h,
  ]);
});

Deno.test("float quantizers round the largest doubles down, never to Infinity", () => {
  for (const [level] of LEVELS) {
    const out = quantize(level, [Number.MAX_VALUE, -Number.MAX_VALUE]);
    assert.ok(Number.isFinite(out[0]!) && out[0]! > 0, level);
    assert.ok(Number.isFinite(out[1]!) && out[1]! < 0, level);
    assert.equal(bits(out[0]!) & ((1n << BigInt(52 - QUANT_MANTISSA_BITS[level])) - 1n), 0n);
  }
});

Deno.test("float quantizers drop the byte planes that rounding zeroes", () => {
  const values = Float64Array.from({ length: 100 }, (_, i) => i / 7);
  const column = { type: "float64" as const, values, validity: null };
  assert.equal(encodeWith(floatQuantHigh, column).bytes!.length, 1 + 6 * 100 + 1);
  assert.equal(encodeWith(floatQuantMedium, column).bytes!.length, 1 + 5 * 100 + 1);
  assert.equal(encodeWith(floatQuantLow, column).bytes!.length, 1 + 3 * 100 + 1);
});

Deno.test("float quantizers leave their input untouched", () => {
  const values = Float64Array.of(Math.PI, Math.E);
  floatQuantLow.encode({ type: "float64", values, validity: null }, {
    field: fieldOf("float64"),
    deps: [],
    warn: () => {},
  });
  assert.deepEqual([...values], [Math.PI, Math.E]);
});

Deno.test("float quantizers' decode() throws CORRUPT on a short block", () => {
  const column = { type: "float64" as const, values: Float64Array.of(1, 2), validity: null };
  const { bytes } = encodeWith(floatQuantMedium, column);
  assertFormatError(
    () =>
      floatQuantMedium.decode(bytes!.subarray(0, 10), 2, { field: fieldOf("float64"), deps: [] }),
    "CORRUPT",
    /need 10 bytes .* 9 left/,
  );
});
