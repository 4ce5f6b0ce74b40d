/**
 * The archive's two JSON documents: the header (what the archive holds and how it
 * was encoded) and the footer (the sparse index of chunks and blocks).
 *
 * Wire keys are snake_case and declared here once. Parsing validates every field
 * a reader relies on and throws `FormatError` (`CORRUPT`, `UNKNOWN_CODEC`,
 * `UNKNOWN_PREDICTOR`) naming the field; a reader never trusts an unchecked value.
 * Implements FORMAT.md §3 (header) and §6 (footer).
 *
 * @module
 */
import {
  type ColumnType,
  type Field,
  MAX_DECIMAL_PRECISION,
  MAX_NARROW_DECIMAL_PRECISION,
  type Schema,
  type TimeUnit,
} from "./column.ts";
import {
  MAX_EDEK_SIZE,
  MIXED_CODEC,
  VERSION_MAJOR,
  VERSION_MINOR,
  VERSION_MINOR_COLUMN_CODECS,
  VERSION_MINOR_ENCRYPTED,
  VERSION_MINOR_EVOLVED,
  VERSION_MINOR_FLOAT_TYPES,
  VERSION_MINOR_TYPES,
} from "./constants.ts";
import { FormatError } from "./errors.ts";
import { decodeUtf8, encodeUtf8 } from "./_bytes.ts";
import type { Quantization } from "./predictors/predictor.ts";
import { QUANTIZATIONS } from "./predictors/predictor.ts";

/** An Arrow-schema JSON type, as Arrow's JSON integration format spells it. */
export type ArrowTypeJson =
  | { name: "int"; bitWidth: 64; isSigned: true }
  | { name: "floatingpoint"; precision: "DOUBLE" | "SINGLE" | "HALF" }
  | { name: "bool" }
  | { name: "utf8" }
  | {
    name: "timestamp";
    unit: "SECOND" | "MILLISECOND" | "MICROSECOND" | "NANOSECOND";
    timezone: string | null;
  }
  | { name: "date"; unit: "DAY" }
  | {
    name: "time";
    unit: "SECOND" | "MILLISECOND" | "MICROSECOND" | "NANOSECOND";
    bitWidth: 32 | 64;
  }
  | { name: "duration"; unit: "SECOND" | "MILLISECOND" | "MICROSECOND" | "NANOSECOND" }
  | { name: "decimal"; precision: number; scale: number; bitWidth: 64 | 128 | 256 }
  | { name: "json" };

/** One field of the Arrow-schema JSON. */
export interface ArrowFieldJson {
  /** Column name. */
  name: string;
  /** Whether the column may hold nulls. */
  nullable: boolean;
  /** Arrow type. */
  type: ArrowTypeJson;
  /** Always empty: columns are flat. */
  children: [];
}

/** The Arrow-schema JSON stored in the header. */
export interface ArrowSchemaJson {
  /** The columns, in order. */
  fields: ArrowFieldJson[];
}

/** How one column's blocks are predicted: the plan is fixed per archive so every chunk agrees. */
export interface ColumnPlan {
  /** Columns (by name) this column is conditioned on with `keyed_rank`; empty for none. */
  deps: string[];
  /** Float quantization of this column. */
  quantization: Quantization;
  /**
   * This column's codec, in an archive whose header codec is `"mixed"` (1.6); absent
   * otherwise (every block uses the header's).
   */
  codec?: string;
  /** The codec level its blocks were written at, when not the codec's default. */
  level?: number;
  /** Why a profile chose this column's codec, when one did. */
  auto_reason?: string;
  /**
   * The first chunk that holds a block of this column (1.8), when it is not chunk 0:
   * `append --evolve` added the column, and earlier chunks read it as all null
   * (FORMAT.md §6.1). Absent on every other column.
   */
  since_chunk?: number;
}

