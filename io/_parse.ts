/**
 * Text → value scanners shared by the CSV and JSON-lines readers and by type
 * inference: int64, float64, bool, date and timestamp, each on a `[start, end)`
 * span of a string so the readers never slice a cell they only need as a number.
 *
 * The rules are deliberately strict, because a cell is only given a typed column
 * when its text comes back unchanged in value on thaw:
 * - int64: `-?(0|[1-9][0-9]*)` within signed 64 bits (no `+`, no leading zeros, no `-0`).
 * - float64: `-?(0|[1-9][0-9]*)(.[0-9]*)?([eE][+-]?[0-9]+)?` (or `.5`), whose decimal
 *   value equals the shortest round-trip form of the parsed double (so
 *   `0.30000000000000001` or `12345678901234567890` stay text); plus `NaN`, `inf`,
 *   `-inf`, `Infinity`, `-Infinity` (case-insensitive).
 * - bool: `true` / `false`, case-insensitive.
 * - date: `YYYY-MM-DD`, a real calendar day, years 0000-9999.
 * - timestamp: `YYYY-MM-DD[ T]HH:MM[:SS[.f{1,9}]]` with optional `Z` or `±HH:MM`
 *   (`±HHMM`); a bare date is midnight. Offsets are applied so ticks are UTC.
 *
 * Pure: no I/O.
 *
 * @module
 */
import type { TimeUnit } from "../format/column.ts";
import { civilFromDays, TICKS_PER_SECOND, UNIT_DIGITS } from "./_time.ts";

// Where they were first defined: the readers and tests import them from here.
export { civilFromDays, TICKS_PER_SECOND, UNIT_DIGITS };

const TWO32 = 4294967296;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Stores a safe integer into slot `i` of a `BigInt64Array` through its `Int32Array`
 * view: avoids allocating a BigInt per cell (about 10x faster than `BigInt(n)`).
 */
export function storeInt64(values: BigInt64Array, i32: Int32Array, i: number, n: number): void {
  if (LITTLE_ENDIAN) {
    const hi = Math.floor(n / TWO32);
    i32[2 * i] = n - hi * TWO32;
    i32[2 * i + 1] = hi;
  } else {
    values[i] = BigInt(n);
  }
}

/** Whether a bigint fits in signed 64 bits. */
export function fitsInt64(v: bigint): boolean {
  return v >= INT64_MIN && v <= INT64_MAX;
}

/**
 * Scans an int64 text. Returns the value as a number when it has at most 15 digits,
 * `Infinity` when the text is a valid integer with more digits (use {@link bigInt64Text}),
 * and `NaN` when the text is not an int64 literal.
 */
export function scanInt(text: string, s: number, e: number): number {
  if (s >= e) return NaN;
  let i = s;
  let neg = false;
  let c = text.charCodeAt(i);
  if (c === 45) {
    neg = true;
    if (++i >= e) return NaN;
    c = text.charCodeAt(i);
  }
  if (c === 48) return i + 1 === e && !neg ? 0 : NaN;
  if (e - i > 15) {
    for (let j = i; j < e; j++) {
      const d = text.charCodeAt(j) - 48;
      if (d < 0 || d > 9) return NaN;
    }
    return e - i > 19 ? NaN : Infinity;
  }
  let n = 0;
  for (; i < e; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    n = n * 10 + d;
  }
  return neg ? -n : n;
}

/**
 * Parses a long integer text that {@link scanInt} flagged with `Infinity`.
 * Returns `null` when it does not fit in 64 bits.
 */
export function bigInt64Text(text: string): bigint | null {
  const v = BigInt(text);
  return fitsInt64(v) ? v : null;
}

/**
 * Scans a float64 text. Returns the value, or `NaN` when the text is not an exact
 * float literal; callers tell a real NaN apart with {@link isNaNText}.
 */
