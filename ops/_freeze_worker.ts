/**
 * The body of one Worker of a local freeze's pool: encodes plain chunks as
 * `format/_block_worker.ts` does, and runs {@link ParquetChunkTask}s: reads the
 * chunk's rows from the Parquet file, then encodes them, so decoding the source
 * uses every core too. Each file stays open (one DuckDB per Worker, keyed by path,
 * forced types and batch size) across jobs, and is closed when the pool shuts down.
 *
 * @module
 */
import { INLINE_ENCODER } from "../format/chunk.ts";
import { servePoolWorker } from "../format/pool.ts";
import { openParquetRanges, type ParquetRanges } from "../io/parquet.ts";
import { IoError } from "../io/errors.ts";
import {
  type ParquetChunkTask,
  type ParquetFile,
  type ParquetOpenTask,
  readChunk,
} from "./_parquet_chunks.ts";

const files = new Map<string, Promise<ParquetRanges>>();

function open(f: ParquetFile): Promise<ParquetRanges> {
  const key = JSON.stringify([f.path, f.types, f.batchRows]);
  let file = files.get(key);
  if (!file) {
    file = openParquetRanges(f.path, { types: f.types, batchRows: f.batchRows });
    files.set(key, file);
    file.catch(() => files.delete(key));
  }
  return file;
}

servePoolWorker({
  async run(task) {
    const t = task as ParquetChunkTask | ParquetOpenTask;
    if (t?.kind === "parquet-open") {
      await open(t.file);
      return { chunk: { rows: 0, blocks: [], stats: [] }, warnings: [] };
    }
    if (t?.kind !== "parquet-chunk") {
      throw new Error(
        `Cannot run a freeze Worker job of kind "${(task as { kind?: string })?.kind}"`,
      );
    }
    const { path } = t.file;
    const file = await open(t.file);
    if (JSON.stringify(file.schema) !== JSON.stringify(t.schema)) {
      throw new IoError(
        "READ_FAILED",
        `Cannot read Parquet '${path}': its schema changed while it was frozen`,
        { path },
      );
    }
    const batch = await readChunk(file, t.window, path);
    return await INLINE_ENCODER.encode({
      batch,
      plans: t.plans,
      codec: t.codec,
      ...(t.encryption ? { encryption: t.encryption } : {}),
    });
  },
  async close() {
    const held = [...files.values()];
    files.clear();
    for (const file of await Promise.allSettled(held)) {
      if (file.status === "fulfilled") file.value.close();
    }
  },
});
