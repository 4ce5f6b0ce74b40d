/**
 * Reading DuckDB result chunks into typed batches (private to `parquet.ts`): one
 * vector reader per column plan, short strings through a per-column cache, exact
 * unit and precision checks on the way in.
 *
 * @module
 */
import type {
  DuckDBBigIntVector,
  DuckDBBooleanVector,
  DuckDBDataChunk,
  DuckDBDoubleVector,
  DuckDBFloatVector,
  DuckDBResult,
  DuckDBVarCharVector,
} from "@duckdb/node-api";
import type { Batch } from "../format/column.ts";
import { float32BitsToFloat16Bits } from "../format/float16.ts";
import { BatchBuilder, type ColumnBuilder } from "./_builder.ts";
import { fitsInt64 } from "./_parse.ts";
import { type ColumnPlan, readFailed, type ShortStringCache } from "./_parquet_plan.ts";
import { IoError } from "./errors.ts";

/**
 * Streams a query's result as batches of `batchRows` rows, read by `plans`.
 *
 * @param query Starts the query.
 * @param path The file, for messages.
 * @param plans One plan per result column.
 * @param batchRows Rows per batch.
 * @param firstRow The file row of the result's first row, for messages.
 * @returns The batches.
 */
export async function* parquetBatches(
  query: () => Promise<DuckDBResult>,
  path: string,
  plans: ColumnPlan[],
  batchRows: number,
  firstRow: number,
): AsyncGenerator<Batch> {
  if (plans.length === 0) return;
  const schema = plans.map((p) => p.field);
  let result;
  try {
    result = await query();
  } catch (cause) {
    throw readFailed(path, cause);
  }
  let b = new BatchBuilder(schema, batchRows);
  let row = 0;
  let rowsBefore = firstRow;
  for (;;) {
    let chunk: DuckDBDataChunk | null;
    try {
      chunk = await result.fetchChunk();
    } catch (cause) {
      throw readFailed(path, cause);
    }
    if (chunk === null || chunk.rowCount === 0) break;
    const n = chunk.rowCount;
    let at = 0;
    while (at < n) {
      const take = Math.min(n - at, batchRows - row);
      for (let c = 0; c < plans.length; c++) {
        copyVector(chunk, c, plans[c] as ColumnPlan, b.columns[c] as ColumnBuilder, at, take, row, {
          path,
          rowBase: rowsBefore + at,
        });
      }
      row += take;
      at += take;
      if (row === batchRows) {
        b.length = row;
        yield b.finish();
        b = new BatchBuilder(schema, batchRows);
        row = 0;
      }
    }
    rowsBefore += n;
  }
  if (row > 0) {
    b.length = row;
    yield b.finish();
  }
}

