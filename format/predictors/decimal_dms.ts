/**
 * The `decimal_dms` predictor (float64, lossless): decimals that were computed
 * from a sexagesimal value and rounded, stored as the whole number of units they
 * came from. An airport's latitude `31.95376472` is 31° 57′ 13.553″, that is
 * 115,033,553 thousandths of an arcsecond divided by 3,600,000 and rounded to 8
 * decimals: the integer has ~27 bits of information where the decimal's digits
 * have ~33. Hours written as decimals (`7.8333` = 7 h 50 min) are the same
 * with minutes.
 *
 * For one divisor `D` per block (60, 600, 3600, 36000, 360000 or 3600000: minutes
 * to thousandths of a second per unit) every value `x` is `m / 10^d` with its
 * fewest decimals `d ≤ 9` (the check `decimal_frame` makes) and is stored as the
 * integer `S` with `round(|S| · 10^d / D) = |m|` (halves away from zero, the sign of
 * `S`). The encoder keeps `S` only when that computation gives back `m` exactly;
 * a value for which no `S` does (NaN, -0, an infinity, a value off the grid) is an
 * exception stored as its IEEE bits. The block picks the smallest `D` that leaves
 * at most one row in 64 an exception, and declines when none does (a `D` of
 * `10^k` or more, k the most decimals of any value, is not tried: such a grid
 * holds every decimal and only adds digits). The decoder
 * computes `round(|S| · 10^d / D)` in exact integer steps (`|S| = qD + r`, then
 * `r · 10^d < 2^53`) and divides by `10^d` as `decimal_frame` does, so it gives
 * back the bits the encoder checked.
 *
 * A value is tried at the block's largest `d`, k, first (31.9537647 printed for
 * 31.95376470 comes from the same grid), then at its own.
 *
 * Layout (FORMAT.md §4): `[varint n][varint D][u8 k][u8 mode]`, mode 0 when every
 * row has k decimals, mode 1 followed by `[u8 × n: k − d]`, then
 * `[varint e][e × (varint row gap, 8 bytes: IEEE bits, little-endian)]`
 * `[frame_zigzag of S]` (0 in exception rows, their `k − d` byte 0).
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { Column, Field } from "../column.ts";
import { FormatError } from "../errors.ts";
import { checkDecodeField, expectColumn, openBlock } from "./_common.ts";
import { varintSize, writeVarint } from "./_ints.ts";
import { frameZigzag } from "./frame_zigzag.ts";
import type { DecodeContext, EncodeContext, Predictor } from "./predictor.ts";

const ID = "decimal_dms";
/** Most decimals a value may have (as `decimal_frame`). */
const MAX_SCALE = 9;
const POW10 = Array.from({ length: MAX_SCALE + 1 }, (_, k) => 10 ** k);
/** Divisors tried, smallest first: minutes, tenths of minutes, seconds … thousandths of seconds. */
const DIVISORS: readonly number[] = [60, 600, 3600, 36_000, 360_000, 3_600_000];
/** At most one row in this many may be an exception. */
const EXCEPTION_RATE = 64;
const FLOAT_TYPES: ReadonlySet<Column["type"]> = new Set(["float64"]);
const INT_FIELD: Field = { name: "S", type: "int64", nullable: false };

function matches(field: Field): boolean {
  return field.type === "float64";
}

/** `round(s · 10^d / D)` for `s ≥ 0`, halves up, exact while the result is a safe integer. */
function unitsToDecimal(s: number, d: number, divisor: number): number {
  const p = POW10[d]!;
  const whole = divide(s, divisor);
  // rest < D ≤ 3.6e6 and p ≤ 1e9, so rest · p < 2^53: exact.
  const part = divide(whole.rest * p, divisor);
  return whole.quotient * p + part.quotient + (2 * part.rest >= divisor ? 1 : 0);
}

/** Exact floor division of safe integers `a ≥ 0` by `b > 0`. */
function divide(a: number, b: number): { quotient: number; rest: number } {
  let quotient = Math.floor(a / b);
  let rest = a - quotient * b;
  // The float quotient may round across an integer: bring the remainder into [0, b).
  if (rest < 0) {
    quotient--;
    rest += b;
  } else if (rest >= b) {
    quotient++;
    rest -= b;
  }
  return { quotient, rest };
}

