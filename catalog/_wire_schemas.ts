/**
 * Zod schemas of the catalog's REST wire, registered as OpenAPI components. They
 * mirror `types.ts` (the type assertions at the end fail to compile when the two
 * drift apart).
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import type {
  CatalogStats,
  ChunkRecord,
  ColumnsReport,
  CostReport,
  DatasetDetail,
  DatasetRecord,
  IntegrityReport,
  RegisterDirResult,
  RegisterResult,
  SearchResult,
  SqlResult,
} from "./types.ts";
import { MAX_PAGE, NAME_PATTERN } from "./options.ts";

const count = z.number().int().nonnegative();
const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

export const ColumnSchema = z.object({
  name: z.string(),
  type: z.string().openapi({ example: "int64" }),
  nullable: z.boolean(),
  unit: z.string().optional(),
  timezone: z.string().optional(),
  precision: z.number().int().optional(),
  scale: z.number().int().optional(),
}).openapi("Column");

export const DatasetSchema = z.object({
  name: z.string().openapi({ example: "flights" }),
  version: z.string().openapi({ example: "2001-h1" }),
  path: z.string().openapi({ example: "/data/flights.pf" }),
  rows: count,
  columns: count,
  schema: z.array(ColumnSchema),
  codec: z.string().openapi({ example: "zstd" }),
  auto_reason: z.string().nullable(),
  chunk_rows: count,
  chunks: count,
  file_bytes: count,
  stored_bytes: count,
  raw_bytes: count,
  ratio: z.number().nullable().openapi({ description: "raw_bytes / stored_bytes" }),
  format_version: z.string().openapi({ example: "1.3" }),
  header_sha256: sha256,
  payload_sha256: sha256,
  primary_key: z.string().nullable(),
  lossy_columns: z.array(z.string()),
  encrypted: z.boolean(),
  partition: z.record(z.string(), z.string()).nullable(),
  metadata: z.record(z.string(), z.string()),
  description: z.string(),
  storage_class: z.string().openapi({ example: "standard" }),
  registered_at: z.string().openapi({ example: "2024-05-01T12:00:00.000Z" }),
}).openapi("Dataset");

export const DatasetDetailSchema = DatasetSchema.extend({
  versions: count.openapi({ description: "Registered versions of the name" }),
}).openapi("DatasetDetail");

const statValue = z.union([z.string(), z.number(), z.boolean()]).nullable();

export const ChunkSchema = z.object({
  chunk: count,
  row_start: count,
  row_end: count,
  offset: count,
  length: count,
  raw_bytes: count,
  sha256: sha256,
  stats: z.array(z.object({
    column: z.string(),
    min: statValue,
    max: statValue,
    null_count: count,
  })),
}).openapi("Chunk");

function page<T extends z.ZodType>(item: T, name: string) {
  return z.object({
    items: z.array(item),
    total: count,
    limit: count,
    offset: count,
  }).openapi(name);
}

export const DatasetPageSchema = page(DatasetSchema, "DatasetPage");

export const SchemaChangeSchema = z.object({
  column: z.string(),
  kind: z.enum(["added", "removed", "type_changed", "nullability_changed"]),
  from: z.string().nullable().openapi({ example: "int64" }),
  to: z.string().nullable().openapi({ example: "decimal(20,2)" }),
  compatible: z.boolean().openapi({
    description: "Whether rows of the older version read in this schema without changing a value",
  }),
  reason: z.string(),
}).openapi("SchemaChange");

export const VersionSchema = DatasetSchema.extend({
  schema_changes: z.array(SchemaChangeSchema).nullable().openapi({
    description: "How the schema changed from the version before; null for the first",
  }),
}).openapi("Version");

export const VersionPageSchema = page(VersionSchema, "VersionPage");
export const ChunkPageSchema = page(ChunkSchema, "ChunkPage").extend({ version: z.string() })
  .openapi("ChunkPage");

export const ColumnsReportSchema = z.object({
  name: z.string(),
  version: z.string(),
  rows: count,
  stored_bytes: count,
  columns: z.array(z.object({
    name: z.string(),
    type: z.string().openapi({ example: "decimal(18,2)" }),
    predictors: z.array(z.string()),
    stored_bytes: count,
    raw_bytes: count,
    null_count: count,
    share: z.number().openapi({ description: "Share of the version's stored column bytes, 0..1" }),
  })),
}).openapi("ColumnsReport") satisfies z.ZodType<ColumnsReport>;

export const RegisterBodySchema = z.object({
  path: z.string().min(1).openapi({
    example: "data/flights.pf",
    description: "Archive path on the server",
  }),
  name: z.string().regex(NAME_PATTERN).optional().openapi({ example: "flights" }),
  version: z.string().regex(NAME_PATTERN).optional().openapi({ example: "2001-h1" }),
  description: z.string().max(10_000).optional(),
  storage_class: z.string().optional().openapi({ example: "standard" }),
}).openapi("RegisterRequest");

export const RegisterResultSchema = z.object({
  created: z.boolean(),
  dataset: DatasetSchema,
}).openapi("RegisterResult");

export const RegisterDirBodySchema = z.object({
  dir: z.string().min(1).openapi({ example: "data/" }),
  recursive: z.boolean().optional(),
  storage_class: z.string().optional(),
}).openapi("RegisterDirRequest");

const entry = z.object({ name: z.string(), version: z.string(), path: z.string() });
export const RegisterDirResultSchema = z.object({
  dir: z.string(),
  registered: z.array(entry),
  unchanged: z.array(entry),
  failed: z.array(z.object({
    path: z.string(),
    error: z.object({ code: z.string(), message: z.string() }),
  })),
}).openapi("RegisterDirResult");

export const IntegritySchema = z.object({
  name: z.string(),
  version: z.string(),
  path: z.string(),
  ok: z.boolean(),
  chunks_checked: count,
  bytes_checked: count,
  problems: z.array(z.object({
    kind: z.string().openapi({ example: "CHUNK_HASH" }),
    chunk: count.nullable(),
    expected: z.union([z.string(), z.number()]).nullable(),
    actual: z.union([z.string(), z.number()]).nullable(),
    message: z.string(),
  })),
  checked_at: z.string(),
}).openapi("IntegrityReport");

const group = {
  versions: count,
  rows: count,
  raw_bytes: count,
  stored_bytes: count,
  ratio: z.number().nullable(),
};
export const StatsSchema = z.object({
  datasets: count,
  ...group,
  chunks: count,
  file_bytes: count,
  by_codec: z.array(z.object({ codec: z.string(), ...group })),
  by_storage_class: z.array(z.object({ storage_class: z.string(), ...group })),
}).openapi("Stats");

const money = z.number();
export const CostReportSchema = z.object({
  currency: z.string(),
  gb_bytes: count,
  prices: z.record(z.string(), z.number()),
  parquet_ratio: z.number(),
  storage_classes: z.array(z.object({
    storage_class: z.string(),
    price_per_gb_month: z.number().nullable(),
    versions: count,
    stored_bytes: count,
    raw_bytes: count,
    parquet_bytes_estimate: count,
    monthly_cost: money.nullable(),
    raw_monthly_cost: money.nullable(),
    parquet_monthly_cost: money.nullable(),
  })),
  total: z.object({
    stored_bytes: count,
    raw_bytes: count,
    parquet_bytes_estimate: count,
    monthly_cost: money,
    raw_monthly_cost: money,
    parquet_monthly_cost: money,
    savings_vs_raw: money,
    savings_vs_parquet: money,
    savings_vs_raw_pct: z.number().nullable(),
    savings_vs_parquet_pct: z.number().nullable(),
  }),
}).openapi("CostReport");

export const SqlBodySchema = z.object({
  query: z.string().min(1).openapi({ example: "select name, sum(rows) from datasets group by 1" }),
}).openapi("SqlRequest");

export const SqlResultSchema = z.object({
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  rows: z.array(z.array(z.unknown())),
  row_count: count,
  truncated: z.boolean(),
  max_rows: count,
  max_bytes: count,
  elapsed_ms: z.number(),
}).openapi("SqlResult");

export const SearchResultSchema = z.object({
  q: z.string(),
  items: z.array(z.object({
    name: z.string(),
    version: z.string(),
    score: z.number(),
    matched: z.array(z.string()),
    description: z.string(),
    rows: count,
    codec: z.string(),
  })),
  total: count,
}).openapi("SearchResult");

export const HealthSchema = z.object({
  status: z.literal("ok"),
  version: z.string().openapi({ description: "The release version", example: "1.3.1" }),
  datasets: count,
  versions: count,
}).openapi("Health");

export const RemoveResultSchema = z.object({
  name: z.string(),
  removed: z.array(z.string()),
}).openapi("RemoveResult");

// Query and path parameters ---------------------------------------------------

/** `true`/`false` (also `1`/`0`) in a query string. */
const queryBool = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

