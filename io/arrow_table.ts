/**
 * Exact conversion between the shared column model and apache-arrow: schemas, record
 * batches and tables. Used by the Arrow IPC reader and writer and by the library API
 * to freeze and thaw in-memory `arrow.Table`s.
 *
 * Arrow → columns: Int8…Int64 and Uint8…Uint32 → int64; Uint64 → int64 when the value
 * fits (else SCHEMA_MISMATCH: read the column as string); Float64 → float64, Float32 →
 * float32, Float16 → float16, all bit-exact (NaN payloads too: values are copied as
 * arrays, never one by one), or Float32/Float16 → float64 when the caller forces it; Bool → bool; Timestamp(unit, tz) → timestamp with that unit and
 * timezone; Date32 (days) and Date64 (ms, whole days) → date; Time32/Time64 → time in
 * its unit; Duration → duration in its unit; Decimal128/256(p, s) → decimal(p, s),
 * exactly; Utf8, LargeUtf8, Utf8View and Dictionary<…, Utf8> → string, or json when
 * the field carries the canonical `arrow.json` extension; Null → an all-null string
 * column. Every other type (List, Struct, Map, Union, Binary, Interval, …) has no
 * exact column type: it is refused with UNSUPPORTED_TYPE naming the column and its
 * type, unless the caller forces the column to `string` (a text form of each value)
 * or `json` (each value as JSON), a conversion it then asked for.
 *
 * Columns → Arrow: int64 → Int64 (BigInt64Array), float64 → Float64, float32 →
 * Float32, float16 → Float16 (bits kept),
 * bool → Bool, timestamp → Timestamp(unit, timezone), date → Date32 (DateDay), time →
 * Time32(s, ms) / Time64(us, ns), duration → Duration(unit), decimal → Decimal128
 * (p ≤ 38) or Decimal256, string → Utf8, json → Utf8 with the `arrow.json` extension
 * name; validity → null bitmaps.
 *
 * Pure: no I/O.
 *
 * @module
 */
import * as arrow from "apache-arrow";
import {
  type Batch,
  type Column,
  type Field,
  isWideDecimal,
  MAX_DECIMAL_PRECISION,
  type Schema,
} from "../format/column.ts";
import { float16ToNumber } from "../format/float16.ts";
import { fitsPrecision, readWords, writeWords } from "../format/decimal_value.ts";
import { fitsInt64, storeInt64 } from "./_parse.ts";
import { columnToJson, columnToText, valueJson, valueText } from "./_arrow_text.ts";
import {
  arrowType,
  decimalBits,
  exactFieldFromArrow,
  isStringType,
  schemaFromArrow,
  schemaToArrow,
} from "./arrow_schema.ts";
import { codedUtf8 } from "../format/coded_strings.ts";
import { arrowNulls, asciiUtf8, packBits } from "./_arrow_parts.ts";
import { IoError } from "./errors.ts";
import { movable } from "../internal/transfer.ts";
import type { ForcedType } from "./types.ts";

const MS_PER_DAY = 86400000n;
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

function unpackBits(bits: Uint8Array, off: number, len: number): Uint8Array {
  const out = new Uint8Array(len);
  for (let i = 0; i < len; i++) {
    const j = off + i;
    out[i] = ((bits[j >> 3] ?? 0) >> (j & 7)) & 1;
  }
  return out;
}

function validityOf(d: arrow.Data): Uint8Array | null {
  if (arrow.DataType.isNull(d.type)) return new Uint8Array(d.length);
  if (d.nullCount <= 0 || !d.nullBitmap || d.nullBitmap.length === 0) return null;
  return unpackBits(d.nullBitmap, d.offset, d.length);
}

function decodeStrings(
  values: Uint8Array,
  offsets: ArrayLike<number | bigint>,
  off: number,
  len: number,
  validity: Uint8Array | null,
): string[] {
  const out = new Array<string>(len);
  const base = Number(offsets[off] ?? 0);
  const end = Number(offsets[off + len] ?? 0);
  const bytes = values.subarray(base, end);
  const all = utf8.decode(bytes);
  const ascii = all.length === bytes.length;
  for (let i = 0; i < len; i++) {
    if (validity !== null && validity[i] === 0) {
      out[i] = "";
      continue;
    }
    const s = Number(offsets[off + i] ?? 0);
    const e = Number(offsets[off + i + 1] ?? 0);
    out[i] = ascii ? all.slice(s - base, e - base) : utf8.decode(values.subarray(s, e));
  }
  return out;
}

