/**
 * The text writers behind `output.ts`: CSV and JSON lines, streamed batch by batch
 * into an open file. Cells are written as UTF-8 bytes straight into a reused buffer
 * (plain ASCII copied char by char, everything else through `encodeInto`), so the
 * writers allocate little beyond the odd formatted number: that keeps the garbage
 * collector, not the formatting, from setting the pace. Value forms come from
 * `_format.ts` and are the ones `csv.ts` and `jsonl.ts` read back to the same values.
 *
 * CSV: a header row; a field is quoted when it is an empty string, holds the
 * delimiter, a quote, CR or LF, or starts or ends with a space or tab; nulls are empty
 * and unquoted; LF line ends; a json cell is its JSON text. JSON lines: one object per
 * row with every column (null as `null`), int64 and decimals as bare digits (exact at
 * any size), floats with `NaN`/`Infinity` tokens as Python writes them, times and
 * durations as strings, json values verbatim (their source text).
 *
 * @module
 */
import type { Batch, Column, Field, Schema } from "../format/column.ts";
import { float16ToNumber } from "../format/float16.ts";
import { type ByteWriter, writeAll } from "./_file.ts";
import { formatDecimal } from "../format/decimal_value.ts";
import {
  formatDate,
  formatDuration,
  formatFloat,
  formatFloat16,
  formatFloat32,
  formatTime,
  TimestampFormatter,
} from "./_format.ts";
import { IoError } from "./errors.ts";
import { TICKS_PER_SECOND } from "./_time.ts";
import { codesOf, rowsOfCodes, withCodes } from "../format/coded_strings.ts";

const FLUSH_BYTES = 1 << 20;
const encoder = new TextEncoder();
const QUOTE = 34;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** A growable byte buffer flushed to a file once it passes 1 MiB, or kept in memory. */
class ByteSink {
  buf: Uint8Array;
  /** A view of {@link buf} (replaced with it), for writes of 4 bytes at once. */
  view: DataView;
  pos = 0;
  readonly #file: ByteWriter | null;

  /**
   * @param file Where {@link flush} writes; null to keep everything in `buf`.
   * @param buffer Its size, or a buffer to write into (its old bytes are overwritten).
   */
  constructor(file: ByteWriter | null, buffer: number | Uint8Array = FLUSH_BYTES * 2) {
    this.#file = file;
    this.buf = typeof buffer === "number" ? new Uint8Array(buffer) : buffer;
    this.view = new DataView(this.buf.buffer);
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const bigger = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    bigger.set(this.buf.subarray(0, this.pos));
    this.buf = bigger;
    this.view = new DataView(bigger.buffer);
  }

  get full(): boolean {
    return this.pos >= FLUSH_BYTES;
  }

  /** Times the buffer was written out and reused: positions in it hold until the next. */
  flushes = 0;

  /** Writes again the `length` bytes written at `at` (since the last flush). */
  repeat(at: number, length: number): void {
    this.ensure(length);
    const buf = this.buf;
    if (length <= 32) {
      // A date or a timestamp: a loop beats the call into copyWithin at this size.
      let p = this.pos;
      for (let i = at, end = at + length; i < end; i++) buf[p++] = buf[i]!;
      this.pos = p;
      return;
    }
    buf.copyWithin(this.pos, at, at + length);
    this.pos += length;
  }

