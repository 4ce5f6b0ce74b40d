/**
 * The body of one Worker of a thaw's pool: decodes a chunk job the reading thread
 * built (blocks already read, hash-checked and decrypted), keeps the rows of the
 * range, and either prepares them for the output (CSV, JSON lines or JSON array rows
 * rendered as text; Arrow's buffers for Arrow IPC; DuckDB's vector layout for
 * Parquet) or hands the columns back, so
 * that codecs, predictors and the text writer of several chunks run on every core.
 * See `_pool_scan.ts` for the other side.
 *
 * @module
 */
import { decodeChunkJob, packColumns, unpackColumns } from "../format/chunk_decode.ts";
import { type CodedColumn, codedColumn, rowsOf } from "../format/coded_strings.ts";
import { sliceBatch } from "../format/column.ts";
import type { Batch, Column } from "../format/column.ts";
import { type PoolAnswer, servePoolWorker } from "../format/pool.ts";
import { duckImageOf, duckImageTransfer } from "../io/_duckdb_image.ts";
import { plainArrowParts } from "../io/_arrow_parts.ts";
import { exactCodedColumn, renderRows } from "../io/_write_text.ts";
import type { ThawChunkTask, ThawRenderTask } from "./_pool_scan.ts";

// node:zlib (zstd) loaded now, while this thread waits for its first chunk, rather than
// on that chunk's first block: loading it costs a Worker ~20-40 ms, all on the first
// chunk's path otherwise.
import("node:zlib").catch(() => {}); // a failure shows again where zstd loads it

/**
 * Whether this Worker has broken V8's ArrayBufferDetaching protector on purpose. V8
 * optimizes typed-array code on the promise that no buffer of this isolate was ever
 * detached; moving away a buffer that had more than one view (a DataView, a subarray)
 * breaks it and throws away every function optimized so far. Arrow, Parquet and
 * column answers move such buffers, the first just after the first chunk had
 * optimized the decoders (~50 functions deoptimized and compiled again, trace-deopt):
 * for those, one buffer is detached before the first job instead, when nothing is
 * optimized yet. Text answers move one-view buffers only (`renderRows`), so a CSV or
 * JSON thaw keeps the promise, and the faster code it allows, to the end.
 */
let detached = false;

function detachOnce(): void {
  if (detached) return;
  detached = true;
  new Uint8Array(8).subarray(0, 1).buffer.transfer();
}

// apache-arrow by computed specifiers, so that Workers of a CSV thaw do not load it
// (Deno resolves a literal import ahead of time: see cli/lazy.ts).
const ARROW_TABLE = new URL("../io/arrow_table.ts", import.meta.url);
const ARROW_SCHEMA = new URL("../io/arrow_schema.ts", import.meta.url);

async function arrowModules(): Promise<
  & Pick<typeof import("../io/arrow_table.ts"), "batchToArrowParts">
  & Pick<typeof import("../io/arrow_schema.ts"), "schemaToArrow">
> {
  const [table, schema] = await Promise.all([
    import(ARROW_TABLE.href) as Promise<typeof import("../io/arrow_table.ts")>,
    import(ARROW_SCHEMA.href) as Promise<typeof import("../io/arrow_schema.ts")>,
  ]);
  return { batchToArrowParts: table.batchToArrowParts, schemaToArrow: schema.schemaToArrow };
}

/**
 * Output buffers of this Worker's earlier text renders, handed back once written
 * (`ThawChunkTask.spare`): putting the next chunks' bytes into them spares the kernel
 * faulting in fresh pages for every chunk (~0.15 s of a 3M-row CSV thaw). A few at most: memory stays
 * bounded, and a buffer beyond them is left to the collector.
 */
const spare: ArrayBuffer[] = [];
const MAX_SPARE = 2;

/** The Arrow schema of the last schema seen (one per thaw). */
let arrowSchema: {
  key: string;
  schema: ReturnType<typeof import("../io/arrow_schema.ts").schemaToArrow>;
} | null = null;

