/**
 * The shared predictor suite: every predictor in `format/predictors/registry.ts`
 * must pass it, so a new predictor is covered by its registry line alone.
 *
 * For each column type a predictor matches, it checks on seeded random and
 * edge-case columns (empty, one row, INT64_MIN/MAX, values beyond 2^53,
 * repeats, emoji and empty strings, NaN payloads, -0, subnormals, degrees computed
 * from seconds) that:
 * - decode(encode(x)) is x exactly (bit for bit for floats), or, for a lossy
 *   predictor, within the bound `float_quant.ts` documents, with NaN, ±Infinity
 *   and ±0 kept bit for bit, and quantizing twice changes nothing;
 * - encode leaves its input untouched, gives the same bytes every time, and
 *   accepts typed-array views at an offset; decode accepts such views too;
 * - a wrong length, any truncation, a trailing byte, garbage and bit flips
 *   yield a `FormatError` (or, for damaged bytes that still parse, exactly
 *   `length` values of the right type), never a `RangeError`, a `TypeError`
 *   or data of the wrong length;
 * - a dictionary decoder's `decodeCoded` gives `decode`'s rows as codes (from
 *   dependencies given as codes too, where it declares `codedDeps`), and fails
 *   where `decode` fails, with the same message.
 * Predictors that use dependency columns get random dependency columns of
 * every type, one or two of them, or, for every other text case, a text column
 * that holds the case's values among other words.
 *
 * The random generator is seeded (xorshift32), so failures reproduce.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type DecodedColumn, rowsOfCodes } from "../../format/coded_strings.ts";
import type { Column, ColumnType, Field } from "../../format/column.ts";
import { FormatError } from "../../format/errors.ts";
import { numberToFloat16 } from "../../format/float16.ts";
import { maxQuantizationError, QUANTIZER_FOR } from "../../format/predictors/float_quant.ts";
import { NARROW_QUANTIZER_FOR } from "../../format/predictors/float_quant_narrow.ts";
import { type Predictor, QUANTIZATIONS } from "../../format/predictors/predictor.ts";
import { PREDICTORS } from "../../format/predictors/trial.ts";

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/**
 * The column types the suite runs, by case name: every `ColumnType`, plus
 * `decimal_wide` (a decimal of 38 digits, held as `bigint[]` unless narrowed).
 */
const TYPES = [
  "int64",
  "timestamp",
  "date",
  "time",
  "duration",
  "decimal",
  "decimal_wide",
  "float64",
  "float32",
  "float16",
  "bool",
  "string",
  "json",
] as const satisfies readonly (ColumnType | "decimal_wide")[];
type TypeCase = (typeof TYPES)[number];

/** Largest unscaled value of `decimal_wide` (38 digits). */
const WIDE_LIMIT = 10n ** 38n - 1n;

/** A seeded xorshift32 generator: `next()` in [0, 2^32). */
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
  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor((this.next() / 4294967296) * n);
  }
  /** Uniform in [0, 1). */
  unit(): number {
    return this.next() / 4294967296;
  }
  /** Any 64-bit pattern, as a signed value. */
  int64(): bigint {
    return BigInt.asIntN(64, (BigInt(this.next()) << 32n) | BigInt(this.next()));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
}

function fieldOf(type: TypeCase): Field {
  switch (type) {
    case "timestamp":
    case "time":
    case "duration":
      return { name: "c", type, nullable: false, unit: "us" };
    case "decimal":
      return { name: "c", type, nullable: false, precision: 18, scale: 2 };
    case "decimal_wide":
      return { name: "c", type: "decimal", nullable: false, precision: 38, scale: 4 };
    default:
      return { name: "c", type, nullable: false };
  }
}

function floatsFromBits(bits: readonly bigint[]): Float64Array {
  return new Float64Array(BigUint64Array.from(bits.map((b) => BigInt.asUintN(64, b))).buffer);
}

function bitsOf(values: Float64Array): bigint[] {
  const end = values.byteOffset + values.byteLength;
  return [...new BigUint64Array(values.buffer.slice(values.byteOffset, end))];
}