/** Encryption parameters (AES-256-GCM per block, FORMAT.md §4.4); null on plain archives. */
export interface EncryptionHeader {
  /** Block cipher. */
  algorithm: "AES-256-GCM";
  /** `raw` (the key given directly is the data key) or the key provider that wrapped it (`local`, `aws-kms`, `gcp-kms`). */
  key_provider: string;
  /** Which key: a fingerprint (`sha256:…`) for `raw`/`local`, the KMS key ARN or resource name; never the key itself. */
  key_id: string | null;
  /** Wrapped data key (base64), for envelope encryption; null for `raw`. */
  edek: string | null;
  /** `nonce · tag` (base64) of an empty message under the data key: tells a wrong key from tampering. */
  key_check: string;
}

/** The archive header (JSON, UTF-8, after the preamble). */
export interface ArchiveHeader {
  /** Always `permafrost`. */
  format: "permafrost";
  /** Version that wrote the file, e.g. `1.3`. */
  version: string;
  /** Columns. */
  schema: ArrowSchemaJson;
  /** Codec id of the archive (every block uses it). */
  codec: string;
  /** Why `auto` picked the codec, when the user asked for `auto`. */
  auto_reason: string | null;
  /** Rows per chunk (the last chunk may hold fewer). */
  chunk_rows: number;
  /** Per-column prediction plan, by column name. */
  columns: Record<string, ColumnPlan>;
  /** Columns stored lossily (quantized floats). */
  lossy_columns: string[];
  /** Primary-key column, if declared. */
  primary_key: string | null;
  /** Partition values this archive holds, when written by a partitioned freeze. */
  partition: Record<string, string> | null;
  /** Encryption parameters, when encrypted. */
  encryption: EncryptionHeader | null;
  /** Free-form user metadata (description, source name, ...). */
  metadata: Record<string, string>;
}

/** Per-column statistics of one chunk. Integers and timestamps as decimal strings (exact). */
export interface ColumnStats {
  /** Smallest non-null value; null when unknown (all null, NaN-only, or long strings). */
  min: string | number | boolean | null;
  /** Largest non-null value. */
  max: string | number | boolean | null;
  /** Number of null slots. */
  null_count: number;
}

/** One column block in the footer index. */
export interface BlockEntry {
  /** Byte offset of the block from the start of the file. */
  offset: number;
  /** Stored (compressed) length. */
  length: number;
  /** Length before the codec. */
  raw_length: number;
  /** Predictor id. */
  predictor: string;
  /** SHA-256 (hex) of the stored block bytes. */
  sha256: string;
}

/** One chunk in the footer index. */
export interface ChunkEntry {
  /** First row (inclusive, 0-based, archive-wide). */
  row_start: number;
  /** Last row (exclusive). */
  row_end: number;
  /** Byte offset of the chunk's first block. */
  offset: number;
  /** Total stored bytes of the chunk (blocks are contiguous). */
  length: number;
  /** SHA-256 (hex) of the chunk's stored bytes. */
  sha256: string;
  /**
   * One block per column, in schema order; null for a column added after this chunk
   * was written (1.8, FORMAT.md §6.1), which the chunk reads as all null.
   */
  blocks: (BlockEntry | null)[];
  /**
   * Per-column statistics, in schema order (a column the chunk lacks: no min or max,
   * every row null).
   */
  stats: ColumnStats[];
}

/** The footer: the sparse index. */
export interface ArchiveFooter {
  /** Total rows. */
  rows: number;
  /** Byte offset of the payload (first chunk). */
  payload_offset: number;
  /** Payload length in bytes. */
  payload_length: number;
  /** SHA-256 (hex) of the payload bytes. */
  payload_sha256: string;
  /** Sum of blocks' raw lengths (predicted, before the codec). */
  raw_bytes: number;
  /** Chunks in row order. */
  chunks: ChunkEntry[];
}

