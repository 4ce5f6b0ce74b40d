/**
 * Private helpers every predictor shares: the row-count prefix of each block,
 * and type checks on the way in and out.
 *
 * Every predictor's output starts with `varint row count` (FORMAT.md §4), so
 * a block decoded with the wrong length is refused before anything is
 * allocated, even when the rest of the bytes would happen to fit.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import { ByteReader } from "../_bytes.ts";
import type { BigIntColumn, Column, ColumnType, DecimalColumn, Field } from "../column.ts";
import { FormatError } from "../errors.ts";

/**
 * Column types the integer predictors encode: those held as `BigInt64Array`, and
 * decimals (their unscaled integers; the block layer hands a wide decimal over as a
 * `BigInt64Array` only when every value fits 64 bits).
 */
export const INT_TYPES: ReadonlySet<ColumnType> = new Set([
  "int64",
  "timestamp",
  "date",
  "time",
  "duration",
  "decimal",
]);

/** Column types held as `string[]`, which the text predictors encode (the column model's set). */
export { TEXT_TYPES } from "../column.ts";

/**
 * The 64-bit values of a column an integer predictor encodes, or null when they are
 * not held as a `BigInt64Array` (a wide decimal's `bigint[]`: the predictor does not
 * fit, and the caller tries another).
 *
 * @param id Predictor id.
 * @param column The column.
 * @returns Its values, or null.
 * @throws {FormatError} `BAD_ARGUMENT` if the column is not of an integer type.
 */
export function intValues(id: string, column: Column): BigInt64Array | null {
  const { values } = expectColumn(id, column, INT_TYPES) as BigIntColumn | DecimalColumn;
  return values instanceof BigInt64Array ? values : null;
}

/**
 * Checks the length a caller asks for, reads the block's row count and
 * compares them.
 *
 * @param id Predictor id, for messages.
 * @param bytes The block.
 * @param length Rows the caller expects.
 * @param field The column's field, for messages.
 * @returns A reader positioned after the row count.
 * @throws {FormatError} `CORRUPT` if `length` is not a count or the block holds another count.
 */
export function openBlock(
  id: string,
  bytes: Uint8Array,
  length: number,
  field: Field,
): ByteReader {
  const what = `${id} block of column '${field.name}'`;
  if (!Number.isSafeInteger(length) || length < 0) {
    throw new FormatError(
      "CORRUPT",
      `Cannot decode ${what}: expected a row count, found ${length}`,
      { column: field.name },
    );
  }
  const reader = new ByteReader(bytes, what);
  const count = reader.varint("row count");
  if (count !== length) {
    throw new FormatError(
      "CORRUPT",
      `Cannot decode ${what}: expected ${length} rows, found ${count}`,
      { column: field.name, offset: 0 },
    );
  }
  return reader;
}

/**
 * The values a decoder must return: `context.prefix` when the caller reads only the
 * first rows (see `DecodeContext.prefix`), else all `length`.
 *
 * @param length Rows of the block.
 * @param prefix The context's `prefix`, if any.
 * @returns A count from 0 to `length`.
 */
export function rowsToDecode(length: number, prefix: number | undefined): number {
  return prefix === undefined || !(prefix >= 0) || prefix >= length ? length : Math.floor(prefix);
}

/**
 * Checks that a decoder was asked for a column type it handles.
 *
 * @param id Predictor id.
 * @param field The column's field.
 * @param ok Whether the predictor matches the field.
 * @throws {FormatError} `CORRUPT`: the footer named a predictor that cannot hold this type.
 */
export function checkDecodeField(id: string, field: Field, ok: boolean): void {
  if (!ok) {
    throw new FormatError(
      "CORRUPT",
      `Cannot decode ${id} block of column '${field.name}': expected a column type ${id} handles, found '${field.type}'`,
      { column: field.name },
    );
  }
}

/**
 * Checks the column given to an encoder and returns it narrowed.
 *
 * @param id Predictor id.
 * @param column The column.
 * @param types Types the predictor handles.
 * @returns The column.
 * @throws {FormatError} `BAD_ARGUMENT` if the column has another type.
 */
export function expectColumn(id: string, column: Column, types: ReadonlySet<ColumnType>): Column {
  if (!types.has(column.type)) {
    throw new FormatError(
      "BAD_ARGUMENT",
      `Cannot encode a '${column.type}' column with ${id}: expected one of ${
        [...types].map((t) => `'${t}'`).join(", ")
      }`,
    );
  }
  return column;
}

/**
 * Builds the column an integer predictor decodes: the field's type over 64-bit
 * values (a wide decimal is widened to `bigint[]` by the block layer).
 *
 * @param field The field (already checked by {@linkcode checkDecodeField}).
 * @param values The decoded values.
 * @returns The column, without validity.
 */
export function intColumn(field: Field, values: BigInt64Array): Column {
  return { type: field.type as BigIntColumn["type"], values, validity: null };
}

/**
 * Builds the column a text predictor decodes (`string` or `json`).
 *
 * @param field The field (already checked by {@linkcode checkDecodeField}).
 * @param values The decoded values.
 * @returns The column, without validity.
 */
export function textColumn(field: Field, values: string[]): Column {
  return { type: field.type === "json" ? "json" : "string", values, validity: null };
}