export const NameParamSchema = z.object({
  name: z.string().openapi({ param: { name: "name", in: "path" }, example: "flights" }),
});

export const PagingQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).optional().openapi({
    param: { name: "limit", in: "query" },
    description: `Page size, 1..${MAX_PAGE} (default 100)`,
  }),
  offset: z.coerce.number().int().min(0).optional().openapi({
    param: { name: "offset", in: "query" },
    description: "Items to skip (default 0)",
  }),
});

export const ListQuerySchema = PagingQuerySchema.extend({
  codec: z.string().optional().openapi({ param: { name: "codec", in: "query" }, example: "zstd" }),
  prefix: z.string().optional().openapi({
    param: { name: "prefix", in: "query" },
    description: "Only names starting with this",
  }),
  storage_class: z.string().optional().openapi({ param: { name: "storage_class", in: "query" } }),
  all_versions: queryBool.optional().openapi({
    param: { name: "all_versions", in: "query" },
    description: "List every version, not only the latest of each name",
  }),
});

export const VersionQuerySchema = z.object({
  version: z.string().optional().openapi({
    param: { name: "version", in: "query" },
    description: "Version (default: the latest)",
  }),
});

export const ChunksQuerySchema = PagingQuerySchema.extend(VersionQuerySchema.shape).extend({
  rows: z.string().regex(/^\d+:\d+$/, "expected START:END").optional().openapi({
    param: { name: "rows", in: "query" },
    description: "Only chunks overlapping rows START:END (0-based, half-open)",
    example: "0:1000",
  }),
});