const UNIT_TO_ARROW = {
  s: "SECOND",
  ms: "MILLISECOND",
  us: "MICROSECOND",
  ns: "NANOSECOND",
} as const;
const ARROW_TO_UNIT: Record<string, TimeUnit> = {
  SECOND: "s",
  MILLISECOND: "ms",
  MICROSECOND: "us",
  NANOSECOND: "ns",
};

/**
 * Converts a schema to Arrow-schema JSON.
 *
 * @param schema The schema.
 * @returns Its Arrow JSON form.
 */
export function schemaToJson(schema: Schema): ArrowSchemaJson {
  return {
    fields: schema.map((f): ArrowFieldJson => ({
      name: f.name,
      nullable: f.nullable,
      type: typeToJson(f),
      children: [],
    })),
  };
}

function typeToJson(f: Field): ArrowTypeJson {
  const unit = UNIT_TO_ARROW[f.unit ?? "us"];
  switch (f.type) {
    case "int64":
      return { name: "int", bitWidth: 64, isSigned: true };
    case "float64":
      return { name: "floatingpoint", precision: "DOUBLE" };
    case "float32":
      return { name: "floatingpoint", precision: "SINGLE" };
    case "float16":
      return { name: "floatingpoint", precision: "HALF" };
    case "bool":
      return { name: "bool" };
    case "string":
      return { name: "utf8" };
    case "date":
      return { name: "date", unit: "DAY" };
    case "timestamp":
      return { name: "timestamp", unit, timezone: f.timezone ?? null };
    case "time":
      return {
        name: "time",
        unit,
        bitWidth: unit === "SECOND" || unit === "MILLISECOND" ? 32 : 64,
      };
    case "duration":
      return { name: "duration", unit };
    case "decimal": {
      const precision = f.precision ?? MAX_DECIMAL_PRECISION;
      return {
        name: "decimal",
        precision,
        scale: f.scale ?? 0,
        bitWidth: precision <= MAX_NARROW_DECIMAL_PRECISION ? 64 : precision <= 38 ? 128 : 256,
      };
    }
    case "json":
      return { name: "json" };
  }
}

/**
 * Converts Arrow-schema JSON from a header back to a schema, validating it.
 *
 * @param json The parsed `schema` member of a header.
 * @returns The schema.
 * @throws {FormatError} CORRUPT when a field is malformed or a name repeats.
 */
export function schemaFromJson(json: unknown): Schema {
  const fields = (json as { fields?: unknown })?.fields;
  if (!Array.isArray(fields)) throw corrupt("header schema has no fields array");
  const seen = new Set<string>();
  return fields.map((raw, i): Field => {
    const f = raw as Partial<ArrowFieldJson>;
    if (typeof f?.name !== "string") throw corrupt(`header schema field ${i} has no name`);
    if (seen.has(f.name)) throw corrupt(`header schema repeats column "${f.name}"`);
    seen.add(f.name);
    const nullable = f.nullable === true;
    const t = f.type as Record<string, unknown> | undefined;
    const type = columnTypeOf(t, f.name);
    if (type === "decimal") {
      const { precision, scale } = t as { precision?: unknown; scale?: unknown };
      if (
        !Number.isSafeInteger(precision) || (precision as number) < 1 ||
        (precision as number) > MAX_DECIMAL_PRECISION || !Number.isSafeInteger(scale) ||
        (scale as number) < 0 || (scale as number) > (precision as number)
      ) {
        throw corrupt(
          `header schema column "${f.name}" has decimal precision ${precision} and scale ${scale} (expected 1..${MAX_DECIMAL_PRECISION} and 0..precision)`,
        );
      }
      return {
        name: f.name,
        type,
        nullable,
        precision: precision as number,
        scale: scale as number,
      };
    }
    if (type !== "timestamp" && type !== "time" && type !== "duration") {
      return { name: f.name, type, nullable };
    }
    const unit = ARROW_TO_UNIT[String(t?.unit)];
    if (!unit) throw corrupt(`header schema column "${f.name}" has ${type} unit "${t?.unit}"`);
    const tz = t?.timezone;
    return type === "timestamp" && typeof tz === "string"
      ? { name: f.name, type, nullable, unit, timezone: tz }
      : { name: f.name, type, nullable, unit };
  });
}

