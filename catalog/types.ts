/**
 * The catalog's wire types: what `Catalog` returns and the REST server sends, with
 * snake_case keys (declared once here; `_wire_schemas.ts` mirrors them as zod schemas for
 * validation and the OpenAPI document, and a type test keeps the two in step).
 *
 * Integers are JSON numbers: every count and byte size here is below 2^53.
 *
 * @module
 */

/** One column of a dataset, as the archive's schema gives it. */
export interface ColumnInfo {
  /** Column name. */
  name: string;
  /** Logical type: `int64`, `float64`, `bool`, `timestamp`, `date`, `time`, `duration`, `decimal`, `string`, `json`. */
  type: string;
  /** Whether the column may hold nulls. */
  nullable: boolean;
  /** Tick unit of a timestamp, time or duration (`s`, `ms`, `us`, `ns`). */
  unit?: string;
  /** Timezone of a timestamp, when the source had one. */
  timezone?: string;
  /** Digits of a decimal. */
  precision?: number;
  /** Fraction digits of a decimal. */
  scale?: number;
}

/** One column's change from a version to the next (`ops/schema_diff.ts`). */
export interface SchemaChange {
  /** The column. */
  column: string;
  /** `added`, `removed`, `type_changed` or `nullability_changed`. */
  kind: "added" | "removed" | "type_changed" | "nullability_changed";
  /** Its type before, null when added. */
  from: string | null;
  /** Its type after, null when removed. */
  to: string | null;
  /** Whether rows of the older version read in the newer schema without changing a value. */
  compatible: boolean;
  /** Why, in a sentence. */
  reason: string;
}

/** A version as `GET /datasets/{name}/versions` lists it: with how its schema changed. */
export interface VersionRecord extends DatasetRecord {
  /** Changes from the previous version's schema; null for the first version. */
  schema_changes: SchemaChange[] | null;
}

/** One registered version of a dataset (a row of the `datasets` table). */
export interface DatasetRecord {
  /** Dataset name. */
  name: string;
  /** Version label, unique per name. */
  version: string;
  /** Absolute path of the archive. */
  path: string;
  /** Rows in the archive. */
  rows: number;
  /** Number of columns. */
  columns: number;
  /** Columns in schema order. */
  schema: ColumnInfo[];
  /** Codec id of the archive. */
  codec: string;
  /** Why `auto` picked the codec, when it did. */
  auto_reason: string | null;
  /** Rows per chunk. */
  chunk_rows: number;
  /** Number of chunks. */
  chunks: number;
  /** Size of the archive file. */
  file_bytes: number;
  /** Payload bytes (all blocks as stored). */
  stored_bytes: number;
  /** Column bytes before the codec (the footer's `raw_bytes`). */
  raw_bytes: number;
  /** `raw_bytes / stored_bytes`, null for an empty archive. */
  ratio: number | null;
  /** Archive format version (`1.3`). */
  format_version: string;
  /** SHA-256 (hex) of the header bytes. */
  header_sha256: string;
  /** SHA-256 (hex) of the payload. */
  payload_sha256: string;
  /** Primary-key column, if declared. */
  primary_key: string | null;
  /** Columns stored lossily. */
  lossy_columns: string[];
  /** Whether the archive is encrypted. */
  encrypted: boolean;
  /** Partition values, when the archive is one partition. */
  partition: Record<string, string> | null;
  /** The header's free-form metadata. */
  metadata: Record<string, string>;
  /** Free-text description (registration's, else the header's `metadata.description`). */
  description: string;
  /** Storage class used by `cost_report`. */
  storage_class: string;
  /** When this version was registered (ISO 8601, UTC). */
  registered_at: string;
}

/** A dataset as `GET /datasets/{name}` answers: its latest version plus the count of versions. */
export interface DatasetDetail extends DatasetRecord {
  /** Number of registered versions of the name. */
  versions: number;
}

