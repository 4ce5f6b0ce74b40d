/**
 * Rows laid out the way DuckDB's vectors hold them (private to `_write_parquet.ts`
 * and the thaw Workers): per column, the values' bytes in DuckDB's physical layout,
 * a validity bitmap in its word order, and the few strings too long to sit inline.
 * A Worker builds this image off the main thread (plain buffers, transferable, no
 * DuckDB loaded there); the writer then fills each data chunk's vectors with a
 * handful of bulk copies instead of one call per value, so the staging table, and
 * the Parquet DuckDB writes from it, hold exactly the values the per-value appends
 * held.
 *
 * Layouts (DuckDB's, little-endian): BIGINT, TIMESTAMP (µs), TIMESTAMP_NS, TIME (µs),
 * TIME_NS: int64; DATE: int32 days; DOUBLE: the float64 bits; FLOAT: the float32
 * bits (a half as the float32 of the same value, NaN payload kept); BOOLEAN: one byte
 * 0/1; DECIMAL(p, s): int16 / int32 / int64 / int128 by precision (≤4, ≤9, ≤18,
 * ≤38 digits); VARCHAR: 16-byte `string_t` slots, a string of up to 12 UTF-8 bytes
 * inline (u32 length, bytes, zero padding), a longer one left zero here and listed
 * in `long`, for the writer to hand to DuckDB (which owns its heap). Null rows hold
 * zeros.
 *
 * @module
 */
import type { Batch, Column, Field, Schema } from "../format/column.ts";
import { float16BitsToFloat32Bits } from "../format/float16.ts";
import { codesOf } from "../format/coded_strings.ts";
import { IoError } from "./errors.ts";

/** Rows a DuckDB data chunk holds (`STANDARD_VECTOR_SIZE`). */
export const DUCK_VECTOR_ROWS = 2048;

/** Most bytes a DuckDB string holds inline in its 16-byte slot. */
const INLINE_STRING = 12;

/** One column of a {@link DuckImage}. */
export interface DuckColumnImage {
  /** Bytes per row in `data`. */
  width: number;
  /** The rows' values, `width` bytes each, in DuckDB's layout. */
  data: Uint8Array;
  /**
   * Validity bits (bit `i % 64` of little-endian word `i / 64` set when row `i` is
   * present, padding bits set), or null when no row is null.
   */
  validity: Uint8Array | null;
  /** Strings longer than 12 bytes: their rows, and their UTF-8 bytes (row k's at `offsets[k]..offsets[k+1]`). */
  long: { rows: Int32Array; offsets: Int32Array; bytes: Uint8Array } | null;
}

/** Rows laid out for DuckDB's vectors (see the module doc). */
export interface DuckImage {
  /** Marks rows prepared for the Parquet writer. */
  duckImage: true;
  /** Rows. */
  length: number;
  /** One per schema field. */
  columns: DuckColumnImage[];
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT128_MIN = -(2n ** 127n);
const INT128_MAX = 2n ** 127n - 1n;

function outOfRange(field: Field, what: string): IoError {
  return new IoError(
    "WRITE_FAILED",
    `Cannot write ${what} in column '${field.name}' to Parquet: out of range`,
    { column: field.name },
  );
}

/**
 * Bytes per row of a field's values in DuckDB's vectors.
 *
 * @param field A field.
 * @returns 1, 2, 4, 8 or 16.
 */
export function duckWidth(field: Field): number {
  switch (field.type) {
    case "bool":
      return 1;
    case "date":
    case "float32":
    case "float16":
      return 4;
    case "decimal":
      return decimalWidth(field.precision ?? 18);
    case "string":
    case "json":
      return 16;
    default:
      return 8;
  }
}

/** Bytes per row of a decimal of `precision` digits in DuckDB. */
function decimalWidth(precision: number): number {
  return precision <= 4 ? 2 : precision <= 9 ? 4 : precision <= 18 ? 8 : 16;
}

/** The validity bitmap of a column (null when every row is present). */
function validityOf(v: Uint8Array | null, n: number): Uint8Array | null {
  if (v === null) return null;
  let nulls = false;
  for (let i = 0; i < n; i++) {
    if (v[i] === 0) {
      nulls = true;
      break;
    }
  }
  if (!nulls) return null;
  const bits = new Uint8Array(Math.ceil(n / 64) * 8).fill(0xff);
  for (let i = 0; i < n; i++) if (v[i] === 0) bits[i >> 3]! &= ~(1 << (i & 7));
  return bits;
}

/**
 * Lays out a batch's rows for DuckDB's vectors.
 *
 * @param schema The output schema (the batch's columns, in order).
 * @param batch The rows.
 * @returns The image; its buffers are its own (see {@link duckImageTransfer}).
 * @throws {IoError} WRITE_FAILED for a value DuckDB's type cannot hold (a date or a
 * decimal out of range, a timestamp out of range in microseconds, a string with a
 * lone surrogate).
 */
export function duckImageOf(schema: Schema, batch: Batch): DuckImage {
  const n = batch.length;
  const columns = schema.map((f, c) => columnImage(f, batch.columns[c] as Column, n));
  return { duckImage: true, length: n, columns };
}

/** The buffers an image owns, to move it to another thread. */
export function duckImageTransfer(image: DuckImage): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const c of image.columns) {
    out.add(c.data.buffer as ArrayBuffer);
    if (c.validity) out.add(c.validity.buffer as ArrayBuffer);
    if (c.long) {
      out.add(c.long.rows.buffer as ArrayBuffer);
      out.add(c.long.offsets.buffer as ArrayBuffer);
      out.add(c.long.bytes.buffer as ArrayBuffer);
    }
  }
  return [...out];
}

