/**
 * Tests of the text scanners (`_parse.ts`), formatters (`_format.ts`) and type
 * inference (`infer.ts`): what is accepted, what is rejected, and that every written
 * form scans back to the same value.
 *
 * @module
 */
import assert from "node:assert/strict";
import { inferJsonType, inferTextType } from "./infer.ts";
import {
  isNaNText,
  scanBool,
  scanDate,
  scanFloat,
  scanInt,
  scanTimestamp,
  timestampParts,
  timestampTicks,
} from "./_parse.ts";
import { formatDate, formatFloat, TimestampFormatter } from "./_format.ts";

function int(s: string): number {
  return scanInt(s, 0, s.length);
}
function float(s: string): number {
  return scanFloat(s, 0, s.length);
}

Deno.test("scanInt() accepts only canonical int64 text", async (t) => {
  await t.step("plain integers", () => {
    assert.equal(int("0"), 0);
    assert.equal(int("-42"), -42);
    assert.equal(int("123456789012345"), 123456789012345);
  });
  await t.step("long integers are flagged for BigInt", () => {
    assert.equal(int("9223372036854775807"), Infinity);
    assert.equal(int("-9223372036854775808"), Infinity);
  });
  await t.step("rejects what would not come back as the same text", () => {
    for (
      const s of ["", "-", "+1", "01", "00", "-0", "1.0", " 1", "1 ", "1e3", "12345678901234567890"]
    ) {
      assert.ok(Number.isNaN(int(s)), s);
    }
  });
});