/** Per-column statistics of one chunk. */
export interface ChunkColumnStats {
  /** Column name. */
  column: string;
  /** Smallest value (ints and timestamps as decimal strings), null when unknown. */
  min: string | number | boolean | null;
  /** Largest value. */
  max: string | number | boolean | null;
  /** Null slots. */
  null_count: number;
}

/** One column of a dataset version with its bytes (a row of the `dataset_columns` table). */
export interface ColumnSize {
  /** Column name. */
  name: string;
  /** Its type, as people read it (`decimal(18,2)`, `timestamp[us, UTC]`). */
  type: string;
  /** Predictors its blocks used. */
  predictors: string[];
  /** Stored (compressed) bytes over every chunk. */
  stored_bytes: number;
  /** Bytes before the codec (after the predictor). */
  raw_bytes: number;
  /** Nulls. */
  null_count: number;
  /** Its share of the version's stored column bytes, 0..1. */
  share: number;
}

/** `GET /datasets/{name}/columns`: where a version's bytes go. */
export interface ColumnsReport {
  /** Dataset name. */
  name: string;
  /** Version. */
  version: string;
  /** Rows. */
  rows: number;
  /** Stored bytes of every column together. */
  stored_bytes: number;
  /** Columns in schema order. */
  columns: ColumnSize[];
}

/** One chunk of a dataset version (a row of the `chunks` table). */
export interface ChunkRecord {
  /** Chunk index, 0-based. */
  chunk: number;
  /** First row, inclusive. */
  row_start: number;
  /** Last row, exclusive. */
  row_end: number;
  /** Byte offset in the archive. */
  offset: number;
  /** Stored bytes. */
  length: number;
  /** Column bytes before the codec. */
  raw_bytes: number;
  /** SHA-256 (hex) of the chunk's stored bytes. */
  sha256: string;
  /** Per-column statistics, in schema order. */
  stats: ChunkColumnStats[];
}

/** A page of a list. */
export interface Page<T> {
  /** The items of this page. */
  items: T[];
  /** Items matching the filters, over all pages. */
  total: number;
  /** Page size asked for. */
  limit: number;
  /** Items skipped. */
  offset: number;
}

/** What `register` did. */
export interface RegisterResult {
  /** True when a new version was recorded; false when the same archive was already registered. */
  created: boolean;
  /** The version as recorded. */
  dataset: DatasetRecord;
}

/** What `registerDir` did. */
export interface RegisterDirResult {
  /** The directory scanned (absolute). */
  dir: string;
  /** Newly registered versions. */
  registered: { name: string; version: string; path: string }[];
  /** Archives already registered with the same content. */
  unchanged: { name: string; version: string; path: string }[];
  /** Files that could not be registered, with the reason. */
  failed: { path: string; error: { code: string; message: string } }[];
}

/** One problem `integrityCheck` found. */
export interface IntegrityProblem {
  /**
   * `MISSING_FILE`, `FILE_SIZE`, `UNREADABLE` (the file's own header or footer fails to
   * read), `HEADER_HASH`, `FOOTER_MISMATCH` (the file's footer disagrees with the
   * catalog), `CHUNK_HASH` (the bytes do not hash to the recorded SHA-256),
   * `PAYLOAD_HASH`, `READ_FAILED`.
   */
  kind: string;
  /** Chunk index, when the problem is one chunk's. */
  chunk: number | null;
  /** What the catalog recorded. */
  expected: string | number | null;
  /** What the file holds. */
  actual: string | number | null;
  /** Human sentence. */
  message: string;
}

/** What `integrityCheck` found for one version. */
export interface IntegrityReport {
  /** Dataset name. */
  name: string;
  /** Version checked. */
  version: string;
  /** Archive path. */
  path: string;
  /** True when the file exists and every hash matches the catalog and the file's footer. */
  ok: boolean;
  /** Chunks whose bytes were hashed. */
  chunks_checked: number;
  /** Bytes hashed. */
  bytes_checked: number;
  /** Every problem found, in file order. */
  problems: IntegrityProblem[];
  /** When the check ran (ISO 8601, UTC). */
  checked_at: string;
}

