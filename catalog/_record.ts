/**
 * What one registered version is recorded as, worked out from its archive's index and
 * nothing else: the `datasets` row, one `chunks` row per chunk and one `dataset_columns`
 * row per column (see `_tables.ts`), as plain values ({@link versionRows}); and which
 * version label a registration gets ({@link decideVersion}). Pure: each store writes
 * these rows its own way (`_duckdb_store.ts`, `kv_store.ts`), so both record the same.
 *
 * @module
 */
import type { Field } from "../format/column.ts";
import type { ArchiveIndex } from "./backend.ts";
import { CatalogError } from "./errors.ts";
import { columnInfo } from "./_rows.ts";

/** What a version is recorded as. */
export interface VersionEntry {
  /** Dataset name. */
  name: string;
  /** Version label. */
  version: string;
  /** Storage class (a key of the catalog's prices). */
  storageClass: string;
  /** Free-text description. */
  description: string;
  /** Registration time, as DuckDB TIMESTAMP text. */
  registeredAt: string;
}

/**
 * A `datasets` row without its `seq` (the store numbers registrations): JSON columns as
 * JSON text, list columns as arrays, `registered_at` as TIMESTAMP text.
 */
export interface DatasetRow {
  name: string;
  version: string;
  path: string;
  rows: number;
  columns: number;
  column_names: string[];
  schema: string;
  codec: string;
  auto_reason: string | null;
  chunk_rows: number;
  chunks: number;
  file_bytes: number;
  stored_bytes: number;
  raw_bytes: number;
  format_version: string;
  header_sha256: string;
  payload_sha256: string;
  primary_key: string | null;
  lossy_columns: string[];
  encrypted: boolean;
  partition: string | null;
  metadata: string;
  description: string;
  storage_class: string;
  registered_at: string;
}

/** A `chunks` row; `stats` is JSON text. */
export interface ChunkRow {
  dataset: string;
  version: string;
  chunk: number;
  row_start: number;
  row_end: number;
  byte_offset: number;
  byte_length: number;
  raw_bytes: number;
  sha256: string;
  stats: string;
}

/** A `dataset_columns` row. */
export interface ColumnRow {
  /** Dataset name. */
  dataset: string;
  /** Its version. */
  version: string;
  /** The column's position, from 0. */
  position: number;
  /** The column's name. */
  name: string;
  /** Its type as people read it (`decimal(18,2)`, `timestamp[us, UTC]`). */
  type: string;
  /** The predictors its blocks were stored with. */
  predictors: string[];
  /** Bytes stored, summed over the chunks. */
  stored_bytes: number;
  /** Bytes before compression, summed over the chunks. */
  raw_bytes: number;
  /** Nulls, summed over the chunks. */
  null_count: number;
}

/** Everything one version is recorded as. */
export interface VersionRows {
  /** Its `datasets` row. */
  dataset: DatasetRow;
  /** Its `chunks` rows, in chunk order. */
  chunks: ChunkRow[];
  /** Its `dataset_columns` rows, in column order. */
  columns: ColumnRow[];
}

/**
 * The rows one version is recorded as.
 *
 * @param index The archive's header and footer.
 * @param entry Name, version and the other recorded fields.
 * @returns The rows.
 */
