/**
 * Column builders: typed arrays sized for one batch that the readers fill cell by
 * cell, then hand over as a `Batch` (no copy when full). Validity is allocated on the
 * first null.
 *
 * A growable builder (the text readers') starts with room for
 * {@link BUILDER_CELL_BUDGET} cells over all its columns (at least
 * {@link MIN_BUILDER_ROWS} rows) and doubles as rows arrive, up to its capacity: a
 * narrow table gets its whole batch at once, as before, while a wide one no longer
 * reserves a 65,536-row array per column (~512 kB each) for the handful of rows a
 * wide file holds.
 *
 * Pure: no I/O.
 *
 * @module
 */
import {
  type Batch,
  BIGINT_TYPES,
  type Column,
  type ColumnType,
  type Field,
  isWideDecimal,
  type Schema,
  TEXT_TYPES,
} from "../format/column.ts";
import { numberToFloat16 } from "../format/float16.ts";

const EMPTY_BIG = new BigInt64Array(0);
const EMPTY_I32 = new Int32Array(0);
const EMPTY_F64 = new Float64Array(0);
const EMPTY_F32 = new Float32Array(0);
const EMPTY_U16 = new Uint16Array(0);
const EMPTY_U8 = new Uint8Array(0);

/** Cells a growable batch builder reserves up front, over all its columns. */
export const BUILDER_CELL_BUDGET = 1 << 20;
/** Rows a growable batch builder reserves up front, however wide. */
export const MIN_BUILDER_ROWS = 16;

/** One column under construction; readers write straight into its arrays. */
export class ColumnBuilder {
  /** The column type. */
  readonly type: ColumnType;
  /** Values of int64 / timestamp / date / time / duration columns and 64-bit decimals. */
  big: BigInt64Array;
  /** Unscaled values of decimals wider than 64 bits. */
  wide: bigint[];
  /** `big` seen as 32-bit halves (fast stores of safe integers). */
  i32: Int32Array;
  /** Values of float64 columns. */
  f64: Float64Array;
  /** Values of float32 columns. */
  f32: Float32Array;
  /** Bit patterns of float16 columns. */
  u16: Uint16Array;
  /** Values of bool columns. */
  u8: Uint8Array;
  /** Values of string and json columns. */
  str: string[];
  /** Byte-per-row validity, `null` until the first null. */
  validity: Uint8Array | null = null;
  #rows: number;
  readonly #wide: boolean;

  /**
   * @param field The column's field (its type; a decimal's precision).
   * @param rows Rows the arrays hold (see {@link ColumnBuilder.grow}).
   */
  constructor(field: Pick<Field, "type" | "precision">, rows: number) {
    const type = field.type;
    this.type = type;
    this.#rows = rows;
    const wide = isWideDecimal(field);
    this.#wide = wide;
    const bigType = BIGINT_TYPES.has(type) || (type === "decimal" && !wide);
    this.big = bigType ? new BigInt64Array(rows) : EMPTY_BIG;
    this.i32 = bigType ? new Int32Array(this.big.buffer) : EMPTY_I32;
    this.wide = wide ? new Array<bigint>(rows).fill(0n) : [];
    this.f64 = type === "float64" ? new Float64Array(rows) : EMPTY_F64;
    this.f32 = type === "float32" ? new Float32Array(rows) : EMPTY_F32;
    this.u16 = type === "float16" ? new Uint16Array(rows) : EMPTY_U16;
    this.u8 = type === "bool" ? new Uint8Array(rows) : EMPTY_U8;
    this.str = TEXT_TYPES.has(type) ? new Array<string>(rows).fill("") : [];
  }

