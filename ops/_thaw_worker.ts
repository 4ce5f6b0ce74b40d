/**
 * The body of one Worker of a thaw's pool: decodes a chunk job the reading thread
 * built (blocks already read, hash-checked and decrypted), keeps the rows of the
 * range, and either renders them as the output's text (CSV, JSON lines, JSON array
 * rows) or hands the columns back, so that codecs, predictors and the text writer of
 * several chunks run on every core. See `_pool_scan.ts` for the other side.
 *
 * @module
 */
import { decodeChunkJob, packColumns } from "../format/chunk_decode.ts";
import { sliceBatch } from "../format/column.ts";
import type { Batch } from "../format/column.ts";
import { servePoolWorker } from "../format/pool.ts";
import { renderRows } from "../io/_write_text.ts";
import type { ThawChunkTask } from "./_pool_scan.ts";

servePoolWorker({
  async run(task) {
    const t = task as ThawChunkTask;
    if (t?.kind !== "thaw-chunk") {
      throw new Error(
        `Cannot run a thaw Worker job of kind "${(task as { kind?: string })?.kind}"`,
      );
    }
    const columns = await decodeChunkJob(t.job);
    const whole: Batch = { schema: t.schema, columns, length: t.job.rows };
    const batch = t.from === 0 && t.to === t.job.rows ? whole : sliceBatch(whole, t.from, t.to);
    if (t.render) {
      const rendered = renderRows(t.schema, batch, t.render.rendering, t.render.firstRow);
      return { value: rendered, transfer: [rendered.bytes.buffer as ArrayBuffer] };
    }
    const packed = packColumns(batch.columns);
    return { value: { columns: packed.columns, length: batch.length }, transfer: packed.transfer };
  },
  close() {},
});