function columnImage(field: Field, col: Column, n: number): DuckColumnImage {
  const v = col.validity;
  const validity = validityOf(v, n);
  const present = (i: number) => v === null || v[i] !== 0;
  switch (col.type) {
    case "int64":
    case "duration":
    case "time":
    case "timestamp": {
      const out = new BigInt64Array(n);
      const unit = field.unit ?? "us";
      // s and ms are stored as microseconds (exact: a multiple); time and timestamp in
      // ns keep their unit (TIME_NS, TIMESTAMP_NS); duration is its ticks.
      const scale = (col.type === "time" || col.type === "timestamp") && unit === "s"
        ? 1000000n
        : (col.type === "time" || col.type === "timestamp") && unit === "ms"
        ? 1000n
        : 1n;
      if (scale === 1n) {
        out.set(col.values.subarray(0, n));
        if (validity) { for (let i = 0; i < n; i++) if (!present(i)) out[i] = 0n; }
      } else {
        for (let i = 0; i < n; i++) {
          if (!present(i)) continue;
          const x = col.values[i]! * scale;
          if (x < INT64_MIN || x > INT64_MAX) {
            throw new IoError(
              "WRITE_FAILED",
              `Cannot write ${col.type} ${
                col.values[i]
              } (${unit}) in column '${field.name}' to Parquet: out of range in microseconds`,
              { column: field.name },
            );
          }
          out[i] = x;
        }
      }
      return { width: 8, data: new Uint8Array(out.buffer), validity, long: null };
    }
    case "date": {
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        if (!present(i)) continue;
        const d = col.values[i]!;
        if (d < -2147483647n || d > 2147483646n) {
          throw new IoError(
            "WRITE_FAILED",
            `Cannot write date ${d} (days) in column '${field.name}' to Parquet: out of range`,
            { column: field.name },
          );
        }
        out[i] = Number(d);
      }
      return { width: 4, data: new Uint8Array(out.buffer), validity, long: null };
    }
    case "float64": {
      const out = new Uint8Array(8 * n);
      out.set(new Uint8Array(col.values.buffer, col.values.byteOffset, 8 * n));
      if (validity) zeroNulls(out, 8, present, n);
      return { width: 8, data: out, validity, long: null };
    }
    case "float32": {
      const out = new Uint8Array(4 * n);
      out.set(new Uint8Array(col.values.buffer, col.values.byteOffset, 4 * n));
      if (validity) zeroNulls(out, 4, present, n);
      return { width: 4, data: out, validity, long: null };
    }
    case "float16": {
      const out = new Uint32Array(n);
      for (let i = 0; i < n; i++) if (present(i)) out[i] = float16BitsToFloat32Bits(col.values[i]!);
      return { width: 4, data: new Uint8Array(out.buffer), validity, long: null };
    }
    case "bool": {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) out[i] = present(i) && col.values[i] === 1 ? 1 : 0;
      return { width: 1, data: out, validity, long: null };
    }
    case "decimal": {
      const width = decimalWidth(field.precision ?? 18);
      const out = new Uint8Array(width * n);
      const view = new DataView(out.buffer);
      for (let i = 0; i < n; i++) {
        if (!present(i)) continue;
        const x = col.values[i]!;
        if (width === 2) {
          if (x < -32768n || x > 32767n) throw outOfRange(field, `decimal ${x}`);
          view.setInt16(2 * i, Number(x), true);
        } else if (width === 4) {
          if (x < -2147483648n || x > 2147483647n) throw outOfRange(field, `decimal ${x}`);
          view.setInt32(4 * i, Number(x), true);
        } else if (width === 8) {
          if (x < INT64_MIN || x > INT64_MAX) throw outOfRange(field, `decimal ${x}`);
          view.setBigInt64(8 * i, x, true);
        } else {
          if (x < INT128_MIN || x > INT128_MAX) throw outOfRange(field, `decimal ${x}`);
          view.setBigUint64(16 * i, BigInt.asUintN(64, x), true);
          view.setBigInt64(16 * i + 8, BigInt.asIntN(64, x >> 64n), true);
        }
      }
      return { width, data: out, validity, long: null };
    }
    case "string":
    case "json":
      return stringImage(field, col.values, present, validity, n);
  }
}

