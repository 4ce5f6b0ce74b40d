/**
 * Filtered reading of one open archive, shared by `thaw`, `thawTable`, `lookup`
 * and the partitioned thaw: rows and columns as `ArchiveReader.read` selects
 * them, plus a compiled `--where`.
 *
 * Order of work for a `where`: (1) every chunk whose footer statistics cannot
 * match is skipped without reading a byte; (2) of the other chunks, only the
 * blocks of the filter's columns are read and the rows tested; (3) the rest of
 * the requested columns are read only for chunks where some row matched. So a
 * selective filter reads little even on a column the chunks are not sorted by.
 * When most chunks turn out to match (after `ADAPT_AFTER` chunks, more than
 * half), the scan switches to reading filter and output columns in one pass:
 * two passes would decode the columns both depend on (`keyed_rank` deps) twice.
 *
 * @module
 */
import type { Batch, Column, Schema } from "../format/column.ts";
import { sliceBatch } from "../format/column.ts";
import type { ArchiveReader, RowRange } from "../format/reader.ts";
import { OpsError } from "./errors.ts";
import type { CompiledWhere, WhereNode } from "./where.ts";

/** Chunks tested before a scan may switch to one pass (see the module doc). */
export const ADAPT_AFTER = 4;

/** What a scan selects. */
export interface ScanOptions {
  /** Rows `[start, end)` of the archive (default all). */
  rows?: RowRange;
  /** Columns to return, in order (default all). */
  columns?: readonly string[];
  /** Row filter: expression text, a parsed tree, or compiled. */
  where?: string | WhereNode | CompiledWhere;
}

/** Counters a scan adds to as it goes. */
export interface ScanCounters {
  /** Chunks overlapping the row range. */
  chunks_total: number;
  /** Chunks skipped by their min/max statistics, unread. */
  chunks_pruned: number;
  /** Chunks whose blocks were read (in part or whole). */
  chunks_read: number;
  /** Payload bytes read. */
  bytes_read: number;
  /** Payload bytes of the archives considered. */
  payload_bytes: number;
}

/** Fresh zeroed counters. */
export function newCounters(): ScanCounters {
  return { chunks_total: 0, chunks_pruned: 0, chunks_read: 0, bytes_read: 0, payload_bytes: 0 };
}

/**
 * Checks requested column names against a schema.
 *
 * @param schema The archive's schema.
 * @param columns Requested names (default all).
 * @returns The output schema, in the requested order.
 * @throws {OpsError} BAD_OPTION naming an unknown column and the known ones.
 */
export function selectSchema(schema: Schema, columns: readonly string[] | undefined): Schema {
  if (!columns) return schema;
  return columns.map((name) => {
    const f = schema.find((g) => g.name === name);
    if (!f) {
      throw new OpsError(
        "BAD_OPTION",
        `Cannot thaw column "${name}": the archive has ${schema.map((g) => g.name).join(", ")}`,
      );
    }
    return f;
  });
}

/**
 * Compiles a `where` option for a schema (text, tree or already compiled). The
 * compiler (`where.ts`, its parser and literal parsing) loads only for a filter: a
 * read without one, a 10-row slice say, never evaluates it (~0.8 ms of every start).
 *
 * @param where The option.
 * @param schema The archive's schema.
 * @returns The compiled filter, or undefined when there is none.
 * @throws {OpsError} BAD_OPTION (from `compileWhere`) for a filter that does not parse or fit the schema.
 */
export async function whereFor(
  where: ScanOptions["where"],
  schema: Schema,
): Promise<CompiledWhere | undefined> {
  if (where === undefined) return undefined;
  if (typeof where === "object" && "mask" in where) return where;
  const { compileWhere } = await import("./where.ts");
  return compileWhere(where, schema);
}

/**
 * Reads the selected rows of an open archive, one batch per chunk with matches.
 *
 * @param reader An open archive.
 * @param options Rows, columns, where.
 * @param counters Updated as chunks are pruned and read.
 * @returns Batches in row order holding `options.columns`.
 */