function columnTypeOf(t: Record<string, unknown> | undefined, name: string): ColumnType {
  switch (t?.name) {
    case "int":
      if (t.bitWidth === 64 && t.isSigned === true) return "int64";
      break;
    case "floatingpoint":
      if (t.precision === "DOUBLE") return "float64";
      if (t.precision === "SINGLE") return "float32";
      if (t.precision === "HALF") return "float16";
      break;
    case "bool":
      return "bool";
    case "utf8":
      return "string";
    case "date":
      return "date";
    case "timestamp":
      return "timestamp";
    case "time":
      return "time";
    case "duration":
      return "duration";
    case "decimal":
      return "decimal";
    case "json":
      return "json";
  }
  throw corrupt(`header schema column "${name}" has unsupported type ${JSON.stringify(t)}`);
}

/** Arrow-JSON type names of the column types added in 1.5. */
const TYPES_SINCE_1_5: ReadonlySet<string> = new Set(["time", "duration", "decimal", "json"]);

/**
 * Whether an archive needs 1.7: a `float32`/`float16` column, or a column quantized to
 * `QUANT_MEDIUM`/`QUANT_LOW` (its blocks hold float32/float16 bit patterns).
 *
 * @param header The schema JSON and, when known, the column plans.
 * @returns True when the archive is 1.7 or later.
 */
export function usesFloatTypes(
  header: Pick<ArchiveHeader, "schema"> & { columns?: ArchiveHeader["columns"] },
): boolean {
  if (
    header.schema.fields.some((f) =>
      f.type.name === "floatingpoint" && f.type.precision !== "DOUBLE"
    )
  ) return true;
  return Object.values(header.columns ?? {}).some((plan) =>
    plan.quantization === "QUANT_MEDIUM" || plan.quantization === "QUANT_LOW"
  );
}

/**
 * The lowest minor version that describes an archive with this schema, codec and
 * encryption: 1.7 when a column is float32/float16 or quantized into them, else 1.6 when its columns use different codecs, else 1.5 when a column has
 * a type added in 1.5, else 1.4 when encrypted, else 1.3 (FORMAT.md §9). Writers stamp it so every older reader keeps reading
 * what it can.
 *
 * @param header The schema JSON, the encryption member and the codec.
 * @returns The minor version.
 */
export function archiveMinor(
  header: Pick<ArchiveHeader, "schema" | "encryption"> & {
    codec?: string;
    columns?: Record<string, ColumnPlan>;
  },
): number {
  if (isEvolved(header)) return VERSION_MINOR_EVOLVED;
  if (usesFloatTypes(header)) return VERSION_MINOR_FLOAT_TYPES;
  if (header.codec === MIXED_CODEC) return VERSION_MINOR_COLUMN_CODECS;
  if (header.schema.fields.some((f) => TYPES_SINCE_1_5.has(f.type.name))) {
    return VERSION_MINOR_TYPES;
  }
  return header.encryption ? VERSION_MINOR_ENCRYPTED : VERSION_MINOR;
}

/**
 * Whether a header names a column that some chunks lack (a plan with `since_chunk`,
 * 1.8, FORMAT.md §6.1).
 *
 * @param header The column plans.
 * @returns True when at least one column starts after chunk 0.
 */
export function isEvolved(header: { columns?: Record<string, ColumnPlan> }): boolean {
  return Object.values(header.columns ?? {}).some((p) => (p.since_chunk ?? 0) > 0);
}

/**
 * The `version` text a header must carry: `1.<archiveMinor>`.
 *
 * @param header The schema JSON and the encryption member.
 * @returns E.g. `"1.3"`.
 */
