/**
 * `audit`, `verify` and `peek`: looking at an archive without thawing it.
 * `audit` and `peek`'s schema read header and footer only; `verify` reads every
 * byte and checks every hash; `peek` decodes only the chunks its rows need.
 *
 * @module
 */
import type { Field } from "../format/column.ts";
import { cellValue } from "../format/column.ts";
import { valueText } from "../io/cell_text.ts";
import type { ColumnStats } from "../format/header.ts";
import type { ArchiveIndex, VerifyReport } from "../format/reader.ts";
import { openArchive, readIndexAt } from "./_remote.ts";
import { mergeStats } from "../format/stats.ts";
import { formatBytes } from "../internal/progress.ts";
import type { KeyRing } from "../format/key_provider.ts";

/** One column in an audit report. */
export interface AuditColumn {
  /** Column name. */
  name: string;
  /** Logical column type. */
  type: Field["type"];
  /** Whether the column may hold nulls. */
  nullable: boolean;
  /** Tick unit of a timestamp column. */
  unit?: string;
  /** Timezone of a timestamp column, when it has one. */
  timezone?: string;
  /** Digits of a decimal column. */
  precision?: number;
  /** Digits after the point of a decimal column. */
  scale?: number;
  /** Predictors used by its blocks, with how many blocks each. */
  predictors: Record<string, number>;
  /** Columns it is conditioned on. */
  depends_on: string[];
  /** Float quantization level (`QUANT_NONE` when lossless). */
  quantization: string;
  /** The codec of its blocks (the archive's, or its own in a `mixed` archive). */
  codec: string;
  /** The codec level its blocks were written at (null: the codec's default). */
  level: number | null;
  /** Why a profile chose its codec (null when none did). */
  auto_reason: string | null;
  /**
   * The first chunk that holds the column: 0, or the chunk where `append --evolve`
   * added it (earlier chunks read it as all null; FORMAT.md §6.1).
   */
  since_chunk: number;
  /** Bytes of its blocks after the codec. */
  stored_bytes: number;
  /** Bytes before the codec (after prediction). */
  raw_bytes: number;
  /** Smallest non-null value (see FORMAT.md §6 for the wire form). */
  min: ColumnStats["min"];
  /** Largest non-null value (see FORMAT.md §6 for the wire form). */
  max: ColumnStats["max"];
  /** Number of null slots. */
  null_count: number;
  /**
   * `min` in the column's own terms: a number for int64 (a string past 2^53) and
   * float64, `YYYY-MM-DD` for a date, ISO 8601 for a timestamp, the decimal text of a
   * decimal, `HH:MM:SS[.f]` for a time; null when unknown.
   */
  min_value: string | number | boolean | null;
  /** `max` in the column's own terms (as `min_value`). */
  max_value: string | number | boolean | null;
}

/** The JSON `audit` prints. */
export interface AuditReport {
  /** The file this concerns. */
  path: string;
  /** Format version of the file (`major.minor`). */
  format_version: string;
  /** Size of the archive file in bytes. */
  file_bytes: number;
  /** Rows. */
  rows: number;
  /** Number of chunks. */
  chunk_count: number;
  /** Rows per chunk (the last may hold fewer). */
  chunk_rows: number;
  /** Codec id of every block, or `mixed` when each column names its own (`columns[].codec`). */
  codec: string;
  /** Why `auto` chose the codec (null when the codec was given). */
  auto_reason: string | null;
  /** SHA-256 (hex) of the header. */
  header_sha256: string;
  /** SHA-256 (hex) of the payload. */
  payload_sha256: string;
  /** Bytes of the payload (all chunks). */
  payload_bytes: number;
  /** Bytes before the codec (after prediction). */
  raw_bytes: number;
  /** Columns stored with a lossy float quantizer. */
  lossy_columns: string[];
  /** Primary-key column, if declared. */
  primary_key: string | null;
  /** Partition values of this archive, when written by a partitioned freeze. */
  partition: Record<string, string> | null;
  /** Whether the blocks are encrypted. */
  encrypted: boolean;
  /** Size in bytes of the wrapped data key, when encrypted with envelope keys. */
  edek_size: number | null;
  /** Free-form metadata from the header. */
  metadata: Record<string, string>;
  /**
   * The schema as the header stores it: Arrow's JSON form of the fields (name, nullable,
   * type with its unit, timezone, precision and scale), as a JSON string.
   */
  stored_schema: string;
  /** Columns. */
  columns: AuditColumn[];
  /** Chunks. */
  chunks: {
    index: number;
    row_start: number;
    row_end: number;
    offset: number;
    length: number;
    sha256: string;
  }[];
}

