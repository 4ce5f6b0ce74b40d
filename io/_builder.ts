/**
 * Column builders: typed arrays sized for one batch that the readers fill cell by
 * cell, then hand over as a `Batch` (no copy). Validity is allocated on the first null.
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

const EMPTY_BIG = new BigInt64Array(0);
const EMPTY_I32 = new Int32Array(0);
const EMPTY_F64 = new Float64Array(0);
const EMPTY_U8 = new Uint8Array(0);

/** One column under construction; readers write straight into its arrays. */
export class ColumnBuilder {
  /** The column type. */
  readonly type: ColumnType;
  /** Values of int64 / timestamp / date / time / duration columns and 64-bit decimals. */
  readonly big: BigInt64Array;
  /** Unscaled values of decimals wider than 64 bits. */
  readonly wide: bigint[];
  /** `big` seen as 32-bit halves (fast stores of safe integers). */
  readonly i32: Int32Array;
  /** Values of float64 columns. */
  readonly f64: Float64Array;
  /** Values of bool columns. */
  readonly u8: Uint8Array;
  /** Values of string and json columns. */
  readonly str: string[];
  /** Byte-per-row validity, `null` until the first null. */
  validity: Uint8Array | null = null;
  readonly #capacity: number;
  readonly #wide: boolean;

  /**
   * @param field The column's field (its type; a decimal's precision).
   * @param capacity Rows the batch can hold.
   */
  constructor(field: Pick<Field, "type" | "precision">, capacity: number) {
    const type = field.type;
    this.type = type;
    this.#capacity = capacity;
    const wide = isWideDecimal(field);
    this.#wide = wide;
    const bigType = BIGINT_TYPES.has(type) || (type === "decimal" && !wide);
    this.big = bigType ? new BigInt64Array(capacity) : EMPTY_BIG;
    this.i32 = bigType ? new Int32Array(this.big.buffer) : EMPTY_I32;
    this.wide = wide ? new Array<bigint>(capacity).fill(0n) : [];
    this.f64 = type === "float64" ? new Float64Array(capacity) : EMPTY_F64;
    this.u8 = type === "bool" ? new Uint8Array(capacity) : EMPTY_U8;
    this.str = TEXT_TYPES.has(type) ? new Array<string>(capacity).fill("") : [];
  }

  /** Stores an unscaled decimal at `row` (into `big` or `wide` by the field's precision). */
  setDecimal(row: number, unscaled: bigint): void {
    if (this.#wide) this.wide[row] = unscaled;
    else this.big[row] = unscaled;
  }

  /** Marks `row` null (its value slot stays the type's zero). */
  setNull(row: number): void {
    if (this.validity === null) this.validity = new Uint8Array(this.#capacity).fill(1);
    this.validity[row] = 0;
  }

  /** Hands over the first `length` rows as a column. */
  finish(length: number): Column {
    const full = length === this.#capacity;
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
  /** Rows written so far. */
  length = 0;

  /**
   * @param schema Fields of the batch.
   * @param capacity Rows the batch can hold.
   */
  constructor(schema: Schema, capacity: number) {
    this.schema = schema;
    this.capacity = capacity;
    this.columns = schema.map((f: Field) => new ColumnBuilder(f, capacity));
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