export function archiveVersion(
  header: Pick<ArchiveHeader, "schema" | "encryption"> & {
    codec?: string;
    columns?: Record<string, ColumnPlan>;
  },
): string {
  return `${VERSION_MAJOR}.${archiveMinor(header)}`;
}

/**
 * Serializes a header to its canonical bytes (stable key order, no whitespace).
 *
 * @param header The header.
 * @returns UTF-8 JSON bytes.
 */
export function encodeHeader(header: ArchiveHeader): Uint8Array {
  return encodeUtf8(JSON.stringify(header));
}

/**
 * Parses and validates header bytes.
 *
 * @param bytes UTF-8 JSON bytes.
 * @returns The header and its schema.
 * @throws {FormatError} CORRUPT when a member is missing or malformed.
 */
export function decodeHeader(bytes: Uint8Array): { header: ArchiveHeader; schema: Schema } {
  const h = parseJson(bytes, "header") as Partial<ArchiveHeader>;
  if (h.format !== "permafrost") throw corrupt(`header format is "${h.format}", not "permafrost"`);
  if (typeof h.version !== "string") throw corrupt("header has no version");
  const schema = schemaFromJson(h.schema);
  if (typeof h.codec !== "string") throw corrupt("header has no codec");
  if (!isCount(h.chunk_rows) || h.chunk_rows < 1) {
    throw corrupt("header chunk_rows is not a positive integer");
  }
  const columns = h.columns ?? {};
  if (typeof columns !== "object") throw corrupt("header columns is not an object");
  for (const f of schema) {
    const plan = (columns as Record<string, Partial<ColumnPlan>>)[f.name];
    if (!plan) throw corrupt(`header has no plan for column "${f.name}"`);
    if (!Array.isArray(plan.deps) || plan.deps.some((d) => !schema.some((g) => g.name === d))) {
      throw corrupt(`header plan of column "${f.name}" names unknown dependency columns`);
    }
    if (!QUANTIZATIONS.includes(plan.quantization as Quantization)) {
      throw corrupt(`header plan of column "${f.name}" has quantization "${plan.quantization}"`);
    }
    if (h.codec === MIXED_CODEC && typeof plan.codec !== "string") {
      throw corrupt(`header codec is "${MIXED_CODEC}" but column "${f.name}" names no codec`);
    }
    if (plan.level !== undefined && !Number.isSafeInteger(plan.level)) {
      throw corrupt(`header plan of column "${f.name}" has level ${JSON.stringify(plan.level)}`);
    }
    if (plan.since_chunk !== undefined) {
      if (!isCount(plan.since_chunk) || plan.since_chunk < 1) {
        throw corrupt(
          `header plan of column "${f.name}" has since_chunk ${
            JSON.stringify(plan.since_chunk)
          } (expected a chunk index of at least 1)`,
        );
      }
      if (!f.nullable) {
        throw corrupt(
          `column "${f.name}" starts at chunk ${plan.since_chunk} but is not nullable: earlier chunks read it as null`,
        );
      }
    }
  }
  // A column is decoded with its dependencies' values of the same chunk, so none may
  // start later than the column itself.
  for (const f of schema) {
    const plans = columns as Record<string, ColumnPlan>;
    for (const d of plans[f.name]!.deps) {
      const since = plans[d]!.since_chunk ?? 0;
      if (since > (plans[f.name]!.since_chunk ?? 0)) {
        throw corrupt(
          `column "${f.name}" depends on column "${d}", which starts at a later chunk (${since})`,
        );
      }
    }
  }
  const header: ArchiveHeader = {
    format: "permafrost",
    version: h.version,
    schema: h.schema as ArrowSchemaJson,
    codec: h.codec,
    auto_reason: typeof h.auto_reason === "string" ? h.auto_reason : null,
    chunk_rows: h.chunk_rows,
    columns: columns as Record<string, ColumnPlan>,
    lossy_columns: Array.isArray(h.lossy_columns) ? h.lossy_columns.map(String) : [],
    primary_key: typeof h.primary_key === "string" ? h.primary_key : null,
    partition: h.partition && typeof h.partition === "object" ? h.partition : null,
    encryption: decodeEncryption(h.encryption),
    metadata: h.metadata && typeof h.metadata === "object" ? h.metadata : {},
  };
  return { header, schema };
}