/** Totals of one group in `stats`. */
export interface StatsGroup {
  /** Versions in the group. */
  versions: number;
  /** Rows over those versions. */
  rows: number;
  /** Column bytes before the codec. */
  raw_bytes: number;
  /** Payload bytes as stored. */
  stored_bytes: number;
  /** `raw_bytes / stored_bytes`, null when nothing is stored. */
  ratio: number | null;
}

/** What `stats` answers. */
export interface CatalogStats extends StatsGroup {
  /** Distinct dataset names. */
  datasets: number;
  /** Chunks over all versions. */
  chunks: number;
  /** Archive file bytes over all versions. */
  file_bytes: number;
  /** Totals per codec. */
  by_codec: (StatsGroup & { codec: string })[];
  /** Totals per storage class. */
  by_storage_class: (StatsGroup & { storage_class: string })[];
}

/** Costs of one storage class in `cost_report`. */
export interface CostLine {
  /** Storage class. */
  storage_class: string;
  /** Price in $/GB-month, null for a class the configuration does not price. */
  price_per_gb_month: number | null;
  /** Versions stored in the class. */
  versions: number;
  /** Payload bytes stored. */
  stored_bytes: number;
  /** Column bytes before the codec. */
  raw_bytes: number;
  /** Estimated bytes of the same data as Parquet (`raw_bytes × parquet_ratio`). */
  parquet_bytes_estimate: number;
  /** $/month for what is stored. */
  monthly_cost: number | null;
  /** $/month if the raw bytes were stored. */
  raw_monthly_cost: number | null;
  /** $/month for the Parquet estimate. */
  parquet_monthly_cost: number | null;
}

/** What `costReport` answers. */
export interface CostReport {
  /** Always `USD`. */
  currency: string;
  /** Bytes in a billing GB (2^30). */
  gb_bytes: number;
  /** Configured prices, $/GB-month by storage class. */
  prices: Record<string, number>;
  /** Parquet size as a fraction of raw bytes, the assumption behind the estimate. */
  parquet_ratio: number;
  /** One line per storage class in use. */
  storage_classes: CostLine[];
  /** Sums over the priced classes. */
  total: {
    stored_bytes: number;
    raw_bytes: number;
    parquet_bytes_estimate: number;
    monthly_cost: number;
    raw_monthly_cost: number;
    parquet_monthly_cost: number;
    /** `raw_monthly_cost - monthly_cost`. */
    savings_vs_raw: number;
    /** `parquet_monthly_cost - monthly_cost`. */
    savings_vs_parquet: number;
    /** Savings as a percentage of the raw cost, null when it is 0. */
    savings_vs_raw_pct: number | null;
    /** Savings as a percentage of the Parquet cost, null when it is 0. */
    savings_vs_parquet_pct: number | null;
  };
}

/** What `sql` answers. */
export interface SqlResult {
  /** Result columns with their DuckDB types. */
  columns: { name: string; type: string }[];
  /** Rows as arrays, one value per column (NaN as null, big integers as strings). */
  rows: unknown[][];
  /** Rows returned. */
  row_count: number;
  /** True when the result had more rows, or more bytes, than the limits and was cut. */
  truncated: boolean;
  /** Row limit applied. */
  max_rows: number;
  /** Byte limit applied to the rows' JSON (UTF-8). */
  max_bytes: number;
  /** Wall time of the query. */
  elapsed_ms: number;
}

/** One hit of `search`. */
export interface SearchHit {
  /** Dataset name. */
  name: string;
  /** The best-matching version. */
  version: string;
  /** Rank score (higher is better). */
  score: number;
  /** What matched: `name`, `version`, `column:NAME`, `description`. */
  matched: string[];
  /** Description of that version. */
  description: string;
  /** Rows of that version. */
  rows: number;
  /** Codec of that version. */
  codec: string;
}

/** What `search` answers. */
export interface SearchResult {
  /** The query as received. */
  q: string;
  /** Hits, best first, one per dataset name. */
  items: SearchHit[];
  /** Hits over all pages. */
  total: number;
}
