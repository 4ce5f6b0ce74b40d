/**
 * Encoding one chunk: every column block through an encoder (inline, or the
 * Worker pool in `pool.ts`), plus the footer statistics. This is the unit of
 * work a local freeze, an append and a cluster worker share, so all three lay
 * down identical bytes for identical rows and options.
 *
 * @module
 */
import { codecById } from "../codecs/registry.ts";
import { encodeBlock, type EncodedBlock } from "./block.ts";
import type { Batch } from "./column.ts";
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
  /** Codec id. */
  codec: string;
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
    const codec = codecById(job.codec);
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
      blocks.push(
        await encodeBlock(column, { field, plan, deps, codec, warn: (w) => warnings.push(w) }),
      );
      stats.push(columnStats(column));
    }
    return { chunk: { rows: batch.length, blocks, stats }, warnings };
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
  const { chunk, warnings } = await encoder.encode({
    batch,
    plans: options.plans,
    codec: options.codec,
  });
  for (const w of warnings) options.warn?.(w);
  return chunk;
}
