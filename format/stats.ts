/**
 * Per-chunk column statistics for the footer index (min, max, null count), and
 * their comparison helpers for pruning.
 *
 * Wire form, FORMAT.md §6: int64, timestamp (ticks), date (days), time (ticks),
 * duration (ticks) and decimal (the unscaled integer) as decimal strings, exact
 * beyond 2^53; float64, float32 and float16 as JSON numbers (their exact values), with `"Infinity"` and `"-Infinity"` as
 * strings and NaN ignored; bool as booleans; strings and JSON texts when at most
 * `MAX_STRING_STAT` UTF-16 units, else `null` (unknown). Pure.
 *
 * @module
 */
import { codesOf } from "./coded_strings.ts";
import { type Column, FLOAT_TYPES } from "./column.ts";
import { float16ToNumber } from "./float16.ts";
import type { ColumnStats } from "./header.ts";

/** Longest string kept as a min/max statistic. */
export const MAX_STRING_STAT = 64;

/**
 * Computes the statistics of one column of one chunk.
 *
 * @param column The column.
 * @returns Its min, max and null count.
 */
export function columnStats(column: Column): ColumnStats {
  const validity = column.validity;
  const n = column.values.length;
  let nulls = 0;
  if (validity) { for (let i = 0; i < n; i++) if (validity[i] === 0) nulls++; }
  const present = (i: number) => !validity || validity[i] === 1;
  switch (column.type) {
    case "int64":
    case "timestamp":
    case "date":
    case "time":
    case "duration":
    case "decimal": {
      const v = column.values;
      if (v instanceof BigInt64Array && LITTLE_ENDIAN) return int64Stats(v, validity, nulls);
      let min: bigint | null = null;
      let max: bigint | null = null;
      for (let i = 0; i < n; i++) {
        if (!present(i)) continue;
        const x = v[i]!;
        if (min === null || x < min) min = x;
        if (max === null || x > max) max = x;
      }
      return {
        min: min === null ? null : String(min),
        max: max === null ? null : String(max),
        null_count: nulls,
      };
    }
    case "float64":
    case "float32":
    case "float16": {
      let min = Infinity;
      let max = -Infinity;
      let any = false;
      const v = column.values;
      const half = column.type === "float16";
      for (let i = 0; i < n; i++) {
        const x = half ? float16ToNumber(v[i]!) : v[i]!;
        if (!present(i) || Number.isNaN(x)) continue;
        any = true;
        if (x < min) min = x;
        if (x > max) max = x;
      }
      return {
        min: any ? floatStat(min) : null,
        max: any ? floatStat(max) : null,
        null_count: nulls,
      };
    }
    case "bool": {
      let min: boolean | null = null;
      let max: boolean | null = null;
      for (let i = 0; i < n; i++) {
        if (!present(i)) continue;
        const x = column.values[i] === 1;
        if (min === null || (!x && min)) min = x;
        if (max === null || (x && !max)) max = x;
      }
      return { min, max, null_count: nulls };
    }
    case "string":
    case "json": {
      const bounds: (string | null)[] = [null, null];
      const coded = codesOf(column.values);
      if (coded === undefined) textBounds(column.values, validity, bounds);
      else codedTextBounds(column.values, validity, coded.codes, coded.dictionary, bounds);
      const [min, max] = bounds as [string | null, string | null];
      return {
        min: min !== null && min.length <= MAX_STRING_STAT ? min : null,
        max: max !== null && max.length <= MAX_STRING_STAT ? max : null,
        null_count: nulls,
      };
    }
  }
}

/** The least and greatest present texts into `bounds` (null, null for none). */
function textBounds(
  values: readonly string[],
  validity: Uint8Array | null,
  bounds: (string | null)[],
): void {
  let min: string | null = null;
  let max: string | null = null;
  for (let i = 0; i < values.length; i++) {
    if (validity !== null && validity[i] === 0) continue;
    const x = values[i]!;
    if (min === null || x < min) min = x;
    if (max === null || x > max) max = x;
  }
  bounds[0] = min;
  bounds[1] = max;
}

/**
 * {@link textBounds} of texts with codes (`coded_strings.ts`): a row that is its code's
 * entry only marks the entry, and the marked entries are compared once each, not once
 * a row; any other row is compared itself. The same bounds, as texts.
 */