  async flush(): Promise<void> {
    if (this.pos === 0 || this.#file === null) return;
    this.flushes++;
    await writeAll(this.#file, this.buf.subarray(0, this.pos));
    this.pos = 0;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  /** Writes raw bytes. */
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Writes a string known to be ASCII. */
  ascii(s: string): void {
    const n = s.length;
    this.ensure(n);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) buf[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /** Writes any string as UTF-8. */
  text(s: string): void {
    this.ensure(s.length * 3);
    this.pos += encoder.encodeInto(s, this.buf.subarray(this.pos)).written;
  }

  /** Writes a safe integer in decimal. */
  int(n: number): void {
    this.ensure(24);
    const buf = this.buf;
    let p = this.pos;
    if (n < 0) {
      buf[p++] = 45;
      n = -n;
    }
    if (n < 10000) {
      // Most integers in tables are small: their digits straight into place.
      if (n >= 1000) {
        const a = (n / 1000) | 0;
        n -= a * 1000;
        buf[p++] = 48 + a;
        const h = (n / 100) | 0;
        n -= h * 100;
        buf[p++] = 48 + h;
        const t = (n / 10) | 0;
        buf[p] = 48 + t;
        buf[p + 1] = 48 + n - t * 10;
        this.pos = p + 2;
      } else if (n >= 100) {
        const h = (n / 100) | 0;
        const t = ((n - h * 100) / 10) | 0;
        buf[p] = 48 + h;
        buf[p + 1] = 48 + t;
        buf[p + 2] = 48 + n - h * 100 - t * 10;
        this.pos = p + 3;
      } else if (n >= 10) {
        const t = (n / 10) | 0;
        buf[p] = 48 + t;
        buf[p + 1] = 48 + n - t * 10;
        this.pos = p + 2;
      } else {
        buf[p] = 48 + n;
        this.pos = p + 1;
      }
      return;
    }
    const d = DIGITS;
    let k = 0;
    do {
      const q = Math.floor(n / 10);
      // The digit first: 48 + n can pass 2 ** 53 and round.
      d[k++] = 48 + (n - q * 10);
      n = q;
    } while (n > 0);
    while (k > 0) buf[p++] = d[--k] as number;
    this.pos = p;
  }
}

/** Scratch for {@link ByteSink.int}'s digits (a safe integer has at most 16). */
const DIGITS = new Uint8Array(24);

/** Checks that a batch matches the schema being written. */
export function checkBatch(schema: Schema, batch: Batch): void {
  const ok = batch.columns.length === schema.length &&
    schema.every((f, i) =>
      batch.columns[i]?.type === f.type && (batch.columns[i]?.values.length ?? -1) >= batch.length
    );
  if (!ok) {
    throw new IoError(
      "SCHEMA_MISMATCH",
      `Cannot write a batch of ${batch.columns.length} columns (${
        batch.columns.map((c) => c.type).join(", ")
      }): the output schema has ${schema.length} (${schema.map((f) => f.type).join(", ")})`,
    );
  }
}

function notWellFormed(field: Field, row: number): IoError {
  return new IoError(
    "WRITE_FAILED",
    `Cannot write row ${row} of column '${field.name}': the string holds a lone surrogate, which UTF-8 cannot store`,
    { column: field.name },
  );
}

/** Writes int64 slot `i` (via 32-bit halves when it is a safe integer). */
function writeInt64(sink: ByteSink, values: BigInt64Array, halves: Int32Array, i: number): void {
  if (LITTLE_ENDIAN) {
    const hi = halves[2 * i + 1] as number;
    if (hi >= -2097152 && hi < 2097152) {
      sink.int(hi * 4294967296 + ((halves[2 * i] as number) >>> 0));
      return;
    }
  }
  sink.ascii(String(values[i]));
}

/** Per-column writer state, built once per batch. */
interface ColumnWriter {
  col: Column;
  field: Field;
  /** int64, date and timestamp values as 32-bit halves (compared without a BigInt). */
  halves: Int32Array;
  ts: TimestampFormatter | null;
  /** The last date or timestamp written: its halves, and where its text sits in the sink. */
  lastLow: number;
  lastHigh: number;
  lastAt: number;
  lastLength: number;
  lastFlushes: number;
}

function columnWriters(schema: Schema, batch: Batch, json: boolean): ColumnWriter[] {
  return schema.map((field, c) => {
    const col = batch.columns[c] as Column;
    const halves = col.type === "int64" || col.type === "date" || col.type === "timestamp"
      ? new Int32Array(col.values.buffer, col.values.byteOffset, col.values.length * 2)
      : new Int32Array(0);
    const ts = col.type === "timestamp"
      ? new TimestampFormatter(field.unit ?? "us", json, field.timezone !== undefined)
      : null;
    return {
      col,
      field,
      halves,
      ts,
      lastLow: 0,
      lastHigh: 0,
      lastAt: -1,
      lastLength: 0,
      lastFlushes: 0,
    };
  });
}

/** Writes one non-null cell that is not a string. */
function writeValue(sink: ByteSink, w: ColumnWriter, i: number, json: boolean): void {
  const col = w.col;
  switch (col.type) {
    case "int64":
      writeInt64(sink, col.values, w.halves, i);
      return;
    case "float64":
      sink.ascii(formatFloat(col.values[i] as number, json));
      return;
    case "float32":
      sink.ascii(formatFloat32(col.values[i] as number, json));
      return;
    case "float16": {
      const bits = col.values[i] as number;
      sink.ascii(formatFloat16(float16ToNumber(bits), bits, json));
      return;
    }
    case "bool":
      sink.ascii(col.values[i] ? "true" : "false");
      return;
    case "date":
    case "timestamp": {
      if (json) sink.byte(QUOTE);
      // Sorted data repeats a value row after row: its text is copied from where it was
      // last written, while that is still in the sink (no flush since).
      const low = w.halves[2 * i]!;
      const high = w.halves[2 * i + 1]!;
      if (
        w.lastAt >= 0 && low === w.lastLow && high === w.lastHigh &&
        w.lastFlushes === sink.flushes
      ) {
        sink.repeat(w.lastAt, w.lastLength);
      } else {
        const v = col.values[i] as bigint;
        const text = w.ts === null ? formatDate(Number(v)) : w.ts.format(v);
        w.lastLow = low;
        w.lastHigh = high;
        w.lastAt = sink.pos;
        w.lastFlushes = sink.flushes;
        sink.ascii(text);
        w.lastLength = sink.pos - w.lastAt;
      }
      if (json) sink.byte(QUOTE);
      return;
    }
    case "time":
    case "duration": {
      const unit = w.field.unit ?? "us";
      const v = col.values[i] as bigint;
      if (json) sink.byte(QUOTE);
      sink.ascii(col.type === "time" ? formatTime(v, unit) : formatDuration(v, unit));
      if (json) sink.byte(QUOTE);
      return;
    }
    case "decimal":
      sink.ascii(formatDecimal(col.values[i] as bigint, w.field.scale ?? 0));
      return;
    case "string":
    case "json":
      return;
  }
}

/**
 * Writes a CSV string cell, quoting it when needed. With a `field` (a cell, not the
 * header), a string that is not plain ASCII is first checked for lone surrogates
 * (`row` names it then): an ASCII one cannot hold any, so most cells skip the check.
 */
function writeCsvString(
  sink: ByteSink,
  s: string,
  delim: number,
  special: RegExp,
  field: Field | null = null,
  row = 0,
): void {
  const n = s.length;
  if (n === 0) {
    sink.byte(QUOTE);
    sink.byte(QUOTE);
    return;
  }
  const first = s.charCodeAt(0);
  const last = s.charCodeAt(n - 1);
  if (first !== 32 && first !== 9 && last !== 32 && last !== 9) {
    sink.ensure(n);
    const buf = sink.buf;
    const p = sink.pos;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 128 || c === QUOTE || c === delim || c === 10 || c === 13) break;
      buf[p + i] = c;
    }
    if (i === n) {
      sink.pos = p + n;
      return;
    }
  }
  if (field !== null && !s.isWellFormed()) throw notWellFormed(field, row);
  sink.text(special.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
}

/** Writes a JSON string. */
function writeJsonString(sink: ByteSink, s: string): void {
  const n = s.length;
  sink.ensure(n + 2);
  const buf = sink.buf;
  const p = sink.pos;
  buf[p] = QUOTE;
  let i = 0;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || c < 32 || c === QUOTE || c === 92) break;
    buf[p + 1 + i] = c;
  }
  if (i === n) {
    buf[p + 1 + n] = QUOTE;
    sink.pos = p + n + 2;
    return;
  }
  sink.text(JSON.stringify(s));
}

/**
 * Writes a JSON value's text on the current line. A line break in valid JSON can only
 * be whitespace between tokens (inside strings it is escaped), so it becomes a space:
 * the value is unchanged and the row stays one line.
 */
function writeJsonText(sink: ByteSink, s: string): void {
  sink.text(s.includes("\n") || s.includes("\r") ? s.replace(/[\r\n]/g, " ") : s);
}

/**
 * Rows of a batch already rendered as CSV or JSON-lines text by {@link renderRows}
 * (in a Worker, say), for {@link writeCsv} and {@link writeJsonl} to write as they are.
 */
export interface RenderedRows {
  /** The format and options the bytes were rendered with. */
  readonly rendered: TextRendering;
  /**
   * The rows' bytes: no header, each row ended by its line end. From
   * {@link renderRows}, the only view ever made of its buffer in that thread (see
   * there), so that moving the buffer to another thread keeps V8's typed-array code
   * as it is.
   */
  readonly bytes: Uint8Array;
  /** Rows in `bytes`. */
  readonly length: number;
  /**
   * Called once `bytes` are written, when their buffer may be reused: a thaw's pool hands
   * it back to its Workers (`ops/_pool_scan.ts`), which put later chunks' bytes into it
   * instead of faulting in fresh pages. `bytes` must not be read after.
   */
  readonly recycle?: () => void;
}

/** How rows are rendered: CSV with its delimiter, JSON lines, or the rows of a JSON array. */
export type TextRendering =
  | { format: "csv"; delimiter: string }
  | { format: "jsonl" }
  | { format: "json" };

/** Rows between two checks of whether the sink should be flushed. */
const ROWS_PER_FLUSH_CHECK = 1024;

/** The widest rows {@link renderRows} rendered in its last schema and format, in bytes a row. */
let widest: { key: string; bytesPerRow: number } | null = null;

/**
 * The buffer {@link renderRows} renders into, kept from call to call in this thread
 * (grown when a batch needs more) and never handed out: the renderer writes it
 * through a `DataView` and a `Uint8Array` both.
 */
let scratch: Uint8Array | null = null;

/**
 * Renders a batch's rows as the writers below write them, into bytes of their own.
 *
 * @param schema The output schema.
 * @param batch The rows.
 * @param rendering Format (and CSV delimiter).
 * @param firstRow Index of the batch's first row in the whole output (error messages,
 * and the separators of a JSON array).
 * @param spare Buffers it may put the bytes into instead of allocating one (a Worker's,
 * handed back by the writer): it takes one big enough out of the list, and drops those
 * smaller (a thaw's chunks rarely differ much).
 * @returns The rendered rows: `bytes` the only view ever made of their buffer here.
 * @throws {IoError} SCHEMA_MISMATCH for a batch that does not match; WRITE_FAILED for
 * a lone surrogate.
 */
export function renderRows(
  schema: Schema,
  batch: Batch,
  rendering: TextRendering,
  firstRow: number,
  spare?: ArrayBuffer[],
): RenderedRows {
  checkBatch(schema, batch);
  // A guess at the size, so that most batches never regrow the buffer: the widest rows
  // rendered so far in this schema and format (a thaw's Worker renders chunk after
  // chunk of one) with a margin, else 12 bytes a cell. Zeroing a buffer twice the size
  // needed cost as much as writing a column.
  const key = JSON.stringify([rendering, schema]);
  const perRow = widest?.key === key
    ? Math.ceil(widest.bytesPerRow * 1.05) + 4
    : schema.length * 12 + 8;
  const size = Math.max(1024, batch.length * perRow);
  const sink = new ByteSink(null, scratch !== null && scratch.length >= size ? scratch : size);
  if (rendering.format === "csv") {
    new CsvRows(schema, rendering.delimiter).write(sink, batch, 0, batch.length, firstRow);
  } else {
    new JsonRows(schema, rendering.format === "json").write(
      sink,
      batch,
      0,
      batch.length,
      firstRow,
    );
  }
  const bytesPerRow = batch.length > 0 ? sink.pos / batch.length : 0;
  if (widest?.key !== key || widest.bytesPerRow < bytesPerRow) widest = { key, bytesPerRow };
  scratch = sink.buf;
  // A copy (~0.1 ms a chunk) into a buffer with this one view, rather than the sink's own
  // buffer: V8 optimizes typed-array code on the promise that no buffer of the thread was
  // ever detached, and keeps it through a detach only when the buffer had one view. A
  // thaw's Worker moves these bytes to the writer; moving the sink's buffer (its
  // DataView, its Uint8Array, a subarray) broke the promise at the first chunk's answer,
  // deoptimizing every function optimized so far, and left the code after it with the
  // checks a detach needs (~5-10% of the rendering).
  const bytes = outBuffer(spare, sink.pos);
  bytes.set(sink.buf.subarray(0, sink.pos));
  return { rendered: rendering, bytes, length: batch.length };
}

/**
 * A view of exactly `size` bytes, the first made of its buffer here: a buffer of `spare`
 * big enough, taken out of it (smaller ones are dropped), or a new one with 10% to spare
 * for the next chunks.
 */
function outBuffer(spare: ArrayBuffer[] | undefined, size: number): Uint8Array {
  while (spare !== undefined && spare.length > 0) {
    const b = spare.pop()!;
    if (b.byteLength >= size) return new Uint8Array(b, 0, size);
  }
  return new Uint8Array(new ArrayBuffer(Math.ceil(size * 1.1)), 0, size);
}

/** Writes a batch's rows, or rows rendered with the same options, through a sink. */
async function writeRows(
  file: ByteWriter,
  sink: ByteSink,
  schema: Schema,
  item: Batch | RenderedRows,
  rendering: TextRendering,
  rows: { write(sink: ByteSink, batch: Batch, from: number, to: number, firstRow: number): void },
  firstRow: number,
): Promise<void> {
  if ("rendered" in item) {
    if (JSON.stringify(item.rendered) !== JSON.stringify(rendering)) {
      throw new IoError(
        "SCHEMA_MISMATCH",
        `Cannot write rows rendered as ${JSON.stringify(item.rendered)} into ${
          JSON.stringify(rendering)
        } output`,
      );
    }
    await sink.flush();
    await writeAll(file, item.bytes);
    item.recycle?.();
    return;
  }
  checkBatch(schema, item);
  for (let r = 0; r < item.length; r += ROWS_PER_FLUSH_CHECK) {
    rows.write(sink, item, r, Math.min(item.length, r + ROWS_PER_FLUSH_CHECK), firstRow);
    if (sink.full) await sink.flush();
  }
}

/** How {@link CsvRows} writes a column's cells. */
const enum CsvKind {
  /** Any string or json cell, one by one ({@link writeCsvString}). */
  Text,
  /** A string column with dictionary codes: each entry's bytes rendered once, copied. */
  Coded,
  /** A {@link Coded} column whose rows are known to be their codes' entries ({@link exactCodedColumn}). */
  Exact,
  /** int64 digits written in place. */
  Int64,
  /** Timestamps in whole seconds from cached day texts; others through the formatter. */
  Timestamp,
  /** Everything else ({@link writeValue}). */
  Other,
}

/** Longest text of an int64 (`-9223372036854775808`). */
const INT64_CHARS = 20;
/** Longest text of a whole-second timestamp through the fast path (a signed 6-digit year). */
const TIMESTAMP_CHARS = 32;
/** Powers of ten below 2^53, to count an integer's digits: `POW10[i]` is 10^(i + 1). */
const POW10 = Float64Array.from({ length: 16 }, (_, i) => 10 ** (i + 1));
/** The two ASCII digits of 0..99, `DIGIT_PAIRS[2n]` and `[2n + 1]`. */
const DIGIT_PAIRS = Uint8Array.from(
  { length: 200 },
  (_, i) => 48 + (i % 2 === 0 ? Math.floor(i / 20) : (i >> 1) % 10),
);

/** Values arrays of {@link exactCodedColumn}: their rows are their codes' entries, unread. */
const exact = new WeakSet<readonly string[]>();

/**
 * A string column for {@link renderRows} as CSV, given by its dictionary codes alone:
 * each row is `dictionary[codes[i]]`, so its rows are never built (a thaw's renderer
 * filled an array of 50,000 strings per column and chunk, ~10% of its time, only for
 * the writer to check each row against its code). The column's `values` are `rows`,
 * recorded with the codes and not read by the CSV writer: their contents do not matter
 * (a Worker passes the same array chunk after chunk). Not for JSON or any other reader
 * of `values`.
 *
 * @param codes One code per row.
 * @param dictionary The entries.
 * @param validity The rows' validity.
 * @param rows An array of `codes.length` to stand for the values (contents ignored).
 * @returns The column.
 */
export function exactCodedColumn(
  codes: Uint32Array,
  dictionary: readonly string[],
  validity: Uint8Array | null,
  rows: string[],
): Column {
  if (dictionary.length > codes.length || rows.length !== codes.length) {
    // The writer renders each entry once only for dictionaries no longer than the rows.
    return { type: "string", values: rowsOfCodes(codes, dictionary), validity };
  }
  exact.add(rows);
  return { type: "string", values: withCodes(rows, codes, dictionary), validity };
}

/** A CSV column writer: {@link ColumnWriter} plus what its kind needs. */
interface CsvColumn extends ColumnWriter {
  kind: CsvKind;
  /** The column's validity and, for a string column, its values (hoisted: one shape). */
  validity: Uint8Array | null;
  strings: readonly string[];
  /** Coded: the codes, the dictionary, and each entry's rendered cell. */
  codes: Uint32Array;
  dictionary: readonly string[];
  cells: Uint8Array;
  /**
   * Where entry `e`'s cell starts in `cells`, or -1 for an entry to write row by row.
   */
  cellAt: Int32Array;
  /** Where entry `e`'s cell ends in `cells`. */
  cellEnd: Int32Array;
  /** Entry `e`'s cell as one little-endian word when it has at most 4 bytes, else -1 (as `shortLength`). */
  shortCell: Uint32Array;
  shortLength: Int32Array;
  /** Timestamp: ticks per second, the day of `dayText`, and the last value written. */
  per: number;
  day: number;
  dayText: Uint8Array;
  tsLow: number;
  tsHigh: number;
  /** The last timestamp's bytes, as little-endian words. */
  last: Uint32Array;
  tsLength: number;
}

/** CSV rows of batches in one schema and delimiter. */
class CsvRows {
  readonly #schema: Schema;
  readonly #delim: number;
  readonly #special: RegExp;
  #writers: { batch: Batch; ws: CsvColumn[]; bound: number } | null = null;

