/**
 * `CatalogError`: every failure of the catalog (`Catalog` and its server).
 *
 * Codes, with the HTTP status the server answers (see `app.ts`):
 * - `NOT_FOUND` (404): no dataset (or version) of that name.
 * - `CONFLICT` (409): the name and version are registered with other content.
 * - `INVALID_ARGUMENT` (400): a bad name, version, storage class, path or option.
 * - `PATH_OUTSIDE_ROOT` (403): a path outside the catalog's configured root.
 * - `ARCHIVE_UNREADABLE` (422): the file is missing or not a readable archive;
 *   `cause` holds the `FormatError`.
 * - `SQL_REFUSED` (400): a `/sql` query the sandbox does not run (not one SELECT,
 *   a table function, a table outside the catalog, ...).
 * - `SQL_FAILED` (400): DuckDB rejected the query (syntax, binder, runtime error).
 * - `SQL_TIMEOUT` (408): the query ran past the time limit and was interrupted (or
 *   no SQL connection came free within it).
 * - `SQL_TOO_LARGE` (400): even the first row of the result is over the answer's
 *   byte limit (larger results are cut, `truncated: true`).
 * - `PATH_NOT_ALLOWED` (403): the server may not read the path (its process
 *   permissions, or the file's); the path is named, the platform's text is not echoed.
 * - `DB_LOCKED` (409 when it reaches HTTP): another process or `Catalog` owns the database file.
 * - `DB_FAILED` (500): the database could not be opened or written.
 * - `THAW_UNAVAILABLE` (501): `thaw` was called on a catalog built without a thaw function.
 * - `CLOSED` (503): the catalog was closed.
 *
 * @module
 */
import { PermafrostError } from "../internal/errors.ts";

/** Closed list of catalog error codes. Never rename or reuse one. */
export type CatalogErrorCode =
  | "NOT_FOUND"
  | "CONFLICT"
  | "INVALID_ARGUMENT"
  | "PATH_OUTSIDE_ROOT"
  | "ARCHIVE_UNREADABLE"
  | "SQL_REFUSED"
  | "SQL_FAILED"
  | "SQL_TIMEOUT"
  | "SQL_TOO_LARGE"
  | "PATH_NOT_ALLOWED"
  | "DB_LOCKED"
  | "DB_FAILED"
  | "THAW_UNAVAILABLE"
  | "CLOSED";

/**
 * A catalog failure.
 *
 * @example Check the code of a catalog error
 * ```ts
 * import assert from "node:assert/strict";
 * import { CatalogError } from "./errors.ts";
 * assert.equal(new CatalogError("NOT_FOUND", "No dataset named 'x'").code, "NOT_FOUND");
 * ```
 */
export class CatalogError extends PermafrostError<CatalogErrorCode> {
  /** Always `"CatalogError"`. */
  override name = "CatalogError";
}

/**
 * The message of any thrown value.
 *
 * @param err Anything thrown.
 * @returns Its message.
 */
export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
