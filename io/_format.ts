/**
 * Value → text formatting shared by the CSV and JSON-lines writers. Each form is
 * one the readers in `_parse.ts` scan back to the same value:
 * - float64: shortest round-trip (`String(x)`), with `.0` added to integral values
 *   so the column reads back as float64 rather than int64 (`-0.0` for -0); `NaN`,
 *   `inf`, `-inf` (CSV) or `NaN`, `Infinity`, `-Infinity` (JSON lines).
 * - float32 and float16: the same, with the fewest significant digits that read back
 *   (rounded to nearest) as the same float32 or float16: `0.1` for the float32 nearest
 *   0.1, not its double expansion `0.10000000149011612`.
 * - timestamp: `YYYY-MM-DD HH:MM:SS[.fff…]` in UTC, the fraction only when non-zero and
 *   then with all the unit's digits (3, 6 or 9, so a ns column reads back as ns); a `T`
 *   separator for JSON; a `Z` suffix when the field has a timezone, so the reader knows
 *   it is an instant.
 * - date: `YYYY-MM-DD`.
 * - time of day: `HH:MM:SS[.fff…]`, the fraction as for timestamps.
 * - duration: ISO 8601 `[-]PT[nH][nM][n[.fff…]S]` (`PT0S` for zero), hours unbounded,
 *   the fraction with all the unit's digits when non-zero.
 * - decimal: plain digits with every fraction digit of the scale (`formatDecimal`).
 *
 * No I/O. State: the texts of float32 and float16 values already formatted, by value
 * ({@link FLOAT_TEXT_MEMO} of each kind per thread), since finding the fewest digits is
 * the costly part of writing those columns.
 *
 * @module
 */
import type { TimeUnit } from "../format/column.ts";
import { numberToFloat16 } from "../format/float16.ts";
import { civilFromDays, TICKS_PER_SECOND, UNIT_DIGITS } from "./_time.ts";

/** Formats a float64 for CSV (`inf`) or JSON (`Infinity`). */
export function formatFloat(x: number, json: boolean): string {
  if (x !== x) return "NaN";
  if (x === Infinity) return json ? "Infinity" : "inf";
  if (x === -Infinity) return json ? "-Infinity" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const s = String(x);
  if (Number.isInteger(x) && s.indexOf("e") < 0) return s + ".0";
  return s;
}

/**
 * Values of each kind (float32, float16) whose text a thread keeps. Finding the fewest
 * digits takes up to eight `toPrecision` calls, ~1-2 µs a value, and a column of
 * measurements often repeats a few thousand values (vega's flights-200k: 200,000 times of
 * day, 1,312 distinct): kept, a repeat costs a lookup. Past this many, values are
 * formatted each time (a float16 has 65,536 patterns: all fit).
 */
export const FLOAT_TEXT_MEMO = 1 << 16;

// A finite, non-zero value's text does not depend on `json` (only NaN and the infinities do).
const float32Texts = new Map<number, string>();
const float16Texts = new Map<number, string>();

/**
 * Formats a float32 value (a double that is exactly a float32) with the fewest
 * significant digits that round back to it, as {@linkcode formatFloat} does for doubles.
 */
export function formatFloat32(x: number, json: boolean): string {
  if (!Number.isFinite(x) || x === 0) return formatFloat(x, json);
  return float32Texts.get(x) ??
    kept(float32Texts, x, shortestWithin(x, 9, (y) => Math.fround(y) === x));
}

/**
 * Formats a float16 value (a double that is exactly a float16, with its bit pattern)
 * with the fewest significant digits that round back to that pattern.
 */
export function formatFloat16(x: number, bits: number, json: boolean): string {
  if (!Number.isFinite(x) || x === 0) return formatFloat(x, json);
  return float16Texts.get(bits) ??
    kept(float16Texts, bits, shortestWithin(x, 5, (y) => numberToFloat16(y) === bits));
}

/**
 * The text of a finite, non-zero value from the double of its fewest digits, kept under
 * `key` in `texts` while they have room.
 */