/**
 * Describes an archive from its header and footer (no payload is read or decompressed).
 *
 * @param path Archive path.
 * @returns The audit report.
 * @throws {FormatError} When the header or footer is unreadable.
 */
export async function audit(path: string): Promise<AuditReport> {
  return auditIndex(await readIndexAt(path));
}

/**
 * Builds an audit report from an archive index already read.
 *
 * @param index The index.
 * @returns The audit report.
 */
export function auditIndex(index: ArchiveIndex): AuditReport {
  const { header, footer, schema } = index;
  const columns = schema.map((f, i): AuditColumn => {
    const predictors: Record<string, number> = {};
    let stored = 0;
    let raw = 0;
    for (const c of footer.chunks) {
      const b = c.blocks[i];
      if (!b) continue; // a chunk written before the column was added
      predictors[b.predictor] = (predictors[b.predictor] ?? 0) + 1;
      stored += b.length;
      raw += b.raw_length;
    }
    const stats = mergeStats(f.type, footer.chunks.map((c) => c.stats[i]!));
    const plan = header.columns[f.name]!;
    return {
      name: f.name,
      type: f.type,
      nullable: f.nullable,
      ...(f.unit ? { unit: f.unit } : {}),
      ...(f.timezone ? { timezone: f.timezone } : {}),
      ...(f.type === "decimal" ? { precision: f.precision, scale: f.scale } : {}),
      predictors,
      depends_on: plan.deps,
      quantization: plan.quantization,
      codec: plan.codec ?? header.codec,
      level: plan.level ?? null,
      auto_reason: plan.auto_reason ?? null,
      since_chunk: plan.since_chunk ?? 0,
      stored_bytes: stored,
      raw_bytes: raw,
      ...stats,
      min_value: statValue(f, stats.min),
      max_value: statValue(f, stats.max),
    };
  });
  const edek = header.encryption?.edek ?? null;
  return {
    path: index.path,
    format_version: index.version,
    file_bytes: index.file_bytes,
    rows: footer.rows,
    chunk_count: footer.chunks.length,
    chunk_rows: header.chunk_rows,
    codec: header.codec,
    auto_reason: header.auto_reason,
    header_sha256: index.header_sha256,
    payload_sha256: footer.payload_sha256,
    payload_bytes: footer.payload_length,
    raw_bytes: footer.raw_bytes,
    lossy_columns: header.lossy_columns,
    primary_key: header.primary_key,
    partition: header.partition,
    encrypted: header.encryption !== null,
    edek_size: edek === null
      ? null
      : Math.floor(edek.length * 3 / 4) - (edek.endsWith("==") ? 2 : edek.endsWith("=") ? 1 : 0),
    metadata: header.metadata,
    stored_schema: JSON.stringify(header.schema),
    columns,
    chunks: footer.chunks.map((c, i) => ({
      index: i,
      row_start: c.row_start,
      row_end: c.row_end,
      offset: c.offset,
      length: c.length,
      sha256: c.sha256,
    })),
  };
}

