/**
 * Where a version's bytes go, column by column (`GET /datasets/{name}/columns`): the
 * `dataset_columns` rows registration writes (`_record.ts`), and, for a version
 * registered by a release before 1.4 that has none, the same worked out from its
 * archive's footer on first request (the archive must be readable and still be the
 * one registered) and kept.
 *
 * @module
 */
import type { ArchiveBackend, ArchiveIndex } from "./backend.ts";
import { CatalogError } from "./errors.ts";
import type { SqlParam } from "./store.ts";
import { columnsReport } from "./_rows.ts";
import { unreadable } from "./_read_errors.ts";
import type { ColumnsReport, DatasetRecord } from "./types.ts";

/** What {@link versionColumns} needs from the catalog. */
export interface ColumnsDeps {
  /** Runs a read query. */
  read(sql: string, params: SqlParam[]): Promise<Record<string, unknown>[]>;
  /** Records a version's columns worked out from its archive (unless it has them by then). */
  addColumns(index: ArchiveIndex): Promise<void>;
  /** Reads archives. */
  backend: ArchiveBackend;
}

/**
 * A version's columns with their bytes.
 *
 * @param deps Queries and the backend.
 * @param record The version.
 * @returns The report.
 * @throws {CatalogError} ARCHIVE_UNREADABLE when sizes must be worked out and the
 * archive cannot be read or has changed.
 */
export async function versionColumns(
  deps: ColumnsDeps,
  record: DatasetRecord,
): Promise<ColumnsReport> {
  const query = () =>
    deps.read(
      `SELECT name, type, predictors, stored_bytes, raw_bytes, null_count FROM dataset_columns
       WHERE dataset = $1 AND version = $2 ORDER BY position`,
      [record.name, record.version],
    );
  let rows = await query();
  if (rows.length === 0 && record.columns > 0) {
    await recordLate(deps, record);
    rows = await query();
  }
  return columnsReport(record, rows);
}

async function recordLate(deps: ColumnsDeps, record: DatasetRecord): Promise<void> {
  let index: ArchiveIndex;
  try {
    index = await deps.backend.readIndex(record.path);
  } catch (cause) {
    throw unreadable(record.path, cause);
  }
  if (index.header_sha256 !== record.header_sha256) {
    throw new CatalogError(
      "ARCHIVE_UNREADABLE",
      `Cannot work out the column sizes of ${record.name}@${record.version}: '${record.path}' is no longer the archive registered (its header changed)`,
      { path: record.path },
    );
  }
  await deps.addColumns(index);
}