function mismatch(field: Field, what: string): IoError {
  return new IoError(
    "SCHEMA_MISMATCH",
    `Cannot read ${what} as ${field.type} in column '${field.name}': read the column as string`,
    { column: field.name },
  );
}

/**
 * Converts one Arrow `Data` (a column of one record batch) to a column of `field`'s
 * type. Null slots are set to the type's zero.
 *
 * arrow-js keeps `offset` only for bit-addressed buffers (the null bitmap and Bool
 * values): value and offset buffers of a sliced `Data` are already sub-arrays.
 *
 * @param d The Arrow data.
 * @param field Its column field (from {@link exactFieldFromArrow}).
 * @returns The column.
 * @throws {IoError} SCHEMA_MISMATCH when a Uint64 does not fit int64, a Date64 is not
 * a whole day, a decimal has more digits than its precision or a json value is not
 * JSON.
 */
export function columnFromArrow(d: arrow.Data, field: Field): Column {
  const t = d.type;
  const len = d.length;
  const off = d.offset;
  const validity = validityOf(d);
  const isNull = (i: number) => validity !== null && validity[i] === 0;
  if (field.type === "string" || field.type === "json") {
    let values: string[];
    if (arrow.DataType.isUtf8(t) || arrow.DataType.isLargeUtf8(t)) {
      values = decodeStrings(d.values as Uint8Array, d.valueOffsets, 0, len, validity);
    } else if (arrow.DataType.isDictionary(t) && isStringType(t) && d.dictionary) {
      const dict = d.dictionary.data
        .map((dd) => decodeStrings(dd.values as Uint8Array, dd.valueOffsets, 0, dd.length, null))
        .flat();
      const idx = d.values as ArrayLike<number | bigint>;
      values = new Array<string>(len);
      for (let i = 0; i < len; i++) values[i] = isNull(i) ? "" : dict[Number(idx[i])] ?? "";
    } else {
      const vec = arrow.makeVector(d);
      values = new Array<string>(len);
      const text = isStringType(t) ? String : field.type === "json" ? valueJson : valueText;
      for (let i = 0; i < len; i++) values[i] = isNull(i) ? "" : text(vec.get(i));
    }
    if (field.type === "json" && isStringType(t)) checkJson(values, validity, field);
    return { type: field.type, values, validity };
  }
  if (field.type === "bool") {
    const values = unpackBits(d.values as Uint8Array, off, len);
    if (validity) { for (let i = 0; i < len; i++) if (validity[i] === 0) values[i] = 0; }
    return { type: "bool", values, validity };
  }
  if (field.type === "float64") {
    let values: Float64Array;
    if (arrow.DataType.isFloat(t) && t.precision === arrow.Precision.DOUBLE) {
      values = (d.values as Float64Array).slice(0, len);
    } else if (arrow.DataType.isFloat(t) && t.precision === arrow.Precision.HALF) {
      const src = d.values as Uint16Array;
      values = new Float64Array(len);
      for (let i = 0; i < len; i++) values[i] = float16ToNumber(src[i] ?? 0);
    } else {
      const src = d.values as Float32Array;
      values = new Float64Array(len);
      for (let i = 0; i < len; i++) values[i] = src[i] ?? 0;
    }
    if (validity) { for (let i = 0; i < len; i++) if (validity[i] === 0) values[i] = 0; }
    return { type: "float64", values, validity };
  }
  if (field.type === "float32" || field.type === "float16") {
    // A slice of the same typed array copies bytes: NaN payloads survive.
    const values = field.type === "float32"
      ? (d.values as Float32Array).slice(0, len)
      : (d.values as Uint16Array).slice(0, len);
    if (validity) { for (let i = 0; i < len; i++) if (validity[i] === 0) values[i] = 0; }
    return field.type === "float32"
      ? { type: "float32", values: values as Float32Array, validity }
      : { type: "float16", values: values as Uint16Array, validity };
  }
  if (field.type === "decimal") return decimalFromArrow(d, field, validity);
  // int64, timestamp, date, time, duration: 64-bit integers.
  let values: BigInt64Array;
  const src = d.values as ArrayLike<number | bigint>;
  if (src instanceof BigInt64Array) {
    values = src.slice(0, len);
    if (arrow.DataType.isDate(t) && t.unit === arrow.DateUnit.MILLISECOND) {
      for (let i = 0; i < len; i++) {
        if (isNull(i)) continue;
        const ms = values[i] as bigint;
        if (ms % MS_PER_DAY !== 0n) throw mismatch(field, `Date64 ${ms} (not a whole day)`);
        values[i] = ms / MS_PER_DAY;
      }
    }
  } else if (src instanceof BigUint64Array) {
    values = new BigInt64Array(len);
    for (let i = 0; i < len; i++) {
      if (isNull(i)) continue;
      const v = src[i] as bigint;
      if (!fitsInt64(v)) throw mismatch(field, `${v}`);
      values[i] = v;
    }
  } else {
    values = new BigInt64Array(len);
    const i32 = new Int32Array(values.buffer);
    for (let i = 0; i < len; i++) storeInt64(values, i32, i, Number(src[i] ?? 0));
  }
  if (validity) { for (let i = 0; i < len; i++) if (validity[i] === 0) values[i] = 0n; }
  return { type: field.type as "int64", values, validity };
}