export const RowsQuerySchema = VersionQuerySchema.extend({
  rows: z.string().regex(/^\d+:\d+$/, "expected START:END").optional().openapi({
    param: { name: "rows", in: "query" },
    description: "Rows START:END (0-based, half-open; default all)",
    example: "0:1000",
  }),
  columns: z.string().regex(/^[^,]+(,[^,]+)*$/, "expected a,b,c").optional().openapi({
    param: { name: "columns", in: "query" },
    description: "Columns to send, in this order (default all)",
    example: "origin,delay",
  }),
  where: z.string().max(10_000).optional().openapi({
    param: { name: "where", in: "query" },
    description:
      "A filter in the CLI's --where language; chunks whose min/max cannot match are skipped",
    example: "delay > 60 and origin = 'SEA'",
  }),
  format: z.enum(["csv", "jsonl", "arrow"]).optional().openapi({
    param: { name: "format", in: "query" },
    description: "csv (default), jsonl, or arrow (an Arrow IPC stream)",
  }),
});

export const SearchQuerySchema = PagingQuerySchema.extend({
  q: z.string().trim().min(1).max(500).openapi({
    param: { name: "q", in: "query" },
    example: "flight",
  }),
});

// Drift guards: each line fails to compile when a schema and its type disagree.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _drift: [
  Same<z.infer<typeof DatasetSchema>, DatasetRecord>,
  Same<z.infer<typeof DatasetDetailSchema>, DatasetDetail>,
  Same<z.infer<typeof ChunkSchema>, ChunkRecord>,
  Same<z.infer<typeof RegisterResultSchema>, RegisterResult>,
  Same<z.infer<typeof RegisterDirResultSchema>, RegisterDirResult>,
  Same<z.infer<typeof IntegritySchema>, IntegrityReport>,
  Same<z.infer<typeof StatsSchema>, CatalogStats>,
  Same<z.infer<typeof CostReportSchema>, CostReport>,
  Same<z.infer<typeof SqlResultSchema>, SqlResult>,
  Same<z.infer<typeof SearchResultSchema>, SearchResult>,
] = [true, true, true, true, true, true, true, true, true, true];
void _drift;
