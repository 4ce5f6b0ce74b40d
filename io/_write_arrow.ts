/**
 * The Arrow IPC writer behind `output.ts`: file format (`.arrow`) or stream format
 * (`.arrows`), one record batch per input batch. When every column is int64,
 * timestamp, float64 or string, `_arrow_ipc.ts` frames the batches' buffers (built by
 * a thaw's Workers, else here by `_arrow_parts.ts`) and apache-arrow is not loaded; its
 * bytes are apache-arrow's. Any other schema goes to `_write_arrow_js.ts`
 * (apache-arrow's writer). Each batch is written before the next is read, so memory
 * holds one batch at a time.
 *
 * @module
 */
import type { Batch, Schema } from "../format/column.ts";
import { type ByteWriter, writeAll } from "./_file.ts";
import type { ArrowParts } from "./arrow_table.ts";
import { checkBatch } from "./_write_text.ts";
import { ArrowIpcWriter, ipcHandles } from "./_arrow_ipc.ts";
import { plainArrowParts } from "./_arrow_parts.ts";

// Computed specifiers (listed in cli/lazy.ts): a literal one would make Deno read
// apache-arrow's graph whenever this module loads (see cli/lazy.ts).
const WRITE_ARROW_JS = new URL("./_write_arrow_js.ts", import.meta.url);
const ARROW_TABLE = new URL("./arrow_table.ts", import.meta.url);
const ARROW_SCHEMA = new URL("./arrow_schema.ts", import.meta.url);

/**
 * Writes batches as Arrow IPC.
 *
 * @param file The open output file.
 * @param schema The schema.
 * @param batches The rows: batches, or parts a Worker converted (`batchToArrowParts`).
 * @param stream Stream format instead of file format.
 * @returns Rows written.
 */
export async function writeArrow(
  file: ByteWriter,
  schema: Schema,
  batches: AsyncIterable<Batch | ArrowParts> | Iterable<Batch | ArrowParts>,
  stream: boolean,
): Promise<number> {
  if (!ipcHandles(schema)) {
    const m = (await import(WRITE_ARROW_JS.href)) as typeof import("./_write_arrow_js.ts");
    return await m.writeArrowJs(file, schema, batches, stream);
  }
  const writer = new ArrowIpcWriter(schema, stream);
  await writeChunks(file, writer.start());
  let rows = 0;
  for await (const batch of batches) {
    let parts: ArrowParts;
    if ("arrowParts" in batch) {
      parts = batch;
    } else {
      checkBatch(schema, batch);
      parts = plainArrowParts(batch)?.parts ?? await partsByArrowJs(schema, batch);
    }
    rows += batch.length;
    await writeChunks(file, writer.batch(parts));
  }
  await writeChunks(file, writer.finish());
  return rows;
}

/** A batch's parts by apache-arrow's conversion (a string neither ASCII nor coded). */
async function partsByArrowJs(schema: Schema, batch: Batch): Promise<ArrowParts> {
  const table = (await import(ARROW_TABLE.href)) as typeof import("./arrow_table.ts");
  const arrowSchema = (await import(ARROW_SCHEMA.href)) as typeof import("./arrow_schema.ts");
  return table.batchToArrowParts(batch, arrowSchema.schemaToArrow(schema)).parts;
}

/** Writes chunks, the small ones (headers, padding) gathered into one write. */
async function writeChunks(file: ByteWriter, chunks: readonly Uint8Array[]): Promise<void> {
  let small: Uint8Array[] = [];
  let smallBytes = 0;
  const flushSmall = async () => {
    if (small.length === 0) return;
    const joined = new Uint8Array(smallBytes);
    let at = 0;
    for (const c of small) (joined.set(c, at), at += c.byteLength);
    small = [];
    smallBytes = 0;
    await writeAll(file, joined);
  };
  for (const c of chunks) {
    if (c.byteLength < 65536) {
      small.push(c);
      smallBytes += c.byteLength;
    } else {
      await flushSmall();
      await writeAll(file, c);
    }
  }
  await flushSmall();
}