/**
 * Parses and validates footer JSON bytes against the file layout.
 *
 * Checks that chunks are contiguous in rows and bytes, that every block lies
 * inside its chunk, and that the payload lies inside the file.
 *
 * A column whose plan starts at a later chunk (`since_chunk`, 1.8) has a null block
 * entry and all-null statistics in every chunk before it, and a block in every chunk
 * from it on (FORMAT.md §6.1).
 *
 * @param bytes UTF-8 JSON bytes (already decompressed).
 * @param columns Number of columns in the schema.
 * @param payloadLimit First byte offset after the payload region (start of the footer).
 * @param sinceChunks Per column in schema order, the first chunk holding it (default 0 for all).
 * @returns The footer.
 * @throws {FormatError} CORRUPT naming the first inconsistent member.
 */
export function decodeFooter(
  bytes: Uint8Array,
  columns: number,
  payloadLimit: number,
  sinceChunks: readonly number[] = [],
): ArchiveFooter {
  const f = parseJson(bytes, "footer") as Partial<ArchiveFooter>;
  if (!isCount(f.rows)) throw corrupt("footer rows is not a count");
  if (!isCount(f.payload_offset) || !isCount(f.payload_length)) {
    throw corrupt("footer payload range is not a pair of counts");
  }
  if (f.payload_offset + f.payload_length !== payloadLimit) {
    throw corrupt(
      `footer payload ends at ${
        f.payload_offset + f.payload_length
      }, footer starts at ${payloadLimit}`,
    );
  }
  if (!isHex(f.payload_sha256)) throw corrupt("footer payload_sha256 is not a SHA-256 hex digest");
  if (!Array.isArray(f.chunks)) throw corrupt("footer has no chunks array");
  let row = 0;
  let offset = f.payload_offset;
  let raw = 0;
  f.chunks.forEach((c: Partial<ChunkEntry>, i) => {
    if (c?.row_start !== row || !isCount(c.row_end) || c.row_end <= row) {
      throw corrupt(`footer chunk ${i} row range does not follow row ${row}`);
    }
    if (c.offset !== offset || !isCount(c.length)) {
      throw corrupt(`footer chunk ${i} does not start at byte ${offset}`);
    }
    if (!isHex(c.sha256)) throw corrupt(`footer chunk ${i} sha256 is not a hex digest`);
    if (!Array.isArray(c.blocks) || c.blocks.length !== columns) {
      throw corrupt(
        `footer chunk ${i} has ${c.blocks?.length} blocks, schema has ${columns} columns`,
      );
    }
    if (!Array.isArray(c.stats) || c.stats.length !== columns) {
      throw corrupt(
        `footer chunk ${i} has ${c.stats?.length} stats, schema has ${columns} columns`,
      );
    }
    let at = c.offset;
    c.blocks.forEach((b: Partial<BlockEntry> | null, j) => {
      if (i < (sinceChunks[j] ?? 0)) {
        checkLacking(b, c.stats![j], c.row_end! - row, i, j);
        return;
      }
      if (b?.offset !== at || !isCount(b.length) || !isCount(b.raw_length)) {
        throw corrupt(`footer chunk ${i} block ${j} does not start at byte ${at}`);
      }
      if (typeof b.predictor !== "string" || !isHex(b.sha256)) {
        throw corrupt(`footer chunk ${i} block ${j} has no predictor or sha256`);
      }
      at += b.length;
      raw += b.raw_length;
    });
    if (at !== c.offset + c.length) {
      throw corrupt(`footer chunk ${i} blocks do not fill its byte range`);
    }
    row = c.row_end;
    offset += c.length;
  });
  if (row !== f.rows) throw corrupt(`footer chunks hold ${row} rows, footer says ${f.rows}`);
  sinceChunks.forEach((since, j) => {
    if (since > 0 && since >= f.chunks!.length) {
      throw corrupt(
        `column ${j} starts at chunk ${since}, the footer has ${f.chunks!.length} chunks`,
      );
    }
  });
  if (offset !== payloadLimit) {
    throw corrupt(`footer chunks end at byte ${offset}, payload ends at ${payloadLimit}`);
  }
  return { ...(f as ArchiveFooter), raw_bytes: isCount(f.raw_bytes) ? f.raw_bytes : raw };
}