const EMOJI = ["🧊", "🔥", "👩‍💻", "🇳🇴", "é", "日本", "\u{10FFFF}", "\uFEFF", "a\u0000b"];

function randomString(rng: Rng): string {
  let s = "";
  const len = rng.int(12);
  for (let i = 0; i < len; i++) {
    const r = rng.int(10);
    s += r < 6 ? String.fromCharCode(32 + rng.int(95)) : r < 9 ? rng.pick(EMOJI) : "";
  }
  return s;
}

/**
 * Event-log rows: JSON objects with a few keys of varied kinds and spellings
 * (escapes, `-0`, `1.50`, nested values, unicode keys), one row in ten not an object.
 */
function jsonObjects(rng: Rng, n: number): string[] {
  const kinds = [
    '"click"',
    '"caf\\u00e9"',
    "-0",
    "1.50",
    "1e5",
    "true",
    "null",
    '{"p":"/a"}',
    "[1, 2]",
  ];
  return Array.from({ length: n }, (_, i) => {
    if (rng.int(10) === 0) {
      return rng.pick(["[1]", "42", "", "{", JSON.stringify(randomString(rng))]);
    }
    const extra = rng.int(3) === 0
      ? `, "${rng.pick(["é", 'k\\"q', "🧊"])}": ${rng.pick(kinds)}`
      : "";
    return `{"user":${rng.int(1000)},"event":${rng.pick(kinds)},"ts":${1700000000 + i}${extra}}`;
  });
}

