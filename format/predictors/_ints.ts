/**
 * Private integer helpers of the predictors: 64-bit values as pairs of 32-bit
 * words, wrapping arithmetic mod 2^64, zigzag, byte planes and varints.
 *
 * Why words: reading a `BigInt64Array` element allocates a `bigint`, and
 * `bigint` arithmetic is slow. Viewing the same memory as a `Uint32Array`
 * (`words[2i]` = low 32 bits, `words[2i + 1]` = high 32 bits) lets every
 * delta, zigzag and plane loop run on small integers, exactly, for the whole
 * int64 range (INT64_MIN and INT64_MAX included) and with no fast path to
 * fall out of. On a little-endian platform (every platform Deno ships for) the
 * view costs nothing; elsewhere {@linkcode wordsOf} copies through a `DataView`.
 *
 * Byte planes (FORMAT.md §4): `[u8 width w][plane 0: byte 0 of every value]
 * [plane 1: byte 1 of every value] … [plane w-1]`, bytes numbered from the
 * least significant. `w` is the number of bytes the largest value needs, and
 * at least 1 when there is at least one value, so a decoder's allocation is
 * always bounded by the bytes it was given.
 *
 * Pure: no I/O, no globals beyond constants.
 *
 * @module
 */
import type { ByteReader } from "../_bytes.ts";
import { FormatError } from "../errors.ts";

/** Whether typed arrays use little-endian memory on this platform. */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

const TWO_32 = 4294967296;

/**
 * Returns the values' 64-bit patterns as words (`[low, high]` per value).
 *
 * On little-endian platforms this is a view of the same memory: callers must
 * not write to it.
 *
 * @param values Integers or floats.
 * @returns `2 * values.length` words.
 */
export function wordsOf(values: BigInt64Array | Float64Array): Uint32Array {
  if (LITTLE_ENDIAN) return new Uint32Array(values.buffer, values.byteOffset, values.length * 2);
  const view = new DataView(values.buffer, values.byteOffset, values.byteLength);
  const words = new Uint32Array(values.length * 2);
  for (let i = 0; i < values.length; i++) {
    // Native (big-endian) memory: the high word comes first.
    words[2 * i + 1] = view.getUint32(8 * i, false);
    words[2 * i] = view.getUint32(8 * i + 4, false);
  }
  return words;
}

/**
 * Returns the int64 values whose 64-bit patterns are `words` (takes ownership of `words`).
 *
 * @param words `[low, high]` per value, in a buffer this call may reuse.
 * @returns `words.length / 2` values.
 */
export function bigIntsFromWords(words: Uint32Array): BigInt64Array {
  if (LITTLE_ENDIAN && words.byteOffset % 8 === 0) {
    return new BigInt64Array(words.buffer, words.byteOffset, words.length >>> 1);
  }
  const out = new BigInt64Array(words.length >>> 1);
  new Uint32Array(out.buffer).set(swapIfBigEndian(words));
  return out;
}

/**
 * Returns the float64 values whose 64-bit patterns are `words`, bit for bit
 * (NaN payloads included; takes ownership of `words`).
 *
 * @param words `[low, high]` per value, in a buffer this call may reuse.
 * @returns `words.length / 2` values.
 */
export function floatsFromWords(words: Uint32Array): Float64Array {
  if (LITTLE_ENDIAN && words.byteOffset % 8 === 0) {
    return new Float64Array(words.buffer, words.byteOffset, words.length >>> 1);
  }
  const out = new Float64Array(words.length >>> 1);
  new Uint32Array(out.buffer).set(swapIfBigEndian(words));
  return out;
}

function swapIfBigEndian(words: Uint32Array): Uint32Array {
  if (LITTLE_ENDIAN) return words;
  const out = new Uint32Array(words.length);
  for (let i = 0; i < words.length; i += 2) {
    out[i] = words[i + 1]!;
    out[i + 1] = words[i]!;
  }
  return out;
}

/**
 * Returns the wrapping differences `v[i] - v[i-1]` (with `v[-1] = 0`) mod 2^64.
 *
 * @param words Values as words.
 * @returns A new word array of the same length.
 */
export function deltasOf(words: Uint32Array): Uint32Array {
  const out = new Uint32Array(words.length);
  let plo = 0;
  let phi = 0;
  for (let i = 0; i < words.length; i += 2) {
    const lo = words[i]!;
    const hi = words[i + 1]!;
    out[i] = lo - plo;
    out[i + 1] = hi - phi - (lo < plo ? 1 : 0);
    plo = lo;
    phi = hi;
  }
  return out;
}

/**
 * Replaces each value by the wrapping sum of it and every value before it
 * (the inverse of {@linkcode deltasOf}).
 *
 * @param words Values as words, overwritten.
 */