servePoolWorker({
  async run(task) {
    if ((task as ThawRenderTask)?.kind === "thaw-render") return render(task as ThawRenderTask);
    const t = task as ThawChunkTask;
    if (t?.kind !== "thaw-chunk") {
      throw new Error(
        `Cannot run a thaw Worker job of kind "${(task as { kind?: string })?.kind}"`,
      );
    }
    if (!t.render || !("rendering" in t.render)) detachOnce();
    for (const b of t.spare ?? []) if (spare.length < MAX_SPARE) spare.push(b);
    const length = t.to - t.from;
    if (!t.render || "arrow" in t.render) {
      // Columns handed on or laid out for Arrow: when whole, string columns may stay the
      // codes they were decoded from, no string per row built here.
      const columns = isWholeChunk(t)
        ? await decodeChunkJob(t.job, { codes: true })
        : (await taskBatch(t)).columns;
      if (!t.render) {
        const packed = packColumns(columns);
        return { value: { columns: packed.columns, length }, transfer: packed.transfer };
      }
      // Plain column types need no apache-arrow here (see io/_arrow_parts.ts).
      const plain = plainArrowParts({ columns, length });
      if (plain !== null) return { value: plain.parts, transfer: plain.transfer };
      const batch: Batch = { schema: t.schema, columns: columns.map(rowsOf), length };
      const { batchToArrowParts, schemaToArrow } = await arrowModules();
      const key = JSON.stringify(t.schema);
      if (arrowSchema?.key !== key) arrowSchema = { key, schema: schemaToArrow(t.schema) };
      const { parts, transfer } = batchToArrowParts(batch, arrowSchema.schema);
      return { value: parts, transfer };
    }
    const batch = await taskBatch(t);
    if ("duckdb" in t.render) {
      const image = duckImageOf(t.schema, batch);
      return { value: image, transfer: duckImageTransfer(image) };
    }
    const rendered = renderRows(t.schema, batch, t.render.rendering, t.render.firstRow, spare);
    return { value: rendered, transfer: [rendered.bytes.buffer as ArrayBuffer] };
  },
  close() {},
});

/** Whether a chunk task asks for every row of its chunk. */
function isWholeChunk(t: ThawChunkTask): boolean {
  return t.from === 0 && t.to === t.job.rows;
}

/** A chunk task's rows: its range `[from, to)` of its chunk's. */
async function taskBatch(t: ThawChunkTask): Promise<Batch> {
  const whole: Batch = {
    schema: t.schema,
    columns: await decodeChunkJob(t.job),
    length: t.job.rows,
  };
  return isWholeChunk(t) ? whole : sliceBatch(whole, t.from, t.to);
}

/**
 * Renders columns another Worker decoded (`_pool_scan.ts`: a text thaw on two Workers
 * or more, some decoding, others rendering). Only text moves out, as one-view buffers
 * (`renderRows`), so this thread keeps V8's ArrayBufferDetaching protector.
 */
function render(t: ThawRenderTask): PoolAnswer {
  for (const b of t.spare ?? []) if (spare.length < MAX_SPARE) spare.push(b);
  const csv = t.rendering.format === "csv";
  const columns = t.columns.map((c, i) =>
    "coded" in c ? keptCodedColumn(c, i, csv) : unpackColumns([c])[0]!
  );
  const batch: Batch = { schema: t.schema, columns, length: t.length };
  const rendered = renderRows(t.schema, batch, t.rendering, t.firstRow, spare);
  return { value: rendered, transfer: [rendered.bytes.buffer as ArrayBuffer] };
}

/**
 * The rows' arrays of coded string columns, by column, kept from chunk to chunk: a
 * render reads them only while it runs, and refilling one costs half as much as
 * building a new one (~0.2 ms a 50,000-row column) and leaves no large array to collect.
 */
const keptRows: string[][] = [];

/**
 * A coded string column's rows, built in this Worker's array for column `i`; for CSV,
 * the codes alone (`exactCodedColumn`: the CSV writer copies each entry's cell by code,
 * and the rows are never built).
 */
function keptCodedColumn(posted: CodedColumn, i: number, csv: boolean): Column {
  let values = keptRows[i];
  if (values === undefined || values.length !== posted.coded.codes.length) {
    values = keptRows[i] = new Array<string>(posted.coded.codes.length);
  }
  if (csv) {
    const { codes, dictionary } = posted.coded;
    return exactCodedColumn(codes, dictionary, posted.validity, values);
  }
  return codedColumn(posted, values);
}