/** Edge-case and random columns of one type, by name. */
function columnsOf(type: TypeCase, seed: number): [string, Column][] {
  const rng = new Rng(seed);
  const n = 3000;
  switch (type) {
    case "decimal_wide": {
      // What the block layer hands a predictor: 64-bit values when every one fits
      // (narrowed), a bigint[] when some do not.
      const narrow = (values: readonly bigint[]): Column => ({
        type: "decimal",
        values: BigInt64Array.from(values),
        validity: null,
      });
      const wide = (values: bigint[]): Column => ({ type: "decimal", values, validity: null });
      const big = () => (BigInt(rng.int64()) * BigInt(rng.int64())) % WIDE_LIMIT;
      return [
        ["empty", wide([])],
        ["one row", wide([big()])],
        ["extremes", wide([WIDE_LIMIT, -WIDE_LIMIT, 0n, -1n, 1n, 2n ** 64n, -(2n ** 64n)])],
        ["random beyond 64 bits", wide(Array.from({ length: n }, big))],
        ["small, as bigint[]", wide(Array.from({ length: n }, () => BigInt(rng.int(2001) - 1000)))],
        ["narrowed extremes", narrow([INT64_MIN, INT64_MAX, 0n, -1n])],
        ["narrowed random", narrow(Array.from({ length: n }, () => rng.int64()))],
      ];
    }
    case "json": {
      const col = (values: string[]): Column => ({ type, values, validity: null });
      const pool = ['{"a":1}', "[1,2]", "1e400", '"\\ud800"', "null", '{"k": [ {} ] }'];
      return [
        ["empty", col([])],
        ["one value", col(['{"x":"é"}'])],
        ["random", col(Array.from({ length: n }, () => rng.pick(pool)))],
        ["unicode", col(Array.from({ length: 300 }, () => JSON.stringify(randomString(rng))))],
        ["event objects", col(jsonObjects(rng, n))],
        ["few event objects", col(jsonObjects(rng, 120))],
        [
          "objects among others",
          col(
            Array.from({ length: n }, (_, i) => jsonObjects(rng, 1)[0]! + (i % 5 === 0 ? " " : "")),
          ),
        ],
      ];
    }
    case "int64":
    case "timestamp":
    case "date":
    case "time":
    case "duration":
    case "decimal": {
      const col = (values: readonly bigint[]): Column => ({
        type,
        values: BigInt64Array.from(values),
        validity: null,
      });
      const t0 = 1_700_000_000_000_000n;
      return [
        ["empty", col([])],
        ["one row", col([rng.int64()])],
        ["one INT64_MIN", col([INT64_MIN])],
        ["extremes", col([INT64_MIN, INT64_MAX, 0n, -1n, INT64_MAX, INT64_MIN, 1n, INT64_MIN])],
        [
          "around 2^53",
          col(Array.from({ length: 200 }, (_, i) => 2n ** 53n + BigInt(i % 5) - 2n)),
        ],
        ["full-range random", col(Array.from({ length: n }, () => rng.int64()))],
        ["small random", col(Array.from({ length: n }, () => BigInt(rng.int(2001) - 1000)))],
        ["repeated", col(Array.from({ length: n }, () => 424242424242n))],
        ["minute grid", col(Array.from({ length: n }, (_, i) => t0 + BigInt(i) * 60_000_000n))],
        [
          "jittered clock",
          col(Array.from({ length: n }, (_, i) => t0 + BigInt(i) * 1000n + BigInt(rng.int(50)))),
        ],
        [
          "going backwards",
          col(Array.from({ length: n }, (_, i) => t0 - BigInt(i * (i % 3 === 0 ? -7 : 5)))),
        ],
        [
          "low cardinality beyond 2^53",
          col(Array.from({ length: n }, () => rng.pick([2n ** 60n, -(2n ** 61n), 3n, INT64_MAX]))),
        ],
      ];
    }
    case "float64": {
      const col = (values: Float64Array): Column => ({ type, values, validity: null });
      const specials = floatsFromBits([
        0x7ff8000000000001n,
        0x7ff0000000000001n,
        0xfff8000000000000n,
        0x7ff4000000abcdefn,
        0x8000000000000000n,
        0x0000000000000000n,
        0x0000000000000001n,
        0x000fffffffffffffn,
        0x800fffffffffffffn,
        0x7ff0000000000000n,
        0xfff0000000000000n,
        0x7fefffffffffffffn,
        0x0010000000000000n,
      ]);
      let walk = 100;
      return [
        ["empty", col(new Float64Array(0))],
        ["one row", col(Float64Array.of(Math.PI))],
        ["specials", col(specials)],
        ["random bit patterns", col(floatsFromBits(Array.from({ length: n }, () => rng.int64())))],
        ["uniform", col(Float64Array.from({ length: n }, () => (rng.unit() - 0.5) * 1e6))],
        [
          "random walk of cents",
          col(
            Float64Array.from(
              { length: n },
              () => (walk = Math.round((walk + rng.unit() - 0.5) * 100) / 100),
            ),
          ),
        ],
        ["repeated", col(Float64Array.from({ length: n }, () => 0.1))],
        [
          "degrees from seconds, 6 decimals",
          col(
            Float64Array.from(
              { length: n },
              () => Number(((rng.int(648_000) - 324_000) / 3600).toFixed(6)),
            ),
          ),
        ],
        [
          "wide magnitudes",
          col(
            Float64Array.from({ length: n }, () => (rng.unit() - 0.5) * 10 ** (rng.int(600) - 300)),
          ),
        ],
      ];
    }
    case "float32":
    case "float16": {
      const wide = type === "float32";
      const col = (bits: readonly number[]): Column =>
        wide
          ? { type, values: new Float32Array(Uint32Array.from(bits).buffer), validity: null }
          : { type, values: Uint16Array.from(bits), validity: null };
      const specials = wide
        ? [
          0x7fc00001,
          0x7f800001,
          0xffc00000,
          0x80000000,
          0,
          1,
          0x807fffff,
          0x7f800000,
          0xff800000,
          0x7f7fffff,
        ]
        : [0x7e01, 0x7c01, 0xfe00, 0x8000, 0, 1, 0x83ff, 0x7c00, 0xfc00, 0x7bff];
      const f = new Float32Array(1);
      const bitsOfValue = (x: number) => {
        f[0] = x;
        return wide ? new Uint32Array(f.buffer)[0]! : numberToFloat16(x);
      };
      let walk = 100;
      return [
        ["empty", col([])],
        ["one row", col([bitsOfValue(Math.PI)])],
        ["specials", col(specials)],
        [
          "random bit patterns",
          col(Array.from({ length: n }, () => rng.int(wide ? 2 ** 32 : 2 ** 16))),
        ],
        [
          "random walk of cents",
          col(
            Array.from(
              { length: n },
              () => bitsOfValue(walk = Math.round((walk + rng.unit() - 0.5) * 100) / 100),
            ),
          ),
        ],
        ["repeated", col(Array.from({ length: n }, () => bitsOfValue(0.1)))],
      ];
    }
    case "bool": {
      const col = (values: number[]): Column => ({
        type,
        values: Uint8Array.from(values),
        validity: null,
      });
      return [
        ["empty", col([])],
        ["one true", col([1])],
        ...Array.from(
          { length: 17 },
          (_, k): [string, Column] => [
            `${k + 2} rows`,
            col(Array.from({ length: k + 2 }, () => rng.int(2))),
          ],
        ),
        ["random", col(Array.from({ length: n }, () => rng.int(2)))],
        ["all true", col(Array.from({ length: n }, () => 1))],
      ];
    }
    case "string": {
      const col = (values: string[]): Column => ({ type, values, validity: null });
      const pool = Array.from({ length: 40 }, () => randomString(rng));
      return [
        ["empty", col([])],
        ["one empty string", col([""])],
        ["empty strings", col(Array.from({ length: 100 }, () => ""))],
        ["emoji and unicode", col([...EMOJI, "", "plain", "🧊".repeat(50), "x".repeat(300)])],
        ["random unicode", col(Array.from({ length: n }, () => randomString(rng)))],
        ["low cardinality", col(Array.from({ length: n }, () => rng.pick(pool)))],
        ["exactly 256 distinct", col(Array.from({ length: 512 }, (_, i) => `k${i % 256}`))],
        ["json objects as text", col(jsonObjects(rng, n))],
        ["few json objects as text", col(jsonObjects(rng, 150))],
      ];
    }
  }
}