/** Reads an Arrow decimal's words as unscaled integers, checking each against the precision. */
function decimalFromArrow(d: arrow.Data, field: Field, validity: Uint8Array | null): Column {
  const t = d.type as arrow.Decimal;
  const words = t.bitWidth / 32;
  const src = d.values as Uint32Array;
  const len = d.length;
  const precision = field.precision ?? MAX_DECIMAL_PRECISION;
  const wide = isWideDecimal(field);
  const values = wide ? new Array<bigint>(len).fill(0n) : new BigInt64Array(len);
  for (let i = 0; i < len; i++) {
    if (validity !== null && validity[i] === 0) continue;
    const v = readWords(src, i, words);
    if (!fitsPrecision(v, precision)) {
      throw mismatch(field, `the unscaled decimal ${v} (more than ${precision} digits)`);
    }
    values[i] = v;
  }
  return { type: "decimal", values, validity };
}

/** Checks every present value of a json column parses as JSON. */
function checkJson(values: string[], validity: Uint8Array | null, field: Field): void {
  for (let i = 0; i < values.length; i++) {
    if (validity !== null && validity[i] === 0) continue;
    try {
      JSON.parse(values[i]!);
    } catch {
      throw new IoError(
        "SCHEMA_MISMATCH",
        `Cannot read row ${i} of json column '${field.name}': ${
          JSON.stringify(values[i]!.slice(0, 40))
        } is not JSON`,
        { column: field.name },
      );
    }
  }
}

/**
 * Converts an Arrow record batch to a batch of `schema`.
 *
 * @param rb The record batch.
 * @param schema Its column schema (from {@link schemaFromArrow}, possibly with columns
 * forced to string or json).
 * @returns The batch.
 */
export function batchFromArrow(rb: arrow.RecordBatch, schema: Schema): Batch {
  const columns = schema.map((f, i) => {
    const child = rb.data.children[i] as arrow.Data;
    const natural = exactFieldFromArrow(rb.schema.fields[i] as arrow.Field);
    if (natural === null || f.type === natural.type || f.type === "float64") {
      return columnFromArrow(child, f);
    }
    const col = columnFromArrow(child, natural);
    return f.type === "json" ? columnToJson(col, natural) : columnToText(col, natural);
  });
  return { schema, columns, length: rb.numRows };
}

/**
 * Converts one column to Arrow data.
 *
 * @param col The column.
 * @param field Its field.
 * @returns The Arrow data.
 * @throws {IoError} WRITE_FAILED when a date is outside Date32's range or a string is
 * not well-formed Unicode (a lone surrogate, which UTF-8 cannot hold).
 */
