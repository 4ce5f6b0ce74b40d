/**
 * The shapes every source reader returns and accepts: `Source`, `SourceFormat` (with
 * the list `SOURCE_FORMATS`) and `OpenSourceOptions`. Types and that list only; `source.ts` re-exports them.
 *
 * @module
 */
import type { Batch, ColumnType, Field, Schema } from "../format/column.ts";

/** The source formats `openSource` reads (the one list: CLI, master and worker check against it). */
export const SOURCE_FORMATS: readonly ["csv", "jsonl", "parquet", "arrow"] = Object.freeze(
  ["csv", "jsonl", "parquet", "arrow"] as const,
);

/** A source format `openSource` reads. */
export type SourceFormat = (typeof SOURCE_FORMATS)[number];

/** Default rows per batch. */
export const DEFAULT_BATCH_ROWS = 65536;

/** Default rows sampled to infer CSV and JSON-lines column types. */
export const DEFAULT_SAMPLE_ROWS = 10000;

/**
 * Most columns a CSV or JSON-lines source may have (TOO_MANY_COLUMNS beyond): every
 * column costs a block, a plan trial and footer statistics in each chunk.
 */
export const MAX_COLUMNS = 10_000;

/** An opened source: its schema, and its rows as batches. */
export interface Source {
  /** Column names and types (inferred for CSV and JSON lines). */
  readonly schema: Schema;
  /** The format read. */
  readonly format: SourceFormat;
  /** Input file size in bytes. */
  readonly bytes: number;
  /**
   * How far reading has got, in bytes of the file (CSV and JSON lines), for progress:
   * `position() / bytes` is the share read. Absent where the reader cannot tell.
   */
  readonly position?: () => number;
  /** Rows in the file, when its format records them (Parquet, Arrow IPC). */
  readonly rows?: number;
  /** How a CSV file is read: its delimiter, whether it was sniffed, whether fields are quoted. */
  readonly dialect?: {
    readonly delimiter: string;
    readonly sniffed: boolean;
    readonly quoted: boolean;
  };
  /**
   * Reads the rows from the start, in batches of at most `batchRows` rows. Each call
   * starts over. Throws `IoError` SCHEMA_MISMATCH (with `column`) when a row beyond the
   * sample does not fit its column's inferred type.
   */
  batches(): AsyncIterable<Batch>;
  /** Releases what the source holds open (DuckDB instance, file handles). */
  close(): Promise<void>;
}

/**
 * A forced column type: a type name, or a field's whole type for the types that take
 * parameters (`{type: "decimal", precision, scale}`, `{type: "time", unit}`). A bare
 * name takes default parameters (`us` for times and durations, the sample's unit for
 * timestamps); a bare `"decimal"` is refused, since no precision could be assumed.
 */
export type ForcedType = ColumnType | Omit<Field, "name" | "nullable">;

/** Options of `openSource` and the per-format openers. */
export interface OpenSourceOptions {
  /** Format to read, instead of guessing from the extension. */
  format?: SourceFormat;
  /** Maximum rows per batch (default 65,536). */
  batchRows?: number;
  /** Rows sampled for type inference in CSV and JSON lines (default 10,000). */
  sampleRows?: number;
  /**
   * Forced column types by name, overriding inference. For Parquet and Arrow only
   * `"string"` (cells as text), `"json"` (values as JSON text) or the column's own type
   * are accepted. For JSON lines a name the sample never saw adds a column.
   */
  types?: Record<string, ForcedType>;
  /**
   * CSV field delimiter: one ASCII character other than `"`, CR or LF (default: told
   * from the first lines among `,` tab `;` `|`, else `,`; see `csv_dialect.ts`).
   */
  delimiter?: string;
}
