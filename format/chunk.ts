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
import type { Batch, Column, Field } from "./column.ts";
import type { ColumnPlan, ColumnStats } from "./header.ts";
import type { FormatWarning } from "./predictors/predictor.ts";
import { columnStats } from "./stats.ts";
import type { EncodedChunk } from "./writer.ts";

/** One block's work, as sent to an encoder (structured-clone friendly). */
export interface BlockJob {
  column: Column;
  field: Field;
  plan: ColumnPlan;
  deps: Column[];
  codec: string;
}

/** An encoded block with its warnings and footer statistics. */
export interface BlockResult {
  /** The stored block. */
  block: EncodedBlock;
  /** Warnings the predictors issued. */
  warnings: FormatWarning[];
  /** The column's statistics (computed beside the encoding, off the main thread). */
  stats: ColumnStats;
}

/** Something that turns block jobs into stored blocks. */
export interface BlockEncoder {
  encode(job: BlockJob): Promise<BlockResult>;
  close(): void;
}

/** Encodes on the calling thread (tests, tiny inputs, and pool workers themselves). */
export const INLINE_ENCODER: BlockEncoder = Object.freeze({
  async encode(job: BlockJob) {
    const warnings: FormatWarning[] = [];
    const block = await encodeBlock(job.column, {
      field: job.field,
      plan: job.plan,
      deps: job.deps,
      codec: codecById(job.codec),
      warn: (w) => warnings.push(w),
    });
    return { block, warnings, stats: columnStats(job.column) };
  },
  close() {},
});

/** Options of `encodeChunk`. */
export interface EncodeChunkOptions {
  /** Per-column plan by name (the header's `columns`). */
  plans: Record<string, ColumnPlan>;
  /** Codec id. */
  codec: string;
  /** Where blocks are encoded (default inline). */
  encoder?: BlockEncoder;
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
  const { schema } = batch;
  const results = await Promise.all(schema.map((field, i) => {
    const plan = options.plans[field.name]!;
    const deps = plan.deps.map((d) => batch.columns[schema.findIndex((f) => f.name === d)]!);
    return encoder.encode({ column: batch.columns[i]!, field, plan, deps, codec: options.codec });
  }));
  for (const r of results) for (const w of r.warnings) options.warn?.(w);
  return {
    rows: batch.length,
    blocks: results.map((r) => r.block),
    stats: results.map((r) => r.stats),
  };
}