export function versionRows(index: ArchiveIndex, entry: VersionEntry): VersionRows {
  const { name, version } = entry;
  const { header, footer } = index;
  const dataset: DatasetRow = {
    name,
    version,
    path: index.path,
    rows: footer.rows,
    columns: index.schema.length,
    column_names: index.schema.map((f) => f.name),
    schema: JSON.stringify(index.schema.map(columnInfo)),
    codec: header.codec,
    auto_reason: header.auto_reason ?? null,
    chunk_rows: header.chunk_rows,
    chunks: footer.chunks.length,
    file_bytes: index.file_bytes,
    stored_bytes: footer.payload_length,
    raw_bytes: footer.raw_bytes,
    format_version: index.version,
    header_sha256: index.header_sha256,
    payload_sha256: footer.payload_sha256,
    primary_key: header.primary_key ?? null,
    lossy_columns: header.lossy_columns ?? [],
    encrypted: header.encryption !== null && header.encryption !== undefined,
    partition: header.partition ? JSON.stringify(header.partition) : null,
    metadata: JSON.stringify(header.metadata ?? {}),
    description: entry.description,
    storage_class: entry.storageClass,
    registered_at: entry.registeredAt,
  };
  const chunks = footer.chunks.map((chunk, i): ChunkRow => ({
    dataset: name,
    version,
    chunk: i,
    row_start: chunk.row_start,
    row_end: chunk.row_end,
    byte_offset: chunk.offset,
    byte_length: chunk.length,
    raw_bytes: chunk.blocks.reduce((s, b) => s + (b?.raw_length ?? 0), 0),
    sha256: chunk.sha256,
    stats: JSON.stringify(chunk.stats.map((s, j) => ({
      column: index.schema[j]?.name ?? `#${j}`,
      min: s.min,
      max: s.max,
      null_count: s.null_count,
    }))),
  }));
  return { dataset, chunks, columns: columnRows(index, name, version) };
}

/**
 * A version's `dataset_columns` rows: each column's bytes summed over its chunks.
 *
 * @param index The archive.
 * @param name Dataset name.
 * @param version Its version.
 * @returns One row per column, in order.
 */
export function columnRows(index: ArchiveIndex, name: string, version: string): ColumnRow[] {
  return index.schema.map((field, j) => {
    let stored = 0;
    let raw = 0;
    let nulls = 0;
    const predictors = new Set<string>();
    for (const chunk of index.footer.chunks) {
      const block = chunk.blocks[j];
      if (block) {
        stored += block.length;
        raw += block.raw_length;
        predictors.add(block.predictor);
      }
      nulls += chunk.stats[j]?.null_count ?? 0;
    }
    return {
      dataset: name,
      version,
      position: j,
      name: field.name,
      type: columnTypeText(field),
      predictors: [...predictors],
      stored_bytes: stored,
      raw_bytes: raw,
      null_count: nulls,
    };
  });
}

/** A recorded version, as {@link decideVersion} compares it. */
export interface ExistingVersion {
  version: string;
  header_sha256: string;
  payload_sha256: string;
  path: string;
}

/**
 * Decides the version an archive registers as: the one asked for (a `CONFLICT` when it
 * exists with other content, nothing to do when with the same), else the next free
 * `vN` — or nothing to do when the latest version is this very archive.
 *
 * @param existing The name's versions, oldest first.
 * @param index The archive.
 * @param name Dataset name.
 * @param requested The version asked for, if any.
 * @returns The version, and whether it is to be recorded (`created`).
 * @throws {CatalogError} CONFLICT.
 */
export function decideVersion(
  existing: readonly ExistingVersion[],
  index: ArchiveIndex,
  name: string,
  requested: string | undefined,
): { created: boolean; version: string } {
  const same = (v: ExistingVersion) =>
    v.header_sha256 === index.header_sha256 && v.payload_sha256 === index.footer.payload_sha256;
  let version = requested;
  if (version !== undefined) {
    const found = existing.find((v) => v.version === version);
    if (found && same(found)) return { created: false, version };
    if (found) {
      throw new CatalogError(
        "CONFLICT",
        `Dataset '${name}' version '${version}' is already registered with other content (${found.path}); pick another version`,
      );
    }
  } else {
    const latest = existing.at(-1);
    if (latest && same(latest) && latest.path === index.path) {
      return { created: false, version: latest.version };
    }
    const used = new Set(existing.map((v) => v.version));
    let n = existing.length + 1;
    while (used.has(`v${n}`)) n++;
    version = `v${n}`;
  }
  return { created: true, version };
}

/** A column's type as people read it: `decimal(18,2)`, `timestamp[us, UTC]`, `int64`. */
function columnTypeText(f: Field): string {
  if (f.type === "decimal") return `decimal(${f.precision},${f.scale})`;
  if (f.unit === undefined) return f.type;
  return `${f.type}[${f.unit}${f.timezone ? `, ${f.timezone}` : ""}]`;
}
