/**
 * The `ts_delta_s` predictor (timestamp): deltas divided by their greatest
 * common divisor. Timestamps taken on a grid (every minute, in microseconds)
 * have deltas that are all multiples of the grid step; dividing by the step
 * turns them into 0, 1, 2… that fit one byte plane. Exact for any input: the
 * scale divides every delta, and a series that goes backwards still
 * round-trips (with one `NON_MONOTONIC_TIMESTAMPS` warning per block).
 *
 * Layout (FORMAT.md §4):
 * `[varint n][i64 first][u64 scale ≥ 1][u8 width][width byte planes of zigzag(d[i] / scale)]`
 * for `i` in `1..n-1`, where `d[i] = v[i] - v[i-1]` wrapping mod 2^64 (read as
 * signed) and `scale` is the gcd of every `|d[i]|` (1 when all are 0, or
 * when `n < 2`). An empty block stores `first = 0`, `scale = 1`.
 *
 * Speed: when every delta is below 2^51 in magnitude (always, for real
 * clocks), the gcd and the divisions run on `number`s; otherwise on `bigint`s.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { BigIntColumn, Column, Field } from "../column.ts";
import { FormatError } from "../errors.ts";
import { checkDecodeField, expectColumn, openBlock, rowsToDecode } from "./_common.ts";
import {
  bigIntsFromWords,
  deltasOf,
  planesBlock,
  prefixSumInPlace,
  readPlanes,
  unzigzagInPlace,
  wordsOf,
  zigzag64,
  zigzagInPlace,
} from "./_ints.ts";
import type { DecodeContext, EncodeContext, Predictor } from "./predictor.ts";

const ID = "ts_delta_s";
const TIMESTAMP: ReadonlySet<Field["type"]> = new Set(["timestamp"]);
const TWO_32 = 4294967296;
/** Deltas with a high word in `[-2^19, 2^19)` are below 2^51 in magnitude. */
const SMALL_HI = 0x80000;

function matches(field: Field): boolean {
  return field.type === "timestamp";
}

function gcd(a: number, b: number): number {
  while (b !== 0) {
    const t = a % b;
    a = b;
    b = t;
  }
  return a;
}

