/**
 * A whole-range read of an archive (no `where`) decoded on a pool of Workers: this
 * thread reads each chunk's blocks, checks their hashes and decrypts them
 * (`ArchiveReader.chunkJobs`), and the Workers (`_thaw_worker.ts`) decode them and,
 * for a text, Arrow or Parquet output, prepare the rows for it too. A few chunks per Worker
 * are in flight at once and come back in row order, so memory stays bounded by the
 * pool's capacity and the output is the same, byte for byte, as a read on this thread.
 *
 * @module
 */
import type { Batch, Schema } from "../format/column.ts";
import type { ChunkDecodeJob, PostedColumn } from "../format/chunk_decode.ts";
import { unpackColumns } from "../format/chunk_decode.ts";
import { BlockPool } from "../format/pool.ts";
import { type ArchiveReader, namingArchive, type RowRange } from "../format/reader.ts";
import type { DuckImage } from "../io/_duckdb_image.ts";
import type { RenderedRows, TextRendering } from "../io/_write_text.ts";
import type { ArrowParts } from "../io/arrow_table.ts";
import type { Prepared } from "../io/output.ts";
import { reviveIoError } from "../io/errors.ts";
import { movable } from "../internal/transfer.ts";
import type { ScanCounters } from "./_scan.ts";

/** A chunk job as posted to a thaw Worker. */
export interface ThawChunkTask {
  kind: "thaw-chunk";
  job: ChunkDecodeJob;
  /** Rows of the chunk to keep: `[from, to)`. */
  from: number;
  to: number;
  /** The columns `job.wanted` decode to. */
  schema: Schema;
  /** What to hand back: the rows prepared for the output, or the columns (null). */
  render:
    | { rendering: TextRendering; firstRow: number }
    | { arrow: true }
    | { duckdb: true }
    | null;
  /** Output buffers the writer is done with, for the Worker to render into again. */
  spare?: ArrayBuffer[];
}

/**
 * Columns one Worker decoded (a {@link ThawChunkTask} without `render`), posted to
 * another to render as text: see {@link scanInPool}.
 */
export interface ThawRenderTask {
  kind: "thaw-render";
  schema: Schema;
  columns: PostedColumn[];
  length: number;
  rendering: TextRendering;
  firstRow: number;
  /** Output buffers the writer is done with, for the Worker to render into again. */
  spare?: ArrayBuffer[];
}

/**
 * What the Workers prepare rows for: a text output (rendered there), Arrow IPC
 * (converted to Arrow's buffers there), Parquet (laid out for DuckDB's vectors
 * there), or anything else (columns handed back).
 */
export type PoolOutput = { text: TextRendering } | { arrow: true } | { duckdb: true } | null;

/** Starts a pool of thaw Workers; close it (`close()`) when the read ends. */
export function thawPool(threads: number): BlockPool {
  return new BlockPool(threads, {
    script: new URL("./_thaw_worker.ts", import.meta.url),
    revive: reviveIoError,
  });
}

/**
 * Reads rows of an open archive on a pool, in row order: batches, or rows prepared
 * for the output (rendered text, Arrow buffers, DuckDB vector images).
 *
 * @param reader An open archive.
 * @param options Rows and columns (a `where` is read on this thread: see `_scan.ts`).
 * @param pool Thaw Workers ({@link thawPool}).
 * @param output What the Workers prepare rows for.
 * @param counters Updated as chunks are read.
 * @returns Batches or prepared rows, one per chunk touched.
 */