Deno.test("scanFloat() accepts a text only when its value survives shortest round-trip", async (t) => {
  await t.step("ordinary floats", () => {
    assert.equal(float("1.5"), 1.5);
    assert.equal(float("1.50"), 1.5);
    assert.equal(float("1e5"), 1e5);
    assert.equal(float("1E+21"), 1e21);
    assert.equal(float(".5"), 0.5);
    assert.equal(float("5."), 5);
    assert.ok(Object.is(float("-0"), -0));
    assert.ok(Object.is(float("-0.0"), -0));
    assert.equal(float("5e-324"), 5e-324);
    assert.equal(float("2.2250738585072014e-308"), 2.2250738585072014e-308);
    assert.equal(float("0.1"), 0.1);
  });
  await t.step("special values", () => {
    assert.equal(float("inf"), Infinity);
    assert.equal(float("-Infinity"), -Infinity);
    assert.equal(float("INF"), Infinity);
    assert.ok(Number.isNaN(float("NaN")) && isNaNText("NaN", 0, 3) && isNaNText("nan", 0, 3));
  });
  await t.step("rejects inexact or odd texts", () => {
    for (
      const s of [
        "0.30000000000000001",
        "12345678901234567890",
        "1e400",
        "1e-400",
        "1.2345678901234567890123",
        "01.5",
        "+1.5",
        "1.5.5",
        "e5",
        ".",
        "-",
        "1e",
        "0x10",
        "1_0",
        " 1.5",
      ]
    ) {
      assert.ok(Number.isNaN(float(s)), s);
    }
  });
  await t.step("formatFloat() output scans back to the same bits", () => {
    const buf = new Float64Array(1);
    const bits = new BigUint64Array(buf.buffer);
    let seed = 7n;
    for (let i = 0; i < 5000; i++) {
      seed = (seed * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
      bits[0] = seed;
      const x = buf[0] as number;
      if (Number.isNaN(x)) continue;
      for (const json of [false, true]) {
        const s = formatFloat(x, json);
        assert.ok(Object.is(float(s), x), `${x} as '${s}'`);
      }
    }
  });
});

Deno.test("scanBool() and scanDate() read their forms", () => {
  assert.equal(scanBool("TRUE", 0, 4), 1);
  assert.equal(scanBool("false", 0, 5), 0);
  assert.equal(scanBool("yes", 0, 3), -1);
  assert.equal(scanDate("1970-01-01", 0, 10), 0);
  assert.equal(scanDate("2000-02-29", 0, 10), 11016);
  assert.ok(Number.isNaN(scanDate("2001-02-29", 0, 10)));
  assert.ok(Number.isNaN(scanDate("2001-13-01", 0, 10)));
  assert.ok(Number.isNaN(scanDate("2001-1-01", 0, 9)));
  for (const d of [-719162, -1, 0, 11016, 2932896]) {
    const s = formatDate(d);
    assert.equal(scanDate(s, 0, s.length), d, s);
  }
});

Deno.test("scanTimestamp() reads ISO-8601 forms into UTC ticks", async (t) => {
  const parts = timestampParts();
  const ticks = (s: string, unit: "s" | "ms" | "us" | "ns" = "us") => {
    assert.ok(scanTimestamp(s, 0, s.length, parts), s);
    return timestampTicks(parts, unit);
  };
  await t.step("separators, seconds and fractions", () => {
    assert.equal(ticks("1970-01-01 00:00:01"), 1000000);
    assert.equal(ticks("1970-01-01T00:01"), 60000000);
    assert.equal(ticks("1970-01-01 00:00:00.5"), 500000);
    assert.equal(ticks("1970-01-01"), 0);
    assert.equal(ticks("1969-12-31 23:59:59.999999"), -1);
  });
  await t.step("offsets are applied", () => {
    assert.equal(ticks("1970-01-01T01:00:00+01:00"), 0);
    assert.equal(ticks("1970-01-01T00:00:00-0130"), 5400000000);
    assert.equal(ticks("1970-01-01T00:00:00Z"), 0);
    assert.ok(parts.offset);
  });
  await t.step("nanoseconds need a ns unit and fit int64", () => {
    assert.equal(ticks("2024-01-01 00:00:00.123456789"), null);
    assert.equal(ticks("2262-04-11 23:47:16.854775807", "ns"), 9223372036854775807n);
    assert.equal(ticks("1677-09-21 00:12:43.145224192", "ns"), -9223372036854775808n);
    assert.equal(ticks("2262-04-11 23:47:16.854775808", "ns"), null);
    assert.equal(ticks("2024-01-01 00:00:00.120", "ms"), 1704067200120);
  });
  await t.step("rejects malformed texts", () => {
    for (
      const s of [
        "1970-01-01 24:00",
        "1970-01-01 00:60",
        "1970-01-01x00:00",
        "1970-01-01 00:00:00.",
        "1970-01-01 00:00+1",
      ]
    ) {
      assert.equal(scanTimestamp(s, 0, s.length, parts), false, s);
    }
  });
  await t.step("TimestampFormatter output scans back to the same ticks", () => {
    const per = { s: 1n, ms: 1000n, us: 1000000n, ns: 1000000000n };
    for (const unit of ["s", "ms", "us", "ns"] as const) {
      const f = new TimestampFormatter(unit, false, false);
      const secs = unit === "ns"
        ? [0n, 1704067200n, -2000000000n]
        : [0n, 1704067200n, -62135596800n, 253402300799n];
      const values = secs.flatMap((
        s,
      ) => [s * per[unit], s * per[unit] + per[unit] / 3n, s * per[unit] - 1n]);
      for (const v of values) {
        const s = f.format(v);
        assert.equal(BigInt(ticks(s, unit) ?? NaN), v, `${v} ${unit} as '${s}'`);
      }
    }
  });
});

Deno.test("inferTextType() picks the narrowest lossless type", async (t) => {
  await t.step("numbers", () => {
    assert.deepEqual(inferTextType(["1", "-2", null, "9223372036854775807"]), { type: "int64" });
    assert.deepEqual(inferTextType(["1", "2.5", "NaN"]), { type: "float64" });
    assert.deepEqual(inferTextType(["NaN", "inf"]), { type: "string" });
    assert.deepEqual(inferTextType(["1", "9223372036854775808"]), { type: "string" });
  });
  await t.step("zip codes with leading zeros stay strings", () => {
    assert.deepEqual(inferTextType(["02134", "10001"]), { type: "string" });
  });
  await t.step("bools, dates and timestamps", () => {
    assert.deepEqual(inferTextType(["true", "False"]), { type: "bool" });
    assert.deepEqual(inferTextType(["2024-01-31", null]), { type: "date" });
    assert.deepEqual(inferTextType(["2024-01-31", "2024-01-31 10:00"]), {
      type: "timestamp",
      unit: "us",
    });
    assert.deepEqual(inferTextType(["2024-01-31 10:00:00.123456789"]), {
      type: "timestamp",
      unit: "ns",
    });
    assert.deepEqual(inferTextType(["2024-01-31T10:00:00+02:00", "2024-01-31 10:00"]), {
      type: "timestamp",
      unit: "us",
      timezone: "UTC",
    });
  });
  await t.step("empty, all-null and mixed columns are strings", () => {
    assert.deepEqual(inferTextType([]), { type: "string" });
    assert.deepEqual(inferTextType([null, null]), { type: "string" });
    assert.deepEqual(inferTextType(["1", ""]), { type: "string" });
    assert.deepEqual(inferTextType(["1", "true"]), { type: "string" });
  });
});

Deno.test("inferJsonType() keeps JSON kinds apart", () => {
  const num = (text: string) => ({ kind: "number" as const, text });
  const str = (text: string) => ({ kind: "string" as const, text });
  assert.deepEqual(inferJsonType([num("1"), null, num("9223372036854775807")]), { type: "int64" });
  assert.deepEqual(inferJsonType([num("1"), num("1.5")]), { type: "float64" });
  assert.deepEqual(inferJsonType([str("1"), str("2")]), { type: "string" });
  assert.deepEqual(inferJsonType([num("1"), str("2")]), { type: "json" }, "mixed kinds");
  assert.deepEqual(inferJsonType([{ kind: "bool", text: "true" }]), { type: "bool" });
  assert.deepEqual(inferJsonType([str("2024-01-01")]), { type: "date" });
  assert.deepEqual(inferJsonType([str("2024-01-01T00:00:00Z")]), {
    type: "timestamp",
    unit: "us",
    timezone: "UTC",
  });
  assert.deepEqual(inferJsonType([{ kind: "nested", text: "[1]" }]), { type: "json" });
  assert.deepEqual(inferJsonType([num("1e400")]), { type: "json" }, "beyond float64");
  assert.deepEqual(inferJsonType([num("123456789012345678901234567890")]), { type: "json" });
  assert.deepEqual(inferJsonType([num("1234567890123456.78")]), { type: "json" }, "not a double");
  assert.deepEqual(inferJsonType([str("ok"), str("\ud800")]), { type: "json" }, "lone surrogate");
  assert.deepEqual(inferJsonType([null, null]), { type: "string" }, "all null");
});