export async function* scanArchive(
  reader: ArchiveReader,
  options: ScanOptions,
  counters: ScanCounters = newCounters(),
): AsyncGenerator<Batch> {
  const { schema, footer } = reader.index;
  const outSchema = selectSchema(schema, options.columns);
  const names = outSchema.map((f) => f.name);
  const where = await whereFor(options.where, schema);
  const start = Math.max(0, options.rows?.start ?? 0);
  const end = Math.min(footer.rows, options.rows?.end ?? footer.rows);
  counters.payload_bytes += footer.payload_length;
  const bytesBefore = reader.bytesRead;
  try {
    if (end <= start) return;
    if (!where) {
      for (const c of footer.chunks) {
        if (c.row_end > start && c.row_start < end) counters.chunks_total++;
      }
      let seen = reader.chunksRead;
      for await (const b of reader.read({ rows: { start, end }, columns: names })) {
        counters.chunks_read += reader.chunksRead - seen;
        seen = reader.chunksRead;
        yield b;
      }
      return;
    }
    const index = new Map(schema.map((f, i) => [f.name, i]));
    const filterCols = where.columns;
    const rest = names.filter((n) => !filterCols.includes(n));
    const union = [...filterCols, ...rest];
    let tried = 0;
    let matched = 0;
    for (const chunk of footer.chunks) {
      if (chunk.row_end <= start || chunk.row_start >= end) continue;
      counters.chunks_total++;
      const rowsInChunk = chunk.row_end - chunk.row_start;
      // Statistics cover the whole chunk; a partial range can only match less.
      if (!where.mayMatch((name) => chunk.stats[index.get(name)!], rowsInChunk)) {
        counters.chunks_pruned++;
        continue;
      }
      const range = { start: Math.max(start, chunk.row_start), end: Math.min(end, chunk.row_end) };
      counters.chunks_read++;
      const onePass = rest.length > 0 && tried >= ADAPT_AFTER && matched * 2 > tried;
      const tested = await readOne(reader, range, onePass ? union : filterCols);
      const mask = where.mask(tested);
      const keep = indexesOf(mask);
      tried++;
      if (keep.length === 0) continue;
      matched++;
      const more = rest.length > 0 && !onePass ? await readOne(reader, range, rest) : undefined;
      const columns = names.map((n) => {
        const i = tested.schema.findIndex((f) => f.name === n);
        if (i >= 0) return tested.columns[i]!;
        return more!.columns[more!.schema.findIndex((f) => f.name === n)]!;
      });
      const batch: Batch = { schema: outSchema, columns, length: tested.length };
      yield keep.length === batch.length ? batch : takeRows(batch, keep);
    }
  } finally {
    counters.bytes_read += reader.bytesRead - bytesBefore;
  }
}

async function readOne(
  reader: ArchiveReader,
  rows: RowRange,
  columns: readonly string[],
): Promise<Batch> {
  const parts: Batch[] = [];
  for await (const b of reader.read({ rows, columns })) parts.push(b);
  if (parts.length !== 1) throw new Error(`readOne(): expected one chunk, read ${parts.length}`);
  return parts[0]!;
}

function indexesOf(mask: Uint8Array): Uint32Array {
  let n = 0;
  for (let i = 0; i < mask.length; i++) n += mask[i]!;
  const out = new Uint32Array(n);
  let k = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i]) out[k++] = i;
  return out;
}

/**
 * Rows of a batch at the given indexes, in order.
 *
 * @param batch The batch.
 * @param rows Row indexes, ascending.
 * @returns A new batch.
 */
export function takeRows(batch: Batch, rows: Uint32Array): Batch {
  if (rows.length === batch.length) return batch;
  if (rows.length > 0 && rows[rows.length - 1]! - rows[0]! === rows.length - 1) {
    return sliceBatch(batch, rows[0]!, rows[0]! + rows.length);
  }
  return {
    schema: batch.schema,
    columns: batch.columns.map((c) => takeColumn(c, rows)),
    length: rows.length,
  };
}

function takeColumn(c: Column, rows: Uint32Array): Column {
  const n = rows.length;
  let validity: Uint8Array | null = null;
  if (c.validity) {
    validity = new Uint8Array(n);
    for (let i = 0; i < n; i++) validity[i] = c.validity[rows[i]!]!;
  }
  switch (c.type) {
    case "string":
    case "json": {
      const values = new Array<string>(n);
      for (let i = 0; i < n; i++) values[i] = c.values[rows[i]!]!;
      return { type: c.type, values, validity };
    }
    case "decimal": {
      const values = c.values instanceof BigInt64Array
        ? new BigInt64Array(n)
        : new Array<bigint>(n);
      for (let i = 0; i < n; i++) values[i] = c.values[rows[i]!]!;
      return { type: c.type, values, validity };
    }
    case "float64": {
      const values = new Float64Array(n);
      for (let i = 0; i < n; i++) values[i] = c.values[rows[i]!]!;
      return { type: c.type, values, validity };
    }
    case "float32": {
      // Moved as bit patterns: a float32 read and written back loses a signalling NaN.
      const values = new Float32Array(n);
      const from = new Uint32Array(c.values.buffer, c.values.byteOffset, c.values.length);
      const to = new Uint32Array(values.buffer);
      for (let i = 0; i < n; i++) to[i] = from[rows[i]!]!;
      return { type: c.type, values, validity };
    }
    case "float16": {
      const values = new Uint16Array(n);
      for (let i = 0; i < n; i++) values[i] = c.values[rows[i]!]!;
      return { type: c.type, values, validity };
    }
    case "bool": {
      const values = new Uint8Array(n);
      for (let i = 0; i < n; i++) values[i] = c.values[rows[i]!]!;
      return { type: c.type, values, validity };
    }
    default: {
      const values = new BigInt64Array(n);
      for (let i = 0; i < n; i++) values[i] = c.values[rows[i]!]!;
      return { type: c.type, values, validity };
    }
  }
}