function kept(texts: Map<number, string>, key: number, shortest: number): string {
  const text = formatFloat(shortest, false);
  if (texts.size < FLOAT_TEXT_MEMO) texts.set(key, text);
  return text;
}

/** The double of the shortest `toPrecision` text of `x` (1..`most` digits) that `same` accepts. */
function shortestWithin(x: number, most: number, same: (y: number) => boolean): number {
  const e = decimalExponent(Math.abs(x));
  for (let digits = 1; digits < most; digits++) {
    const fast = e === e ? roundedToDigits(x, digits, e) : NaN;
    const y = fast === fast ? fast : Number(x.toPrecision(digits));
    if (same(y)) return y;
  }
  return Number(x.toPrecision(most));
}

/** 10^0 … 10^22, the powers of ten a double holds exactly (each parsed, so exact). */
const POW10: readonly number[] = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));

/** `a` × 10^`k` by one correctly rounded operation on exact operands; NaN past 10^±22. */
function scaledByPow10(a: number, k: number): number {
  if (k > 22 || k < -22) return NaN;
  return k >= 0 ? a * POW10[k]! : a / POW10[-k]!;
}

/**
 * The decimal exponent of `a` > 0 (`a` = d.ddd… × 10^e), or NaN when a double cannot
 * tell: `a` within 10^-6 of a power of ten relatively, or past 10^±22.
 */
function decimalExponent(a: number): number {
  let e = Math.floor(Math.log10(a)); // right, or one off next to a power of ten
  let t = scaledByPow10(a, -e);
  if (t < 1) t = scaledByPow10(a, -(--e));
  else if (t >= 10) t = scaledByPow10(a, -(++e));
  return t - 1 >= 1e-6 && 10 - t >= 1e-5 ? e : NaN;
}

/**
 * `Number(x.toPrecision(digits))` for a finite, non-zero float32 or float16 `x` (`digits`
 * ≤ 9): `x` rounded to `digits` significant digits, halves away from zero. Scaled by one
 * correctly rounded operation, the kept digits are off by at most 10^9 × 2^-53 < 10^-7,
 * so only a scaled value within 10^-6 of a half is in doubt: NaN then, for `toPrecision`
 * itself to decide. `e` is {@link decimalExponent}'s (not NaN). ~10× faster than it.
 */
function roundedToDigits(x: number, digits: number, e: number): number {
  const k = digits - 1 - e;
  const q = scaledByPow10(Math.abs(x), k);
  const whole = Math.floor(q);
  const fraction = q - whole;
  if (!(Math.abs(fraction - 0.5) >= 1e-6)) return NaN; // in doubt, or NaN already
  const n = fraction > 0.5 ? whole + 1 : whole;
  const y = scaledByPow10(n, -k);
  return x < 0 ? -y : y;
}

function pad2(n: number): string {
  return n < 10 ? "0" + n : String(n);
}

function pad4(n: number): string {
  if (n >= 1000) return String(n);
  if (n >= 100) return "0" + n;
  if (n >= 10) return "00" + n;
  return "000" + n;
}

/** Formats days since the epoch as `YYYY-MM-DD` (years outside 0-9999 get a sign). */
export function formatDate(days: number): string {
  const [y, m, d] = civilFromDays(days);
  const year = y >= 0 && y <= 9999 ? pad4(y) : (y < 0 ? "-" : "+") + String(Math.abs(y));
  return `${year}-${pad2(m)}-${pad2(d)}`;
}

/**
 * A reusable timestamp formatter for one unit: caches the last day's text, since
 * consecutive rows usually share a day.
 */
export class TimestampFormatter {
  readonly #unit: TimeUnit;
  readonly #per: number;
  readonly #digits: number;
  readonly #sep: string;
  readonly #suffix: string;
  #lastDay = NaN;
  #lastDayText = "";

