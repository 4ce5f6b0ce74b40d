/**
 * A task's rows straight from object storage, for a worker that does not see the
 * master's copy of the source (another machine): CSV and JSON-lines windows are byte
 * ranges, so the worker fetches its window with one ranged read (plus the file's first
 * bytes, which tell a CSV's dialect) and writes both at their own offsets into a
 * sparse temp file. The readers then read that file exactly as they read the whole
 * one (same offsets, same dialect), so the chunk is byte-identical. The object must
 * still have the ETag the master copied (else SOURCE_CHANGED). Parquet and Arrow
 * windows are row groups and batches: their rows come from the master.
 *
 * @module
 */
import { join } from "node:path";
import { JobError } from "../client/errors.ts";
import type { TaskSpec } from "../client/types.ts";
import { storeFor } from "../storage/registry.ts";
import { SNIFF_BYTES } from "../io/csv_dialect.ts";

/** Bytes of the file's start fetched with the window (the CSV dialect is told from them). */
const HEAD_BYTES = SNIFF_BYTES;

/**
 * Whether a task's window can be read from object storage here.
 *
 * @param spec The task.
 * @returns True for a byte-range window of a source in object storage.
 */
export function readableFromStore(spec: TaskSpec): boolean {
  return spec.source.uri !== undefined && spec.source.etag !== undefined &&
    spec.window.unit === "bytes" &&
    (spec.source.format === "csv" || spec.source.format === "jsonl");
}

/**
 * Fetches a task's window into a sparse temp file laid out as the source.
 *
 * @param spec The task ({@link readableFromStore}).
 * @returns The temp file's path, and a function that removes it.
 * @throws {JobError} SOURCE_CHANGED when the object is not the one the job copied;
 * {import("../storage/errors.ts").StorageError} from the reads.
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
      const head = Math.min(HEAD_BYTES, spec.source.bytes);
      const ranges = [{ offset: 0, length: head }];
      const { start, end } = spec.window;
      if (end > head) {
        ranges.push({ offset: Math.max(start, head), length: end - Math.max(start, head) });
      }
      for (const range of ranges) {
        const { bytes } = await store.read(uri, range);
        await file.seek(range.offset, Deno.SeekMode.Start);
        let at = 0;
        while (at < bytes.length) at += await file.write(bytes.subarray(at));
      }
      // The file is as long as the source, so every offset means what it means there.
      await file.truncate(spec.source.bytes);
    } finally {
      file.close();
    }
    return { path, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}
