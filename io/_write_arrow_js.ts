/**
 * apache-arrow's Arrow IPC writer, for the schemas `_arrow_ipc.ts` does not frame
 * itself (see `_write_arrow.ts`, which loads this module only then): file format
 * (`.arrow`) or stream format (`.arrows`), one record batch per input batch, converted
 * exactly by `arrow_table.ts`. The writer's output is caught in a queue that is flushed
 * to the file after every batch, so memory holds one batch at a time.
 *
 * @module
 */
import * as arrow from "apache-arrow";
import type { Batch, Schema } from "../format/column.ts";
import { type ByteWriter, writeAll } from "./_file.ts";
import { type ArrowParts, arrowPartsToBatch, batchToArrow } from "./arrow_table.ts";
import { schemaToArrow } from "./arrow_schema.ts";
import { checkBatch } from "./_write_text.ts";
import { IoError } from "./errors.ts";

/** An arrow-js byte sink that just collects what the writer emits, for us to flush. */
class CollectingQueue extends arrow.AsyncByteQueue {
  pending: Uint8Array[] = [];

  override write(value: Parameters<arrow.AsyncByteQueue["write"]>[0]): void {
    if (value instanceof Uint8Array) {
      if (value.byteLength > 0) this.pending.push(value);
      return;
    }
    super.write(value);
  }

  async flushTo(file: ByteWriter): Promise<void> {
    const parts = this.pending;
    this.pending = [];
    for (const p of parts) await writeAll(file, p);
  }
}

/**
 * Writes batches as Arrow IPC with apache-arrow.
 *
 * @param file The open output file.
 * @param schema The schema.
 * @param batches The rows: batches, or parts a Worker converted (`batchToArrowParts`).
 * @param stream Stream format instead of file format.
 * @returns Rows written.
 */
export async function writeArrowJs(
  file: ByteWriter,
  schema: Schema,
  batches: AsyncIterable<Batch | ArrowParts> | Iterable<Batch | ArrowParts>,
  stream: boolean,
): Promise<number> {
  const as = schemaToArrow(schema);
  const writer = stream ? new arrow.RecordBatchStreamWriter() : new arrow.RecordBatchFileWriter();
  const queue = new CollectingQueue();
  writer.reset(queue, as);
  let rows = 0;
  for await (const batch of batches) {
    if ("arrowParts" in batch) {
      if (batch.columns.length !== schema.length) {
        throw new IoError(
          "SCHEMA_MISMATCH",
          `Cannot write Arrow parts of ${batch.columns.length} columns: the output schema has ${schema.length}`,
        );
      }
      writer.write(arrowPartsToBatch(batch, as));
    } else {
      checkBatch(schema, batch);
      writer.write(batchToArrow(batch, as));
    }
    rows += batch.length;
    await queue.flushTo(file);
  }
  writer.close();
  await queue.flushTo(file);
  return rows;
}
