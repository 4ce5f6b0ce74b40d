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

const FLUSH_BYTES = 1 << 20;
const encoder = new TextEncoder();
const QUOTE = 34;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** A growable byte buffer flushed to a file once it passes 1 MiB. */
class ByteSink {
  buf = new Uint8Array(FLUSH_BYTES * 2);
  pos = 0;
  readonly #file: ByteWriter;
  readonly #digits = new Uint8Array(24);

  constructor(file: ByteWriter) {
    this.#file = file;
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const bigger = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    bigger.set(this.buf.subarray(0, this.pos));
    this.buf = bigger;
  }

  get full(): boolean {
    return this.pos >= FLUSH_BYTES;
  }

  async flush(): Promise<void> {
    if (this.pos === 0) return;
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
    if (n < 0) {
      buf[this.pos++] = 45;
      n = -n;
    }
    const d = this.#digits;
    let k = 0;
    do {
      const q = Math.floor(n / 10);
      d[k++] = 48 + n - q * 10;
      n = q;
    } while (n > 0);
    let p = this.pos;
    while (k > 0) buf[p++] = d[--k] as number;
    this.pos = p;
  }
}

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
  halves: Int32Array;
  ts: TimestampFormatter | null;
  lastTicks: bigint;
  lastText: string;
}

function columnWriters(schema: Schema, batch: Batch, json: boolean): ColumnWriter[] {
  return schema.map((field, c) => {
    const col = batch.columns[c] as Column;
    const halves = col.type === "int64"
      ? new Int32Array(col.values.buffer, col.values.byteOffset, col.values.length * 2)
      : new Int32Array(0);
    const ts = col.type === "timestamp"
      ? new TimestampFormatter(field.unit ?? "us", json, field.timezone !== undefined)
      : null;
    return { col, field, halves, ts, lastTicks: 0n, lastText: "" };
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
      const v = col.values[i] as bigint;
      if (v !== w.lastTicks || w.lastText === "") {
        w.lastTicks = v;
        w.lastText = w.ts === null ? formatDate(Number(v)) : w.ts.format(v);
      }
      if (json) sink.byte(QUOTE);
      sink.ascii(w.lastText);
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

/** Writes a CSV string cell, quoting it when needed. */
function writeCsvString(sink: ByteSink, s: string, delim: number, special: RegExp): void {
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
 * Writes batches as CSV.
 *
 * @param file The open output file.
 * @param schema The schema.
 * @param batches The rows.
 * @param delimiter Field delimiter (one ASCII character).
 * @returns Rows written.
 */
export async function writeCsv(
  file: ByteWriter,
  schema: Schema,
  batches: AsyncIterable<Batch> | Iterable<Batch>,
  delimiter: string,
): Promise<number> {
  const delim = delimiter.charCodeAt(0);
  const special = new RegExp(`["\\r\\n${delimiter.replace(/[\\\]^-]/g, "\\$&")}]|^[ \\t]|[ \\t]$`);
  const sink = new ByteSink(file);
  const ncols = schema.length;
  for (let c = 0; c < ncols; c++) {
    if (c > 0) sink.byte(delim);
    writeCsvString(sink, (schema[c] as Field).name, delim, special);
  }
  // (A lone unnamed column comes out as `""`, not a blank line, so it reads back.)
  sink.byte(10);
  let rows = 0;
  for await (const batch of batches) {
    checkBatch(schema, batch);
    const ws = columnWriters(schema, batch, false);
    const n = batch.length;
    for (let r = 0; r < n; r++) {
      for (let c = 0; c < ncols; c++) {
        if (c > 0) sink.byte(delim);
        const w = ws[c] as ColumnWriter;
        const v = w.col.validity;
        if (v !== null && v[r] === 0) continue;
        if (w.col.type === "string" || w.col.type === "json") {
          const s = w.col.values[r] as string;
          if (!s.isWellFormed()) throw notWellFormed(w.field, rows + r);
          writeCsvString(sink, s, delim, special);
        } else {
          writeValue(sink, w, r, false);
        }
      }
      sink.byte(10);
      if (sink.full) await sink.flush();
    }
    rows += n;
  }
  await sink.flush();
  return rows;
}

/**
 * Writes batches as JSON lines: one object per row and line.
 *
 * @param file The open output file.
 * @param schema The schema.
 * @param batches The rows.
 * @param array Write one JSON array instead (`[`, rows separated by `,` and a line end, `]`).
 * @returns Rows written.
 */
export async function writeJsonl(
  file: ByteWriter,
  schema: Schema,
  batches: AsyncIterable<Batch> | Iterable<Batch>,
  array = false,
): Promise<number> {
  const sink = new ByteSink(file);
  if (array) sink.byte(91);
  const keys = schema.map((f, i) =>
    encoder.encode((i === 0 ? "{" : ",") + JSON.stringify(f.name) + ":")
  );
  const ncols = schema.length;
  let rows = 0;
  for await (const batch of batches) {
    checkBatch(schema, batch);
    const ws = columnWriters(schema, batch, true);
    const n = batch.length;
    for (let r = 0; r < n; r++) {
      if (array) {
        if (rows + r > 0) sink.byte(44);
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
      if (sink.full) await sink.flush();
    }
    rows += n;
  }
  if (array) sink.ascii(rows > 0 ? "\n]\n" : "]\n");
  await sink.flush();
  return rows;
}
