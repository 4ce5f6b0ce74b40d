import assert from "node:assert/strict";
import type { Field } from "../column.ts";
import { FormatError } from "../errors.ts";
import { decimalDelta, decimalFrame } from "./decimal.ts";

const FIELD: Field = { name: "x", type: "float64", nullable: false };
const ctx = { field: FIELD, deps: [], warn: () => {} };

function bits(a: Float64Array): bigint[] {
  return [...new BigUint64Array(a.buffer, a.byteOffset, a.length)];
}

Deno.test("decimalFrame and decimalDelta round-trip short decimals bit for bit", async (t) => {
  const cases: Record<string, number[]> = {
    "one decimal": [12.8, 10.6, -3.9, 0.0, 5, 35.6],
    "two decimals": [39.81, 36.35, 43.22, 0.01, 0.1, 0.3],
    "integers": [1, 2, 3, 1e15, -7],
    "nine decimals": [1.000000001, 0.123456789],
    "empty": [],
  };
  for (const predictor of [decimalFrame, decimalDelta]) {
    for (const [name, list] of Object.entries(cases)) {
      await t.step(`${predictor.id}: ${name}`, () => {
        const values = Float64Array.from(list);
        const bytes = predictor.encode({ type: "float64", values, validity: null }, ctx);
        assert.ok(bytes, "encodes");
        const back = predictor.decode(bytes, values.length, { field: FIELD, deps: [] });
        assert.deepEqual(bits(back.values as Float64Array), bits(values));
      });
    }
  }
});

Deno.test("decimalFrame returns null for values that are not short decimals", () => {
  for (const bad of [[NaN], [Infinity], [-0], [Math.PI], [0.1 + 0.2], [1e300]]) {
    assert.equal(
      decimalFrame.encode({ type: "float64", values: Float64Array.from(bad), validity: null }, ctx),
      null,
    );
  }
});

Deno.test("decimalFrame.decode() rejects a bad scale or truncated bytes with FormatError", () => {
  const bytes = decimalFrame.encode({
    type: "float64",
    values: Float64Array.from([1.5, 2.5]),
    validity: null,
  }, ctx)!;
  const bad = bytes.slice();
  bad[0] = 42;
  assert.throws(() => decimalFrame.decode(bad, 2, { field: FIELD, deps: [] }), FormatError);
  assert.throws(
    () => decimalFrame.decode(bytes.subarray(0, 3), 2, { field: FIELD, deps: [] }),
    FormatError,
  );
  assert.throws(
    () => decimalFrame.decode(new Uint8Array(0), 2, { field: FIELD, deps: [] }),
    FormatError,
  );
});