/**
 * A statistic (FORMAT.md §6 wire form) in its column's own terms.
 *
 * @param field The column.
 * @param wire The statistic as the footer stores it.
 * @returns A number, boolean or display text; null when unknown.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { statValue } from "./inspect.ts";
 * assert.equal(statValue({ name: "d", type: "date", nullable: true }, "19723"), "2024-01-01");
 * assert.equal(statValue({ name: "n", type: "int64", nullable: true }, "42"), 42);
 * ```
 */
export function statValue(
  field: Field,
  wire: ColumnStats["min"],
): string | number | boolean | null {
  if (wire === null) return null;
  switch (field.type) {
    case "int64": {
      const n = Number(wire);
      return Number.isSafeInteger(n) ? n : String(wire);
    }
    case "float32":
    case "float16":
      return typeof wire === "number" ? Number(valueText(wire, field)) : wire;
    case "float64":
    case "bool":
    case "string":
    case "json":
      return wire;
    case "date":
      return valueText(Number(wire), field);
    default:
      // timestamp, time, duration, decimal: integers as decimal strings.
      return valueText(BigInt(String(wire)), field);
  }
}

/**
 * Checks the header, the payload and every chunk against their SHA-256.
 *
 * @param path Archive path.
 * @param options `onProgress` with bytes checked and the payload size.
 * @returns The report; `ok` is false and `first_bad_chunk` set when a chunk is damaged.
 * @throws {FormatError} When the header or footer itself is damaged (nothing to check against).
 */
export async function verify(
  path: string,
  options: { onProgress?: (checked: number, total: number) => void } = {},
): Promise<VerifyReport> {
  const reader = await openArchive(path);
  try {
    const total = reader.index.footer.payload_length;
    return await reader.verify((n) => options.onProgress?.(n, total));
  } finally {
    reader.close();
  }
}

/** What `peek` returns. */
export interface PeekResult {
  /** Columns. */
  columns: string[];
  /** Column types, in the order of `columns`. */
  types: string[];
  /** Rows. */
  rows: (string | number | boolean | null)[][];
  /** Rows in the archive. */
  total_rows: number;
}

/**
 * Reads the first rows of an archive (only the chunks they lie in).
 *
 * @param path Archive path.
 * @param options `rows` (default 10), `columns`, `keys` of an encrypted archive.
 * @returns Column names, types and rows as JSON-safe cells (int64 beyond 2^53 as strings).
 */
export async function peek(
  path: string,
  options: { rows?: number; columns?: string[]; keys?: KeyRing } = {},
): Promise<PeekResult> {
  const reader = await openArchive(path, { keys: options.keys, requireKey: true });
  try {
    const want = options.rows ?? 10;
    const out: PeekResult = {
      columns: [],
      types: [],
      rows: [],
      total_rows: reader.index.footer.rows,
    };
    const fields = options.columns
      ? options.columns.map((n) => reader.index.schema.find((f) => f.name === n)).filter((f) =>
        f !== undefined
      )
      : reader.index.schema;
    out.columns = fields.map((f) => f.name);
    out.types = fields.map((f) => f.type);
    for await (
      const batch of reader.read({ rows: { start: 0, end: want }, columns: options.columns })
    ) {
      for (let r = 0; r < batch.length; r++) {
        out.rows.push(batch.columns.map((c, i) => displayCell(cellValue(c, r), batch.schema[i]!)));
      }
    }
    return out;
  } finally {
    reader.close();
  }
}

/**
 * A cell as a JSON-safe display value: int64 as a number when exact in a double
 * (else its digits as a string), every other typed value as its exact text (dates,
 * timestamps to their last digit, times, durations, decimals, JSON), non-finite
 * floats as strings.
 */
export function displayCell(
  v: bigint | number | boolean | string | null,
  field: Field,
): string | number | boolean | null {
  if (v === null) return null;
  if (field.type === "int64") {
    return Number.isSafeInteger(Number(v)) ? Number(v) : String(v);
  }
  if (typeof v === "bigint") return valueText(v, field);
  if (typeof v === "number" && !Number.isFinite(v)) return String(v);
  // A float32/float16 as its shortest text's number (0.1, not 0.10000000149011612).
  if (field.type === "float32" || field.type === "float16") return Number(valueText(v, field));
  return v;
}

