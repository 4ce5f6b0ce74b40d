/**
 * The catalog's rows as API records: `datasets` and `chunks` rows (DuckDB values) to
 * `DatasetRecord` and `ChunkRecord`, and an archive's fields to the `ColumnInfo` the
 * catalog stores. Pure.
 *
 * @module
 */
import type { ArchiveIndex } from "./backend.ts";
import { round } from "./cost.ts";
import type {
  ChunkColumnStats,
  ChunkRecord,
  ColumnInfo,
  ColumnsReport,
  DatasetRecord,
} from "./types.ts";

/** The `datasets` columns of a {@link datasetFromRow} record, JSON and timestamps as text. */
export const DATASET_COLUMNS =
  `name, version, path, rows, columns, schema::VARCHAR AS schema, codec,
  auto_reason, chunk_rows, chunks, file_bytes, stored_bytes, raw_bytes, format_version,
  header_sha256, payload_sha256, primary_key, lossy_columns, encrypted,
  partition::VARCHAR AS partition, metadata::VARCHAR AS metadata, description, storage_class,
  strftime(registered_at, '%Y-%m-%dT%H:%M:%S.%gZ') AS registered_at`;

/** An archive field as the catalog stores it. */
export function columnInfo(f: ArchiveIndex["schema"][number]): ColumnInfo {
  const c: ColumnInfo = { name: f.name, type: f.type, nullable: f.nullable };
  if (f.unit !== undefined) c.unit = f.unit;
  if (f.timezone !== undefined) c.timezone = f.timezone;
  if (f.precision !== undefined) c.precision = f.precision;
  if (f.scale !== undefined) c.scale = f.scale;
  return c;
}

function parseJson<T>(v: unknown, fallback: T): T {
  if (typeof v !== "string") return fallback;
  try {
    return JSON.parse(v) as T;
  } catch {
    return fallback;
  }
}

/** A `datasets` row as a record. */
export function datasetFromRow(r: Record<string, unknown>): DatasetRecord {
  const raw = Number(r.raw_bytes);
  const stored = Number(r.stored_bytes);
  return {
    name: String(r.name),
    version: String(r.version),
    path: String(r.path),
    rows: Number(r.rows),
    columns: Number(r.columns),
    schema: parseJson<ColumnInfo[]>(r.schema, []),
    codec: String(r.codec),
    auto_reason: r.auto_reason === null ? null : String(r.auto_reason),
    chunk_rows: Number(r.chunk_rows),
    chunks: Number(r.chunks),
    file_bytes: Number(r.file_bytes),
    stored_bytes: stored,
    raw_bytes: raw,
    ratio: stored > 0 ? round(raw / stored, 4) : null,
    format_version: String(r.format_version),
    header_sha256: String(r.header_sha256),
    payload_sha256: String(r.payload_sha256),
    primary_key: r.primary_key === null ? null : String(r.primary_key),
    lossy_columns: (r.lossy_columns as string[]) ?? [],
    encrypted: r.encrypted === true,
    partition: parseJson<Record<string, string> | null>(r.partition, null),
    metadata: parseJson<Record<string, string>>(r.metadata, {}),
    description: String(r.description),
    storage_class: String(r.storage_class),
    registered_at: String(r.registered_at),
  };
}

/** A `chunks` row as a record. */
export function chunkFromRow(r: Record<string, unknown>): ChunkRecord {
  return {
    chunk: Number(r.chunk),
    row_start: Number(r.row_start),
    row_end: Number(r.row_end),
    offset: Number(r.byte_offset),
    length: Number(r.byte_length),
    raw_bytes: Number(r.raw_bytes),
    sha256: String(r.sha256),
    stats: parseJson<ChunkColumnStats[]>(r.stats, []),
  };
}

/**
 * The columns report of a version from its `dataset_columns` rows.
 *
 * @param record The version.
 * @param rows Its rows, in schema order.
 * @returns The report.
 */
export function columnsReport(
  record: DatasetRecord,
  rows: Record<string, unknown>[],
): ColumnsReport {
  const total = rows.reduce((n, r) => n + Number(r.stored_bytes), 0);
  return {
    name: record.name,
    version: record.version,
    rows: record.rows,
    stored_bytes: total,
    columns: rows.map((r) => ({
      name: String(r.name),
      type: String(r.type),
      predictors: (r.predictors as unknown[]).map(String),
      stored_bytes: Number(r.stored_bytes),
      raw_bytes: Number(r.raw_bytes),
      null_count: Number(r.null_count),
      share: total === 0 ? 0 : Number(r.stored_bytes) / total,
    })),
  };
}
