/**
 * Thaw outputs: `writeOutput(path, schema, batches)` writes CSV, JSON lines, Parquet or
 * Arrow IPC, picked by extension (or `format`), streaming batch by batch.
 *
 * | extension | format | writer |
 * |---|---|---|
 * | `.csv` | `csv` | `_write_text.ts` |
 * | `.jsonl`, `.ndjson` | `jsonl` | `_write_text.ts` |
 * | `.parquet` | `parquet` | `_write_parquet.ts` (locked-down DuckDB, zstd) |
 * | `.arrow` / `.arrows` | `arrow` | `_write_arrow.ts` (IPC file / stream format) |
 * | `.xlsx` | `xlsx` | `xlsx.ts` (own streaming writer; Excel's row and column limits) |
 *
 * Output goes to a temp file beside the target (`<target>.pf.tmp-<random>`, covered by
 * `.gitignore`), renamed over the target only once complete: no half-written file
 * ever carries the final name, and a failure removes the temp file. Every format reads
 * back through `openSource` to the same values (CSV and JSON lines cannot carry NaN
 * payload bits, timestamp units other than us/ns, or a timezone other than UTC).
 *
 * @module
 */
import { dirname, extname } from "node:path";
import type { Batch, Schema } from "../format/column.ts";
import { removeQuietly, tempPathBeside } from "./_file.ts";
import { writeArrow } from "./_write_arrow.ts";
import { writeParquet } from "./_write_parquet.ts";
import { writeCsv, writeJsonl } from "./_write_text.ts";
import { IoError } from "./errors.ts";
import { writeXlsx } from "./xlsx.ts";

/** The output formats `writeOutput` writes. */
export type OutputFormat = "csv" | "jsonl" | "parquet" | "arrow" | "xlsx";

/** Output formats by file extension (lower case, with the dot). */
export const OUTPUT_EXTENSIONS: Readonly<Record<string, OutputFormat>> = Object.freeze({
  ".csv": "csv",
  ".jsonl": "jsonl",
  ".ndjson": "jsonl",
  ".parquet": "parquet",
  ".arrow": "arrow",
  ".arrows": "arrow",
  ".xlsx": "xlsx",
});

const FORMATS: readonly OutputFormat[] = ["csv", "jsonl", "parquet", "arrow", "xlsx"];

/** Options of {@link writeOutput}. */
export interface WriteOutputOptions {
  /** Format to write, instead of guessing from the extension. */
  format?: OutputFormat;
  /** CSV delimiter (default `,`). */
  delimiter?: string;
  /** Arrow IPC stream format instead of file format (default: only for `.arrows`). */
  arrowStream?: boolean;
  /** xlsx: start a new sheet past Excel's 1,048,576 rows instead of failing. */
  splitSheets?: boolean;
}

/** What {@link writeOutput} wrote. */
export interface WriteOutputResult {
  /** Rows written. */
  rows: number;
  /** Size of the output file in bytes. */
  bytes: number;
}

/**
 * Tells an output's format from its extension.
 *
 * @param path A file path.
 * @returns The format.
 * @throws {IoError} UNKNOWN_FORMAT naming the extension and the known ones.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { outputFormatOf } from "./output.ts";
 * assert.equal(outputFormatOf("out/table.Parquet"), "parquet");
 * ```
 */
export function outputFormatOf(path: string): OutputFormat {
  const ext = extname(path).toLowerCase();
  const format = Object.hasOwn(OUTPUT_EXTENSIONS, ext) ? OUTPUT_EXTENSIONS[ext] : undefined;
  if (format === undefined) {
    const known = Object.keys(OUTPUT_EXTENSIONS).join(", ");
    throw new IoError(
      "UNKNOWN_FORMAT",
      `Cannot tell the output format of '${path}' from its extension '${ext}': known extensions are ${known} (or pass a format)`,
      { path },
    );
  }
  return format;
}

function checkDelimiter(d: string): void {
  const c = d.charCodeAt(0);
  if (d.length !== 1 || c > 127 || c === 34 || c === 10 || c === 13) {
    throw new IoError(
      "INVALID_OPTION",
      `Cannot use '${d}' as the CSV delimiter: it must be one ASCII character other than a quote, CR or LF`,
    );
  }
}