export function prefixSumInPlace(words: Uint32Array): void {
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < words.length; i += 2) {
    const s = lo + words[i]!;
    lo = s >>> 0;
    hi = (hi + words[i + 1]! + (s >= TWO_32 ? 1 : 0)) >>> 0;
    words[i] = lo;
    words[i + 1] = hi;
  }
}

/**
 * Zigzags each signed 64-bit value in place: `(v << 1) ^ (v >> 63)`, so small
 * magnitudes of either sign become small unsigned values.
 *
 * @param words Values as words, overwritten.
 */
export function zigzagInPlace(words: Uint32Array): void {
  for (let i = 0; i < words.length; i += 2) {
    const lo = words[i]!;
    const hi = words[i + 1]!;
    const sign = hi >> 31;
    words[i] = (lo << 1) ^ sign;
    words[i + 1] = ((hi << 1) | (lo >>> 31)) ^ sign;
  }
}

/**
 * Undoes {@linkcode zigzagInPlace}: `(z >>> 1) ^ -(z & 1)`.
 *
 * @param words Zigzagged values as words, overwritten.
 */
export function unzigzagInPlace(words: Uint32Array): void {
  for (let i = 0; i < words.length; i += 2) {
    const lo = words[i]!;
    const hi = words[i + 1]!;
    const neg = -(lo & 1);
    words[i] = ((lo >>> 1) | (hi << 31)) ^ neg;
    words[i + 1] = (hi >>> 1) ^ neg;
  }
}

/**
 * Zigzags one signed 64-bit value (wrapping).
 *
 * @param v A signed 64-bit value.
 * @returns The unsigned 64-bit zigzag code.
 */
export function zigzag64(v: bigint): bigint {
  const s = BigInt.asIntN(64, v);
  return BigInt.asUintN(64, (s << 1n) ^ (s >> 63n));
}

/**
 * Undoes {@linkcode zigzag64}.
 *
 * @param z An unsigned 64-bit zigzag code.
 * @returns The signed 64-bit value.
 */
export function unzigzag64(z: bigint): bigint {
  const u = BigInt.asUintN(64, z);
  return BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n));
}

function bytesNeeded(x: number): number {
  return x === 0 ? 0 : x < 0x100 ? 1 : x < 0x10000 ? 2 : x < 0x1000000 ? 3 : 4;
}

/**
 * Returns the byte-plane width of unsigned 64-bit values: the bytes the
 * largest one needs, at least 1 when there is a value, 0 when there is none.
 *
 * @param words Unsigned values as words.
 * @returns A width from 0 to 8.
 */
export function planeWidth(words: Uint32Array): number {
  if (words.length === 0) return 0;
  const hi = orEveryOther(words, 1);
  if (hi !== 0) return 4 + bytesNeeded(hi);
  return Math.max(1, bytesNeeded(orEveryOther(words, 0)));
}

/**
 * The OR of `words[from]`, `words[from + 2]`, … (unsigned): {@link planeWidth}'s loop,
 * alone and returning a number, so that V8's optimized code, entered in the middle of
 * the loop (OSR), has nothing after it that never ran (it had left there, for want of
 * feedback, at the comparison that follows).
 */
function orEveryOther(words: Uint32Array, from: number): number {
  let or = 0;
  for (let i = from; i < words.length; i += 2) or |= words[i]!;
  return or >>> 0;
}

/**
 * Writes planes `from` to `to - 1` of the values (plane `p` = byte `p` of every value).
 *
 * @param words Values as words.
 * @param range Planes to write: `[from, to)`, within `[0, 8]`.
 * @param out Destination, with room for `(to - from) * count` bytes at `at`.
 * @param at Where to start writing.
 * @returns The offset after the last byte written.
 */
export function writePlaneRange(
  words: Uint32Array,
  range: readonly [from: number, to: number],
  out: Uint8Array,
  at: number,
): number {
  const n = words.length >>> 1;
  for (let p = range[0]; p < range[1]; p++) {
    writePlane(words, p < 4 ? 0 : 1, (p & 3) * 8, out, at);
    at += n;
  }
  return at;
}

/**
 * One plane of {@link writePlaneRange}: byte `shift / 8` of word `w` of every value,
 * at `at`. Alone, so that V8's code optimized in the middle of this loop (OSR) is not
 * thrown away at its end, as code entered in an inner loop was at each plane.
 */
function writePlane(
  words: Uint32Array,
  w: number,
  shift: number,
  out: Uint8Array,
  at: number,
): void {
  const n = words.length >>> 1;
  for (let i = 0; i < n; i++) out[at + i] = words[2 * i + w]! >>> shift;
}

