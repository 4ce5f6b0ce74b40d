/**
 * What a new archive is, decided before its first chunk is written: its header
 * ({@link newArchiveHeader}) and, for `codec: "auto"`, its codec
 * ({@link chooseArchiveCodec}: the first {@link AUTO_SAMPLE_ROWS} rows, predicted as
 * they will be stored, sized under every codec by `codecs/auto.ts`). The local freeze,
 * `append` and the cluster's master all call these, so their archives agree byte for
 * byte. Implements FORMAT.md §3 (header).
 *
 * @module
 */
import { chooseCodec } from "../codecs/auto.ts";
import { predictBlock } from "./block.ts";
import { type Batch, type Schema, sliceBatch } from "./column.ts";
import { type ArchiveHeader, archiveVersion, type ColumnPlan, schemaToJson } from "./header.ts";

/** Rows `auto` samples to choose a codec. */
export const AUTO_SAMPLE_ROWS = 1000;

/**
 * Builds the header of a new, unencrypted archive (`withEncryption` adds encryption):
 * the one place a local freeze, an append and the cluster's master make a header, so
 * they write the same bytes.
 *
 * @param schema The columns.
 * @param codec The codec id of every block.
 * @param autoReason Why `auto` chose it, or null.
 * @param plans The prediction plan of every column.
 * @param options Chunk size, primary key and free-form metadata.
 * @returns The header, its `version` the lowest that describes it.
 */
export function newArchiveHeader(
  schema: Schema,
  codec: string,
  autoReason: string | null,
  plans: Record<string, ColumnPlan>,
  options: { chunkRows: number; primaryKey?: string; metadata?: Record<string, string> },
): ArchiveHeader {
  return {
    format: "permafrost",
    version: archiveVersion({ schema: schemaToJson(schema), encryption: null }),
    schema: schemaToJson(schema),
    codec,
    auto_reason: autoReason,
    chunk_rows: options.chunkRows,
    columns: plans,
    lossy_columns: schema.filter((f) =>
      f.type === "float64" && plans[f.name]!.quantization !== "QUANT_NONE"
    )
      .map((f) => f.name),
    primary_key: options.primaryKey ?? null,
    partition: null,
    encryption: null,
    metadata: options.metadata ?? {},
  };
}

/**
 * Chooses a codec from the first `AUTO_SAMPLE_ROWS` rows, predicted as they will be stored.
 *
 * @param first The first chunk.
 * @param plans The plan chosen for it.
 * @returns Codec id and the reason.
 */
export async function chooseArchiveCodec(
  first: Batch,
  plans: Record<string, ColumnPlan>,
): Promise<{ codec: string; reason: string }> {
  const sample = sliceBatch(first, 0, AUTO_SAMPLE_ROWS);
  if (sample.length === 0) {
    return { codec: "zstd", reason: "zstd: empty source, nothing to compare" };
  }
  const blocks = sample.schema.map((field, i) => {
    const plan = plans[field.name]!;
    const deps = plan.deps.map((d) =>
      sample.columns[sample.schema.findIndex((f) => f.name === d)]!
    );
    return predictBlock(sample.columns[i]!, { field, plan, deps }).bytes;
  });
  const choice = await chooseCodec(blocks, undefined, { rows: sample.length });
  return { codec: choice.codec.id, reason: choice.reason };
}