  /**
   * @param unit Tick unit.
   * @param json Use the `T` separator.
   * @param zulu Append `Z` (the field has a timezone).
   */
  constructor(unit: TimeUnit, json: boolean, zulu: boolean) {
    this.#unit = unit;
    this.#per = TICKS_PER_SECOND[unit];
    this.#digits = UNIT_DIGITS[unit];
    this.#sep = json ? "T" : " ";
    this.#suffix = zulu ? "Z" : "";
  }

  /** Formats ticks of this formatter's unit. */
  format(ticks: bigint): string {
    let secs: number;
    let frac: number;
    const n = Number(ticks);
    if (Number.isSafeInteger(n)) {
      secs = Math.floor(n / this.#per);
      frac = n - secs * this.#per;
    } else {
      const per = BigInt(this.#per);
      let q = ticks / per;
      let r = ticks - q * per;
      if (r < 0n) {
        q -= 1n;
        r += per;
      }
      secs = Number(q);
      frac = Number(r);
    }
    const days = Math.floor(secs / 86400);
    let sod = secs - days * 86400;
    if (days !== this.#lastDay) {
      this.#lastDay = days;
      this.#lastDayText = formatDate(days) + this.#sep;
    }
    const hh = Math.floor(sod / 3600);
    sod -= hh * 3600;
    const mm = Math.floor(sod / 60);
    const ss = sod - mm * 60;
    let out = this.#lastDayText + pad2(hh) + ":" + pad2(mm) + ":" + pad2(ss);
    if (frac !== 0) {
      let f = String(frac);
      while (f.length < this.#digits) f = "0" + f;
      out += "." + f;
    }
    return out + this.#suffix;
  }

  /** The unit this formatter reads. */
  get unit(): TimeUnit {
    return this.#unit;
  }
}

/** Splits ticks of `unit` into whole seconds (floored) and the remaining ticks. */
function splitTicks(ticks: bigint, unit: TimeUnit): { secs: bigint; frac: bigint } {
  const per = BigInt(TICKS_PER_SECOND[unit]);
  let secs = ticks / per;
  let frac = ticks - secs * per;
  if (frac < 0n) {
    secs -= 1n;
    frac += per;
  }
  return { secs, frac };
}

function fraction(frac: bigint, unit: TimeUnit): string {
  return frac === 0n ? "" : "." + String(frac).padStart(UNIT_DIGITS[unit], "0");
}

/**
 * Formats ticks since midnight as `HH:MM:SS[.fff…]` (a value outside one day keeps
 * counting hours, so nothing is ever wrapped).
 *
 * @param ticks Ticks of `unit`.
 * @param unit The unit.
 * @returns The text.
 */
export function formatTime(ticks: bigint, unit: TimeUnit): string {
  const { secs, frac } = splitTicks(ticks, unit);
  const sign = secs < 0n ? "-" : "";
  const s = secs < 0n ? -secs : secs;
  const hh = s / 3600n;
  const mm = (s / 60n) % 60n;
  const ss = s % 60n;
  return sign + String(hh).padStart(2, "0") + ":" + String(mm).padStart(2, "0") + ":" +
    String(ss).padStart(2, "0") + fraction(frac, unit);
}

/**
 * Formats a duration as ISO 8601 `[-]PT[nH][nM][n[.fff…]S]`: `PT1H2M3.5S`, `-PT0.001S`,
 * `PT0S`.
 *
 * @param ticks Signed ticks of `unit`.
 * @param unit The unit.
 * @returns The text.
 */
export function formatDuration(ticks: bigint, unit: TimeUnit): string {
  const negative = ticks < 0n;
  const { secs, frac } = splitTicks(negative ? -ticks : ticks, unit);
  const hh = secs / 3600n;
  const mm = (secs / 60n) % 60n;
  const ss = secs % 60n;
  let out = negative ? "-PT" : "PT";
  if (hh !== 0n) out += `${hh}H`;
  if (mm !== 0n) out += `${mm}M`;
  if (ss !== 0n || frac !== 0n || (hh === 0n && mm === 0n)) out += `${ss}${fraction(frac, unit)}S`;
  return out;
}