function gcdBig(a: bigint, b: bigint): bigint {
  while (b !== 0n) {
    const t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/** Index of the first row earlier than the row before it, or -1. */
function firstDecrease(words: Uint32Array): number {
  for (let i = 2; i < words.length; i += 2) {
    const hi = words[i + 1]! | 0;
    const prevHi = words[i - 1]! | 0;
    if (hi < prevHi || (hi === prevHi && words[i]! < words[i - 2]!)) return i >>> 1;
  }
  return -1;
}

function encode(column: Column, context: EncodeContext): Uint8Array {
  const { values } = expectColumn(ID, column, TIMESTAMP) as BigIntColumn;
  const n = values.length;
  if (n === 0) return planesBlock(0, [0n, 1n], new Uint32Array(0));
  const src = wordsOf(values);
  const decrease = firstDecrease(src);
  if (decrease >= 0) {
    context.warn({
      code: "NON_MONOTONIC_TIMESTAMPS",
      message:
        `Timestamps of column '${context.field.name}' go backwards at row ${decrease} of the block; ${ID} still stores them exactly`,
      column: context.field.name,
    });
  }
  // d holds v[i] - v[i-1] for i ≥ 1 (deltasOf's first entry, v[0] itself, is dropped).
  const d = deltasOf(src).subarray(2);
  let small = true;
  for (let i = 1; i < d.length; i += 2) {
    const hi = d[i]! | 0;
    if (hi < -SMALL_HI || hi >= SMALL_HI) {
      small = false;
      break;
    }
  }
  return small ? encodeSmall(values[0]!, d) : encodeBig(values[0]!, d);
}

/** Every delta is below 2^51 in magnitude: exact `number` arithmetic. */
function encodeSmall(first: bigint, d: Uint32Array): Uint8Array {
  const m = d.length >>> 1;
  let g = 0;
  for (let i = 0; i < d.length && g !== 1; i += 2) {
    const x = Math.abs((d[i + 1]! | 0) * TWO_32 + d[i]!);
    // gcd(0, g) and gcd(g, g) are g: most deltas of a sorted column (0, or its step)
    // skip the divisions.
    if (x !== 0 && x !== g) g = gcd(x, g);
  }
  if (g > 1) {
    for (let i = 0; i < d.length; i += 2) {
      const q = ((d[i + 1]! | 0) * TWO_32 + d[i]!) / g;
      const z = q >= 0 ? 2 * q : -2 * q - 1; // < 2^52: exact
      d[i] = z;
      d[i + 1] = Math.floor(z / TWO_32);
    }
  } else {
    zigzagInPlace(d);
  }
  return planesBlock(m + 1, [first, BigInt(Math.max(g, 1))], d);
}

/** Some delta is 2^51 or more in magnitude: `bigint` arithmetic. */
function encodeBig(first: bigint, d: Uint32Array): Uint8Array {
  const m = d.length >>> 1;
  const big = bigIntsFromWords(d.slice());
  let g = 0n;
  for (let i = 0; i < m && g !== 1n; i++) {
    const v = big[i]!;
    g = gcdBig(v < 0n ? -v : v, g);
  }
  if (g > 1n) {
    const z = new BigUint64Array(m);
    for (let i = 0; i < m; i++) z[i] = zigzag64(big[i]! / g);
    d = wordsOf(new BigInt64Array(z.buffer));
  } else {
    g = 1n;
    zigzagInPlace(d);
  }
  return planesBlock(m + 1, [first, g], d);
}

function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
  checkDecodeField(ID, context.field, matches(context.field));
  const reader = openBlock(ID, bytes, length, context.field);
  const first = reader.i64("first timestamp");
  const scaleAt = reader.offset;
  const scale = BigInt.asUintN(64, reader.i64("delta scale"));
  const m = Math.max(0, length - 1);
  // The first `rows` values need the first `rows - 1` deltas only.
  const rows = rowsToDecode(length, context.prefix);
  const q = readPlanes(reader, m, Math.max(0, rows - 1));
  reader.end();
  if (scale === 0n) {
    throw new FormatError(
      "CORRUPT",
      `Cannot decode ${ID} block of column '${context.field.name}': expected a delta scale of at least 1, found 0`,
      { column: context.field.name, offset: scaleAt },
    );
  }
  if (rows === 0) return { type: "timestamp", values: new BigInt64Array(0), validity: null };
  const summed = sumSmall(q, first, scale, rows);
  if (summed !== null) return { type: "timestamp", values: summed, validity: null };
  unzigzagInPlace(q);
  if (scale !== 1n) multiplyInPlace(q, scale);
  const words = new Uint32Array(2 * rows);
  const firstWords = wordsOf(BigInt64Array.of(first));
  words[0] = firstWords[0]!;
  words[1] = firstWords[1]!;
  words.set(q, 2);
  prefixSumInPlace(words);
  return { type: "timestamp", values: bigIntsFromWords(words), validity: null };
}

/**
 * The first `rows` timestamps in one pass over the zigzagged deltas `q` (unzigzag,
 * times `scale`, running sum) on `number`s, or null as soon as a value or a product
 * might leave ±(2^53 − 1): then the wrapping 64-bit passes below decode the block.
 * Within that range every step is exact, so the values are the same.
 */
function sumSmall(
  q: Uint32Array,
  first: bigint,
  scale: bigint,
  rows: number,
): BigInt64Array | null {
  if (first > BigInt(Number.MAX_SAFE_INTEGER) || first < -BigInt(Number.MAX_SAFE_INTEGER)) {
    return null;
  }
  if (scale >= 2n ** 52n) return null;
  const s = Number(scale);
  let acc = Number(first);
  const words = new Uint32Array(2 * rows);
  words[0] = acc >>> 0;
  words[1] = Math.floor(acc / TWO_32);
  for (let i = 1; i < rows; i++) {
    const lo = q[2 * i - 2]!;
    const hi = q[2 * i - 1]!;
    // Zigzagged deltas below 2^52: exact as numbers.
    if (hi >= 0x100000) return null;
    const z = hi * TWO_32 + lo;
    const d = (lo & 1) === 0 ? z / 2 : -(z + 1) / 2;
    const step = d * s;
    acc += step;
    if (!Number.isSafeInteger(step) || !Number.isSafeInteger(acc)) return null;
    words[2 * i] = acc >>> 0;
    words[2 * i + 1] = Math.floor(acc / TWO_32);
  }
  return bigIntsFromWords(words);
}

/** Multiplies signed 64-bit values by `scale`, wrapping mod 2^64. */
function multiplyInPlace(q: Uint32Array, scale: bigint): void {
  const s = scale < 2n ** 52n ? Number(scale) : Infinity;
  for (let i = 0; i < q.length; i += 2) {
    const hi = q[i + 1]! | 0;
    const p = (hi * TWO_32 + q[i]!) * s;
    if (hi > -SMALL_HI && hi < SMALL_HI && Number.isSafeInteger(p)) {
      q[i] = p;
      q[i + 1] = Math.floor(p / TWO_32);
    } else {
      const v = BigInt.asUintN(64, ((BigInt(hi) << 32n) | BigInt(q[i]!)) * scale);
      q[i] = Number(v & 0xffffffffn);
      q[i + 1] = Number(v >> 32n);
    }
  }
}

/**
 * Delta ÷ gcd + zigzag + byte planes, for timestamps on a regular grid.
 *
 * @example Round-trip minute-resolution microsecond timestamps
 * ```ts
 * import assert from "node:assert/strict";
 * import { tsDeltaS } from "./ts_delta_s.ts";
 * const field = { name: "ts", type: "timestamp", nullable: false, unit: "us" } as const;
 * const values = BigInt64Array.of(1_700_000_000_000_000n, 1_700_000_060_000_000n, 1_700_000_180_000_000n);
 * const column = { type: "timestamp", values, validity: null } as const;
 * const bytes = tsDeltaS.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(tsDeltaS.decode(bytes, 3, { field, deps: [] }).values, values);
 * ```
 */
export const tsDeltaS: Predictor = Object.freeze(
  { id: ID, lossy: false, usesDeps: false, matches, encode, decode } satisfies Predictor,
);