/** Random dependency columns of `length` rows: one or two, of any type, low cardinality. */
function depsFor(length: number, seed: number): Column[] {
  const rng = new Rng(seed);
  const count = 1 + rng.int(2);
  const deps: Column[] = [];
  for (let d = 0; d < count; d++) {
    const type = rng.pick(TYPES);
    const distinct = 1 + rng.int(20);
    switch (type) {
      case "decimal_wide": {
        const pool = Array.from(
          { length: distinct },
          (_, i) => (i % 2 ? WIDE_LIMIT : 0n) - BigInt(i),
        );
        deps.push({
          type: "decimal",
          values: Array.from({ length }, () => rng.pick(pool)),
          validity: null,
        });
        break;
      }
      case "int64":
      case "timestamp":
      case "date":
      case "time":
      case "duration":
      case "decimal": {
        const pool = Array.from(
          { length: distinct },
          (_, i) => i % 3 === 0 ? rng.int64() : BigInt(rng.int(100)),
        );
        deps.push({
          type,
          values: BigInt64Array.from({ length }, () => rng.pick(pool)),
          validity: null,
        });
        break;
      }
      case "float64": {
        const pool = floatsFromBits(
          Array.from(
            { length: distinct },
            (_, i) => i % 4 === 0 ? 0x7ff8000000000000n + BigInt(i) : rng.int64(),
          ),
        );
        deps.push({
          type,
          values: Float64Array.from({ length }, () => pool[rng.int(pool.length)]!),
          validity: null,
        });
        break;
      }
      case "float32": {
        const pool = Array.from({ length: distinct }, () => rng.next());
        const bits = Uint32Array.from({ length }, () => rng.pick(pool));
        deps.push({ type, values: new Float32Array(bits.buffer), validity: null });
        break;
      }
      case "float16": {
        const pool = Array.from({ length: distinct }, () => rng.int(2 ** 16));
        deps.push({
          type,
          values: Uint16Array.from({ length }, () => rng.pick(pool)),
          validity: null,
        });
        break;
      }
      case "bool":
        deps.push({ type, values: Uint8Array.from({ length }, () => rng.int(2)), validity: null });
        break;
      case "string":
      case "json": {
        const pool = Array.from({ length: distinct }, () => JSON.stringify(randomString(rng)));
        const validity = rng.int(2) === 0
          ? null
          : Uint8Array.from({ length }, () => rng.int(5) === 0 ? 0 : 1);
        deps.push({
          type,
          values: Array.from({ length }, (_, i) => validity?.[i] === 0 ? "" : rng.pick(pool)),
          validity,
        });
        break;
      }
    }
  }
  return deps;
}