/**
 * A chunk's entries for a column it does not hold: no block, and statistics that say
 * every row is null (what the reader returns), so no caller can read a value there.
 */
function checkLacking(
  block: unknown,
  stats: Partial<ColumnStats> | undefined,
  rows: number,
  chunk: number,
  column: number,
): void {
  if (block !== null) {
    throw corrupt(
      `footer chunk ${chunk} has a block for column ${column}, which starts at a later chunk`,
    );
  }
  if (stats?.min !== null || stats?.max !== null || stats?.null_count !== rows) {
    throw corrupt(
      `footer chunk ${chunk} statistics of column ${column} (which it lacks) are not ${rows} nulls`,
    );
  }
}

/** Longest `key_provider` / `key_id` text a header may hold. */
const MAX_KEY_TEXT = 2048;

function decodeEncryption(raw: unknown): EncryptionHeader | null {
  if (raw === null || raw === undefined) return null;
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw corrupt("header encryption is not an object");
  }
  const e = raw as Partial<EncryptionHeader>;
  if (e.algorithm !== "AES-256-GCM") {
    throw corrupt(
      `header encryption algorithm is ${JSON.stringify(e.algorithm)}, not "AES-256-GCM"`,
    );
  }
  if (
    typeof e.key_provider !== "string" || e.key_provider === "" ||
    e.key_provider.length > MAX_KEY_TEXT
  ) {
    throw corrupt("header encryption key_provider is not a name");
  }
  if (e.key_id !== null && (typeof e.key_id !== "string" || e.key_id.length > MAX_KEY_TEXT)) {
    throw corrupt("header encryption key_id is not a string or null");
  }
  const maxEdekText = Math.ceil(MAX_EDEK_SIZE / 3) * 4;
  if (
    e.edek !== null &&
    (typeof e.edek !== "string" || e.edek === "" || e.edek.length > maxEdekText ||
      !isBase64(e.edek))
  ) {
    throw corrupt(
      `header encryption edek is not base64 of at most ${MAX_EDEK_SIZE} bytes, or null`,
    );
  }
  if ((e.key_provider === "raw") !== (e.edek === null)) {
    throw corrupt('header encryption has an edek exactly when key_provider is not "raw"');
  }
  if (typeof e.key_check !== "string" || e.key_check.length !== 40 || !isBase64(e.key_check)) {
    throw corrupt("header encryption key_check is not base64 of 28 bytes");
  }
  return {
    algorithm: e.algorithm,
    key_provider: e.key_provider,
    key_id: e.key_id,
    edek: e.edek,
    key_check: e.key_check,
  };
}

function isBase64(v: string): boolean {
  return v.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(v);
}

function parseJson(bytes: Uint8Array, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(decodeUtf8(bytes, what));
  } catch (cause) {
    if (cause instanceof FormatError) throw cause;
    throw new FormatError("CORRUPT", `Cannot parse ${what}: not valid JSON`, { cause });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw corrupt(`${what} is not a JSON object`);
  }
  return value as Record<string, unknown>;
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

function isHex(v: unknown): v is string {
  return typeof v === "string" && /^[0-9a-f]{64}$/.test(v);
}

function corrupt(message: string): FormatError {
  return new FormatError("CORRUPT", `Cannot read archive: ${message}`);
}
