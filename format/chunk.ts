/**
 * Encoding one chunk: every column block through an encoder (inline, or the
 * Worker pool in `pool.ts`), plus the footer statistics. This is the unit of
 * work a local freeze, an append and a cluster worker share, so all three lay
 * down identical bytes for identical rows and options (encrypted chunks excepted:
 * their nonces are random, FORMAT.md §4.4).
 *
 * @module
 */
import { codecById } from "../codecs/registry.ts";
import { encodeBlock, type EncodedBlock } from "./block_encode.ts";
import type { Batch } from "./column.ts";
import { type ChunkEncryption, sealChunk } from "./crypto.ts";
import type { ColumnPlan, ColumnStats } from "./header.ts";
import type { FormatWarning } from "./predictors/predictor.ts";
import { columnStats } from "./stats.ts";
import type { EncodedChunk } from "./writer.ts";

/** One chunk's work, as sent to an encoder (structured-clone friendly). */
export interface ChunkJob {
  /** The chunk's rows. */
  batch: Batch;
  /** Per-column plan by name (the header's `columns`). */
  plans: Record<string, ColumnPlan>;
  /** Codec id of the archive (a column's plan may name its own). */
  codec: string;
  /**
   * Encrypt every block after the codec (FORMAT.md §4.4). The raw data key crosses
   * to the Worker with the job, so encryption runs there, off the main thread.
   */
  encryption?: ChunkEncryption;
}

/** An encoded chunk with the warnings its predictors issued. */
export interface ChunkResult {
  /** Blocks and statistics. */
  chunk: EncodedChunk;
  /** Warnings the predictors issued. */
  warnings: FormatWarning[];
}

/**
 * Something that turns chunks into stored blocks. The unit is a whole chunk, so
 * each column crosses to a Worker once (a column that others are conditioned on
 * is not copied again for each of them).
 */
export interface ChunkEncoder {
  encode(job: ChunkJob): Promise<ChunkResult>;
  close(): void;
}

/** Encodes on the calling thread (tests, tiny inputs, and pool workers themselves). */
export const INLINE_ENCODER: ChunkEncoder = Object.freeze({
  async encode(job: ChunkJob): Promise<ChunkResult> {
    const { batch, plans } = job;
    const warnings: FormatWarning[] = [];
    const blocks: EncodedBlock[] = [];
    const stats: ColumnStats[] = [];
    for (let i = 0; i < batch.schema.length; i++) {
      const field = batch.schema[i]!;
      const column = batch.columns[i]!;
      const plan = plans[field.name]!;
      const deps = plan.deps.map((d) =>
        batch.columns[batch.schema.findIndex((f) => f.name === d)]!
      );
      // A column's own codec (an archive of mixed codecs, 1.6), else the archive's.
      const codec = codecById(plan.codec ?? job.codec);
      blocks.push(
        await encodeBlock(column, {
          field,
          plan,
          deps,
          codec,
          level: plan.level,
          warn: (w) => warnings.push(w),
        }),
      );
      stats.push(columnStats(column));
    }
    const chunk = { rows: batch.length, blocks, stats };
    return { chunk: job.encryption ? await sealChunk(chunk, job.encryption) : chunk, warnings };
  },
  close() {},
});

/** Options of `encodeChunk`. */
export interface EncodeChunkOptions {
  /** Per-column plan by name (the header's `columns`). */
  plans: Record<string, ColumnPlan>;
  /** Codec id. */
  codec: string;
  /** Where the chunk is encoded (default inline). */
  encoder?: ChunkEncoder;
  /** Receives predictor warnings. */
  warn?: (warning: FormatWarning) => void;
  /** Encrypt the blocks with this data key; `rowStart` is the chunk's first row (archive-wide). */
  encryption?: ChunkEncryption;
}

/**
 * Encodes one chunk of rows: one block per column, in schema order, plus stats.
 *
 * @param batch The chunk's rows (at most the archive's `chunk_rows`).
 * @param options Plans, codec, encoder.
 * @returns The encoded chunk.
 */
export async function encodeChunk(
  batch: Batch,
  options: EncodeChunkOptions,
): Promise<EncodedChunk> {
  const encoder = options.encoder ?? INLINE_ENCODER;
  const job: ChunkJob = { batch, plans: options.plans, codec: options.codec };
  if (options.encryption) job.encryption = options.encryption;
  const { chunk, warnings } = await encoder.encode(job);
  for (const w of warnings) options.warn?.(w);
  return chunk;
}
