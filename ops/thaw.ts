/**
 * `thaw`: an archive (or a slice of it) → a file (CSV, JSON lines, Parquet,
 * Arrow IPC) or an in-memory Arrow table. Reads only the chunks the row range
 * touches and only the blocks of the requested columns; every block read is
 * checked against its SHA-256 before it is decoded.
 *
 * @module
 */
import type * as arrow from "apache-arrow";
import type { Batch, Schema } from "../format/column.ts";
import { ArchiveReader, type RowRange } from "../format/reader.ts";
import { batchesToTable } from "../io/arrow_table.ts";
import { type OutputFormat, writeOutput } from "../io/output.ts";
import { OpsError } from "./errors.ts";

/** Options of `thaw` and `thawTable`. */
export interface ThawOptions {
  /** Rows `[start, end)`, 0-based (default: all). */
  rows?: RowRange;
  /** Columns to keep, in output order (default: all). */
  columns?: string[];
  /** Output format, instead of guessing from the extension. */
  format?: OutputFormat;
  /** CSV delimiter (default `,`). */
  delimiter?: string;
}

/** What `thaw` did. */
export interface ThawSummary {
  /** The file this concerns. */
  path: string;
  /** Rows. */
  rows: number;
  /** Size of the output file in bytes. */
  output_bytes: number;
  /** Chunks decoded. */
  chunks_read: number;
  /** Archive payload bytes read. */
  bytes_read: number;
  /** Wall-clock seconds. */
  seconds: number;
}

/**
 * Thaws an archive (or a slice) into a file, atomically.
 *
 * @param archive Archive path.
 * @param output Output path; format from `options.format` or the extension.
 * @param options Rows, columns, format.
 * @returns Rows and bytes written, chunks and bytes read.
 * @throws {FormatError} HASH_MISMATCH or CORRUPT on damaged bytes (nothing is written); {IoError} on output failures.
 */
export async function thaw(
  archive: string,
  output: string,
  options: ThawOptions = {},
): Promise<ThawSummary> {
  const started = performance.now();
  checkRows(options.rows);
  const reader = await ArchiveReader.open(archive);
  try {
    const schema = selectSchema(reader.index.schema, options.columns);
    const written = await writeOutput(output, schema, reader.read(options), {
      format: options.format,
      delimiter: options.delimiter,
    });
    return {
      path: output,
      rows: written.rows,
      output_bytes: written.bytes,
      chunks_read: reader.chunksRead,
      bytes_read: reader.bytesRead,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    reader.close();
  }
}

/**
 * Thaws an archive (or a slice) into an in-memory Arrow table.
 *
 * @param archive Archive path.
 * @param options Rows, columns.
 * @returns The table.
 */
export async function thawTable(archive: string, options: ThawOptions = {}): Promise<arrow.Table> {
  checkRows(options.rows);
  const reader = await ArchiveReader.open(archive);
  try {
    const schema = selectSchema(reader.index.schema, options.columns);
    const batches: Batch[] = [];
    for await (const b of reader.read(options)) batches.push(b);
    return batchesToTable(schema, batches);
  } finally {
    reader.close();
  }
}

function selectSchema(schema: Schema, columns: readonly string[] | undefined): Schema {
  if (!columns) return schema;
  return columns.map((name) => {
    const f = schema.find((g) => g.name === name);
    if (!f) {
      throw new OpsError(
        "BAD_OPTION",
        `Cannot thaw column "${name}": the archive has ${schema.map((g) => g.name).join(", ")}`,
      );
    }
    return f;
  });
}

function checkRows(rows: RowRange | undefined): void {
  if (!rows) return;
  if (
    !Number.isSafeInteger(rows.start) || !Number.isSafeInteger(rows.end) || rows.start < 0 ||
    rows.end < rows.start
  ) {
    throw new OpsError(
      "BAD_OPTION",
      `Row range ${rows.start}:${rows.end} is not START:END with 0 <= START <= END`,
    );
  }
}
