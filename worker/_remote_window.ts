/**
 * A task's rows straight from object storage, for a worker that does not see the
 * master's copy of the source (another machine): CSV and JSON-lines windows are byte
 * ranges, so the worker fetches its window with one ranged read (plus the file's first
 * bytes, which tell a CSV's dialect) and writes both at their own offsets into a
 * sparse temp file. The readers then read that file exactly as they read the whole
 * one (same offsets, same dialect), so the chunk is byte-identical. A Parquet window
 * is the row groups that hold its rows: the worker fetches the footer, then those row
 * groups in one read, into a sparse file DuckDB reads as the whole one. The object
 * must still have the ETag the master copied (else SOURCE_CHANGED). Arrow windows
 * come from the master (an Arrow file's batches say their rows only in their own
 * headers, so finding a window would read every batch before it).
 *
 * @module
 */
import { join } from "node:path";
import { JobError } from "../client/errors.ts";
import type { TaskSpec } from "../client/types.ts";
import { storeFor } from "../storage/registry.ts";
import { SNIFF_BYTES } from "../io/csv_dialect.ts";
import { IoError } from "../io/errors.ts";
import { parquetRowGroupSpans } from "../io/parquet.ts";

/** Bytes of the file's start fetched with the window (the CSV dialect is told from them). */
const HEAD_BYTES = SNIFF_BYTES;

/** Bytes of a Parquet object's end fetched first: the footer, for most files. */
const PARQUET_TAIL_BYTES = 64 * 1024;

/**
 * Whether a task's window can be read from object storage here.
 *
 * @param spec The task.
 * @returns True for a byte-range window of a CSV or JSON-lines source, or a row window
 * of a Parquet source, in object storage.
 */
export function readableFromStore(spec: TaskSpec): boolean {
  if (spec.source.uri === undefined || spec.source.etag === undefined) return false;
  const { format } = spec.source;
  return spec.window.unit === "bytes"
    ? format === "csv" || format === "jsonl"
    : format === "parquet";
}

/**
 * Fetches a task's window into a sparse temp file laid out as the source.
 *
 * @param spec The task ({@link readableFromStore}).
 * @returns The temp file's path, and a function that removes it.
 * @throws {JobError} SOURCE_CHANGED when the object is not the one the job copied;
 * {import("../storage/errors.ts").StorageError} from the reads;
 * {import("../io/errors.ts").IoError} READ_FAILED for a Parquet footer that cannot be read.
 */
export async function fetchWindowFile(
  spec: TaskSpec,
): Promise<{ path: string; dispose: () => Promise<void> }> {
  const uri = spec.source.uri!;
  const store = storeFor(uri);
  const info = await store.stat(uri);
  if (info === null || info.etag !== spec.source.etag || info.size !== spec.source.bytes) {
    throw new JobError(
      "SOURCE_CHANGED",
      `Cannot read source '${uri}': it is not the object the job copied (ETag or size changed); submit the job again`,
      { path: uri },
    );
  }
  const dir = await Deno.makeTempDir({ prefix: "permafrost-window-" });
  const dispose = () => Deno.remove(dir, { recursive: true }).catch(() => {});
  try {
    const path = join(dir, `source.${spec.source.format}`);
    const file = await Deno.open(path, { write: true, createNew: true });
    try {
      // The file is as long as the source, so every offset means what it means there.
      await file.truncate(spec.source.bytes);
      const put = async (range: ByteRange) => {
        if (range.length <= 0) return;
        const { bytes } = await store.read(uri, range);
        await file.seek(range.offset, Deno.SeekMode.Start);
        let at = 0;
        while (at < bytes.length) at += await file.write(bytes.subarray(at));
      };
      if (spec.source.format === "parquet") {
        await fetchRowGroups(spec, path, put);
      } else {
        for (const range of textRanges(spec)) await put(range);
      }
    } finally {
      file.close();
    }
    return { path, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/** A byte range of the source. */
interface ByteRange {
  offset: number;
  length: number;
}

/** A CSV or JSON-lines window: the file's first bytes (its dialect), then the window. */
function textRanges(spec: TaskSpec): ByteRange[] {
  const head = Math.min(HEAD_BYTES, spec.source.bytes);
  const ranges = [{ offset: 0, length: head }];
  const { start, end } = spec.window;
  if (end > head) {
    ranges.push({ offset: Math.max(start, head), length: end - Math.max(start, head) });
  }
  return ranges;
}

/**
 * A Parquet window: the footer first (its last bytes say how long it is), which says
 * where each row group lies; then the row groups that hold the window's rows, in one
 * read (they are contiguous). DuckDB skips the other row groups by `file_row_number`,
 * so the holes of the sparse file are never read.
 */
async function fetchRowGroups(
  spec: TaskSpec,
  path: string,
  put: (range: ByteRange) => Promise<void>,
): Promise<void> {
  const size = spec.source.bytes;
  const tail = Math.min(PARQUET_TAIL_BYTES, size);
  await put({ offset: size - tail, length: tail });
  const footer = await footerLength(path, size);
  if (footer + 8 > tail) await put({ offset: size - footer - 8, length: footer + 8 - tail });
  const spans = await parquetRowGroupSpans(path);
  const { start, end } = spec.window;
  let first = 0;
  let lo = Infinity;
  let hi = 0;
  for (const span of spans) {
    const last = first + span.rows;
    if (first < end && last > start) {
      lo = Math.min(lo, span.start);
      hi = Math.max(hi, span.end);
    }
    first = last;
  }
  if (hi > lo) {
    // What the tail already holds is not fetched twice.
    await put({ offset: lo, length: Math.min(hi, size - tail) - lo });
  }
}

/** The footer length a Parquet file's last 8 bytes give (`<u32 length>PAR1`). */
async function footerLength(path: string, size: number): Promise<number> {
  const file = await Deno.open(path);
  try {
    const last = new Uint8Array(8);
    await file.seek(size - 8, Deno.SeekMode.Start);
    let at = 0;
    while (at < 8) {
      const n = await file.read(last.subarray(at));
      if (n === null) break;
      at += n;
    }
    if (at < 8 || new TextDecoder().decode(last.subarray(4)) !== "PAR1") {
      throw new IoError(
        "READ_FAILED",
        `Cannot read '${path}' as Parquet: it does not end in PAR1`,
        {
          path,
        },
      );
    }
    return new DataView(last.buffer).getUint32(0, true);
  } finally {
    file.close();
  }
}