/** A copy of a column whose typed array is a view at an offset of a larger buffer. */
function offsetView(column: Column): Column {
  switch (column.type) {
    case "decimal":
      if (!(column.values instanceof BigInt64Array)) {
        return { ...column, values: [...column.values] };
      }
    // falls through: a 64-bit decimal is viewed as any BigInt64Array
    case "int64":
    case "timestamp":
    case "date":
    case "time":
    case "duration": {
      const big = new BigInt64Array(column.values.length + 3);
      big.set(column.values, 2);
      return { ...column, values: big.subarray(2, 2 + column.values.length) };
    }
    case "float64": {
      const big = new Float64Array(column.values.length + 3);
      new Uint8Array(big.buffer, 16).set(
        new Uint8Array(column.values.buffer, column.values.byteOffset, column.values.byteLength),
      );
      return { ...column, values: big.subarray(2, 2 + column.values.length) };
    }
    case "float32": {
      const big = new Float32Array(column.values.length + 3);
      new Uint8Array(big.buffer, 8).set(
        new Uint8Array(column.values.buffer, column.values.byteOffset, column.values.byteLength),
      );
      return { ...column, values: big.subarray(2, 2 + column.values.length) };
    }
    case "float16": {
      const big = new Uint16Array(column.values.length + 3);
      big.set(column.values, 2);
      return { ...column, values: big.subarray(2, 2 + column.values.length) };
    }
    case "bool": {
      const big = new Uint8Array(column.values.length + 5);
      big.set(column.values, 3);
      return { ...column, values: big.subarray(3, 3 + column.values.length) };
    }
    case "string":
    case "json":
      return { ...column, values: [...column.values] };
  }
}

function snapshot(column: Column): unknown {
  if (column.type === "float64") return bitsOf(column.values);
  if (column.type === "float32") {
    return [...new Uint32Array(column.values.slice().buffer)];
  }
  if (column.type === "string") return [...column.values];
  return [...column.values];
}

/** Asserts two columns hold the same values (floats bit for bit). */
function assertSameValues(actual: Column, expected: Column, label: string): void {
  assert.equal(actual.type, expected.type, `${label}: type`);
  assert.equal(actual.values.length, expected.values.length, `${label}: length`);
  assert.equal(actual.validity, null, `${label}: validity`);
  assert.deepEqual(snapshot(actual), snapshot(expected), `${label}: values`);
}

/** Asserts a lossy decode stays within the documented bound of its level. */
function assertWithinBound(predictor: Predictor, actual: Column, expected: Column, label: string) {
  const level = QUANTIZATIONS.find((q) =>
    QUANTIZER_FOR[q] === predictor || NARROW_QUANTIZER_FOR[q] === predictor
  );
  assert.ok(level !== undefined, `${predictor.id} is lossy but has no documented bound`);
  assert.equal(actual.type, "float64");
  assert.equal(actual.values.length, expected.values.length, `${label}: length`);
  const x = expected.values as Float64Array;
  const y = actual.values as Float64Array;
  const xb = bitsOf(x);
  const yb = bitsOf(y);
  for (let i = 0; i < x.length; i++) {
    const xi = x[i]!;
    if (!Number.isFinite(xi) || xi === 0) {
      assert.equal(yb[i], xb[i], `${label}: row ${i} (${xi}) kept bit for bit`);
      continue;
    }
    assert.equal(yb[i]! >> 63n, xb[i]! >> 63n, `${label}: row ${i} keeps its sign`);
    const err = Math.abs(y[i]! - xi);
    assert.ok(
      err <= maxQuantizationError(level, xi),
      `${label}: row ${i}: ${xi} became ${y[i]}, error ${err}`,
    );
  }
}