/**
 * An audit report for people: the archive in a few lines, then one row per column
 * with its type, predictors, stored and raw bytes, its share of the payload as a bar,
 * nulls and min/max in the column's own terms.
 *
 * @param report What `audit` returned.
 * @returns The text.
 */
export function formatAudit(report: AuditReport): string {
  const lines = [
    `${report.path}: Permafrost archive ${report.format_version}, ${
      report.rows.toLocaleString("en-US")
    } rows in ${report.chunk_count} chunk(s) of ${report.chunk_rows.toLocaleString("en-US")}`,
    `codec ${report.codec}${report.auto_reason ? ` (${report.auto_reason})` : ""}; ${
      formatBytes(report.file_bytes)
    } on disk, ${formatBytes(report.raw_bytes)} before the codec${
      report.encrypted ? "; encrypted (AES-256-GCM)" : ""
    }${report.primary_key ? `; primary key ${report.primary_key}` : ""}${
      report.lossy_columns.length ? `; lossy: ${report.lossy_columns.join(", ")}` : ""
    }`,
    "",
  ];
  const payload = Math.max(1, report.columns.reduce((n, c) => n + c.stored_bytes, 0));
  // A codec column only where columns differ from the archive's codec or its level.
  const perColumn = report.columns.some((c) => c.codec !== report.codec || c.level !== null);
  // A "since" column only when `append --evolve` added a column after the first chunk.
  const evolved = report.columns.some((c) => c.since_chunk > 0);
  const rows = report.columns.map((c) => {
    const share = c.stored_bytes / payload;
    const filled = Math.round(share * 10);
    return [
      c.name,
      typeText(c),
      ...(perColumn ? [`${c.codec}${c.level === null ? "" : `:${c.level}`}`] : []),
      ...(evolved ? [c.since_chunk > 0 ? `chunk ${c.since_chunk}` : ""] : []),
      Object.keys(c.predictors).join(","),
      formatBytes(c.stored_bytes),
      formatBytes(c.raw_bytes),
      `${"█".repeat(filled)}${"·".repeat(10 - filled)} ${(share * 100).toFixed(1)}%`,
      c.null_count.toLocaleString("en-US"),
      shown(c.min_value),
      shown(c.max_value),
    ];
  });
  lines.push(
    formatTable({
      columns: [
        "column",
        "type",
        ...(perColumn ? ["codec"] : []),
        ...(evolved ? ["since"] : []),
        "predictor",
        "stored",
        "raw",
        "share",
        "nulls",
        "min",
        "max",
      ],
      types: [],
      rows,
      total_rows: rows.length,
    }),
  );
  return lines.join("\n");
}

function typeText(c: AuditColumn): string {
  if (c.type === "decimal") return `decimal(${c.precision},${c.scale})`;
  if (c.unit) return `${c.type}(${c.unit})`;
  return c.type;
}

function shown(v: string | number | boolean | null): string {
  if (v === null) return "";
  const text = String(v);
  return text.length > 24 ? `${text.slice(0, 23)}…` : text;
}

/**
 * Formats peeked rows as an aligned text table.
 *
 * @param result What `peek` returned.
 * @returns Lines of text.
 */
export function formatTable(result: PeekResult): string {
  const cells = [
    result.columns,
    ...result.rows.map((r) => r.map((c) => (c === null ? "null" : String(c)))),
  ];
  const widths = result.columns.map((_, i) => Math.max(...cells.map((r) => String(r[i]).length)));
  const line = (r: readonly unknown[]) =>
    r.map((c, i) => String(c).padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(cells[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map(line)]
    .join("\n");
}
