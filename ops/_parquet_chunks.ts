/**
 * The pool jobs of a local freeze that reads a Parquet source where it encodes it
 * (`_freeze_worker.ts`), so the source is decoded on every core. Each job reads one
 * chunk window with `readChunk` (`io/chunk_window.ts`), the reader the cluster's
 * tasks use too.
 *
 * @module
 */
import type { Schema } from "../format/column.ts";
import type { ForcedType } from "../io/types.ts";
import type { ChunkEncryption } from "../format/crypto.ts";
import type { ColumnPlan } from "../format/header.ts";
import type { ChunkWindow } from "../io/chunk_window.ts";

/** A Parquet file as a freeze reads it. */
export interface ParquetFile {
  /** The file. */
  path: string;
  /** Forced column types, as the freeze opened the file. */
  types: Record<string, ForcedType>;
  /** Rows per read batch. */
  batchRows: number;
}

/**
 * A pool job: open the file (so the first chunk job finds it open); answers an
 * empty chunk. Sent once per Worker while the first chunk is planned.
 */
export interface ParquetOpenTask {
  /** Tells this job from others. */
  kind: "parquet-open";
  /** The file. */
  file: ParquetFile;
}

/** A pool job: read one chunk of a Parquet file, then encode it (see `_freeze_worker.ts`). */
export interface ParquetChunkTask {
  /** Tells this job from others. */
  kind: "parquet-chunk";
  /** The file. */
  file: ParquetFile;
  /** The schema the freeze planned; the Worker's reader must agree. */
  schema: Schema;
  /** The chunk. */
  window: ChunkWindow;
  /** Per-column plans by name. */
  plans: Record<string, ColumnPlan>;
  /** Codec id. */
  codec: string;
  /** Block encryption, with the chunk's first row. */
  encryption?: ChunkEncryption;
}