/** The fewest decimals of `x` and its integer at that scale, or null. */
function decimalOf(x: number): { d: number; m: number } | null {
  if (!Number.isFinite(x) || Object.is(x, -0)) return null;
  for (let d = 0; d <= MAX_SCALE; d++) {
    const p = POW10[d]!;
    const m = Math.round(x * p);
    if (Math.abs(m) <= Number.MAX_SAFE_INTEGER && m / p === x) return { d, m };
  }
  return null;
}

/** The signed unit count that gives back `m` at `d` decimals under `divisor`, or null. */
function unitsOf(m: number, d: number, divisor: number): number | null {
  const magnitude = Math.abs(m);
  const guess = Math.round(magnitude * divisor / POW10[d]!);
  for (const s of [guess, guess - 1, guess + 1]) {
    if (s < 0 || !Number.isSafeInteger(s)) continue;
    if (unitsToDecimal(s, d, divisor) === magnitude) return m < 0 ? -s : s;
  }
  return null;
}

function encode(column: Column, _context: EncodeContext): Uint8Array | null {
  const { values } = expectColumn(ID, column, FLOAT_TYPES) as { values: Float64Array };
  const n = values.length;
  if (n === 0) return null;
  const decimals = new Array<{ d: number; m: number } | null>(n);
  for (let i = 0; i < n; i++) decimals[i] = decimalOf(values[i]!);
  const allowed = Math.floor(n / EXCEPTION_RATE);
  let k = 0;
  for (const decimal of decimals) if (decimal !== null) k = Math.max(k, decimal.d);
  for (const divisor of DIVISORS) {
    // A grid finer than every value's last digit holds any decimal: no gain, only digits.
    if (divisor >= POW10[k]!) break;
    const units = new BigInt64Array(n);
    const scales = new Uint8Array(n).fill(k);
    const exceptions: number[] = [];
    for (let i = 0; i < n && exceptions.length <= allowed; i++) {
      const decimal = decimals[i]!;
      if (decimal === null) {
        exceptions.push(i);
        continue;
      }
      // At the block's scale first (a value printed with a trailing zero, 31.9537647
      // for 31.95376470, comes from the same grid), then at its own.
      const atK = decimal.m * POW10[k - decimal.d]!;
      let s = Number.isSafeInteger(atK) ? unitsOf(atK, k, divisor) : null;
      if (s === null && decimal.d < k) {
        s = unitsOf(decimal.m, decimal.d, divisor);
        scales[i] = decimal.d;
      }
      if (s === null) exceptions.push(i);
      else units[i] = BigInt(s);
    }
    if (exceptions.length <= allowed) {
      for (const row of exceptions) scales[row] = k;
      return layout(values, { divisor, k, scales, units, exceptions });
    }
  }
  return null;
}

/** What one block stores: see the layout in the module header. */
interface Grid {
  readonly divisor: number;
  /** The most decimals of any value. */
  readonly k: number;
  /** Each row's decimals (k in exception rows). */
  readonly scales: Uint8Array;
  /** Each row's units (0 in exception rows). */
  readonly units: BigInt64Array;
  readonly exceptions: readonly number[];
}

function layout(values: Float64Array, grid: Grid): Uint8Array {
  const { divisor, k, scales, units, exceptions } = grid;
  const n = values.length;
  const body = frameZigzag.encode({ type: "int64", values: units, validity: null }, {
    field: INT_FIELD,
    deps: [],
    warn: () => {},
  })!;
  const allAtK = scales.every((d) => d === k);
  let gaps = 0;
  let last = 0;
  for (const row of exceptions) {
    gaps += varintSize(row - last);
    last = row;
  }
  const out = new Uint8Array(
    varintSize(n) + varintSize(divisor) + 2 + (allAtK ? 0 : n) + varintSize(exceptions.length) +
      gaps + 8 * exceptions.length + body.length,
  );
  let at = writeVarint(out, 0, n);
  at = writeVarint(out, at, divisor);
  out[at++] = k;
  out[at++] = allAtK ? 0 : 1;
  if (!allAtK) { for (let i = 0; i < n; i++) out[at++] = k - scales[i]!; }
  at = writeVarint(out, at, exceptions.length);
  const bits = new DataView(out.buffer);
  last = 0;
  for (const row of exceptions) {
    at = writeVarint(out, at, row - last);
    last = row;
    bits.setFloat64(at, values[row]!, true);
    at += 8;
  }
  out.set(body, at);
  return out;
}

