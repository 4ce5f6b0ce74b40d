/**
 * Permafrost: freeze tables into small, checksummed, columnar archives and
 * thaw them back, whole or one slice.
 *
 * Everything the CLI does is here as a library: `freeze` a CSV, JSON-lines,
 * Parquet or Arrow file (or an in-memory Arrow table) into an archive; `thaw` it
 * back to a file or a table, optionally only some rows and columns; `audit`
 * (header and footer only), `verify` (every hash), `peek` (first rows); `register`
 * archives under aliases and `query` them with SQL.
 *
 * @example Freeze, audit and thaw a small table
 * ```ts
 * import assert from "node:assert/strict";
 * import { tableFromArrays } from "apache-arrow";
 * import { audit, freeze, thawTable } from "./mod.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const table = tableFromArrays({ id: Int32Array.from([1, 2, 3]), name: ["a", "b", "c"] });
 * const summary = await freeze(table, `${dir}/t.pf`, { threads: 0 });
 * assert.equal(summary.rows, 3);
 * assert.equal((await audit(`${dir}/t.pf`)).rows, 3);
 * const back = await thawTable(`${dir}/t.pf`, { rows: { start: 1, end: 3 } });
 * assert.deepEqual(back.getChild("name")?.toArray(), ["b", "c"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */
export { freeze } from "./ops/freeze.ts";
export type { FreezeOptions, FreezeProgress, FreezeSource, FreezeSummary } from "./ops/freeze.ts";
export { CODEC_PROFILES } from "./format/new_archive.ts";
export type { CodecProfile } from "./format/new_archive.ts";
export { thaw, thawTable } from "./ops/thaw.ts";
export { freezeFile, freezeStream } from "./ops/stream.ts";
export type { FreezeFileOptions, FreezeStreamOptions } from "./ops/stream.ts";
export { freezePartitioned } from "./ops/partition.ts";
export type { FreezePartitionedOptions, PartitionedSummary } from "./ops/partition.ts";
export type { PartitionEntry, PartitionManifest } from "./ops/partition_read.ts";
export { append } from "./ops/append.ts";
export type { AppendOptions, AppendSummary } from "./ops/append.ts";
export { diff, formatDiff } from "./ops/diff.ts";
export { schemaDiff, typeText } from "./ops/schema_diff.ts";
export { parseSchemaJson } from "./ops/evolve.ts";
// Field and Schema are each a type and a value (Field.of, Schema.of, Schema.parse, …).
export {
  Field,
  type FieldOptions,
  type FieldValues,
  Schema,
  type SchemaValues,
} from "./ops/schema.ts";
export type { SchemaChange, SchemaChangeKind, SchemaDiff } from "./ops/schema_diff.ts";
export type { ChunkDiff, ChunkStatus, DiffReport, DiffSide } from "./ops/diff.ts";
export { compileWhere, parseWhere } from "./ops/where.ts";
export type { CompiledWhere, WhereLiteral, WhereNode, WhereOp } from "./ops/where.ts";
export {
  query,
  QUERY_BACKENDS,
  queryBackend,
  register,
  registered,
  setQueryBackend,
  SqlSession,
  unregister,
} from "./ops/sql.ts";
export type {
  ExecuteOptions,
  QueryAnswer,
  QueryBackend,
  QueryScan,
  RegisterAliasOptions,
  RegisteredArchive,
  SqlSessionOptions,
  TableResolver,
} from "./ops/sql.ts";
export type { WasmBindings, WasmConnection } from "./ops/_duckdb_wasm.ts";
export { lookup } from "./ops/lookup.ts";
export { auditRemote, freezeTo, thawFrom } from "./ops/remote_names.ts";
export type { LookupResult } from "./ops/lookup.ts";
export type { ThawOptions, ThawSummary } from "./ops/thaw.ts";
export { audit, formatTable, peek, verify } from "./ops/inspect.ts";
export type { AuditColumn, AuditReport, PeekResult } from "./ops/inspect.ts";
export type { RowRange, VerifyReport } from "./format/reader.ts";
export type {
  Batch,
  BigIntColumn,
  BoolColumn,
  Column,
  ColumnType,
  DecimalColumn,
  Field as ColumnField,
  Float16Column,
  Float32Column,
  FloatColumn,
  Schema as ColumnSchema,
  StringColumn,
  TimeUnit,
} from "./format/column.ts";
export { float16ToNumber, numberToFloat16 } from "./format/float16.ts";
export type { ColumnStats } from "./format/header.ts";
export type { ForcedType, SourceFormat } from "./io/types.ts";
export type { CsvDialect } from "./io/csv_dialect.ts";
export { SOURCE_FORMATS } from "./io/types.ts";
export type { OutputFormat } from "./io/output.ts";
export type { CodecChoiceName, OpsErrorCode } from "./ops/errors.ts";
export type { FormatErrorCode } from "./format/errors.ts";
export type { CodecErrorCode } from "./codecs/errors.ts";
export type { IoErrorCode } from "./io/errors.ts";
export type { ErrorDetails } from "./internal/errors.ts";
export type { FormatWarning, Quantization } from "./format/predictors/predictor.ts";
export { PermafrostError } from "./internal/errors.ts";
export { ResumableUploadError, StorageError } from "./storage/errors.ts";
export type { StorageErrorCode } from "./storage/errors.ts";
export { collectUploads } from "./storage/journal.ts";
export { storeFor, withStorageSettings } from "./storage/registry.ts";
export type { StorageSettings } from "./storage/registry.ts";
export type { CollectedUpload, CollectOptions } from "./storage/journal.ts";
export type { ByteRange, ObjectInfo, ObjectStore, Upload, UploadOptions } from "./storage/store.ts";
export { AuthError, memoryUserStore, openSqliteUserStore, RBACManager } from "./auth/mod.ts";
export type {
  AuthErrorCode,
  ClusterUser,
  NewUser,
  Principal,
  RBACOptions,
  TokenOptions,
  UserStore,
} from "./auth/mod.ts";
export { localKeyProvider, readKeyFile } from "./format/local_key.ts";
export { awsKmsProvider } from "./keys/aws_kms.ts";
export { gcpKmsProvider } from "./keys/gcp_kms.ts";
export type { AwsCredentials, AwsKmsOptions, HttpClientOptions } from "./keys/aws_kms.ts";
export type { GcpKmsOptions } from "./keys/gcp_kms.ts";
export type { EncryptionOptions, KeyProvider, KeyRing } from "./format/key_provider.ts";
export { Catalog, CatalogError, KvStore } from "./catalog/mod.ts";
export type {
  ArchiveBackend,
  ArchiveHandle,
  CatalogErrorCode,
  CatalogOptions,
  CatalogStats,
  CatalogStore,
  ChunkColumnStats,
  ChunkOptions,
  ChunkRecord,
  ColumnInfo,
  ColumnRow,
  ColumnSize,
  ColumnsReport,
  CostLine,
  CostReport,
  DatasetDetail,
  DatasetRecord,
  IntegrityProblem,
  IntegrityReport,
  KvStoreOptions,
  ListOptions,
  Page,
  RecordRequest,
  RegisterDirResult,
  RegisterOptions,
  RegisterResult,
  Rows,
  SearchHit,
  SearchResult,
  SqlParam,
  SqlResult,
  StatsGroup,
  StoreSqlLimits,
  ThawFunction,
  VersionEntry,
} from "./catalog/mod.ts";
export type { ArchiveIndex } from "./format/reader.ts";
export type {
  ArchiveFooter,
  ArchiveHeader,
  ArrowFieldJson,
  ArrowSchemaJson,
  ArrowTypeJson,
  BlockEntry,
  ChunkEntry,
  ColumnPlan,
  EncryptionHeader,
} from "./format/header.ts";
export { LOG_LEVELS } from "./internal/log.ts";
export type { LogFields, Logger, LogLevel } from "./internal/log.ts";
export { FormatError } from "./format/errors.ts";
export { CodecError } from "./codecs/errors.ts";
export { IoError } from "./io/errors.ts";
export { KeyError } from "./keys/errors.ts";
export type { KeyErrorCode } from "./keys/errors.ts";
export { OpsError } from "./ops/errors.ts";
// The cluster client, whole (client/mod.ts is its surface).
export * from "./client/mod.ts";
export { Permafrost } from "./context.ts";
export type { DatasetRowsOptions, PermafrostOptions } from "./context.ts";