  /** Stores an unscaled decimal at `row` (into `big` or `wide` by the field's precision). */
  setDecimal(row: number, unscaled: bigint): void {
    if (this.#wide) this.wide[row] = unscaled;
    else this.big[row] = unscaled;
  }

  /**
   * Stores a parsed number at `row` of a float column: float32 and float16 round it
   * to nearest (ties to even), as parsing the text straight to that width would.
   */
  setFloat(row: number, x: number): void {
    if (this.type === "float64") this.f64[row] = x;
    else if (this.type === "float32") this.f32[row] = x;
    else this.u16[row] = numberToFloat16(x);
  }

  /** Makes the arrays hold `rows` rows, keeping what they hold. */
  grow(rows: number): void {
    if (this.big !== EMPTY_BIG) {
      const big = new BigInt64Array(rows);
      big.set(this.big);
      this.big = big;
      this.i32 = new Int32Array(big.buffer);
    }
    if (this.f64 !== EMPTY_F64) {
      const f64 = new Float64Array(rows);
      f64.set(this.f64);
      this.f64 = f64;
    }
    if (this.f32 !== EMPTY_F32) {
      const f32 = new Float32Array(rows);
      f32.set(this.f32);
      this.f32 = f32;
    }
    if (this.u16 !== EMPTY_U16) {
      const u16 = new Uint16Array(rows);
      u16.set(this.u16);
      this.u16 = u16;
    }
    if (this.u8 !== EMPTY_U8) {
      const u8 = new Uint8Array(rows);
      u8.set(this.u8);
      this.u8 = u8;
    }
    if (this.#wide) {
      for (let i = this.#rows; i < rows; i++) this.wide.push(0n);
    }
    if (TEXT_TYPES.has(this.type)) {
      for (let i = this.#rows; i < rows; i++) this.str.push("");
    }
    if (this.validity !== null) {
      const v = new Uint8Array(rows).fill(1);
      v.set(this.validity);
      this.validity = v;
    }
    this.#rows = rows;
  }

  /** Marks `row` null (its value slot stays the type's zero). */
  setNull(row: number): void {
    if (this.validity === null) this.validity = new Uint8Array(this.#rows).fill(1);
    this.validity[row] = 0;
  }

  /** Hands over the first `length` rows as a column. */
  finish(length: number): Column {
    const full = length === this.#rows;
    const validity = this.validity === null
      ? null
      : full
      ? this.validity
      : this.validity.slice(0, length);
    switch (this.type) {
      case "int64":
      case "timestamp":
      case "date":
      case "time":
      case "duration":
        return { type: this.type, values: full ? this.big : this.big.slice(0, length), validity };
      case "decimal": {
        const values = this.#wide
          ? (full ? this.wide : this.wide.slice(0, length))
          : (full ? this.big : this.big.slice(0, length));
        return { type: this.type, values, validity };
      }
      case "float64":
        return { type: this.type, values: full ? this.f64 : this.f64.slice(0, length), validity };
      case "float32":
        return { type: this.type, values: full ? this.f32 : this.f32.slice(0, length), validity };
      case "float16":
        return { type: this.type, values: full ? this.u16 : this.u16.slice(0, length), validity };
      case "bool":
        return { type: this.type, values: full ? this.u8 : this.u8.slice(0, length), validity };
      case "string":
      case "json":
        if (!full) this.str.length = length;
        return { type: this.type, values: this.str, validity };
    }
  }
}

/** Builders for every column of a schema, plus the row count so far. */
export class BatchBuilder {
  /** The schema being built. */
  readonly schema: Schema;
  /** One builder per field. */
  readonly columns: ColumnBuilder[];
  /** Rows the batch can hold. */
  readonly capacity: number;
  /** Rows the columns' arrays hold now (`capacity` unless growable). */
  rows: number;
  /** Rows written so far. */
  length = 0;

  /**
   * @param schema Fields of the batch.
   * @param capacity Rows the batch can hold.
   * @param options `growable`: reserve by {@link BUILDER_CELL_BUDGET} and grow on
   * {@link BatchBuilder.reserve} (default: reserve `capacity` rows at once).
   */
  constructor(schema: Schema, capacity: number, options: { growable?: boolean } = {}) {
    this.schema = schema;
    this.capacity = capacity;
    this.rows = options.growable
      ? Math.min(
        capacity,
        Math.max(MIN_BUILDER_ROWS, Math.floor(BUILDER_CELL_BUDGET / Math.max(1, schema.length))),
      )
      : capacity;
    this.columns = schema.map((f: Field) => new ColumnBuilder(f, this.rows));
  }

  /** Makes room for row `row` (below `capacity`) before a reader writes it. */
  reserve(row: number): void {
    if (row < this.rows) return;
    const rows = Math.min(this.capacity, Math.max(row + 1, this.rows * 2));
    for (const c of this.columns) c.grow(rows);
    this.rows = rows;
  }

  /** Hands over the rows written so far as a batch. */
  finish(): Batch {
    return {
      schema: this.schema,
      columns: this.columns.map((c) => c.finish(this.length)),
      length: this.length,
    };
  }
}