export function scanFloat(text: string, s: number, e: number): number {
  if (s >= e) return NaN;
  let i = s;
  let c = text.charCodeAt(i);
  if (c === 45) {
    if (++i >= e) return NaN;
    c = text.charCodeAt(i);
  }
  if (c === 105 || c === 73) return isInfText(text, i, e) ? (i > s ? -Infinity : Infinity) : NaN;
  let intDigits = 0;
  let sig = 0;
  let nonZero = false;
  const intStart = i;
  for (; i < e; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) break;
    intDigits++;
    if (d !== 0) nonZero = true;
    if (nonZero) sig++;
  }
  if (intDigits > 1 && text.charCodeAt(intStart) === 48) return NaN;
  let fracDigits = 0;
  if (i < e && text.charCodeAt(i) === 46) {
    i++;
    for (; i < e; i++) {
      const d = text.charCodeAt(i) - 48;
      if (d < 0 || d > 9) break;
      fracDigits++;
      if (d !== 0) nonZero = true;
      if (nonZero) sig++;
    }
  }
  if (intDigits + fracDigits === 0) return NaN;
  if (i < e) {
    c = text.charCodeAt(i);
    if (c !== 101 && c !== 69) return NaN;
    i++;
    if (i < e) {
      c = text.charCodeAt(i);
      if (c === 43 || c === 45) i++;
    }
    const expStart = i;
    for (; i < e; i++) {
      const d = text.charCodeAt(i) - 48;
      if (d < 0 || d > 9) return NaN;
    }
    if (i === expStart) return NaN;
  }
  const str = text.slice(s, e);
  const x = Number(str);
  if (x === 0) return nonZero ? NaN : x;
  // At most 15 significant digits in the normal range always come back from the
  // shortest round-trip form (DBL_DIG = 15); anything else is compared digit by digit.
  const ax = x < 0 ? -x : x;
  if (sig <= 15 && ax >= 2.2250738585072014e-308 && ax !== Infinity) return x;
  if (ax === Infinity) return NaN;
  return decimalKey(str) === decimalKey(String(x)) ? x : NaN;
}

/** Normalises a decimal literal (no sign) to `digits` + `e` + exponent of the first digit. */
function decimalKey(str: string): string {
  let digits = "";
  let exp = 0;
  let seenPoint = false;
  let leading = true;
  let i = str.charCodeAt(0) === 45 ? 1 : 0;
  for (; i < str.length; i++) {
    const c = str.charCodeAt(i);
    if (c === 46) {
      seenPoint = true;
      continue;
    }
    if (c < 48 || c > 57) break;
    if (leading && c === 48) {
      if (seenPoint) exp--;
      continue;
    }
    leading = false;
    digits += str[i];
    if (!seenPoint) exp++;
  }
  if (i < str.length) exp += Number(str.slice(i + 1));
  let end = digits.length;
  while (end > 0 && digits.charCodeAt(end - 1) === 48) end--;
  return `${digits.slice(0, end)}e${exp}`;
}

function isInfText(text: string, s: number, e: number): boolean {
  const n = e - s;
  if (n !== 3 && n !== 8) return false;
  const w = text.slice(s, e).toLowerCase();
  return w === "inf" || w === "infinity";
}

/** Whether a span reads as a NaN literal (`NaN`, case-insensitive). */
export function isNaNText(text: string, s: number, e: number): boolean {
  if (e - s !== 3) return false;
  return text.slice(s, e).toLowerCase() === "nan";
}

/** Scans a bool text: 1 for true, 0 for false, -1 when not a bool. */
export function scanBool(text: string, s: number, e: number): number {
  const n = e - s;
  if (n === 4) {
    return (text.charCodeAt(s) | 32) === 116 && (text.charCodeAt(s + 1) | 32) === 114 &&
        (text.charCodeAt(s + 2) | 32) === 117 && (text.charCodeAt(s + 3) | 32) === 101
      ? 1
      : -1;
  }
  if (n === 5) {
    return (text.charCodeAt(s) | 32) === 102 && (text.charCodeAt(s + 1) | 32) === 97 &&
        (text.charCodeAt(s + 2) | 32) === 108 && (text.charCodeAt(s + 3) | 32) === 115 &&
        (text.charCodeAt(s + 4) | 32) === 101
      ? 0
      : -1;
  }
  return -1;
}

/**
 * Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
 */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const mp = m > 2 ? m - 3 : m + 9;
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function digit2(text: string, i: number): number {
  const a = text.charCodeAt(i) - 48;
  const b = text.charCodeAt(i + 1) - 48;
  if (a < 0 || a > 9 || b < 0 || b > 9) return -1;
  return a * 10 + b;
}