export function columnToArrow(col: Column, field: Field): arrow.Data {
  const length = col.values.length;
  const type = arrowType(field);
  const nulls = arrowNulls(col.validity, length);
  const props = {
    type,
    length,
    nullCount: nulls.nullCount,
    nullBitmap: nulls.nullBitmap ?? undefined,
  } as const;
  switch (col.type) {
    case "int64":
    case "timestamp":
    case "duration":
      return arrow.makeData({ ...props, data: col.values } as never);
    case "time": {
      if (field.unit !== "s" && field.unit !== "ms") {
        return arrow.makeData({ ...props, data: col.values } as never);
      }
      const ticks = new Int32Array(length);
      for (let i = 0; i < length; i++) {
        const v = col.values[i] as bigint;
        if (v < -2147483648n || v > 2147483647n) {
          throw new IoError(
            "WRITE_FAILED",
            `Cannot write time ${v} (${field.unit}) in column '${field.name}' as Arrow Time32: out of range`,
            { column: field.name },
          );
        }
        ticks[i] = Number(v);
      }
      return arrow.makeData({ ...props, data: ticks } as never);
    }
    case "decimal": {
      const words = decimalBits(field) / 32;
      const data = new Uint32Array(length * words);
      for (let i = 0; i < length; i++) writeWords(data, i, words, col.values[i] as bigint);
      return arrow.makeData({ ...props, data } as never);
    }
    case "date": {
      const days = new Int32Array(length);
      for (let i = 0; i < length; i++) {
        const v = col.values[i] as bigint;
        if (v < -2147483648n || v > 2147483647n) {
          throw new IoError(
            "WRITE_FAILED",
            `Cannot write date ${v} (days) in column '${field.name}' as Arrow Date32: out of range`,
            { column: field.name },
          );
        }
        days[i] = Number(v);
      }
      return arrow.makeData({ ...props, data: days } as never);
    }
    case "float64":
    case "float32":
    case "float16":
      return arrow.makeData({ ...props, data: col.values } as never);
    case "bool":
      return arrow.makeData({ ...props, data: packBits(col.values, length) } as never);
    case "string":
    case "json": {
      // Each string's UTF-8 length is counted here (refusing a lone surrogate, which
      // UTF-8 cannot hold), then the whole column is encoded in one call: one call per
      // string cost more than the rest of the conversion.
      const offsets = new Int32Array(length + 1);
      const ascii = codedUtf8(col.values as string[], length, offsets) ??
        asciiUtf8(col.values as string[], offsets);
      if (ascii !== null) {
        return arrow.makeData({ ...props, valueOffsets: offsets, data: ascii } as never);
      }
      const joined = (col.values as string[]).join("");
      let total = 0;
      for (let i = 0; i < length; i++) {
        const s = col.values[i] as string;
        let bytes = s.length;
        for (let j = 0; j < s.length; j++) {
          const c = s.charCodeAt(j);
          if (c < 0x80) continue;
          if (c < 0x800) bytes += 1;
          else if (c >= 0xd800 && c <= 0xdbff && j + 1 < s.length) {
            const d = s.charCodeAt(j + 1);
            if (d < 0xdc00 || d > 0xdfff) throw loneSurrogate(i, field);
            bytes += 2; // 4 bytes for the 2 code units
            j++;
          } else if (c >= 0xd800 && c <= 0xdfff) throw loneSurrogate(i, field);
          else bytes += 2;
        }
        total += bytes;
        if (total > 2147483647) {
          throw new IoError(
            "WRITE_FAILED",
            `Cannot write column '${field.name}': over 2 GiB of text in one batch`,
            { column: field.name },
          );
        }
        offsets[i + 1] = total;
      }
      const buf = new Uint8Array(total);
      const { written } = encoder.encodeInto(joined, buf);
      if (written !== total) {
        throw new IoError(
          "WRITE_FAILED",
          `Cannot write column '${field.name}': its text encoded to ${written} bytes, ${total} were counted`,
          { column: field.name },
        );
      }
      return arrow.makeData({ ...props, valueOffsets: offsets, data: buf } as never);
    }
  }
}

function loneSurrogate(row: number, field: Field): IoError {
  return new IoError(
    "WRITE_FAILED",
    `Cannot write row ${row} of column '${field.name}': the string holds a lone surrogate, which UTF-8 cannot store`,
    { column: field.name },
  );
}

/**
 * Converts a batch to an Arrow record batch.
 *
 * @param batch The batch.
 * @param schema The Arrow schema (from {@link schemaToArrow} of `batch.schema`).
 * @returns The record batch.
 */
export function batchToArrow(batch: Batch, schema: arrow.Schema): arrow.RecordBatch {
  const children = batch.schema.map((f, i) => columnToArrow(batch.columns[i] as Column, f));
  return recordBatchOf(schema, batch.length, children);
}

/** A record batch of `length` rows with these columns. */
function recordBatchOf(
  schema: arrow.Schema,
  length: number,
  children: arrow.Data[],
): arrow.RecordBatch {
  const data = arrow.makeData({
    type: new arrow.Struct(schema.fields),
    length,
    nullCount: 0,
    children,
  });
  return new arrow.RecordBatch(schema, data);
}

/**
 * A batch converted to Arrow's buffers on another thread (a thaw's Worker), ready for
 * {@link arrowPartsToBatch}: the per-value work of {@link batchToArrow} is done, and
 * what crosses is the buffers alone (Arrow's classes do not survive a `postMessage`).
 */