/** Asserts `fn` throws a well-formed `FormatError` (optionally with `code`). */
function assertFormatError(fn: () => unknown, label: string, code?: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(
      err instanceof FormatError,
      `${label}: expected a FormatError, got ${err instanceof Error ? err.name : typeof err}: ${
        String(err)
      }`,
    );
    if (code !== undefined) assert.equal(err.code, code, `${label}: ${err.message}`);
    assert.match(err.message, /^Cannot /, `${label}: message names the action`);
    assert.doesNotMatch(err.message, /\.$/, `${label}: message has no final period`);
    return true;
  }, label);
}

/** What `decode` returns, or the FormatError it throws (any other error fails the test). */
function decodeOrError<T>(label: string, decode: () => T): T | FormatError {
  try {
    return decode();
  } catch (err) {
    assert.ok(
      err instanceof FormatError,
      `${label}: expected a FormatError, got ${err instanceof Error ? err.name : typeof err}: ${
        String(err)
      }`,
    );
    return err;
  }
}

/**
 * Decodes bytes, damaged or not: a FormatError, or exactly `length` values of the
 * field's type. A dictionary decoder's `decodeCoded` of a string field agrees: the
 * same FormatError message, or the same rows as codes within the dictionary.
 */
function checkDecode(
  predictor: Predictor,
  bytes: Uint8Array,
  length: number,
  field: Field,
  deps: readonly Column[],
  label: string,
): void {
  const out = decodeOrError(label, () => predictor.decode(bytes, length, { field, deps }));
  if (predictor.decodeCoded && field.type === "string") {
    const coded = decodeOrError(
      label,
      () => predictor.decodeCoded!(bytes, length, { field, deps }),
    );
    if (out instanceof FormatError || coded instanceof FormatError) {
      assert.ok(out instanceof FormatError, `${label}: decode fails too`);
      assert.ok(coded instanceof FormatError, `${label}: decodeCoded fails too`);
      assert.equal(coded.message, out.message, `${label}: with the same message`);
      return;
    }
    assert.equal(coded.codes.length, length, `${label}: a code per row`);
    assert.ok(coded.codes.every((c) => c < coded.dictionary.length), `${label}: codes in range`);
    assert.deepEqual(rowsOfCodes(coded.codes, coded.dictionary), out.values, label);
  }
  if (out instanceof FormatError) return;
  assert.equal(out.type, field.type, `${label}: a successful decode has the field's type`);
  assert.equal(out.values.length, length, `${label}: a successful decode has length values`);
}

/** A string column without nulls as codes into its distinct values; any other as it is. */
function asCoded(column: Column): DecodedColumn {
  if (column.type !== "string" || column.validity !== null) return column;
  const dictionary = [...new Set(column.values)];
  const codeOf = new Map(dictionary.map((v, i) => [v, i]));
  const codes = Uint32Array.from(column.values, (v) => codeOf.get(v)!);
  return { type: "string", coded: { codes, dictionary }, validity: null };
}

/**
 * Runs the conformance checks of one predictor as steps of a test.
 *
 * @param t The test context the steps run in.
 * @param predictor The predictor under test.
 */
