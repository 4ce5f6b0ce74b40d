/**
 * The engine-free parts of answering user SQL, shared by the DuckDB sandbox
 * (`sql_sandbox.ts`) and the duckdb-wasm runner (`_wasm_sql.ts`): the checks on the
 * query's text, the refusal error, DuckDB's message cleaned for an answer, and the
 * byte count of an answer's rows. No engine is loaded here, so a catalog without
 * native code can use it.
 *
 * @module
 */
import { CatalogError, message } from "./errors.ts";

/** Longest query text accepted. */
export const MAX_QUERY_LENGTH = 100_000;

/**
 * UTF-8 length of a value's JSON text.
 *
 * @param value A JSON value.
 * @returns Its bytes.
 */
export function jsonBytes(value: unknown): number {
  const text = JSON.stringify(value) ?? "null";
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    // 2 bytes below U+0800, 3 for the rest of the BMP; a surrogate pair is 4 (2 + 2).
    n += code < 0x800 || (code >= 0xd800 && code <= 0xdfff) ? 1 : 2;
  }
  return n;
}

/**
 * Refuses an empty query, one over {@link MAX_QUERY_LENGTH} characters, or one with a NUL.
 *
 * @param query The user's SQL.
 * @throws {CatalogError} SQL_REFUSED.
 */
export function checkText(query: string): void {
  if (query.trim() === "") throw refused("the query is empty");
  if (query.length > MAX_QUERY_LENGTH) {
    throw refused(`the query is ${query.length} characters, the limit is ${MAX_QUERY_LENGTH}`);
  }
  if (query.includes("\0")) throw refused("the query contains a NUL character");
}

/**
 * A refused query.
 *
 * @param why What was refused.
 * @returns SQL_REFUSED.
 */
export function refused(why: string): CatalogError {
  return new CatalogError("SQL_REFUSED", `Query refused: ${why}`);
}

/**
 * DuckDB's message without the caret diagram, on one line.
 *
 * @param err What DuckDB threw.
 * @returns The message.
 */
export function cleanDuckError(err: unknown): string {
  return message(err).split("\n\nLINE")[0]!.replace(/\s+/g, " ").trim();
}
