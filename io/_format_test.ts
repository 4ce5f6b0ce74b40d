/**
 * Tests of `_format.ts`'s float32 and float16 text: shortest, and read back the same.
 *
 * @module
 */
import assert from "node:assert/strict";
import { float16ToNumber, numberToFloat16 } from "../format/float16.ts";
import { FLOAT_TEXT_MEMO, formatFloat, formatFloat16, formatFloat32 } from "./_format.ts";
import { Rng } from "./_test_utils.ts";

Deno.test("formatFloat32() gives the shortest text that reads back as the same float32", () => {
  const rng = new Rng(32);
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  for (let i = 0; i < 50_000; i++) {
    u[0] = rng.int(2 ** 32);
    const x = f[0]!;
    const text = formatFloat32(x, false);
    if (Number.isNaN(x)) {
      assert.equal(text, "NaN");
      continue;
    }
    const back = text === "inf" ? Infinity : text === "-inf" ? -Infinity : Number(text);
    assert.ok(Object.is(Math.fround(back), x), `${x} -> ${text}`);
    // No shorter precision reads back as x.
    const digits = text.replace(/^-/, "").replace(/e.*$/, "").replace(".", "").replace(
      /^0+/,
      "",
    ).replace(/0+$/, "").length;
    if (digits > 1 && Number.isFinite(x) && x !== 0) {
      assert.notEqual(Math.fround(Number(x.toPrecision(digits - 1))), x, `${x} -> ${text}`);
    }
  }
  assert.equal(formatFloat32(Math.fround(0.1), false), "0.1");
  assert.equal(formatFloat32(Math.fround(3), true), "3.0");
  assert.equal(formatFloat32(-0, false), "-0.0");
  assert.equal(formatFloat32(Math.fround(16777216), false), "16777216.0");
  assert.equal(formatFloat32(1.401298464324817e-45, false), "1e-45");
});

Deno.test("formatFloat16() gives the shortest text that reads back as the same float16", () => {
  for (let h = 0; h < 0x10000; h++) {
    const x = float16ToNumber(h);
    const text = formatFloat16(x, h, true);
    if (Number.isNaN(x)) continue;
    const back = text === "Infinity" ? Infinity : text === "-Infinity" ? -Infinity : Number(text);
    assert.equal(numberToFloat16(back), h, `0x${h.toString(16)} -> ${text}`);
  }
  assert.equal(formatFloat16(float16ToNumber(0x2e66), 0x2e66, false), "0.1");
  assert.equal(formatFloat16(65504, 0x7bff, false), "65500.0"); // reads back as 65504
});

/** `count` float32 values of random bits (NaN, infinities and zeros among them). */
function randomFloat32s(seed: number, count: number): number[] {
  const rng = new Rng(seed);
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  return Array.from({ length: count }, () => {
    u[0] = rng.int(2 ** 32);
    return f[0]!;
  });
}

Deno.test("formatFloat32() gives the same text again, from its memo or past its limit", () => {
  const values = randomFloat32s(7, FLOAT_TEXT_MEMO + 5_000)
    .filter((x) => Number.isFinite(x) && x !== 0);
  const first = values.map((x) => formatFloat32(x, false));
  values.forEach((x, i) => {
    // JSON or CSV, the second time: a finite value's text is the same in both.
    assert.equal(formatFloat32(x, true), first[i], String(x));
    assert.ok(Object.is(Math.fround(Number(first[i])), x), `${x} -> ${first[i]}`);
  });
});

Deno.test("formatFloat16() gives the same text again, in CSV and JSON", () => {
  for (const h of [0x2e66, 0x3c00, 0x7bff, 0x0001, 0xbc00, 0x3555]) {
    const x = float16ToNumber(h);
    assert.equal(formatFloat16(x, h, true), formatFloat16(x, h, false));
  }
  assert.equal(formatFloat16(float16ToNumber(0x2e66), 0x2e66, true), "0.1");
});

/** The texts as `toPrecision` alone gives them: the fewest digits, tried from one up. */
function byToPrecision(x: number, most: number, same: (y: number) => boolean): string {
  if (!Number.isFinite(x) || x === 0) return formatFloat(x, false);
  for (let digits = 1; digits < most; digits++) {
    const y = Number(x.toPrecision(digits));
    if (same(y)) return formatFloat(y, false);
  }
  return formatFloat(Number(x.toPrecision(most)), false);
}

Deno.test("formatFloat32() and formatFloat16() give toPrecision's own digits, ties and powers of ten included", () => {
  const values = randomFloat32s(1032, 200_000);
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  // The float32 values next to every power of ten (where the exponent is in doubt).
  for (let e = -46; e <= 39; e++) {
    f[0] = Number(`1e${e}`);
    const at = u[0]!;
    for (let d = -40; d <= 40; d++) {
      u[0] = (at + d) >>> 0;
      values.push(f[0]!, -f[0]!);
    }
  }
  // Halves and other exact fractions (where rounding to fewer digits is a tie).
  for (let i = 0; i < 20_000; i++) {
    values.push(
      Math.fround(i + 0.5),
      Math.fround(i / 4),
      Math.fround(i / 100),
      Math.fround(-i * 1.25),
    );
  }
  for (const x of values) {
    assert.equal(
      formatFloat32(x, false),
      byToPrecision(x, 9, (y) => Math.fround(y) === x),
      String(x),
    );
  }
  for (let h = 0; h < 0x10000; h++) {
    const x = float16ToNumber(h);
    if (Number.isNaN(x)) continue;
    assert.equal(
      formatFloat16(x, h, false),
      byToPrecision(x, 5, (y) => numberToFloat16(y) === h),
      `0x${h.toString(16)}`,
    );
  }
});
