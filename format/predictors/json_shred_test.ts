/**
 * Tests of `json_shred.ts` (`json_schema_v2`): seeded random JSON objects of every
 * spelling come back byte for byte, rows it cannot take stay raw, declines, and
 * damaged blocks are a `FormatError`.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Column, Field } from "../column.ts";
import { FormatError } from "../errors.ts";
import { jsonSchemaV2, scanObject, shred } from "./json_shred.ts";
import { rawText } from "./raw_text.ts";

/** A seeded xorshift32 generator. */
class Rng {
  #x: number;
  constructor(seed: number) {
    this.#x = seed >>> 0 || 1;
  }
  next(): number {
    let x = this.#x;
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    this.#x = x;
    return x;
  }
  int(n: number): number {
    return Math.floor((this.next() / 4294967296) * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
}

const FIELDS: readonly Field[] = [
  { name: "j", type: "json", nullable: false },
  { name: "s", type: "string", nullable: false },
];

const STRING_BODIES = [
  "",
  "click",
  "caf\\u00e9",
  "café",
  'say \\"hi\\"',
  "back\\\\slash",
  "a\\/b",
  "tab\\tnew\\nline",
  "🧊 frozen",
  "\\ud83e\\uddca",
  "日本",
  "\\uD800",
  "\\b\\f\\r",
  " spaced ",
];
const NUMBERS = [
  "0",
  "-0",
  "1",
  "-1",
  "42",
  "1e5",
  "1E+5",
  "2e-3",
  "1.50",
  "0.1",
  "-12.000",
  "9223372036854775807",
  "-9223372036854775808",
  "9223372036854775808",
  "-9223372036854775809",
  "123456789012345678901234567890",
  "1700000000",
];
const NESTED = ["[]", "{}", "[1, 2,3]", '{"page":"/a"}', '{ "a" : [ {"}" : "]"} ] }', '[["x"]]'];
const KEYS = ["user", "event", "ts", "props", "caf\\u00e9", "é", 'q\\"k', "", "k/\\/", "🔥"];
const SPACES = ["", "", "", " ", "  ", "\n", "\t", "\r\n  "];

function randomValue(rng: Rng, spacing: boolean, depth: number): string {
  switch (rng.int(7)) {
    case 0:
    case 1:
      return `"${rng.pick(STRING_BODIES)}"`;
    case 2:
      return rng.pick(NUMBERS);
    case 3:
      return String(rng.int(1000) - 500);
    case 4:
      return rng.pick(["true", "false", "null"]);
    case 5:
      // Nested objects (shredded again, up to 3 levels), sometimes deeper than that.
      return depth < 5 ? randomObject(rng, spacing, depth + 1) : "{}";
    default:
      return rng.pick(NESTED);
  }
}

/** A random object: random keys (duplicates too), values and whitespace. */
function randomObject(rng: Rng, spacing: boolean, depth = 0): string {
  const ws = () => (spacing ? rng.pick(SPACES) : "");
  const m = rng.int(7);
  let s = `${ws()}{${ws()}`;
  for (let j = 0; j < m; j++) {
    if (j > 0) s += `,${ws()}`;
    s += `"${rng.pick(KEYS)}"${ws()}:${ws()}${randomValue(rng, spacing, depth)}${ws()}`;
  }
  return `${s}}${ws()}`;
}

const NON_OBJECTS = [
  "",
  "[1,2]",
  "42",
  '"text"',
  "null",
  "{",
  "}",
  '{"a":}',
  '{"a":1,}',
  '{"a" 1}',
  '{"a":01}',
  '{"a":1.}',
  '{"a":tru}',
  '{"a":"\\x"}',
  '{"a":"unterminated}',
  '{"a":1} x',
  '{"a":[1,2}',
  "{'a':1}",
  "not json at all",
  '{"a":"raw\ttab"}',
  '{"a":+1}',
];

function column(field: Field, values: string[]): Column {
  return { type: field.type === "json" ? "json" : "string", values, validity: null };
}

function roundTrip(field: Field, values: string[], bytes: Uint8Array): void {
  const out = jsonSchemaV2.decode(bytes, values.length, { field, deps: [] });
  assert.equal(out.type, field.type);
  assert.equal(out.validity, null);
  assert.deepEqual(out.values, values);
}

Deno.test("json_schema_v2 round-trips random objects of every spelling byte for byte", () => {
  let shredded = 0;
  for (let seed = 1; seed <= 40; seed++) {
    const rng = new Rng(seed * 7919);
    const spacing = seed % 2 === 0;
    const n = 1 + rng.int(400);
    const values = Array.from(
      { length: n },
      () => rng.int(10) < 8 ? randomObject(rng, spacing) : rng.pick(NON_OBJECTS),
    );
    const field = FIELDS[seed % 2]!;
    const bytes = shred(values, field.name);
    if (bytes === null) {
      // Declined only when under 70% of the non-empty rows are objects it takes.
      const nonEmpty = values.filter((v) => v !== "").length;
      const taken = values.filter((v) => scanObject(v) !== null).length;
      assert.ok(taken < 0.7 * nonEmpty || taken === 0, `seed ${seed}`);
      continue;
    }
    shredded++;
    roundTrip(field, values, bytes);
    const viaEncode = jsonSchemaV2.encode(column(field, values), {
      field,
      deps: [],
      warn: () => {},
    });
    if (viaEncode) roundTrip(field, values, viaEncode);
  }
  assert.ok(shredded >= 30, `${shredded} of 40 columns shredded`);
});

Deno.test("json_schema_v2 stores repetitive event rows smaller than raw_text", () => {
  const rng = new Rng(99);
  const field = FIELDS[0]!;
  const events = ["click", "view", "scroll", "buy"];
  const values = Array.from(
    { length: 5000 },
    (_, i) =>
      `{"user":${rng.int(5000)},"event":"${rng.pick(events)}","ts":${
        1700000000 + i * 3
      },"props":{"page":"/${rng.pick(["a", "b", "c"])}"}}`,
  );
  const ctx = { field, deps: [], warn: () => {} };
  const bytes = jsonSchemaV2.encode(column(field, values), ctx);
  assert.ok(bytes !== null);
  const raw = rawText.encode(column(field, values), ctx)!;
  assert.ok(bytes.length < raw.length / 2, `${bytes.length} vs raw ${raw.length}`);
  roundTrip(field, values, bytes);
});

Deno.test("json_schema_v2 keeps exact spellings: escapes, -0, 1.50, 1e5, big ints, duplicates", () => {
  const field = FIELDS[1]!;
  const values = [
    '{"a":-0,"b":1.50,"c":1e5,"d":0.1,"e":"caf\\u00e9","f":"\\"\\\\\\/"}',
    '{"a":9223372036854775807,"b":-9223372036854775808,"c":9223372036854775808,"d":1,"e":"x","f":""}',
    '{"a":1,"a":2,"a":"dup","b":{"n":[1,{"m":"}"}]},"c":null,"d":true,"e":false,"f":[]}',
    ' { "a" :\t1 ,\n"b": 2 }  ',
    "{}",
    "{ }",
    '{"a":"\\ud83e\\uddca 🧊"}',
    "[1,2,3]",
    "",
    "{",
  ];
  const bytes = shred(values, field.name)!;
  assert.ok(bytes !== null);
  roundTrip(field, values, bytes);
});

Deno.test("json_schema_v2 shreds nested objects, and nesting deeper than 3 levels stays text", () => {
  const field = FIELDS[0]!;
  const values = Array.from(
    { length: 400 },
    (_, i) =>
      `{"id":${i},"props":{"page":"/p${i % 13}","n":${i * 3},"deep":{"a":{"b":{"c":{"d":${i}}}}}}}`,
  );
  values[17] = '{"id":17,"props":[1]}';
  values[18] = '{"id":18,"props":{"page":"x", "n":1.5}}';
  const bytes = shred(values, field.name)!;
  assert.ok(bytes !== null);
  roundTrip(field, values, bytes);
  const ctx = { field, deps: [], warn: () => {} };
  const raw = rawText.encode(column(field, values), ctx)!;
  assert.ok(bytes.length < raw.length / 3, `${bytes.length} vs raw ${raw.length}`);
  const flat = shred(values, field.name, 3)!; // as if already 3 levels down: no nesting
  assert.ok(bytes.length < flat.length / 2, `${bytes.length} nested vs ${flat.length} flat`);
  for (let cut = 0; cut < bytes.length; cut += 7) {
    assert.throws(
      () => jsonSchemaV2.decode(bytes.subarray(0, cut), values.length, { field, deps: [] }),
      {
        name: "FormatError",
        code: "CORRUPT",
      },
    );
  }
});

Deno.test("json_schema_v2 declines non-JSON text and columns under 70% objects", () => {
  const field = FIELDS[1]!;
  const ctx = { field, deps: [], warn: () => {} };
  const words = Array.from({ length: 100 }, (_, i) => `word ${i}`);
  assert.equal(jsonSchemaV2.encode(column(field, words), ctx), null);
  assert.equal(jsonSchemaV2.encode(column(field, []), ctx), null);
  assert.equal(jsonSchemaV2.encode(column(field, ["", ""]), ctx), null);
  const mixed = Array.from({ length: 100 }, (_, i) => (i < 69 ? `{"a":${i}}` : `[${i}]`));
  assert.equal(shred(mixed, "s"), null);
  const enough = Array.from({ length: 100 }, (_, i) => (i < 70 ? `{"a":${i}}` : `[${i}]`));
  assert.ok(shred(enough, "s") !== null);
  // Empty strings (nulls) do not count against the share.
  const withNulls = Array.from({ length: 100 }, (_, i) => (i % 2 ? "" : `{"a":${i}}`));
  assert.ok(shred(withNulls, "s") !== null);
  // Unique keys and spacing on every row: shredding does not pay, raw_text wins.
  const unique = Array.from({ length: 50 }, (_, i) => `{"k${i}":${" ".repeat(i)}${i}}`);
  assert.equal(jsonSchemaV2.encode(column(field, unique), ctx), null);
});

Deno.test("json_schema_v2 refuses damaged blocks with a FormatError, never wrong-length data", () => {
  const field = FIELDS[0]!;
  const rng = new Rng(5);
  const values = Array.from({ length: 60 }, () => randomObject(rng, true));
  values.push("[1]", "", "nope");
  const bytes = shred(values, field.name)!;
  assert.ok(bytes !== null);
  const decodeOf = (b: Uint8Array, n = values.length) =>
    jsonSchemaV2.decode(b, n, { field, deps: [] });
  const expectFormatError = (f: () => unknown, label: string) => {
    try {
      const out = f() as Column;
      // Damaged bytes that still parse: exactly the asked-for rows, strings.
      assert.equal(out.values.length, values.length, label);
      for (const v of out.values) assert.equal(typeof v, "string", label);
    } catch (err) {
      assert.ok(err instanceof FormatError, `${label}: ${err}`);
      assert.equal(err.code, "CORRUPT", label);
    }
  };
  for (let cut = 0; cut < bytes.length; cut++) {
    assert.throws(() => decodeOf(bytes.subarray(0, cut)), { name: "FormatError", code: "CORRUPT" });
  }
  assert.throws(() => decodeOf(bytes, values.length + 1), { name: "FormatError", code: "CORRUPT" });
  const longer = new Uint8Array(bytes.length + 1);
  longer.set(bytes);
  assert.throws(() => decodeOf(longer), { name: "FormatError", code: "CORRUPT" });
  for (let i = 0; i < 1000; i++) {
    const bad = bytes.slice();
    const at = rng.int(bad.length);
    bad[at] = bad[at]! ^ (1 << rng.int(8));
    expectFormatError(() => decodeOf(bad), `flip at ${at}`);
  }
  for (let i = 0; i < 200; i++) {
    const garbage = Uint8Array.from({ length: rng.int(64) }, () => rng.int(256));
    expectFormatError(() => decodeOf(garbage), `garbage ${i}`);
  }
});