function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
  checkDecodeField(ID, context.field, matches(context.field));
  const what = `${ID} block of column '${context.field.name}'`;
  const corrupt = (detail: string) =>
    new FormatError("CORRUPT", `Cannot decode ${what}: ${detail}`, {
      column: context.field.name,
    });
  const reader = openBlock(ID, bytes, length, context.field);
  const divisor = reader.varint("divisor");
  if (!DIVISORS.includes(divisor)) {
    throw corrupt(`divisor is ${divisor}, expected one of ${DIVISORS.join(", ")}`);
  }
  const k = reader.u8("largest scale");
  if (k > MAX_SCALE) throw corrupt(`scale is ${k}, at most ${MAX_SCALE} is valid`);
  const mode = reader.u8("scale mode");
  if (mode > 1) throw corrupt(`scale mode is ${mode}, expected 0 or 1`);
  const offsets = mode === 0 ? new Uint8Array(length) : reader.bytes(length, "scale offsets");
  const exceptionCount = reader.varint("exception count");
  if (exceptionCount > length) {
    throw corrupt(`${exceptionCount} exceptions in ${length} rows`);
  }
  const exceptions = new Map<number, number>();
  let row = 0;
  for (let e = 0; e < exceptionCount; e++) {
    row += reader.varint("exception row gap");
    if (row >= length || (e > 0 && exceptions.has(row))) {
      throw corrupt(`exception ${e} names row ${row} of ${length}`);
    }
    exceptions.set(
      row,
      new DataView(reader.bytes(8, "exception bits").slice().buffer).getFloat64(0, true),
    );
  }
  const rest = bytes.subarray(reader.offset);
  const units = frameZigzag.decode(rest, length, { field: INT_FIELD, deps: [] })
    .values as BigInt64Array;
  const values = new Float64Array(length);
  for (let i = 0; i < length; i++) {
    const exception = exceptions.get(i);
    if (exception !== undefined) {
      values[i] = exception;
      continue;
    }
    const offset = offsets[i]!;
    if (offset > k) throw corrupt(`row ${i} has ${k - offset} decimals`);
    const d = k - offset;
    const s = Number(units[i]!);
    if (!Number.isSafeInteger(s)) throw corrupt(`row ${i} holds ${units[i]} units, beyond 2^53`);
    const m = unitsToDecimal(Math.abs(s), d, divisor);
    if (!Number.isSafeInteger(m)) {
      throw corrupt(`row ${i} decodes beyond the exact range of a decimal`);
    }
    values[i] = (s < 0 ? -m : m) / POW10[d]!;
  }
  return { type: "float64", values, validity: null };
}

/**
 * Sexagesimal decimals (degrees, hours) as the whole units they were computed from.
 *
 * @example Latitudes converted from degrees, minutes and seconds
 * ```ts
 * import assert from "node:assert/strict";
 * import { decimalDms } from "./decimal_dms.ts";
 * const field = { name: "lat", type: "float64", nullable: false } as const;
 * const values = new Float64Array([31.95376472, 30.68586111, -104.5698933, 0.5]);
 * const column = { type: "float64" as const, values, validity: null };
 * const bytes = decimalDms.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(decimalDms.decode(bytes, 4, { field, deps: [] }).values, values);
 * ```
 */
export const decimalDms: Predictor = Object.freeze(
  { id: ID, lossy: false, usesDeps: false, matches, encode, decode } satisfies Predictor,
);