/** Copies `take` rows of column `c` of a chunk, from row `at`, into a builder at `row`. */
function copyVector(
  chunk: DuckDBDataChunk,
  c: number,
  plan: ColumnPlan,
  col: ColumnBuilder,
  at: number,
  take: number,
  row: number,
  where: { path: string; rowBase: number },
): void {
  const vector = chunk.getColumnVector(c);
  switch (plan.read) {
    case "bigint": {
      const v = vector as DuckDBBigIntVector;
      const div = plan.divide;
      for (let i = 0; i < take; i++) {
        const x = v.getItem(at + i);
        if (x === null) col.setNull(row + i);
        else if (div === undefined) col.big[row + i] = x;
        else if (x % div === 0n) col.big[row + i] = x / div;
        else {
          throw new IoError(
            "SCHEMA_MISMATCH",
            `Cannot read ${x} µs as ${plan.field.unit} in column '${plan.field.name}' at row ${
              where.rowBase + i
            } of Parquet '${where.path}': not a whole ${plan.field.unit}; read the column as string`,
            { path: where.path, column: plan.field.name },
          );
        }
      }
      return;
    }
    case "wide": {
      const v = vector as unknown as { getItem(i: number): bigint | null };
      for (let i = 0; i < take; i++) {
        const x = v.getItem(at + i);
        if (x === null) col.setNull(row + i);
        else if (fitsInt64(x)) col.big[row + i] = x;
        else {
          throw new IoError(
            "SCHEMA_MISMATCH",
            `Cannot read ${x} as int64 in column '${plan.field.name}' at row ${
              where.rowBase + i
            } of Parquet '${where.path}': it does not fit in 64 bits; read the column as string`,
            { path: where.path, column: plan.field.name },
          );
        }
      }
      return;
    }
    case "decimal": {
      // Decimal16/32 vectors give numbers, Decimal64/128 bigints: both exact integers.
      const v = vector as unknown as { getScaledValue(i: number): bigint | number | null };
      for (let i = 0; i < take; i++) {
        const x = v.getScaledValue(at + i);
        if (x === null) col.setNull(row + i);
        else col.setDecimal(row + i, BigInt(x));
      }
      return;
    }
    case "time": {
      // DuckDBTimeValue holds `micros`, DuckDBTimeNSValue `nanos`.
      const v = vector as unknown as {
        getItem(i: number): { micros?: bigint; nanos?: bigint } | null;
      };
      const div = plan.divide;
      for (let i = 0; i < take; i++) {
        const x = v.getItem(at + i);
        if (x === null) {
          col.setNull(row + i);
          continue;
        }
        const ticks = x.micros ?? x.nanos ?? 0n;
        if (div === undefined) col.big[row + i] = ticks;
        else if (ticks % div === 0n) col.big[row + i] = ticks / div;
        else {
          throw new IoError(
            "SCHEMA_MISMATCH",
            `Cannot read ${ticks} µs as ${plan.field.unit} in column '${plan.field.name}' at row ${
              where.rowBase + i
            } of Parquet '${where.path}': not a whole ${plan.field.unit}; read the column as string`,
            { path: where.path, column: plan.field.name },
          );
        }
      }
      return;
    }
    case "double": {
      const v = vector as DuckDBDoubleVector;
      for (let i = 0; i < take; i++) {
        const x = v.getItem(at + i);
        if (x === null) col.setNull(row + i);
        else col.f64[row + i] = x;
      }
      return;
    }
    case "float32":
    case "float16": {
      // The client's own array (read-only use), copied as bit patterns: read one by
      // one, a float32 loses a signalling NaN's bit.
      const v = vector as DuckDBFloatVector;
      const items = (v as unknown as { items: Float32Array }).items;
      const bits = new Uint32Array(items.buffer, items.byteOffset + 4 * at, take);
      if (plan.read === "float32") {
        new Uint32Array(col.f32.buffer, 4 * row, take).set(bits);
      }
      for (let i = 0; i < take; i++) {
        if (v.getItem(at + i) === null) {
          col.setNull(row + i);
          if (plan.read === "float32") col.f32[row + i] = 0;
          continue;
        }
        if (plan.read === "float32") continue;
        const half = float32BitsToFloat16Bits(bits[i]!);
        if (half < 0) {
          throw new IoError(
            "SCHEMA_MISMATCH",
            `Cannot read ${items[at + i]} as float16 in column '${plan.field.name}' at row ${
              where.rowBase + i
            } of Parquet '${where.path}': it is not a float16 value; read the column as float32`,
            { path: where.path, column: plan.field.name },
          );
        }
        col.u16[row + i] = half;
      }
      return;
    }
    case "bool": {
      const v = vector as DuckDBBooleanVector;
      for (let i = 0; i < take; i++) {
        const x = v.getItem(at + i);
        if (x === null) col.setNull(row + i);
        else col.u8[row + i] = x ? 1 : 0;
      }
      return;
    }
    case "string": {
      const v = vector as DuckDBVarCharVector;
      // The client's own fields (read-only use): its 16-byte string slots and validity.
      const { dataView: view, validity } = v as unknown as {
        dataView?: DataView;
        validity?: { itemValid(i: number): boolean };
      };
      const slots = view && new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
      const cache = plan.strings ??= { small: new Map(), map: new Map(), size: 0 };
      for (let i = 0; i < take; i++) {
        const short = slots && validity?.itemValid(at + i)
          ? shortString(slots, (at + i) * 16, cache)
          : undefined;
        const x = short ?? v.getItem(at + i);
        if (x === null) col.setNull(row + i);
        else col.str[row + i] = x;
      }
      return;
    }
  }
}

/** Most distinct short strings remembered per column. */
const SHORT_STRING_CACHE = 1 << 16;

/**
 * Reads a DuckDB string of at most 12 bytes (stored inline in its 16-byte slot:
 * u32 length, then the bytes) through a per-column cache keyed by its bytes, so
 * low-cardinality columns (codes, categories) skip UTF-8 decoding and allocate
 * one string per distinct value. Longer strings (and a full cache) return
 * undefined: the caller decodes them the usual way.
 */
function shortString(
  bytes: Uint8Array,
  offset: number,
  cache: ShortStringCache,
): string | undefined {
  const length = bytes[offset]! | (bytes[offset + 1]! << 8) | (bytes[offset + 2]! << 16) |
    (bytes[offset + 3]! << 24);
  if (length < 0 || length > 12) return undefined;
  // Only the string's own bytes form the key, so padding never matters.
  let w0 = 0;
  let w1 = 0;
  let w2 = 0;
  const at = offset + 4;
  for (let j = 0; j < length; j++) {
    const b = bytes[at + j]!;
    if (j < 4) w0 = w0 * 256 + b;
    else if (j < 8) w1 = w1 * 256 + b;
    else w2 = w2 * 256 + b;
  }
  const k0 = length * 4294967296 + w0;
  if (length <= 4) {
    // The common case (codes, short categories): one flat lookup.
    const hit = cache.small.get(k0);
    if (hit !== undefined) return hit;
  } else {
    const hit = cache.map.get(k0)?.get(w1)?.get(w2);
    if (hit !== undefined) return hit;
  }
  if (cache.size >= SHORT_STRING_CACHE) return undefined;
  const text = SHORT_DECODER.decode(bytes.subarray(at, at + length));
  if (length <= 4) cache.small.set(k0, text);
  else {
    let level1 = cache.map.get(k0);
    if (!level1) cache.map.set(k0, level1 = new Map());
    let level2 = level1.get(w1);
    if (!level2) level1.set(w1, level2 = new Map());
    level2.set(w2, text);
  }
  cache.size++;
  return text;
}

const SHORT_DECODER = new TextDecoder();