/**
 * ORs planes `from` to `to - 1` back into values (the inverse of {@linkcode writePlaneRange}).
 *
 * @param src Plane bytes: `(to - from)` planes of `stride` bytes each.
 * @param range Planes held by `src`: `[from, to)`.
 * @param words Destination values as words, zero where no plane is read; the first
 *   `words.length / 2` values of each plane are read.
 * @param stride Bytes of one plane in `src` (default `words.length / 2`; more when
 *   only the first values of each plane are wanted).
 */
export function readPlaneRange(
  src: Uint8Array,
  range: readonly [from: number, to: number],
  words: Uint32Array,
  stride: number = words.length >>> 1,
): void {
  const n = words.length >>> 1;
  let at = 0;
  for (let p = range[0]; p < range[1]; p++) {
    const w = p < 4 ? 0 : 1;
    const shift = (p & 3) * 8;
    if (shift === 0) {
      for (let i = 0; i < n; i++) words[2 * i + w] = src[at + i]!;
    } else {
      for (let i = 0; i < n; i++) words[2 * i + w]! |= src[at + i]! << shift;
    }
    at += stride;
  }
}

/**
 * Returns the size of {@linkcode writePlanes}'s output.
 *
 * @param words Unsigned values as words.
 * @param width Their {@linkcode planeWidth}.
 * @returns `1 + width * count`.
 */
export function planesSize(words: Uint32Array, width: number): number {
  return 1 + width * (words.length >>> 1);
}

/**
 * Writes unsigned 64-bit values as `[u8 width][width byte planes]`.
 *
 * @param words Unsigned values as words.
 * @param width Their {@linkcode planeWidth}.
 * @param out Destination with room for {@linkcode planesSize} bytes at `at`.
 * @param at Where to start writing.
 * @returns The offset after the last byte written.
 */
export function writePlanes(
  words: Uint32Array,
  width: number,
  out: Uint8Array,
  at: number,
): number {
  out[at] = width;
  return writePlaneRange(words, [0, width], out, at + 1);
}

/**
 * Reads `count` unsigned 64-bit values written by {@linkcode writePlanes}, or only
 * the first `keep` of them (a decoder asked for a prefix of its rows: the planes are
 * read past either way, only `keep` values are put together).
 *
 * @param reader Positioned at the width byte.
 * @param count Number of values.
 * @param keep Values to return, from the first (default `count`; at most `count`).
 * @returns The values as words (a new array of `2 * keep` words).
 * @throws {FormatError} `CORRUPT` if the width is not 0..8 (1..8 when `count > 0`)
 *   or fewer than `width * count` bytes are left.
 */
export function readPlanes(reader: ByteReader, count: number, keep = count): Uint32Array {
  const at = reader.offset;
  const width = reader.u8("byte-plane width");
  if (width > 8 || (width === 0 && count > 0)) {
    throw new FormatError(
      "CORRUPT",
      `Cannot read byte planes of ${count} values: expected a width from ${
        count > 0 ? 1 : 0
      } to 8, found ${width}`,
      { offset: at },
    );
  }
  const src = reader.bytes(width * count, `${width} byte planes of ${count} values`);
  const words = new Uint32Array(Math.max(0, Math.min(keep, count)) * 2);
  readPlaneRange(src, [0, width], words, count);
  return words;
}

/**
 * Returns the number of bytes of an unsigned LEB128 varint.
 *
 * @param v An integer, 0 ≤ v < 2^53.
 * @returns 1 to 8.
 */
export function varintSize(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 0x80);
    n++;
  }
  return n;
}

/**
 * Writes an unsigned LEB128 varint (the encoding `ByteReader.varint` reads).
 *
 * @param out Destination with room for {@linkcode varintSize} bytes at `at`.
 * @param at Where to write.
 * @param v An integer, 0 ≤ v < 2^53.
 * @returns The offset after the varint.
 */
export function writeVarint(out: Uint8Array, at: number, v: number): number {
  while (v >= 0x80) {
    out[at++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  out[at++] = v;
  return at;
}

/**
 * Builds a block of the common integer shape:
 * `[varint count][8-byte little-endian header words…][u8 width][byte planes]`.
 *
 * @param count Rows of the block (written first, see `_common.ts`).
 * @param header 64-bit header values (each written as 8 bytes, two's complement).
 * @param words Unsigned values to store as byte planes.
 * @returns The block.
 */
export function planesBlock(
  count: number,
  header: readonly bigint[],
  words: Uint32Array,
): Uint8Array {
  const width = planeWidth(words);
  const out = new Uint8Array(varintSize(count) + 8 * header.length + planesSize(words, width));
  let at = writeVarint(out, 0, count);
  const view = new DataView(out.buffer);
  for (const h of header) {
    view.setBigUint64(at, BigInt.asUintN(64, h), true);
    at += 8;
  }
  writePlanes(words, width, out, at);
  return out;
}
