/**
 * The catalog's tables, mirroring the archive footer, and the view over them.
 *
 * - `datasets`: one row per registered version (`name`, `version` unique together).
 *   `seq` orders registrations: the latest version of a name has the highest.
 * - `chunks`: one row per chunk of each version, with the row range, byte range,
 *   SHA-256 and the per-column statistics as JSON (`[{column, min, max,
 *   null_count}]`, exactly the footer's values).
 * - `chunk_stats` (view): the statistics flattened to one row per chunk and column,
 *   min and max as text, for SQL users.
 *
 * `SCHEMA_VERSION` is stored in `catalog_meta`; a database written by a newer
 * schema is refused rather than misread.
 *
 * @module
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { CatalogError } from "./errors.ts";

/** Schema version this code writes. */
export const SCHEMA_VERSION = 1;

/** Tables (and views) user SQL may read. */
export const CATALOG_TABLES: readonly string[] = Object.freeze([
  "datasets",
  "chunks",
  "chunk_stats",
  "dataset_columns",
]);

/** DDL run at open, idempotent. */
export const SCHEMA_DDL: readonly string[] = Object.freeze([
  `CREATE TABLE IF NOT EXISTS catalog_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)`,
  `CREATE SEQUENCE IF NOT EXISTS datasets_seq`,
  `CREATE TABLE IF NOT EXISTS datasets (
    name VARCHAR NOT NULL,
    version VARCHAR NOT NULL,
    seq BIGINT NOT NULL,
    path VARCHAR NOT NULL,
    rows BIGINT NOT NULL,
    columns INTEGER NOT NULL,
    column_names VARCHAR[] NOT NULL,
    schema JSON NOT NULL,
    codec VARCHAR NOT NULL,
    auto_reason VARCHAR,
    chunk_rows BIGINT NOT NULL,
    chunks INTEGER NOT NULL,
    file_bytes BIGINT NOT NULL,
    stored_bytes BIGINT NOT NULL,
    raw_bytes BIGINT NOT NULL,
    format_version VARCHAR NOT NULL,
    header_sha256 VARCHAR NOT NULL,
    payload_sha256 VARCHAR NOT NULL,
    primary_key VARCHAR,
    lossy_columns VARCHAR[] NOT NULL,
    encrypted BOOLEAN NOT NULL,
    partition JSON,
    metadata JSON NOT NULL,
    description VARCHAR NOT NULL,
    storage_class VARCHAR NOT NULL,
    registered_at TIMESTAMP NOT NULL,
    PRIMARY KEY (name, version)
  )`,
  // Point lookups by name (GET /datasets/{name}) use this ART index instead of a scan.
  `CREATE INDEX IF NOT EXISTS datasets_by_name ON datasets (name)`,
  `CREATE TABLE IF NOT EXISTS chunks (
    dataset VARCHAR NOT NULL,
    version VARCHAR NOT NULL,
    chunk INTEGER NOT NULL,
    row_start BIGINT NOT NULL,
    row_end BIGINT NOT NULL,
    byte_offset BIGINT NOT NULL,
    byte_length BIGINT NOT NULL,
    raw_bytes BIGINT NOT NULL,
    sha256 VARCHAR NOT NULL,
    stats JSON NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS chunks_by_dataset ON chunks (dataset, version)`,
  // One row per column of a version: its bytes summed over the chunks (added in 1.4;
  // versions registered before have none until first asked for, see Catalog.columns).
  `CREATE TABLE IF NOT EXISTS dataset_columns (
    dataset VARCHAR NOT NULL,
    version VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    name VARCHAR NOT NULL,
    type VARCHAR NOT NULL,
    predictors VARCHAR[] NOT NULL,
    stored_bytes BIGINT NOT NULL,
    raw_bytes BIGINT NOT NULL,
    null_count BIGINT NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS dataset_columns_by_dataset ON dataset_columns (dataset, version)`,
  `CREATE OR REPLACE VIEW chunk_stats AS
    SELECT c.dataset, c.version, c.chunk, c.row_start, c.row_end,
           s.column AS column_name, s.min, s.max, s.null_count
    FROM chunks c,
         unnest(from_json(c.stats, '[{"column":"VARCHAR","min":"VARCHAR","max":"VARCHAR","null_count":"BIGINT"}]')) AS t(s)`,
]);

/**
 * Creates the tables and view when missing and checks the schema version: a database
 * written by a newer schema is refused rather than misread.
 *
 * @param c The writer connection.
 * @param path The database file, for the message.
 * @throws {CatalogError} DB_FAILED for a newer schema version.
 */
export async function prepareTables(c: DuckDBConnection, path: string): Promise<void> {
  for (const ddl of SCHEMA_DDL) await c.run(ddl);
  const found = await c.runAndReadAll(
    "SELECT value FROM catalog_meta WHERE key = 'schema_version'",
  );
  const v = found.getRowsJS()[0]?.[0];
  if (v === undefined) {
    await c.run("INSERT INTO catalog_meta VALUES ('schema_version', $1)", [String(SCHEMA_VERSION)]);
  } else if (Number(v) > SCHEMA_VERSION) {
    throw new CatalogError(
      "DB_FAILED",
      `Cannot open catalog database '${path}': it has schema version ${v}, this program reads up to ${SCHEMA_VERSION}`,
    );
  }
}