/**
 * Writes batches to a file, atomically (temp file beside the target, then rename).
 *
 * @param path The output file (replaced if it exists).
 * @param schema The schema of every batch.
 * @param batches The rows, sync or async.
 * @param options `format` (else by extension), `delimiter` (CSV), `arrowStream`.
 * @returns Rows and bytes written.
 * @throws {IoError} UNKNOWN_FORMAT, INVALID_OPTION, SCHEMA_MISMATCH (a batch that does
 * not match `schema`), WRITE_FAILED (I/O or DuckDB failure, or a value the format cannot
 * hold). Errors thrown by `batches` itself propagate unchanged. On any failure the
 * target is left untouched.
 *
 * @example Write a CSV file
 * ```ts ignore
 * const { rows, bytes } = await writeOutput("out.csv", source.schema, source.batches());
 * ```
 */
export async function writeOutput(
  path: string,
  schema: Schema,
  batches: AsyncIterable<Batch> | Iterable<Batch>,
  options: WriteOutputOptions = {},
): Promise<WriteOutputResult> {
  const format = options.format ?? outputFormatOf(path);
  if (!FORMATS.includes(format)) {
    throw new IoError(
      "UNKNOWN_FORMAT",
      `Cannot write format '${format}': known formats are ${FORMATS.join(", ")}`,
      { path },
    );
  }
  const delimiter = options.delimiter ?? ",";
  checkDelimiter(delimiter);
  const tmp = tempPathBeside(path);
  const sourceErrors = new WeakSet<object>();
  const input = tagErrors(batches, sourceErrors);
  let rows: number;
  try {
    if (format === "parquet") {
      rows = await writeParquet(tmp, schema, input);
      const written = await Deno.open(tmp, { read: true, write: true });
      try {
        await written.sync();
      } finally {
        written.close();
      }
    } else {
      let file: Deno.FsFile;
      try {
        file = await Deno.open(tmp, { write: true, createNew: true });
      } catch (cause) {
        throw writeFailed(path, cause);
      }
      try {
        if (format === "csv") rows = await writeCsv(file, schema, input, delimiter);
        else if (format === "jsonl") rows = await writeJsonl(file, schema, input);
        else if (format === "xlsx") {
          rows = await writeXlsx(file, schema, input, { splitSheets: options.splitSheets });
        } else {
          const stream = options.arrowStream ?? extname(path).toLowerCase() === ".arrows";
          rows = await writeArrow(file, schema, input, stream);
        }
        await file.sync();
      } finally {
        file.close();
      }
    }
    await Deno.rename(tmp, path);
  } catch (err) {
    await removeQuietly(tmp);
    if (typeof err === "object" && err !== null && sourceErrors.has(err)) throw err;
    if (err instanceof IoError) {
      if (err.path !== undefined) throw err;
      throw new IoError(err.code, err.message, {
        path,
        cause: err,
        ...(err.column === undefined ? {} : { column: err.column }),
      });
    }
    throw writeFailed(path, err);
  }
  const bytes = (await Deno.stat(path)).size;
  return { rows, bytes };
}

/** Passes batches through, remembering any error the input itself throws. */
async function* tagErrors(
  batches: AsyncIterable<Batch> | Iterable<Batch>,
  tagged: WeakSet<object>,
): AsyncGenerator<Batch> {
  const it = Symbol.asyncIterator in batches
    ? batches[Symbol.asyncIterator]()
    : (batches as Iterable<Batch>)[Symbol.iterator]();
  try {
    for (;;) {
      let r: IteratorResult<Batch>;
      try {
        r = await it.next();
      } catch (err) {
        if (typeof err === "object" && err !== null) tagged.add(err);
        throw err;
      }
      if (r.done) return;
      yield r.value;
    }
  } finally {
    await it.return?.();
  }
}

function writeFailed(path: string, cause: unknown): IoError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new IoError("WRITE_FAILED", `Cannot write '${path}' (in '${dirname(path)}'): ${why}`, {
    path,
    cause,
  });
}
