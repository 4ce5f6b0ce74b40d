/**
 * What the master fixes for a job before any worker starts, so every chunk agrees
 * and the archive equals a local `freeze` of the same source and options:
 *
 * 1. the layout: one window per chunk of exactly `chunk_rows` rows
 *    (`cluster/task_source.ts`), found without parsing the source;
 * 2. the schema, opened as a local freeze opens it (inferred from the sample for CSV
 *    and JSON lines; columns widened to text forced);
 * 3. the plan and the codec, from the first chunk, exactly as `ops/freeze.ts` chooses
 *    them (`planColumns`, `autoCodec`);
 * 4. for CSV, the delimiter, told once from the file's start, so no task reads the
 *    start again to tell it.
 *
 * A value in the first chunk that does not fit its inferred type widens that column
 * to text and starts over, as the local freeze does.
 *
 * @module
 */
import { fallbackType } from "../io/source.ts";
import type { TextFallback } from "../client/types.ts";
import type { Batch } from "../format/column.ts";
import { planColumns } from "../format/plan.ts";
import { IoError } from "../io/errors.ts";
import { ParquetReaders } from "../io/parquet.ts";
import type { SourceFormat } from "../io/types.ts";
import { chooseArchiveCodec } from "../format/new_archive.ts";
import { freezeBatchRows } from "../io/chunk_window.ts";
import { csvDialect } from "../io/csv_dialect.ts";
import type { ColumnPlanJson, FieldJson, JobCodec, TaskWindow } from "../client/types.ts";
import {
  checkSourceIdentity,
  fieldJson,
  layoutSource,
  readTaskRows,
  sourceSchema,
} from "../cluster/task_source.ts";
import type { FileIdentity } from "../internal/file_identity.ts";

/** What {@link prepareJob} needs. */
export interface PrepareInput {
  /** Source file. */
  path: string;
  /** Its format. */
  format: SourceFormat;
  /** Rows per chunk. */
  chunkRows: number;
  /** Codec asked for. */
  codec: JobCodec;
  /** Columns already forced to text. */
  types: Record<string, TextFallback>;
  /** Windows from an earlier layout of the same source (kept when the job starts over). */
  windows?: TaskWindow[] | null;
  /** The source file as accepted: it must still be that file (else SOURCE_CHANGED). */
  identity?: FileIdentity | null;
}

/** What {@link prepareJob} fixed. */
export interface PrepareResult {
  /** Source size when laid out. */
  bytes: number;
  /** Rows of the source. */
  rows: number;
  /** One window per chunk. */
  windows: TaskWindow[];
  /** Schema every chunk is read with. */
  schema: FieldJson[];
  /** Plan of every column. */
  plans: Record<string, ColumnPlanJson>;
  /** Codec id of every block. */
  codec: string;
  /** Why `auto` chose it (null when the codec was given). */
  autoReason: string | null;
  /** Columns forced to text, with any widened here. */
  types: Record<string, TextFallback>;
  /** Columns widened here, in order. */
  widened: string[];
  /** A CSV source's delimiter, told once here from its start for every task to read with. */
  delimiter?: string;
}

/**
 * Lays out a source and fixes its schema, plan and codec.
 *
 * @param input Source, format, chunk size, codec, forced types.
 * @returns The fixed choices.
 * @throws {IoError} from the source readers (READ_FAILED, PARSE_FAILED...).
 */
export async function prepareJob(input: PrepareInput): Promise<PrepareResult> {
  // A Parquet file is opened once for its layout, schema and first chunk.
  const readers = new ParquetReaders(1);
  try {
    return await prepareWith(input, readers);
  } finally {
    await readers.close();
  }
}

async function prepareWith(input: PrepareInput, readers: ParquetReaders): Promise<PrepareResult> {
  const { path, format, chunkRows } = input;
  await checkSourceIdentity(path, input.identity);
  let windows = input.windows ?? null;
  let bytes: number;
  let rows: number;
  if (windows === null) {
    const layout = await layoutSource(path, { format, chunkRows, readers });
    windows = layout.windows;
    bytes = layout.bytes;
    rows = layout.rows;
  } else {
    bytes = (await Deno.stat(path)).size;
    rows = windows.reduce((n, w) => n + w.rows, 0);
  }
  // Told as every read of the file tells it (`readCsvRange` without a delimiter).
  const delimiter = format === "csv" ? (await csvDialect(path)).delimiter : undefined;
  const types = { ...input.types };
  const widened: string[] = [];
  for (;;) {
    const opened = await sourceSchema(path, {
      format,
      types,
      batchRows: freezeBatchRows(chunkRows),
      readers,
    });
    let first: Batch;
    try {
      first = windows.length === 0
        ? { schema: opened.schema, columns: [], length: 0 }
        : await readTaskRows(
          {
            path,
            format,
            schema: opened.schema,
            types,
            window: windows[0]!,
            identity: input.identity,
            delimiter,
          },
          readers,
        );
    } catch (err) {
      if (
        err instanceof IoError && err.code === "SCHEMA_MISMATCH" && err.column &&
        types[err.column] !== fallbackType(format)
      ) {
        types[err.column] = fallbackType(format);
        widened.push(err.column);
        continue;
      }
      throw err;
    }
    const plans = planColumns(first);
    let codec: string = input.codec;
    let autoReason: string | null = null;
    if (input.codec === "auto") {
      const choice = await chooseArchiveCodec(first, plans);
      codec = choice.codec;
      autoReason = choice.reason;
    }
    return {
      bytes,
      rows,
      windows,
      schema: opened.schema.map(fieldJson),
      plans: plans as Record<string, ColumnPlanJson>,
      codec,
      autoReason,
      types,
      widened,
      ...(delimiter === undefined ? {} : { delimiter }),
    };
  }
}