function monthDays(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** Scans `YYYY-MM-DD` at `s`; returns days since the epoch, or NaN. */
function scanDateAt(text: string, s: number): number {
  if (text.charCodeAt(s + 4) !== 45 || text.charCodeAt(s + 7) !== 45) return NaN;
  const y1 = digit2(text, s);
  const y2 = digit2(text, s + 2);
  const m = digit2(text, s + 5);
  const d = digit2(text, s + 8);
  if (y1 < 0 || y2 < 0 || m < 1 || m > 12 || d < 1) return NaN;
  const y = y1 * 100 + y2;
  if (d > monthDays(y, m)) return NaN;
  return daysFromCivil(y, m, d);
}

// The day count of the last date scanned by `scanSeconds19`: rows of a table often
// share their date, and its calendar arithmetic is most of a timestamp's cost.
let lastDateKey = -1;
let lastDays = 0;

/**
 * Forgets the date {@link scanSeconds19} last scanned, so that its next one goes the
 * way of a new date (a freeze Worker's warm-up, whose rows often share one date: the
 * way runs then with type feedback, not first in the middle of a chunk). Changes no
 * result.
 */
export function forgetLastDate(): void {
  lastDateKey = -1;
}

/**
 * Scans the 19 characters `YYYY-MM-DD HH:MM:SS` (or `T` between) at `s`: the usual
 * timestamp, with no fraction and no offset. Returns its seconds since the epoch, as
 * {@link scanTimestamp} would (its rules), or NaN for any other text (which
 * `scanTimestamp` then reads or refuses).
 */
export function scanSeconds19(text: string, s: number): number {
  if (s + 19 > text.length) return NaN;
  const sep = text.charCodeAt(s + 10);
  if (
    text.charCodeAt(s + 4) !== 45 || text.charCodeAt(s + 7) !== 45 ||
    (sep !== 32 && sep !== 84) || text.charCodeAt(s + 13) !== 58 ||
    text.charCodeAt(s + 16) !== 58
  ) return NaN;
  // Every digit read in place (a call per pair was ~4% of a parse): `>>> 0` makes a
  // character below '0' a large number, so one comparison tells a digit.
  const y0 = text.charCodeAt(s) - 48;
  const y1 = text.charCodeAt(s + 1) - 48;
  const y2 = text.charCodeAt(s + 2) - 48;
  const y3 = text.charCodeAt(s + 3) - 48;
  const m0 = text.charCodeAt(s + 5) - 48;
  const m1 = text.charCodeAt(s + 6) - 48;
  const d0 = text.charCodeAt(s + 8) - 48;
  const d1 = text.charCodeAt(s + 9) - 48;
  if (
    (y0 >>> 0) > 9 || (y1 >>> 0) > 9 || (y2 >>> 0) > 9 || (y3 >>> 0) > 9 ||
    (m0 >>> 0) > 9 || (m1 >>> 0) > 9 || (d0 >>> 0) > 9 || (d1 >>> 0) > 9
  ) return NaN;
  const y = ((y0 * 10 + y1) * 10 + y2) * 10 + y3;
  const m = m0 * 10 + m1;
  const d = d0 * 10 + d1;
  const key = (y * 100 + m) * 100 + d;
  let days = lastDays;
  if (key !== lastDateKey) {
    if (m < 1 || m > 12 || d < 1 || d > monthDays(y, m)) return NaN;
    days = daysFromCivil(y, m, d);
    lastDateKey = key;
    lastDays = days;
  }
  const h0 = text.charCodeAt(s + 11) - 48;
  const h1 = text.charCodeAt(s + 12) - 48;
  const i0 = text.charCodeAt(s + 14) - 48;
  const i1 = text.charCodeAt(s + 15) - 48;
  const s0 = text.charCodeAt(s + 17) - 48;
  const s1 = text.charCodeAt(s + 18) - 48;
  if (
    (h0 >>> 0) > 9 || (h1 >>> 0) > 9 || (i0 >>> 0) > 9 || (i1 >>> 0) > 9 ||
    (s0 >>> 0) > 9 || (s1 >>> 0) > 9
  ) return NaN;
  const hh = h0 * 10 + h1;
  const mm = i0 * 10 + i1;
  const ss = s0 * 10 + s1;
  if (hh > 23 || mm > 59 || ss > 59) return NaN;
  return days * 86400 + hh * 3600 + mm * 60 + ss;
}

/**
 * {@link scanSeconds19} on bytes (ASCII): the 19 bytes at `s` as seconds since the
 * epoch, or NaN for any other bytes. Shares its last date.
 */
export function scanSeconds19Bytes(bytes: Uint8Array, s: number): number {
  if (s + 19 > bytes.length) return NaN;
  const sep = bytes[s + 10];
  if (
    bytes[s + 4] !== 45 || bytes[s + 7] !== 45 || (sep !== 32 && sep !== 84) ||
    bytes[s + 13] !== 58 || bytes[s + 16] !== 58
  ) return NaN;
  const y0 = bytes[s]! - 48;
  const y1 = bytes[s + 1]! - 48;
  const y2 = bytes[s + 2]! - 48;
  const y3 = bytes[s + 3]! - 48;
  const m0 = bytes[s + 5]! - 48;
  const m1 = bytes[s + 6]! - 48;
  const d0 = bytes[s + 8]! - 48;
  const d1 = bytes[s + 9]! - 48;
  if (
    (y0 >>> 0) > 9 || (y1 >>> 0) > 9 || (y2 >>> 0) > 9 || (y3 >>> 0) > 9 ||
    (m0 >>> 0) > 9 || (m1 >>> 0) > 9 || (d0 >>> 0) > 9 || (d1 >>> 0) > 9
  ) return NaN;
  const y = ((y0 * 10 + y1) * 10 + y2) * 10 + y3;
  const m = m0 * 10 + m1;
  const d = d0 * 10 + d1;
  const key = (y * 100 + m) * 100 + d;
  let days = lastDays;
  if (key !== lastDateKey) {
    if (m < 1 || m > 12 || d < 1 || d > monthDays(y, m)) return NaN;
    days = daysFromCivil(y, m, d);
    lastDateKey = key;
    lastDays = days;
  }
  const h0 = bytes[s + 11]! - 48;
  const h1 = bytes[s + 12]! - 48;
  const i0 = bytes[s + 14]! - 48;
  const i1 = bytes[s + 15]! - 48;
  const s0 = bytes[s + 17]! - 48;
  const s1 = bytes[s + 18]! - 48;
  if (
    (h0 >>> 0) > 9 || (h1 >>> 0) > 9 || (i0 >>> 0) > 9 || (i1 >>> 0) > 9 ||
    (s0 >>> 0) > 9 || (s1 >>> 0) > 9
  ) return NaN;
  const hh = h0 * 10 + h1;
  const mm = i0 * 10 + i1;
  const ss = s0 * 10 + s1;
  if (hh > 23 || mm > 59 || ss > 59) return NaN;
  return days * 86400 + hh * 3600 + mm * 60 + ss;
}

/** Scans a `YYYY-MM-DD` span; returns days since the epoch, or NaN. */
export function scanDate(text: string, s: number, e: number): number {
  return e - s === 10 ? scanDateAt(text, s) : NaN;
}

/** The parts of a scanned timestamp; reused between calls to avoid allocation. */
export interface TimestampParts {
  /** Whole seconds since the epoch, UTC (offset applied). */
  seconds: number;
  /** Fraction of the second in nanoseconds. */
  nanos: number;
  /** Fraction digits as written (drives unit inference: more than 6 means ns). */
  fracDigits: number;
  /** Significant fraction digits, trailing zeros dropped (decides whether a unit can hold it). */
  sigDigits: number;
  /** Whether the text carried `Z` or an offset. */
  offset: boolean;
}

/** Creates a reusable {@link TimestampParts}. */
export function timestampParts(): TimestampParts {
  return { seconds: 0, nanos: 0, fracDigits: 0, sigDigits: 0, offset: false };
}

/** Scans a timestamp span into `out`; returns false when it is not a timestamp. */
export function scanTimestamp(text: string, s: number, e: number, out: TimestampParts): boolean {
  const n = e - s;
  if (n < 10) return false;
  const days = scanDateAt(text, s);
  if (days !== days) return false;
  let secs = days * 86400;
  out.nanos = 0;
  out.fracDigits = 0;
  out.sigDigits = 0;
  out.offset = false;
  if (n === 10) {
    out.seconds = secs;
    return true;
  }
  const sep = text.charCodeAt(s + 10);
  if ((sep !== 32 && sep !== 84) || n < 16 || text.charCodeAt(s + 13) !== 58) return false;
  const hh = digit2(text, s + 11);
  const mm = digit2(text, s + 14);
  if (hh < 0 || hh > 23 || mm < 0 || mm > 59) return false;
  secs += hh * 3600 + mm * 60;
  let i = s + 16;
  if (i < e && text.charCodeAt(i) === 58) {
    if (i + 3 > e) return false;
    const ss = digit2(text, i + 1);
    if (ss < 0 || ss > 59) return false;
    secs += ss;
    i += 3;
    if (i < e && text.charCodeAt(i) === 46) {
      i++;
      let nanos = 0;
      let digits = 0;
      let sigDigits = 0;
      for (; i < e && digits < 10; i++) {
        const d = text.charCodeAt(i) - 48;
        if (d < 0 || d > 9) break;
        digits++;
        nanos = nanos * 10 + d;
        if (d !== 0) sigDigits = digits;
      }
      if (digits === 0 || digits > 9) return false;
      for (let k = digits; k < 9; k++) nanos *= 10;
      out.nanos = nanos;
      out.fracDigits = digits;
      out.sigDigits = sigDigits;
    }
  }
  if (i < e) {
    const c = text.charCodeAt(i);
    if (c === 90) {
      if (i + 1 !== e) return false;
    } else if (c === 43 || c === 45) {
      const oh = digit2(text, i + 1);
      let om: number;
      if (e - i === 6 && text.charCodeAt(i + 3) === 58) om = digit2(text, i + 4);
      else if (e - i === 5) om = digit2(text, i + 3);
      else return false;
      if (oh < 0 || oh > 23 || om < 0 || om > 59) return false;
      const off = oh * 3600 + om * 60;
      secs += c === 43 ? -off : off;
    } else {
      return false;
    }
    out.offset = true;
  }
  out.seconds = secs;
  return true;
}

/**
 * Converts scanned timestamp parts to ticks of `unit`: a number when it is a safe
 * integer, a bigint otherwise, or `null` when the fraction needs a finer unit or the
 * value leaves the int64 range.
 */
export function timestampTicks(parts: TimestampParts, unit: TimeUnit): number | bigint | null {
  if (parts.sigDigits > UNIT_DIGITS[unit]) return null;
  const per = TICKS_PER_SECOND[unit];
  const sub = parts.nanos / (1e9 / per);
  const t = parts.seconds * per + sub;
  if (Number.isSafeInteger(t) && Math.abs(parts.seconds) * per < 9e15) return t;
  const big = BigInt(parts.seconds) * BigInt(per) + BigInt(sub);
  return fitsInt64(big) ? big : null;
}

/** Scales a fraction's digits to ticks of `unit`; null when it holds more digits than the unit. */
function fractionTicks(digits: string, unit: TimeUnit): bigint | null {
  const keep = UNIT_DIGITS[unit];
  const trimmed = digits.replace(/0+$/, "");
  if (trimmed.length > keep) return null;
  return trimmed === "" ? 0n : BigInt(trimmed.padEnd(keep, "0"));
}

const TIME_TEXT = /^(\d{2,}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/;

/**
 * Parses a time of day `HH:MM:SS[.fff…]` (the form `_format.ts` writes) to ticks of
 * `unit` since midnight. Minutes and seconds must be below 60; hours may exceed 23
 * (the writer keeps counting rather than wrapping). Null when the text does not
 * match or holds a finer fraction than the unit.
 *
 * @param text The text.
 * @param unit The tick unit.
 * @returns The ticks, or null.
 */
export function parseTimeOfDay(text: string, unit: TimeUnit): bigint | null {
  const m = TIME_TEXT.exec(text);
  if (m === null) return null;
  const [, hh, mm, ss, frac = ""] = m;
  if (Number(mm) > 59 || Number(ss) > 59) return null;
  const f = fractionTicks(frac, unit);
  if (f === null) return null;
  const secs = BigInt(hh!) * 3600n + BigInt(mm!) * 60n + BigInt(ss!);
  const v = secs * BigInt(TICKS_PER_SECOND[unit]) + f;
  return fitsInt64(v) ? v : null;
}

const DURATION_TEXT = /^(-?)PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d{1,9}))?S)?$/;

/**
 * Parses an ISO 8601 duration of hours, minutes and seconds (`PT1H2M3.5S`, `-PT0S`;
 * the form `_format.ts` writes) to signed ticks of `unit`. Days, months and years are
 * refused: their length in seconds is not fixed.
 *
 * @param text The text.
 * @param unit The tick unit.
 * @returns The ticks, or null when the text does not match, holds a finer fraction
 * than the unit, or does not fit 64 bits.
 */
export function parseDuration(text: string, unit: TimeUnit): bigint | null {
  const m = DURATION_TEXT.exec(text);
  if (m === null || text.endsWith("T")) return null;
  const [, sign, hh = "0", mm = "0", ss = "0", frac = ""] = m;
  const f = fractionTicks(frac, unit);
  if (f === null) return null;
  const secs = BigInt(hh) * 3600n + BigInt(mm) * 60n + BigInt(ss);
  const ticks = secs * BigInt(TICKS_PER_SECOND[unit]) + f;
  const v = sign === "-" ? -ticks : ticks;
  return fitsInt64(v) ? v : null;
}