// Never run: lower layers load these modules by computed specifiers, so that the CLI
// starts without them and their npm packages (cli/lazy.ts says why). Named here by
// literal ones, they are in the module graph of every script that imports this
// module: `deno compile` embeds them and a narrow --allow-read is enough.
const _loadedByComputedSpecifiers = () => [
  import("./storage/s3.ts"),
  import("./storage/az.ts"),
  import("./storage/gs.ts"),
  import("./codecs/_liblzma.ts"),
  import("./codecs/lzma2.ts"),
  import("./codecs/zpaq.ts"),
  import("./codecs/zpaq_wasm.ts"),
  import("./codecs/_zstd_decompress.ts"),
  import("./codecs/_zstd_wasm.ts"),
  import("./format/crypto.ts"),
  import("./format/predictors/_all.ts"),
  import("./format/key_provider.ts"),
  import("./keys/_aws4fetch.ts"),
  import("./io/_write_arrow.ts"),
  import("./io/_write_arrow_js.ts"),
  import("./io/_write_parquet.ts"),
  import("./io/arrow_table.ts"),
  import("./io/arrow_schema.ts"),
  import("./ops/_pool_scan.ts"),
  import("./format/_block_worker.ts"),
  import("./ops/_freeze_worker.ts"),
  import("./ops/_thaw_worker.ts"),
  import("./worker/_task_thread.ts"),
];
