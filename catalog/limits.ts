/**
 * The catalog's fixed limits and patterns, in a leaf module: the settings table
 * (`config.ts`) reads them to describe its defaults without loading DuckDB or the
 * archive reader, so `permafrost --help` stays quick.
 *
 * @module
 */

/** Names and versions: a letter or digit, then letters, digits, `.`, `_`, `-` (128 at most). */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Default time limit of one query. */
export const DEFAULT_SQL_TIMEOUT_MS = 5_000;

/** Default row limit of one answer. */
export const DEFAULT_SQL_MAX_ROWS = 10_000;

/** Default byte limit of one answer's rows (as JSON, UTF-8). */
export const DEFAULT_SQL_MAX_BYTES = 32 * 1024 * 1024;
