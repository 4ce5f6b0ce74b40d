/**
 * The catalog's list queries — datasets (latest version of each name, or all
 * versions), the versions of one name, the chunks of one version — as SQL over the
 * `datasets` and `chunks` tables (`_tables.ts`), paged. `Catalog` runs them on its
 * read connections; single records (`Catalog.get`) are served from its cache.
 *
 * @module
 */
import type { SqlParam } from "./store.ts";
import type { RowRange } from "../format/reader.ts";
import { CatalogError } from "./errors.ts";
import { chunkFromRow, DATASET_COLUMNS, datasetFromRow } from "./_rows.ts";
import type { ChunkRecord, DatasetRecord, Page } from "./types.ts";

/** Runs a read-only query with parameters on the catalog's tables. */
export type ReadQuery = (sql: string, params: SqlParam[]) => Promise<Record<string, unknown>[]>;

/** A page to read: already checked. */
export interface PageWindow {
  /** Items at most. */
  limit: number;
  /** Items skipped. */
  offset: number;
}

/** Filters of {@link listDatasets}. */
export interface DatasetFilter {
  /** Every version, not only the latest of each name. */
  allVersions?: boolean;
  /** Only this codec. */
  codec?: string;
  /** Only names starting with this. */
  prefix?: string;
  /** Only this storage class. */
  storageClass?: string;
}

/**
 * Lists datasets (the latest version of each name, unless `allVersions`), by name.
 *
 * @param read Runs a query.
 * @param filter Filters.
 * @param page The page.
 * @returns One page.
 */
export async function listDatasets(
  read: ReadQuery,
  filter: DatasetFilter,
  page: PageWindow,
): Promise<Page<DatasetRecord>> {
  const { limit, offset } = page;
  const where: string[] = [];
  const params: SqlParam[] = [];
  if (!filter.allVersions) where.push("rn = 1");
  if (filter.codec !== undefined) {
    params.push(filter.codec);
    where.push(`codec = $${params.length}`);
  }
  if (filter.prefix !== undefined) {
    params.push(filter.prefix);
    where.push(`starts_with(name, $${params.length})`);
  }
  if (filter.storageClass !== undefined) {
    params.push(filter.storageClass);
    where.push(`storage_class = $${params.length}`);
  }
  const from =
    `(SELECT *, row_number() OVER (PARTITION BY name ORDER BY seq DESC) AS rn FROM datasets)`;
  const cond = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
  const total = await read(`SELECT count(*) AS n FROM ${from} ${cond}`, params);
  const rows = await read(
    `SELECT ${DATASET_COLUMNS} FROM ${from} ${cond} ORDER BY name, seq DESC LIMIT ${limit} OFFSET ${offset}`,
    params,
  );
  return { items: rows.map(datasetFromRow), total: Number(total[0]?.n ?? 0), limit, offset };
}

/** A dataset name with no version. */
export function notFound(name: string, version?: string): CatalogError {
  return new CatalogError(
    "NOT_FOUND",
    version === undefined
      ? `No dataset named '${name}'`
      : `No version '${version}' of dataset '${name}'`,
  );
}

/**
 * Every version of a dataset, newest first.
 *
 * @param read Runs a query.
 * @param name Dataset name.
 * @param page The page.
 * @returns One page.
 * @throws {CatalogError} NOT_FOUND when the name has no version.
 */
export async function listVersions(
  read: ReadQuery,
  name: string,
  page: PageWindow,
): Promise<Page<DatasetRecord>> {
  const { limit, offset } = page;
  const total = Number(
    (await read("SELECT count(*) AS n FROM datasets WHERE name = $1", [name]))[0]?.n ?? 0,
  );
  if (total === 0) throw notFound(name);
  const rows = await read(
    `SELECT ${DATASET_COLUMNS} FROM datasets WHERE name = $1 ORDER BY seq DESC LIMIT ${limit} OFFSET ${offset}`,
    [name],
  );
  return { items: rows.map(datasetFromRow), total, limit, offset };
}

/**
 * The chunks of a dataset version, in row order.
 *
 * @param read Runs a query.
 * @param name Dataset name.
 * @param version The version.
 * @param range Only chunks overlapping these rows (0-based, half-open).
 * @param page The page.
 * @returns One page.
 * @throws {CatalogError} INVALID_ARGUMENT for a bad row range.
 */
export async function listChunks(
  read: ReadQuery,
  name: string,
  version: string,
  range: RowRange | undefined,
  page: PageWindow,
): Promise<Page<ChunkRecord> & { version: string }> {
  const { limit, offset } = page;
  const params: SqlParam[] = [name, version];
  let cond = "dataset = $1 AND version = $2";
  if (range) {
    if (!(range.start >= 0 && range.end >= range.start)) {
      throw new CatalogError("INVALID_ARGUMENT", `Invalid row range ${range.start}:${range.end}`);
    }
    params.push(range.start, range.end);
    cond += " AND row_end > $3 AND row_start < $4";
  }
  const total = Number(
    (await read(`SELECT count(*) AS n FROM chunks WHERE ${cond}`, params))[0]?.n ?? 0,
  );
  const rows = await read(
    `SELECT chunk, row_start, row_end, byte_offset, byte_length, raw_bytes, sha256, stats::VARCHAR AS stats
     FROM chunks WHERE ${cond} ORDER BY chunk LIMIT ${limit} OFFSET ${offset}`,
    params,
  );
  return {
    version,
    items: rows.map(chunkFromRow),
    total,
    limit,
    offset,
  };
}