function zeroNulls(out: Uint8Array, width: number, present: (i: number) => boolean, n: number) {
  for (let i = 0; i < n; i++) if (!present(i)) out.fill(0, width * i, width * (i + 1));
}

const encoder = new TextEncoder();

/**
 * Writes `s` into the zeroed 16-byte slot at byte `at` of `slots` when it fits inline
 * (12 UTF-8 bytes at most) and returns null; else returns its UTF-8 bytes, the slot
 * left zero.
 */
function putString(
  field: Field,
  s: string,
  slots: Uint8Array,
  view: DataView,
  at: number,
): Uint8Array | null {
  const len = s.length;
  // ASCII up to 12 characters, the common case, straight into the slot.
  if (len <= INLINE_STRING) {
    let ascii = true;
    for (let j = 0; j < len; j++) {
      const ch = s.charCodeAt(j);
      if (ch > 0x7f) {
        ascii = false;
        break;
      }
      slots[at + 4 + j] = ch;
    }
    if (ascii) {
      view.setUint32(at, len, true);
      return null;
    }
    slots.fill(0, at + 4, at + 16);
  }
  if (!s.isWellFormed()) {
    throw new IoError(
      "WRITE_FAILED",
      `Cannot write column '${field.name}' to Parquet: a string holds a lone surrogate, which UTF-8 cannot store`,
      { column: field.name },
    );
  }
  const bytes = encoder.encode(s);
  if (bytes.length > INLINE_STRING) return bytes;
  view.setUint32(at, bytes.length, true);
  slots.set(bytes, at + 4);
  return null;
}

function stringImage(
  field: Field,
  values: readonly string[],
  present: (i: number) => boolean,
  validity: Uint8Array | null,
  n: number,
): DuckColumnImage {
  const slots = new Uint8Array(16 * n);
  const view = new DataView(slots.buffer);
  const longRows: number[] = [];
  const longBytes: Uint8Array[] = [];
  let longTotal = 0;
  const coded = codesOf(values);
  if (coded !== undefined && coded.dictionary.length <= n) {
    // A dictionary decoder's column: each entry laid out once (when a row first uses
    // it), then its 16 bytes copied per row, as four words.
    const { codes, dictionary } = coded;
    const entrySlots = new Uint8Array(16 * dictionary.length);
    const entryView = new DataView(entrySlots.buffer);
    const entryWords = new Uint32Array(entrySlots.buffer);
    const words = new Uint32Array(slots.buffer);
    const entryLong: (Uint8Array | null | undefined)[] = new Array(dictionary.length);
    for (let i = 0; i < n; i++) {
      if (!present(i)) continue;
      const code = codes[i]!;
      const s = values[i]!;
      if (s !== dictionary[code]) {
        // Changed since decoding (see coded_strings.ts): the value itself.
        const bytes = putString(field, s, slots, view, 16 * i);
        if (bytes !== null) {
          longRows.push(i);
          longBytes.push(bytes);
          longTotal += bytes.length;
        }
        continue;
      }
      let bytes = entryLong[code];
      if (bytes === undefined) {
        bytes = putString(field, s, entrySlots, entryView, 16 * code);
        entryLong[code] = bytes;
      }
      if (bytes === null) {
        const to = 4 * i;
        const from = 4 * code;
        words[to] = entryWords[from]!;
        words[to + 1] = entryWords[from + 1]!;
        words[to + 2] = entryWords[from + 2]!;
        words[to + 3] = entryWords[from + 3]!;
      } else {
        longRows.push(i);
        longBytes.push(bytes);
        longTotal += bytes.length;
      }
    }
  } else {
    for (let i = 0; i < n; i++) {
      if (!present(i)) continue;
      const bytes = putString(field, values[i]!, slots, view, 16 * i);
      if (bytes !== null) {
        longRows.push(i);
        longBytes.push(bytes);
        longTotal += bytes.length;
      }
    }
  }
  let long: DuckColumnImage["long"] = null;
  if (longRows.length > 0) {
    const bytes = new Uint8Array(longTotal);
    const offsets = new Int32Array(longRows.length + 1);
    let o = 0;
    for (let k = 0; k < longBytes.length; k++) {
      bytes.set(longBytes[k]!, o);
      o += longBytes[k]!.length;
      offsets[k + 1] = o;
    }
    long = { rows: Int32Array.from(longRows), offsets, bytes };
  }
  return { width: 16, data: slots, validity, long };
}
