/**
 * duckdb-wasm's answers (Arrow) as the JSON values the catalog answers with, the same
 * values the DuckDB store gives (`_db.ts` `toJsonValue`): integers as numbers when
 * safe, else decimal text; decimals and 128-bit integers exactly (as text past 15
 * digits); NaN and infinities as null; lists as arrays, structs as objects. Temporal
 * values are turned to text by DuckDB itself before they reach here (see
 * `kv_store.ts`), so they read as they do from the DuckDB store.
 *
 * @module
 */
import * as arrow from "apache-arrow";

/**
 * One Arrow value as JSON.
 *
 * @param value What `Vector.get` returned.
 * @param type Its Arrow type.
 * @returns The JSON value.
 */
export function jsonValue(value: unknown, type: arrow.DataType): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") return safeInteger(value);
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (arrow.DataType.isDecimal(type)) return decimalValue(value as Uint32Array, type.scale);
  if (arrow.DataType.isList(type) || arrow.DataType.isFixedSizeList(type)) {
    const child = type.children[0]!.type;
    return [...(value as Iterable<unknown>)].map((v) => jsonValue(v, child));
  }
  if (arrow.DataType.isStruct(type)) {
    const row = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const f of type.children) out[f.name] = jsonValue(row[f.name], f.type);
    return out;
  }
  if (value instanceof Uint8Array) return [...value];
  return value;
}

/** A 64- or 128-bit integer: a number when safe, else its decimal text. */
function safeInteger(v: bigint): number | string {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(v)
    : v.toString();
}

/** A decimal: a number up to 15 significant digits, else exact text. */
function decimalValue(words: Uint32Array, scale: number): number | string {
  const int = arrow.util.bigNumToBigInt(words as never);
  if (scale === 0) return safeInteger(int);
  const negative = int < 0n;
  const digits = (negative ? -int : int).toString().padStart(scale + 1, "0");
  const text = `${negative ? "-" : ""}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return digits.replace(/^0+/, "").length <= 15 ? Number(text) : text;
}

/**
 * The rows of an Arrow table as objects of JSON values, by column name.
 *
 * @param table The answer.
 * @returns The rows.
 */
export function rowObjects(table: arrow.Table): Record<string, unknown>[] {
  const fields = table.schema.fields;
  const columns = fields.map((f) => table.getChild(f.name)!);
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < table.numRows; i++) {
    const row: Record<string, unknown> = {};
    fields.forEach((f, j) => (row[f.name] = jsonValue(columns[j]!.get(i), f.type)));
    out.push(row);
  }
  return out;
}
