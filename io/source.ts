/**
 * The one entry point for reading a dataset: `openSource(path)` picks the reader by
 * extension (or `format`) and returns a {@link Source}: a schema plus a batch stream.
 *
 * | extension | format | reader |
 * |---|---|---|
 * | `.csv`, `.tsv`, `.tab`, `.psv` | `csv` | `csv.ts` (own streaming parser, inferred types; delimiter told from the first lines) |
 * | `.jsonl`, `.ndjson` | `jsonl` | `jsonl.ts` (own line scanner, inferred types) |
 * | `.parquet` | `parquet` | `parquet.ts` (locked-down DuckDB) |
 * | `.arrow`, `.arrows` | `arrow` | `arrow.ts` (apache-arrow, file or stream format) |
 *
 * Safe fallback for inferred types: when a row beyond the sample does not fit its
 * column, the batch iterator throws `IoError` SCHEMA_MISMATCH with `column` set; open
 * the source again with `types: { [column]: fallbackType(format) }` and start over.
 *
 * @module
 */
import { extname } from "node:path";
import { openCsv } from "./csv.ts";
import { IoError } from "./errors.ts";
import { type OpenSourceOptions, type Source, SOURCE_FORMATS, type SourceFormat } from "./types.ts";

export type { OpenSourceOptions, Source, SourceFormat } from "./types.ts";
export { DEFAULT_BATCH_ROWS, DEFAULT_SAMPLE_ROWS, SOURCE_FORMATS } from "./types.ts";

/**
 * The type a column falls back to when a value beyond the inference sample does not
 * fit it: `json` for JSON lines (each value keeps its JSON text, so a number stays a
 * number and a string a string), `string` for the others (a cell's text).
 *
 * @param format The source format.
 * @returns The fallback type.
 */
export function fallbackType(format: SourceFormat): "string" | "json" {
  return format === "jsonl" ? "json" : "string";
}

/** Source formats by file extension (lower case, with the dot). */
export const SOURCE_EXTENSIONS: Readonly<Record<string, SourceFormat>> = Object.freeze({
  ".csv": "csv",
  ".tsv": "csv",
  ".tab": "csv",
  ".psv": "csv",
  ".jsonl": "jsonl",
  ".ndjson": "jsonl",
  ".parquet": "parquet",
  ".arrow": "arrow",
  ".arrows": "arrow",
});

/**
 * Tells a source's format from its extension.
 *
 * @param path A file path.
 * @returns The format.
 * @throws {IoError} UNKNOWN_FORMAT naming the extension and the known ones.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sourceFormatOf } from "./source.ts";
 * assert.equal(sourceFormatOf("logs/2024.NDJSON"), "jsonl");
 * assert.throws(() => sourceFormatOf("table.xlsx"), { code: "UNKNOWN_FORMAT" });
 * ```
 */
export function sourceFormatOf(path: string): SourceFormat {
  const ext = extname(path).toLowerCase();
  const format = Object.hasOwn(SOURCE_EXTENSIONS, ext) ? SOURCE_EXTENSIONS[ext] : undefined;
  if (format === undefined) {
    const known = Object.keys(SOURCE_EXTENSIONS).join(", ");
    throw new IoError(
      "UNKNOWN_FORMAT",
      `Cannot tell the format of '${path}' from its extension '${ext}': known extensions are ${known} (or pass a format)`,
      { path },
    );
  }
  return format;
}

/**
 * Opens a dataset file for reading in batches.
 *
 * @param path The source file.
 * @param options `format` (else by extension), `batchRows` (default 65,536),
 * `sampleRows` (default 10,000, CSV and JSON lines), `types` (forced column types) and
 * `delimiter` (CSV).
 * @returns The source; `close()` it when done.
 * @throws {IoError} UNKNOWN_FORMAT, READ_FAILED (missing or unreadable file),
 * PARSE_FAILED, INVALID_OPTION; SCHEMA_MISMATCH later, from `batches()`.
 *
 * @example Read a CSV file
 * ```ts ignore
 * const source = await openSource("flights.csv");
 * try {
 *   for await (const batch of source.batches()) console.log(batch.length);
 * } finally {
 *   await source.close();
 * }
 * ```
 */
export function openSource(path: string, options: OpenSourceOptions = {}): Promise<Source> {
  try {
    const format = options.format ?? sourceFormatOf(path);
    switch (format) {
      case "csv":
        return openCsv(path, options);
      // The other readers load when asked for: apache-arrow (Arrow) and DuckDB's
      // binding (Parquet) cost a CSV freeze ~45 ms of CPU to load before its Workers start.
      case "jsonl":
        return import("./jsonl.ts").then((m) => m.openJsonl(path, options));
      case "parquet":
        return import("./parquet.ts").then((m) => m.openParquet(path, options));
      case "arrow":
        return import("./arrow.ts").then((m) => m.openArrow(path, options));
      default:
        throw new IoError(
          "UNKNOWN_FORMAT",
          `Cannot read format '${format}': known formats are ${SOURCE_FORMATS.join(", ")}`,
          { path },
        );
    }
  } catch (err) {
    return Promise.reject(err);
  }
}