export async function* scanInPool(
  reader: ArchiveReader,
  options: { rows?: RowRange; columns?: readonly string[] },
  pool: BlockPool,
  output: PoolOutput,
  counters: ScanCounters,
): AsyncGenerator<Prepared> {
  const { footer } = reader.index;
  const start = Math.max(0, options.rows?.start ?? 0);
  const end = Math.min(footer.rows, options.rows?.end ?? footer.rows);
  counters.payload_bytes += footer.payload_length;
  for (const c of footer.chunks) {
    if (c.row_end > start && c.row_start < end) counters.chunks_total++;
  }
  const bytesBefore = reader.bytesRead;
  const inFlight: Promise<Prepared>[] = [];
  // Rendered text's buffers, handed back by the writer once written (`recycle`) and
  // moved to the Workers with the next tasks; at most one per task in flight.
  const spare: ArrayBuffer[] = [];
  const recycle = (r: RenderedRows): RenderedRows => ({
    ...r,
    recycle: () => {
      if (spare.length < pool.capacity) spare.push(r.bytes.buffer as ArrayBuffer);
    },
  });
  let firstRow = 0;
  // A text output on two Workers or more: the first half of them decode, the others
  // render. V8 compiles a Worker's hot code for itself, and runs it slowly until then
  // (a thaw Worker's first chunks took ~4-8 times their steady time): split so, each
  // Worker compiles and warms up only the decoders or only the renderer, instead of
  // every Worker both. Chunks alternate over each half; rows still come back in order.
  // Only for chunks whose blocks are all zstd, which decode about as fast as they
  // render: lzma2 or zpaq would leave half the Workers waiting on the other half.
  const decoders = output !== null && "text" in output && pool.threads >= 2
    ? Math.ceil(pool.threads / 2)
    : 0;
  const renderers = pool.threads - decoders;
  let chunk = 0;
  try {
    for await (const read of reader.chunkJobs({ rows: { start, end }, columns: options.columns })) {
      counters.chunks_read++;
      if (decoders > 0 && quickToDecompress(read.job)) {
        const rendering = (output as { text: TextRendering }).text;
        const at = firstRow;
        const k = chunk++;
        const decode: ThawChunkTask = {
          kind: "thaw-chunk",
          job: read.job,
          from: read.from,
          to: read.to,
          schema: read.schema,
          render: null,
        };
        firstRow += read.to - read.from;
        const done = pool.run<{ columns: PostedColumn[]; length: number }>(
          decode,
          transferOf(read.job),
          k % decoders,
        ).then((decoded) => {
          const task: ThawRenderTask = {
            kind: "thaw-render",
            schema: read.schema,
            columns: decoded.columns,
            length: decoded.length,
            rendering,
            firstRow: at,
          };
          if (spare.length > 0) task.spare = spare.splice(0);
          return pool.run<RenderedRows>(
            task,
            [...postedBuffers(decoded.columns), ...(task.spare ?? [])],
            decoders + k % renderers,
          );
        }).then(recycle);
        // Failures surface in order, when awaited below; until then they are expected.
        done.catch(() => {});
        inFlight.push(done);
        if (inFlight.length >= pool.capacity) yield await next(inFlight, reader);
        continue;
      }
      const task: ThawChunkTask = {
        kind: "thaw-chunk",
        job: read.job,
        from: read.from,
        to: read.to,
        schema: read.schema,
        render: output === null
          ? null
          : "text" in output
          ? { rendering: output.text, firstRow }
          : output,
      };
      if (spare.length > 0) task.spare = spare.splice(0);
      firstRow += read.to - read.from;
      const done = output !== null
        ? pool.run<RenderedRows | ArrowParts | DuckImage>(task, [
          ...transferOf(read.job),
          ...(task.spare ?? []),
        ]).then((r) => "rendered" in r ? recycle(r) : r)
        : pool.run<{ columns: PostedColumn[]; length: number }>(task, transferOf(read.job)).then(
          (r): Batch => ({
            schema: read.schema,
            columns: unpackColumns(r.columns),
            length: r.length,
          }),
        );
      // Failures surface in order, when awaited below; until then they are expected.
      done.catch(() => {});
      inFlight.push(done);
      if (inFlight.length >= pool.capacity) yield await next(inFlight, reader);
    }
    while (inFlight.length > 0) yield await next(inFlight, reader);
  } finally {
    counters.bytes_read += reader.bytesRead - bytesBefore;
  }
}

/** The oldest chunk in flight; a Worker's error names the archive, as a read here does. */
async function next<T>(inFlight: Promise<T>[], reader: ArchiveReader): Promise<T> {
  try {
    return await inFlight.shift()!;
  } catch (err) {
    throw namingArchive(err, reader.index.path);
  }
}

/** Whether every block of a chunk is zstd (or absent): see {@link scanInPool}. */
function quickToDecompress(job: ChunkDecodeJob): boolean {
  return job.blocks.every((b) => b.bytes === null || b.codec === "zstd");
}

/** The buffers of posted columns, to move them on to another Worker. */
function postedBuffers(columns: readonly PostedColumn[]): ArrayBuffer[] {
  const moving = new Set<ArrayBuffer>();
  const add = (view: ArrayBufferView | null) => {
    if (view !== null && view.buffer instanceof ArrayBuffer) moving.add(view.buffer);
  };
  for (const column of columns) {
    add(column.validity);
    if ("coded" in column) add(column.coded.codes);
    else if ("packed" in column) add(column.packed.ends);
    else if (ArrayBuffer.isView(column.values)) add(column.values);
  }
  return [...moving];
}

/** The buffers to move with a job: each block's own (`internal/transfer.ts`). */
function transferOf(job: ChunkDecodeJob): ArrayBuffer[] {
  const moving = new Set<ArrayBuffer>();
  for (const block of job.blocks) {
    if (block.bytes !== null) block.bytes = movable(block.bytes, moving);
  }
  return [...moving];
}