function codedTextBounds(
  values: readonly string[],
  validity: Uint8Array | null,
  codes: Uint32Array,
  dictionary: readonly string[],
  bounds: (string | null)[],
): void {
  const seen = new Uint8Array(dictionary.length);
  markCoded(values, validity, codes, dictionary, seen, bounds);
  let min: string | null = bounds[0] ?? null;
  let max: string | null = bounds[1] ?? null;
  for (let c = 0; c < seen.length; c++) {
    if (seen[c] === 0) continue;
    const x = dictionary[c]!;
    if (min === null || x < min) min = x;
    if (max === null || x > max) max = x;
  }
  bounds[0] = min;
  bounds[1] = max;
}

/**
 * {@link codedTextBounds}' loop over the rows: marks in `seen` each code whose entry a
 * present row is, and widens `bounds` by the present rows that are not their code's
 * entry.
 */
function markCoded(
  values: readonly string[],
  validity: Uint8Array | null,
  codes: Uint32Array,
  dictionary: readonly string[],
  seen: Uint8Array,
  bounds: (string | null)[],
): void {
  let min: string | null = bounds[0] ?? null;
  let max: string | null = bounds[1] ?? null;
  for (let i = 0; i < values.length; i++) {
    if (validity !== null && validity[i] === 0) continue;
    const c = codes[i]!;
    const x = values[i]!;
    if (c < seen.length && x === dictionary[c]) {
      seen[c] = 1;
      continue;
    }
    if (min === null || x < min) min = x;
    if (max === null || x > max) max = x;
  }
  bounds[0] = min;
  bounds[1] = max;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The bounds of 64-bit integers compared as their two 32-bit halves (the high one
 * signed), so that no value becomes a BigInt but the two bounds.
 */
function int64Stats(
  v: BigInt64Array,
  validity: Uint8Array | null,
  nulls: number,
): ColumnStats {
  const lo = new Uint32Array(v.buffer, v.byteOffset, v.length * 2);
  const hi = new Int32Array(v.buffer, v.byteOffset, v.length * 2);
  let minAt = -1;
  let maxAt = -1;
  let minHi = 0;
  let minLo = 0;
  let maxHi = 0;
  let maxLo = 0;
  for (let i = 0; i < v.length; i++) {
    if (validity !== null && validity[i] === 0) continue;
    const h = hi[2 * i + 1]!;
    const l = lo[2 * i]!;
    if (minAt < 0 || h < minHi || (h === minHi && l < minLo)) {
      minAt = i;
      minHi = h;
      minLo = l;
    }
    if (maxAt < 0 || h > maxHi || (h === maxHi && l > maxLo)) {
      maxAt = i;
      maxHi = h;
      maxLo = l;
    }
  }
  return {
    min: minAt < 0 ? null : String(v[minAt]),
    max: maxAt < 0 ? null : String(v[maxAt]),
    null_count: nulls,
  };
}

function floatStat(x: number): number | string {
  if (x === Infinity) return "Infinity";
  if (x === -Infinity) return "-Infinity";
  return Object.is(x, -0) ? 0 : x;
}

/**
 * Merges per-chunk statistics of one column into archive-wide ones.
 *
 * @param type The column type (decides how strings of digits compare).
 * @param parts Per-chunk statistics.
 * @returns The overall min, max and null count.
 */
export function mergeStats(type: Column["type"], parts: readonly ColumnStats[]): ColumnStats {
  let min: ColumnStats["min"] = null;
  let max: ColumnStats["max"] = null;
  let nulls = 0;
  let unknown = false;
  for (const p of parts) {
    nulls += p.null_count;
    if (p.min === null || p.max === null) {
      // All-null chunks have no bounds; a non-null chunk without bounds makes them unknown.
      if (type === "string" || type === "json" || FLOAT_TYPES.has(type)) {
        unknown ||= p.null_count === 0;
      }
      continue;
    }
    if (min === null || compareStat(type, p.min, min) < 0) min = p.min;
    if (max === null || compareStat(type, p.max, max) > 0) max = p.max;
  }
  return unknown ? { min: null, max: null, null_count: nulls } : { min, max, null_count: nulls };
}

/**
 * Compares two statistics values of a column type (negative, zero, positive).
 *
 * @param type The column type.
 * @param a A statistic.
 * @param b Another.
 * @returns The comparison.
 */
export function compareStat(
  type: Column["type"],
  a: NonNullable<ColumnStats["min"]>,
  b: NonNullable<ColumnStats["min"]>,
): number {
  switch (type) {
    case "int64":
    case "timestamp":
    case "date":
    case "time":
    case "duration":
    case "decimal": {
      const x = BigInt(a as string);
      const y = BigInt(b as string);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case "float64":
    case "float32":
    case "float16": {
      const x = Number(a);
      const y = Number(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case "bool":
      return Number(a) - Number(b);
    case "string":
    case "json":
      return a < b ? -1 : a > b ? 1 : 0;
  }
}
