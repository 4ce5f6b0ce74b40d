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
import {
  type ArchiveIndex,
  ArchiveReader,
  readArchiveIndex,
  type VerifyReport,
} from "../format/reader.ts";
import { mergeStats } from "../format/stats.ts";
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
  /** Predictors used by its blocks, with how many blocks each. */
  predictors: Record<string, number>;
  /** Columns it is conditioned on. */
  depends_on: string[];
  /** Float quantization level (`QUANT_NONE` when lossless). */
  quantization: string;
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
  /** Codec id of every block. */
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
  return auditIndex(await readArchiveIndex(path));
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
      const b = c.blocks[i]!;
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
      predictors,
      depends_on: plan.deps,
      quantization: plan.quantization,
      stored_bytes: stored,
      raw_bytes: raw,
      ...stats,
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
  const reader = await ArchiveReader.open(path);
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
  const reader = await ArchiveReader.open(path, { keys: options.keys, requireKey: true });
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
  return v;
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