  constructor(schema: Schema, delimiter: string) {
    this.#schema = schema;
    this.#delim = delimiter.charCodeAt(0);
    this.#special = new RegExp(
      `["\\r\\n${delimiter.replace(/[\\\]^-]/g, "\\$&")}]|^[ \\t]|[ \\t]$`,
    );
  }

  header(sink: ByteSink): void {
    const ncols = this.#schema.length;
    for (let c = 0; c < ncols; c++) {
      if (c > 0) sink.byte(this.#delim);
      writeCsvString(sink, (this.#schema[c] as Field).name, this.#delim, this.#special);
    }
    // (A lone unnamed column comes out as `""`, not a blank line, so it reads back.)
    sink.byte(10);
  }

  /** The batch's column writers, and the bytes a row's fixed-size cells take at most. */
  #columns(batch: Batch): { ws: CsvColumn[]; bound: number } {
    // (The slack: cells written as whole words may write up to 3 bytes past their end.)
    let bound = this.#schema.length + 1 + 4;
    const ws = columnWriters(this.#schema, batch, false).map((w): CsvColumn => {
      const c: CsvColumn = {
        ...w,
        kind: CsvKind.Other,
        validity: w.col.validity,
        strings: w.col.type === "string" || w.col.type === "json" ? w.col.values : [],
        codes: new Uint32Array(0),
        dictionary: [],
        cells: new Uint8Array(0),
        cellAt: new Int32Array(0),
        cellEnd: new Int32Array(0),
        shortCell: new Uint32Array(0),
        shortLength: new Int32Array(0),
        per: 1,
        day: NaN,
        dayText: new Uint8Array(0),
        tsLow: 0,
        tsHigh: 0,
        last: new Uint32Array(TIMESTAMP_CHARS / 4),
        tsLength: -1,
      };
      const col = w.col;
      if (col.type === "string") {
        const coded = codesOf(col.values);
        c.kind = CsvKind.Text;
        if (coded !== undefined && coded.dictionary.length <= col.values.length) {
          c.kind = exact.has(col.values) ? CsvKind.Exact : CsvKind.Coded;
          c.codes = coded.codes;
          c.dictionary = coded.dictionary;
          this.#renderEntries(c);
          let widest = 0;
          for (let e = 0, end = c.dictionary.length; e < end; e++) {
            if (c.cellAt[e]! >= 0) widest = Math.max(widest, c.cellEnd[e]! - c.cellAt[e]!);
          }
          bound += widest;
        }
      } else if (col.type === "json") c.kind = CsvKind.Text;
      else if (col.type === "int64" && LITTLE_ENDIAN) {
        c.kind = CsvKind.Int64;
        bound += INT64_CHARS;
      } else if (col.type === "timestamp" && LITTLE_ENDIAN) {
        c.kind = CsvKind.Timestamp;
        c.per = TICKS_PER_SECOND[w.field.unit ?? "us"];
        bound += TIMESTAMP_CHARS;
      }
      return c;
    });
    return { ws, bound };
  }

  /**
   * Renders each dictionary entry's cell once. An entry that is not well-formed
   * UTF-16 is marked (-1) so that its rows go through {@link writeCsvString}, which
   * names the row.
   */
  #renderEntries(c: CsvColumn): void {
    const dict = c.dictionary;
    const sink = new ByteSink(null, 64 + dict.length * 8);
    const starts = new Int32Array(dict.length);
    const ends = new Int32Array(dict.length);
    for (let e = 0; e < dict.length; e++) {
      const s = dict[e]!;
      const good = typeof s === "string" && s.isWellFormed();
      starts[e] = good ? sink.pos : -1;
      if (good) writeCsvString(sink, s, this.#delim, this.#special);
      ends[e] = sink.pos;
    }
    c.cells = sink.buf;
    c.cellAt = starts;
    c.cellEnd = ends;
    c.shortCell = new Uint32Array(dict.length);
    c.shortLength = new Int32Array(dict.length).fill(-1);
    for (let e = 0; e < dict.length; e++) {
      const n = ends[e]! - starts[e]!;
      if (starts[e]! < 0 || n > 4) continue;
      let word = 0;
      for (let k = n - 1; k >= 0; k--) word = word * 256 + sink.buf[starts[e]! + k]!;
      c.shortCell[e] = word;
      c.shortLength[e] = n;
    }
  }

  /** Writes rows `[from, to)` of `batch`, whose first row is row `firstRow` of the output. */
  write(sink: ByteSink, batch: Batch, from: number, to: number, firstRow: number): void {
    if (this.#writers?.batch !== batch) this.#writers = { batch, ...this.#columns(batch) };
    const { ws, bound } = this.#writers;
    // (Not for a few rows, such as a slice's: making the table costs more than it saves.)
    const small = batch.length >= SMALL_TABLE_ROWS ? smallInts ??= smallIntTable() : null;
    const delim = this.#delim;
    const special = this.#special;
    const ncols = ws.length;
    for (let r = from; r < to; r++) {
      sink.ensure(bound);
      let buf = sink.buf;
      let view = sink.view;
      let p = sink.pos;
      for (let c = 0; c < ncols; c++) {
        if (c > 0) buf[p++] = delim;
        const w = ws[c]!;
        const v = w.validity;
        if (v !== null && v[r] === 0) continue;
        switch (w.kind) {
          case CsvKind.Coded:
          case CsvKind.Exact: {
            const code = w.codes[r]!;
            const start = w.cellAt[code]!;
            // An exact column's rows are its codes' entries; another's are checked.
            const exactRow = w.kind === CsvKind.Exact || w.strings[r] === w.dictionary[code];
            if (start >= 0 && exactRow) {
              const short = w.shortLength[code]!;
              if (short >= 0) {
                view.setUint32(p, w.shortCell[code]!, true);
                p += short;
                continue;
              }
              const end = w.cellEnd[code]!;
              const cells = w.cells;
              for (let k = start; k < end; k++) buf[p++] = cells[k]!;
              continue;
            }
            break;
          }
          case CsvKind.Int64: {
            const halves = w.halves;
            const hi = halves[2 * r + 1]!;
            const lo = halves[2 * r]!;
            // A value within int32 (the high word the low word's sign): small-integer math,
            // and most often one word of a table.
            if (hi === lo >> 31) {
              const k = lo - SMALL_MIN;
              if (small !== null && k >= 0 && k < SMALL_COUNT) {
                view.setUint32(p, small.words[k]!, true);
                p += small.lengths[k]!;
                continue;
              }
              p = writeInt32Digits(buf, p, lo);
              continue;
            }
            if (hi >= -2097152 && hi < 2097152) {
              p = writeDigits(buf, p, hi * 4294967296 + (halves[2 * r]! >>> 0));
              continue;
            }
            break;
          }
          case CsvKind.Timestamp: {
            p = writeTimestamp(buf, view, p, w, r);
            if (p >= 0) continue;
            p = -p - 1;
            break;
          }
        }
        // The general writers, through the sink.
        sink.pos = p;
        if (w.kind === CsvKind.Exact) {
          const s = w.dictionary[w.codes[r]!]!;
          writeCsvString(sink, s, delim, special, w.field, firstRow + r);
        } else if (w.kind === CsvKind.Text || w.kind === CsvKind.Coded) {
          writeCsvString(sink, w.col.values[r] as string, delim, special, w.field, firstRow + r);
        } else if (w.col.type === "int64") {
          writeInt64(sink, w.col.values, w.halves, r);
        } else {
          writeValue(sink, w, r, false);
        }
        // The rest of the row's fixed-size cells still fit.
        sink.ensure(bound);
        buf = sink.buf;
        view = sink.view;
        p = sink.pos;
      }
      buf[p++] = 10;
      sink.pos = p;
    }
  }
}

/** The integers whose text {@link smallIntTable} holds: -999 to 9999, four bytes at most. */
const SMALL_MIN = -999;
const SMALL_COUNT = 9999 - SMALL_MIN + 1;

/** Rows a batch has at least for {@link CsvRows} to write integers from {@link smallIntTable}. */
const SMALL_TABLE_ROWS = 4096;

/** {@link smallIntTable}, made by the first batch of CSV rows big enough. */
let smallInts: { words: Uint32Array; lengths: Uint8Array } | null = null;

/**
 * The text of each integer from -999 to 9999 as one little-endian word and its length
 * (44 KB): an integer cell of that range is one load and one 4-byte store instead of
 * its digits' arithmetic (most integers in tables are small: flights-3m's delays and
 * distances all are; its 50,000-row renders ~9% faster in isolation).
 */
function smallIntTable(): { words: Uint32Array; lengths: Uint8Array } {
  const words = new Uint32Array(SMALL_COUNT);
  const lengths = new Uint8Array(SMALL_COUNT);
  const bytes = new Uint8Array(8);
  for (let k = 0; k < SMALL_COUNT; k++) {
    const n = writeInt32Digits(bytes, 0, k + SMALL_MIN);
    words[k] = bytes[0]! | bytes[1]! << 8 | bytes[2]! << 16 | bytes[3]! << 24;
    lengths[k] = n;
    bytes.fill(0);
  }
  return { words, lengths };
}

/** Writes an int32's digits at `p`; returns the position after them. */
function writeInt32Digits(buf: Uint8Array, p: number, n: number): number {
  if (n < 0) {
    if (n === -2147483648) return writeDigits(buf, p, n);
    buf[p++] = 45;
    n = -n;
  }
  if (n < 100) {
    if (n < 10) {
      buf[p] = 48 + n;
      return p + 1;
    }
    buf[p] = DIGIT_PAIRS[2 * n]!;
    buf[p + 1] = DIGIT_PAIRS[2 * n + 1]!;
    return p + 2;
  }
  if (n < 10000) {
    const hi = (n / 100) | 0;
    const lo = 2 * (n - hi * 100);
    if (hi < 10) buf[p++] = 48 + hi;
    else {
      buf[p] = DIGIT_PAIRS[2 * hi]!;
      buf[p + 1] = DIGIT_PAIRS[2 * hi + 1]!;
      p += 2;
    }
    buf[p] = DIGIT_PAIRS[lo]!;
    buf[p + 1] = DIGIT_PAIRS[lo + 1]!;
    return p + 2;
  }
  return writeDigits(buf, p, n);
}

/** Writes a safe integer's digits at `p`; returns the position after them. */
function writeDigits(buf: Uint8Array, p: number, n: number): number {
  if (n < 0) {
    buf[p++] = 45;
    n = -n;
  }
  // Most integers in tables are small: their digits in pairs, from a table.
  if (n < 100) {
    if (n < 10) {
      buf[p] = 48 + n;
      return p + 1;
    }
    buf[p] = DIGIT_PAIRS[2 * n]!;
    buf[p + 1] = DIGIT_PAIRS[2 * n + 1]!;
    return p + 2;
  }
  if (n < 10000) {
    const hi = (n / 100) | 0;
    const lo = 2 * (n - hi * 100);
    if (hi < 10) buf[p++] = 48 + hi;
    else {
      buf[p] = DIGIT_PAIRS[2 * hi]!;
      buf[p + 1] = DIGIT_PAIRS[2 * hi + 1]!;
      p += 2;
    }
    buf[p] = DIGIT_PAIRS[lo]!;
    buf[p + 1] = DIGIT_PAIRS[lo + 1]!;
    return p + 2;
  }
  let digits = 5;
  while (digits < 16 && n >= POW10[digits - 1]!) digits++;
  let q = p + digits - 1;
  for (; q > p; q--) {
    const t = Math.floor(n / 10);
    // The digit first: 48 + n can pass 2 ** 53 and round.
    buf[q] = 48 + (n - t * 10);
    n = t;
  }
  buf[p] = 48 + n;
  return p + digits;
}

/**
 * Writes timestamp row `r` at `p` as {@link TimestampFormatter} does, from the last
 * value's bytes when it repeats and from the cached day's text when it is a whole
 * second; returns the position after it, or `-p - 1` to leave it to the formatter
 * (ticks past ±2^53, or a fraction of a second).
 */
function writeTimestamp(
  buf: Uint8Array,
  view: DataView,
  p: number,
  w: CsvColumn,
  r: number,
): number {
  const low = w.halves[2 * r]!;
  const high = w.halves[2 * r + 1]!;
  const last = w.last;
  if (low === w.tsLow && high === w.tsHigh && w.tsLength >= 0) {
    // Whole words: up to 3 bytes past the end, which the next cell overwrites.
    const n = w.tsLength;
    for (let k = 0; 4 * k < n; k++) view.setUint32(p + 4 * k, last[k]!, true);
    return p + n;
  }
  if (high < -2097152 || high >= 2097152) return -p - 1;
  const ticks = high * 4294967296 + (low >>> 0);
  const per = w.per;
  const secs = Math.floor(ticks / per);
  if (ticks - secs * per !== 0) return -p - 1;
  const days = Math.floor(secs / 86400);
  let sod = secs - days * 86400;
  if (days !== w.day) {
    const text = formatDate(days) + " ";
    if (text.length > TIMESTAMP_CHARS - 9) return -p - 1;
    w.day = days;
    w.dayText = encoder.encode(text);
  }
  const start = p;
  const dayText = w.dayText;
  for (let k = 0; k < dayText.length; k++) buf[p++] = dayText[k]!;
  const hh = Math.floor(sod / 3600);
  sod -= hh * 3600;
  const mm = Math.floor(sod / 60);
  const ss = sod - mm * 60;
  buf[p] = 48 + ((hh / 10) | 0);
  buf[p + 1] = 48 + (hh % 10);
  buf[p + 2] = 58;
  buf[p + 3] = 48 + ((mm / 10) | 0);
  buf[p + 4] = 48 + (mm % 10);
  buf[p + 5] = 58;
  buf[p + 6] = 48 + ((ss / 10) | 0);
  buf[p + 7] = 48 + (ss % 10);
  p += 8;
  if (w.field.timezone !== undefined) buf[p++] = 90;
  w.tsLow = low;
  w.tsHigh = high;
  w.tsLength = p - start;
  for (let k = 0; 4 * k < w.tsLength; k++) last[k] = view.getUint32(start + 4 * k, true);
  return p;
}

/**
 * Writes batches as CSV.
 *
 * @param file The open output file.
 * @param schema The schema.
 * @param batches The rows, as batches or already rendered with the same delimiter.
 * @param delimiter Field delimiter (one ASCII character).
 * @returns Rows written.
 */
export async function writeCsv(
  file: ByteWriter,
  schema: Schema,
  batches: AsyncIterable<Batch | RenderedRows> | Iterable<Batch | RenderedRows>,
  delimiter: string,
): Promise<number> {
  const sink = new ByteSink(file);
  const csv = new CsvRows(schema, delimiter);
  csv.header(sink);
  const rendering: TextRendering = { format: "csv", delimiter };
  let rows = 0;
  for await (const item of batches) {
    await writeRows(file, sink, schema, item, rendering, csv, rows);
    rows += item.length;
  }
  await sink.flush();
  return rows;
}

/** JSON-lines rows (or the rows of a JSON array) of batches in one schema. */
class JsonRows {
  readonly #keys: Uint8Array[];
  readonly #array: boolean;
  readonly #schema: Schema;
  #writers: { batch: Batch; ws: ColumnWriter[] } | null = null;

  constructor(schema: Schema, array: boolean) {
    this.#schema = schema;
    this.#array = array;
    this.#keys = schema.map((f, i) =>
      encoder.encode((i === 0 ? "{" : ",") + JSON.stringify(f.name) + ":")
    );
  }

  /** Writes rows `[from, to)` of `batch`, whose first row is row `firstRow` of the output. */
  write(sink: ByteSink, batch: Batch, from: number, to: number, firstRow: number): void {
    if (this.#writers?.batch !== batch) {
      this.#writers = { batch, ws: columnWriters(this.#schema, batch, true) };
    }
    const ws = this.#writers.ws;
    const keys = this.#keys;
    const array = this.#array;
    const ncols = ws.length;
    for (let r = from; r < to; r++) {
      if (array) {
        if (firstRow + r > 0) sink.byte(44);
        sink.byte(10);
      }
      if (ncols === 0) sink.byte(123);
      for (let c = 0; c < ncols; c++) {
        sink.bytes(keys[c] as Uint8Array);
        const w = ws[c] as ColumnWriter;
        const v = w.col.validity;
        if (v !== null && v[r] === 0) sink.ascii("null");
        else if (w.col.type === "string") writeJsonString(sink, w.col.values[r] as string);
        else if (w.col.type === "json") writeJsonText(sink, w.col.values[r] as string);
        else writeValue(sink, w, r, true);
      }
      sink.byte(125);
      if (!array) sink.byte(10);
    }
  }
}

/**
 * Writes batches as JSON lines: one object per row and line.
 *
 * @param file The open output file.
 * @param schema The schema.
 * @param batches The rows, as batches or already rendered the same way.
 * @param array Write one JSON array instead (`[`, rows separated by `,` and a line end, `]`).
 * @returns Rows written.
 */
export async function writeJsonl(
  file: ByteWriter,
  schema: Schema,
  batches: AsyncIterable<Batch | RenderedRows> | Iterable<Batch | RenderedRows>,
  array = false,
): Promise<number> {
  const sink = new ByteSink(file);
  if (array) sink.byte(91);
  const json = new JsonRows(schema, array);
  const rendering: TextRendering = { format: array ? "json" : "jsonl" };
  let rows = 0;
  for await (const item of batches) {
    await writeRows(file, sink, schema, item, rendering, json, rows);
    rows += item.length;
  }
  if (array) sink.ascii(rows > 0 ? "\n]\n" : "]\n");
  await sink.flush();
  return rows;
}