export async function runPredictorConformance(
  t: Deno.TestContext,
  predictor: Predictor,
): Promise<void> {
  const types = TYPES.filter((type) => predictor.matches(fieldOf(type)));

  await t.step("has a stable id, flags, and at least one type", () => {
    assert.match(predictor.id, /^[a-z][a-z0-9_]*$/);
    assert.equal(typeof predictor.lossy, "boolean");
    assert.equal(typeof predictor.usesDeps, "boolean");
    assert.ok(Object.isFrozen(predictor), "the predictor object is frozen");
    assert.ok(types.length > 0, "it matches some column type");
  });

  for (const [ti, type] of types.entries()) {
    const field = fieldOf(type);
    const cases = columnsOf(type, 0x9e3779b9 ^ (ti * 7919) ^ predictor.id.length);
    const depsOf = (column: Column, salt: number): Column[] =>
      !predictor.usesDeps
        ? []
        : salt % 2 === 1 && (column.type === "string" || column.type === "json")
        // Every other text case also gets a dependency that holds its values among
        // other words (as an airport's name holds its city), for text_within.
        ? [{ type: "string", values: column.values.map((v) => `Port ${v} Field`), validity: null }]
        : depsFor(column.values.length, 0x5eed + salt);
    const encodeOf = (column: Column, deps: readonly Column[]) =>
      predictor.encode(column, { field, deps, warn: () => {} });

    await t.step(`${type}: decode(encode(x)) gives x back`, () => {
      let encoded = 0;
      for (const [ci, [label, column]] of cases.entries()) {
        const deps = depsOf(column, ci);
        const before = snapshot(column);
        const bytes = encodeOf(column, deps);
        assert.deepEqual(snapshot(column), before, `${label}: encode leaves its input untouched`);
        if (bytes === null) continue; // declined: the writer falls back to another predictor
        encoded++;
        assert.ok(bytes instanceof Uint8Array, `${label}: encode returns bytes`);
        const copy = bytes.slice();
        const out = predictor.decode(bytes, column.values.length, { field, deps });
        assert.deepEqual(bytes, copy, `${label}: decode leaves its input untouched`);
        if (predictor.lossy) {
          assertWithinBound(predictor, out, column, label);
          const again = predictor.decode(encodeOf(out, deps)!, out.values.length, { field, deps });
          assertSameValues(again, out, `${label}: quantizing twice`);
        } else {
          assertSameValues(out, column, label);
        }
      }
      assert.ok(encoded > 0, "at least one case is encoded");
    });

    await t.step(`${type}: encode is deterministic and accepts views at an offset`, () => {
      for (const [ci, [label, column]] of cases.entries()) {
        const deps = depsOf(column, ci);
        const first = encodeOf(column, deps);
        const view = offsetView(column);
        assert.deepEqual(encodeOf(column, deps), first, `${label}: same bytes twice`);
        assert.deepEqual(encodeOf(view, deps), first, `${label}: same bytes from a view`);
        if (first === null) continue;
        const backing = new Uint8Array(first.length + 7);
        backing.set(first, 3);
        const out = predictor.decode(backing.subarray(3, 3 + first.length), column.values.length, {
          field,
          deps,
        });
        assertSameValues(
          out,
          predictor.decode(first, column.values.length, { field, deps }),
          label,
        );
      }
    });

    await t.step(`${type}: decode throws a FormatError on a wrong length`, () => {
      for (const [ci, [label, column]] of cases.entries()) {
        const deps = depsOf(column, ci);
        const bytes = encodeOf(column, deps);
        if (bytes === null) continue;
        const n = column.values.length;
        for (const wrong of [n + 1, n - 1, n * 2 + 3, 2 ** 40, 1.5, Number.NaN, -1]) {
          if (wrong === n || (n === 0 && wrong === 0)) continue;
          // Dependencies must have `length` rows: give them the wrong length too.
          const wrongDeps = predictor.usesDeps && Number.isSafeInteger(wrong) && wrong >= 0 &&
              wrong < 1e6
            ? depsFor(wrong, ci)
            : deps;
          assertFormatError(
            () => predictor.decode(bytes, wrong, { field, deps: wrongDeps }),
            `${label}: length ${wrong} instead of ${n}`,
            "CORRUPT",
          );
        }
      }
    });

    await t.step(
      `${type}: decode throws a FormatError on every truncation and a trailing byte`,
      () => {
        for (const [ci, [label, column]] of cases.entries()) {
          if (column.values.length > 300) continue; // every cut of the small cases
          const deps = depsOf(column, ci);
          const bytes = encodeOf(column, deps);
          if (bytes === null) continue;
          const n = column.values.length;
          for (let cut = 0; cut < bytes.length; cut++) {
            assertFormatError(
              () => predictor.decode(bytes.subarray(0, cut), n, { field, deps }),
              `${label}: cut to ${cut} of ${bytes.length} bytes`,
              "CORRUPT",
            );
          }
          for (const extra of [0, 0x80, 0xff]) {
            assertFormatError(
              () => predictor.decode(Uint8Array.of(...bytes, extra), n, { field, deps }),
              `${label}: trailing byte ${extra}`,
              "CORRUPT",
            );
          }
        }
      },
    );

    await t.step(
      `${type}: decode of garbage and bit flips gives a FormatError or length values`,
      () => {
        const rng = new Rng(0xbad ^ ti);
        for (let g = 0; g < 300; g++) {
          const size = rng.pick([0, 1, 2, 3, 5, 9, 17, 64, 500]);
          const garbage = Uint8Array.from({ length: size }, () => rng.int(256));
          // A plausible row count makes the decoder go further than the first check.
          if (size > 0 && rng.int(2) === 0) garbage[0] = rng.int(40);
          const length = rng.int(2) === 0 ? (garbage[0] ?? 0) : rng.int(100);
          const deps = predictor.usesDeps ? depsFor(length, g) : [];
          checkDecode(predictor, garbage, length, field, deps, `garbage ${g} (${size} bytes)`);
        }
        for (const [ci, [label, column]] of cases.entries()) {
          if (column.values.length > 300) continue;
          const deps = depsOf(column, ci);
          const bytes = encodeOf(column, deps);
          if (bytes === null || bytes.length === 0) continue;
          for (let f = 0; f < 64; f++) {
            const damaged = bytes.slice();
            const at = rng.int(bytes.length);
            damaged[at]! ^= 1 << rng.int(8);
            checkDecode(
              predictor,
              damaged,
              column.values.length,
              field,
              deps,
              `${label}: flip at ${at}`,
            );
          }
        }
      },
    );

    if (predictor.decodeCoded && type === "string") {
      await t.step(
        `${type}: decodeCoded gives decode's rows as codes, from coded dependencies too`,
        () => {
          for (const [ci, [label, column]] of cases.entries()) {
            const deps = depsOf(column, ci);
            const bytes = encodeOf(column, deps);
            if (bytes === null) continue;
            const n = column.values.length;
            checkDecode(predictor, bytes, n, field, deps, label);
            if (predictor.codedDeps) {
              // Coded dependencies (as a thaw's decoding Worker gives them) read alike.
              const coded = predictor.decodeCoded!(bytes, n, { field, deps: deps.map(asCoded) });
              assert.deepEqual(
                rowsOfCodes(coded.codes, coded.dictionary),
                predictor.decode(bytes, n, { field, deps }).values,
                `${label}: coded dependencies`,
              );
            }
          }
        },
      );
    }

    if (predictor.usesDeps) {
      await t.step(
        `${type}: decode throws a FormatError when dependencies are missing or short`,
        () => {
          const [, column] = cases.find(([, c]) => c.values.length > 1)!;
          const deps = depsOf(column, 1);
          const bytes = encodeOf(column, deps)!;
          const n = column.values.length;
          assertFormatError(
            () => predictor.decode(bytes, n, { field, deps: [] }),
            "no deps",
            "CORRUPT",
          );
          assertFormatError(
            () => predictor.decode(bytes, n, { field, deps: depsFor(n - 1, 3) }),
            "short deps",
            "CORRUPT",
          );
        },
      );
    }
  }

  await t.step("refuses column types it does not match", () => {
    for (const type of TYPES.filter((ty) => !types.includes(ty))) {
      const [, column] = columnsOf(type, 1)[1]!;
      assertFormatError(
        () => predictor.encode(column, { field: fieldOf(type), deps: [], warn: () => {} }),
        `encode a ${type} column`,
        "BAD_ARGUMENT",
      );
      assertFormatError(
        () => predictor.decode(Uint8Array.of(0), 0, { field: fieldOf(type), deps: [] }),
        `decode a ${type} column`,
        "CORRUPT",
      );
    }
  });
}

for (const predictor of PREDICTORS) {
  Deno.test(`${predictor.id} conforms to the predictor contract`, async (t) => {
    await runPredictorConformance(t, predictor);
  });
}