export interface ArrowParts {
  /** Marks the parts apart from a `Batch`. */
  readonly arrowParts: true;
  /** Rows. */
  readonly length: number;
  /** One entry per column, in schema order. */
  readonly columns: readonly ArrowColumnParts[];
}

/** The buffers of one column's Arrow data. */
export interface ArrowColumnParts {
  length: number;
  nullCount: number;
  nullBitmap: Uint8Array | null;
  valueOffsets: Int32Array | null;
  values: ArrayBufferView;
}

/**
 * Converts a batch to Arrow buffers, for {@link arrowPartsToBatch} on another thread.
 *
 * @param batch The batch.
 * @param schema The Arrow schema (from {@link schemaToArrow} of `batch.schema`).
 * @returns The parts, and the buffers in them (each a buffer of its own) to transfer.
 * @throws {IoError} WRITE_FAILED as {@link batchToArrow}.
 */
export function batchToArrowParts(
  batch: Batch,
  schema: arrow.Schema,
): { parts: ArrowParts; transfer: ArrayBuffer[] } {
  const transfer = new Set<ArrayBuffer>();
  const own = <T extends ArrayBufferView>(view: T): T => movable(view, transfer);
  const children = batchToArrow(batch, schema).data.children;
  const columns = children.map((d): ArrowColumnParts => ({
    length: d.length,
    nullCount: d.nullCount,
    nullBitmap: d.nullBitmap && d.nullCount > 0 ? own(d.nullBitmap) : null,
    valueOffsets: d.valueOffsets ? own(d.valueOffsets as Int32Array) : null,
    values: own(d.values as ArrayBufferView),
  }));
  return { parts: { arrowParts: true, length: batch.length, columns }, transfer: [...transfer] };
}

/**
 * The record batch of parts made by {@link batchToArrowParts}.
 *
 * @param parts The parts.
 * @param schema The Arrow schema they were made for.
 * @returns The record batch.
 */
export function arrowPartsToBatch(parts: ArrowParts, schema: arrow.Schema): arrow.RecordBatch {
  const children = parts.columns.map((c, i) =>
    arrow.makeData({
      type: schema.fields[i]!.type,
      length: c.length,
      nullCount: c.nullCount,
      ...(c.nullBitmap ? { nullBitmap: c.nullBitmap } : {}),
      ...(c.valueOffsets ? { valueOffsets: c.valueOffsets } : {}),
      data: c.values,
    } as never)
  );
  return recordBatchOf(schema, parts.length, children);
}

/**
 * Converts an in-memory Arrow table to a schema and batches (one per record batch).
 *
 * @param table The Arrow table.
 * @param types Forced column types (`json` or `string` for a type without an exact column type).
 * @returns Its schema and batches.
 * @throws {IoError} SCHEMA_MISMATCH when a Uint64 does not fit int64; UNSUPPORTED_TYPE
 * for a column no type holds exactly (unless forced).
 *
 * @example Round-trip a table
 * ```ts
 * import assert from "node:assert/strict";
 * import * as arrow from "apache-arrow";
 * import { batchesToTable, tableToBatches } from "./arrow_table.ts";
 * const table = arrow.tableFromArrays({ n: new BigInt64Array([1n, -2n]) });
 * const { schema, batches } = tableToBatches(table);
 * assert.equal(schema[0]?.type, "int64");
 * assert.equal(batchesToTable(schema, batches).getChild("n")?.get(1), -2n);
 * ```
 */
export function tableToBatches(
  table: arrow.Table,
  types: Readonly<Record<string, ForcedType>> = {},
): { schema: Schema; batches: Batch[] } {
  const schema = schemaFromArrow(table.schema, types);
  return { schema, batches: table.batches.map((rb) => batchFromArrow(rb, schema)) };
}

/**
 * Builds an Arrow table from a schema and batches: int64 as Int64 (BigInt64Array),
 * timestamps with their unit and timezone, dates as Date32 (DateDay), nulls kept.
 *
 * @param schema The column schema.
 * @param batches Batches of that schema (or their parts, converted on a Worker thread).
 * @returns The Arrow table (one record batch per batch).
 */
export function batchesToTable(schema: Schema, batches: Iterable<Batch | ArrowParts>): arrow.Table {
  const as = schemaToArrow(schema);
  const rbs: arrow.RecordBatch[] = [];
  for (const b of batches) {
    rbs.push("arrowParts" in b ? arrowPartsToBatch(b, as) : batchToArrow(b, as));
  }
  return new arrow.Table(as, rbs);
}
