/**
 * The body of one Worker of a local freeze's pool: encodes plain chunks as
 * `format/_block_worker.ts` does, and runs {@link ParquetChunkTask}s and
 * {@link CsvChunkTask}s: reads the chunk's rows from the Parquet or CSV file, then
 * encodes them, so decoding the source uses every core too (a CSV chunk handed out
 * while the freeze plans is parsed at once, and encoded when the {@link CsvPlansNotice}
 * comes); a {@link CsvCutTask}, a CSV file's cut into chunks, found while the
 * freeze's thread plans; and a {@link CsvPredictorsTask}, the predictors of a
 * `max_speed` freeze fixed on the file's first rows while the other Workers parse.
 * Each file stays open across jobs (a Parquet file in one DuckDB per Worker, keyed by
 * path, forced types and batch size; a CSV file as a file), and is closed when the
 * pool shuts down.
 *
 * @module
 */
import { INLINE_ENCODER } from "../format/chunk.ts";
import { servePoolWorker } from "../format/pool.ts";
import type { ParquetReaders } from "../io/parquet.ts";
import { IoError } from "../io/errors.ts";
import { openForRead } from "../io/_file.ts";
import type { ParquetChunkTask, ParquetOpenTask } from "./_parquet_chunks.ts";
import {
  type ChunkEncoding,
  type CsvChunkTask,
  type CsvCutTask,
  type CsvPlansNotice,
  type CsvPredictorsTask,
  cutCsv,
  fixPredictors,
  readCsvChunk,
  warmUpCsvChunk,
  warmUpEncoding,
} from "./_csv_chunks.ts";
import { readChunk } from "../io/chunk_window.ts";

// node:zlib (zstd) loaded now, while this thread waits for its first chunk, rather than
// on that chunk's first block (~15-20 ms of a Worker's CPU on the freeze's critical path).
import("node:zlib").catch(() => {}); // a failure shows again where zstd loads it

// One open file per Worker for the whole freeze (and a second, should a caller
// freeze two files with one pool). Loaded with the first Parquet job: a CSV file's
// Workers never run DuckDB's reader modules (~5 ms of each one's start).
let parquet: Promise<ParquetReaders> | null = null;

function parquetReaders(): Promise<ParquetReaders> {
  return parquet ??= import("../io/parquet.ts").then((m) => new m.ParquetReaders(2));
}
// The CSV file being frozen, open from chunk to chunk (the last one asked for only).
let csv: { path: string; file: Deno.FsFile } | null = null;

async function csvFile(path: string): Promise<Deno.FsFile> {
  if (csv?.path === path) return csv.file;
  csv?.file.close();
  csv = null;
  csv = { path, file: await openForRead(path) };
  return csv.file;
}

// Whether this Worker has warmed up on a chunk's first rows (see warmUpCsvChunk).
let warmedUp = false;

// The encoding of chunks handed out before the freeze had planned (see CsvChunkTask).
const announced = Promise.withResolvers<ChunkEncoding>();
announced.promise.catch(() => {}); // awaited by those chunks; this only marks it handled

servePoolWorker({
  notice(notice) {
    const n = notice as CsvPlansNotice;
    if (n?.kind !== "csv-plans") return;
    if (n.encoding) {
      announced.resolve(n.encoding);
    } else {
      announced.reject(new Error("Cannot encode the chunk: the freeze stopped before it planned"));
    }
  },
  async run(task) {
    const t = task as
      | ParquetChunkTask
      | ParquetOpenTask
      | CsvChunkTask
      | CsvCutTask
      | CsvPredictorsTask;
    if (t?.kind === "csv-cut") return await cutCsv(t);
    if (t?.kind === "csv-predictors") return await fixPredictors(t, await csvFile(t.path));
    if (t?.kind === "csv-chunk") {
      const file = await csvFile(t.chunk.path);
      // This Worker's first chunk: its first rows parsed and encoded a few times
      // first, so the whole chunk runs with type feedback (see warmUpCsvChunk).
      const warm = warmedUp ? null : await warmUpCsvChunk(t.chunk, t.schema, file);
      warmedUp = true;
      const batch = await readCsvChunk(t.chunk, t.schema, file);
      const encoding = t.encoding ?? await announced.promise;
      if (warm) await warmUpEncoding(warm, encoding, (job) => INLINE_ENCODER.encode(job));
      return await INLINE_ENCODER.encode({
        batch,
        plans: encoding.plans,
        codec: encoding.codec,
        ...(t.encryption ? { encryption: t.encryption } : {}),
      });
    }
    if (t?.kind === "parquet-open") {
      await (await parquetReaders()).get(t.file.path, t.file.types, t.file.batchRows);
      return { chunk: { rows: 0, blocks: [], stats: [] }, warnings: [] };
    }
    if (t?.kind !== "parquet-chunk") {
      throw new Error(
        `Cannot run a freeze Worker job of kind "${(task as { kind?: string })?.kind}"`,
      );
    }
    const { path } = t.file;
    const file = await (await parquetReaders()).get(path, t.file.types, t.file.batchRows);
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
  close() {
    csv?.file.close();
    csv = null;
    return parquet?.then((files) => files.close());
  },
});
