/**
 * JSON-lines sources: one JSON object per line (blank lines skipped; lines end at LF,
 * CRLF or a lone CR),
 * streamed into typed column batches.
 *
 * Columns are the union of the keys seen in the first `sampleRows` lines, in
 * first-seen order (at most `MAX_COLUMNS`, 10,000: TOO_MANY_COLUMNS beyond); a missing
 * key or `null` is a null cell (both thaw as `null`). Types (see `inferJsonType`):
 * numbers → int64 (exact, parsed from the source text, never through a double) or
 * float64 (when every number's text is exactly a double); booleans → bool; strings that
 * all read as dates or timestamps → date or timestamp; other strings → string;
 * everything else — nested objects and arrays, columns mixing kinds, numbers no int64
 * or float64 holds exactly, strings with lone surrogates → json, holding each value's
 * source text verbatim (key order, spacing inside, escapes). A key repeated within one
 * object is refused (PARSE_FAILED): which value it means is not defined.
 *
 * A later line whose value does not fit its column, or that has a key the sample never
 * saw, makes the batch iterator throw SCHEMA_MISMATCH naming the column; `types` can
 * force a column to `json` (or `string`), and for a key the sample never saw, adds it.
 *
 * Also cuts a file into byte ranges of N rows ({@link jsonlRowBoundaries}) and reads one
 * range with a known schema ({@link readJsonlRange}), like `csv.ts` does for CSV.
 *
 * @module
 */
import type { Batch, ColumnType, Field, Schema, TimeUnit } from "../format/column.ts";
import { BatchBuilder, type ColumnBuilder } from "./_builder.ts";
import {
  J_FALSE,
  J_NESTED,
  J_NULL,
  J_NUMBER,
  J_STRING,
  J_TRUE,
  JsonLineError,
  JsonLineScanner,
} from "./_json_line.ts";
import { fileSize, openForRead, readRange, tracked } from "./_file.ts";
import { LineReader } from "./_line_reader.ts";
import {
  bigInt64Text,
  isNaNText,
  scanDate,
  scanFloat,
  scanInt,
  scanTimestamp,
  storeInt64,
  timestampParts,
  timestampTicks,
} from "./_parse.ts";
import { IoError } from "./errors.ts";
import {
  fieldOf,
  forcedTimestampType,
  forcedType,
  inferJsonType,
  type JsonCell,
  typeOrigin,
} from "./infer.ts";
import { readTypedCell } from "./_typed_cell.ts";
import {
  DEFAULT_BATCH_ROWS,
  DEFAULT_SAMPLE_ROWS,
  type ForcedType,
  MAX_COLUMNS,
  type OpenSourceOptions,
  type Source,
} from "./types.ts";

/** Row-boundary byte offsets of a JSON-lines file, from {@link jsonlRowBoundaries}. */
export interface JsonlBoundaries {
  /**
   * `[0, …, bytes]`: consecutive pairs are byte ranges holding `everyRows` rows each,
   * the last one possibly fewer. Just `[0]` when there are no rows.
   */
  offsets: number[];
  /** Rows (non-blank lines) in the file. */
  rows: number;
  /** File size in bytes. */
  bytes: number;
}

const SCAN_CHUNK = 4 << 20;
const LF = 10;
const CR = 13;

function positiveInt(name: string, v: number | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (!Number.isSafeInteger(v) || v < 1) {
    throw new IoError("INVALID_OPTION", `Cannot use ${name} '${v}': it must be a positive integer`);
  }
  return v;
}

function lineError(path: string, line: number, err: unknown): IoError {
  const why = err instanceof JsonLineError ? err.message : String(err);
  return new IoError("PARSE_FAILED", `Cannot parse JSON lines '${path}' at line ${line}: ${why}`, {
    path,
    cause: err,
  });
}

/** The source text of a member, as the string a string column would hold. */
function memberText(sc: JsonLineScanner, k: number, text: string): string {
  const kind = sc.kinds[k];
  if (kind === J_STRING) return sc.strs[k] ?? "";
  if (kind === J_TRUE) return "true";
  if (kind === J_FALSE) return "false";
  return text.slice(sc.vs[k], sc.ve[k]);
}

const CELL_KIND: Record<number, JsonCell["kind"]> = {
  [J_STRING]: "string",
  [J_NUMBER]: "number",
  [J_TRUE]: "bool",
  [J_FALSE]: "bool",
  [J_NESTED]: "nested",
};

/** Reads the first `rows` rows as JSON cells per key, keys in first-seen order. */
async function sampleJsonl(
  path: string,
  bytes: number,
  rows: number,
): Promise<{ names: string[]; cells: (JsonCell | null)[][] }> {
  const names: string[] = [];
  const index = new Map<string, number>();
  const cells: (JsonCell | null)[][] = [];
  const sc = new JsonLineScanner();
  const file = await openForRead(path);
  try {
    const lr = new LineReader(readRange(file, path, 0, bytes), path, 0, false);
    let n = 0;
    while (n < rows) {
      const st = lr.next();
      if (st === 0) {
        await lr.fill();
        continue;
      }
      if (st < 0) break;
      if (lr.blank()) continue;
      try {
        sc.scan(lr.text, lr.s, lr.e);
      } catch (err) {
        throw lineError(path, lr.lines, err);
      }
      for (let k = 0; k < sc.count; k++) {
        const key = sc.keys[k] as string;
        let c = index.get(key);
        if (c === undefined) {
          if (names.length === MAX_COLUMNS) {
            throw new IoError(
              "TOO_MANY_COLUMNS",
              `Cannot read JSON lines '${path}': line ${lr.lines} brings the keys past ${MAX_COLUMNS}, the most columns a source may have; split the table into narrower files`,
              { path },
            );
          }
          c = names.length;
          index.set(key, c);
          names.push(key);
          cells.push(new Array<JsonCell | null>(n).fill(null));
        }
        const kind = sc.kinds[k] as number;
        const col = cells[c] as (JsonCell | null)[];
        while (col.length < n) col.push(null);
        col[n] = kind === J_NULL
          ? null
          : { kind: CELL_KIND[kind] ?? "string", text: memberText(sc, k, lr.text) };
      }
      n++;
    }
    for (const col of cells) while (col.length < n) col.push(null);
  } finally {
    file.close();
  }
  return { names, cells };
}

function jsonlSchema(
  names: string[],
  cells: (JsonCell | null)[][],
  types: Record<string, ForcedType>,
): Schema {
  const fields: Field[] = names.map((name, i) => {
    const col = cells[i] ?? [];
    const forced = Object.hasOwn(types, name) ? types[name] : undefined;
    if (forced === undefined) return fieldOf(name, inferJsonType(col));
    if (forced === "timestamp") {
      return fieldOf(name, forcedTimestampType(col.map((c) => (c === null ? null : c.text))));
    }
    return fieldOf(name, forcedType(name, forced));
  });
  for (const [name, type] of Object.entries(types)) {
    if (!names.includes(name)) fields.push(fieldOf(name, forcedType(name, type)));
  }
  return fields;
}

/**
 * Opens a JSON-lines file as a {@link Source}: samples rows to find the keys and
 * infer types, and streams typed batches on demand.
 *
 * @param path The JSON-lines file.
 * @param options Batch size, sample size and forced types.
 * @returns The source.
 * @throws {IoError} READ_FAILED, PARSE_FAILED or INVALID_OPTION; SCHEMA_MISMATCH later,
 * from the batch iterator.
 */
export async function openJsonl(path: string, options: OpenSourceOptions = {}): Promise<Source> {
  const batchRows = positiveInt("batchRows", options.batchRows, DEFAULT_BATCH_ROWS);
  const sampleRows = positiveInt("sampleRows", options.sampleRows, DEFAULT_SAMPLE_ROWS);
  const bytes = await fileSize(path);
  const { names, cells } = await sampleJsonl(path, bytes, sampleRows);
  const schema = jsonlSchema(names, cells, options.types ?? {});
  let position = 0;
  return {
    schema,
    format: "jsonl",
    bytes,
    position: () => position,
    batches: () =>
      jsonlBatches(path, schema, 0, bytes, {
        batchRows,
        where: (line) => `line ${line}`,
        why: typeOrigin(
          options.types,
          ` (the schema was inferred from the first ${sampleRows} rows)`,
        ),
        keepBom: false,
        onPosition: (at) => position = at,
      }),
    close: () => Promise.resolve(),
  };
}

/**
 * Reads the rows of one byte range of a JSON-lines file, as cut by
 * {@link jsonlRowBoundaries}, with a schema fixed beforehand.
 *
 * @param path The JSON-lines file.
 * @param schema The schema of the whole file.
 * @param range Byte range `[start, end)`; `start` must be a line start.
 * @param options Batch size.
 * @returns The range's rows, in batches of at most `batchRows`.
 * @throws {IoError} PARSE_FAILED, READ_FAILED or SCHEMA_MISMATCH while iterating.
 */
export function readJsonlRange(
  path: string,
  schema: Schema,
  range: { start: number; end: number },
  options: { batchRows?: number } = {},
): AsyncIterable<Batch> {
  const batchRows = positiveInt("batchRows", options.batchRows, DEFAULT_BATCH_ROWS);
  return jsonlBatches(path, schema, range.start, range.end, {
    batchRows,
    where: (line) => `line ${line} of the byte range starting at ${range.start}`,
    why: () => "",
    keepBom: range.start > 0,
  });
}

const K_STRING = 0;
const K_INT = 1;
const K_FLOAT = 2;
const K_BOOL = 3;
const K_DATE = 4;
const K_TS = 5;
const K_JSON = 6;
const K_TYPED = 7;
const KIND: Record<ColumnType, number> = {
  string: K_STRING,
  int64: K_INT,
  float64: K_FLOAT,
  float32: K_FLOAT,
  float16: K_FLOAT,
  bool: K_BOOL,
  date: K_DATE,
  timestamp: K_TS,
  json: K_JSON,
  time: K_TYPED,
  duration: K_TYPED,
  decimal: K_TYPED,
};

interface BatchOptions {
  batchRows: number;
  where: (line: number) => string;
  /** Why a column has its type (or the schema its keys), for SCHEMA_MISMATCH messages. */
  why: (column: string) => string;
  keepBom: boolean;
  /** Told the file offset read up to, as reading advances. */
  onPosition?: (offset: number) => void;
}

async function* jsonlBatches(
  path: string,
  schema: Schema,
  start: number,
  end: number,
  options: BatchOptions,
): AsyncGenerator<Batch> {
  const ncols = schema.length;
  const index = new Map(schema.map((f, i) => [f.name, i]));
  const kinds = schema.map((f) => KIND[f.type]);
  const units: TimeUnit[] = schema.map((f) => f.unit ?? "us");
  const seen = new Uint8Array(ncols);
  const parts = timestampParts();
  const sc = new JsonLineScanner();
  const file = await openForRead(path);
  try {
    const chunks = tracked(readRange(file, path, start, end), start, options.onPosition);
    const lr = new LineReader(chunks, path, start, options.keepBom);
    let b = new BatchBuilder(schema, options.batchRows, { growable: true });
    let row = 0;
    const mismatch = (c: number, cell: string): IoError => {
      const f = schema[c] as Field;
      const shown = cell.length > 40 ? `${cell.slice(0, 40)}…` : cell;
      return new IoError(
        "SCHEMA_MISMATCH",
        `Cannot read '${shown}' as ${f.type} in column '${f.name}' at ${options.where(lr.lines)}${
          options.why(f.name)
        }`,
        { path, column: f.name },
      );
    };
    for (;;) {
      const st = lr.next();
      if (st === 0) {
        await lr.fill();
        continue;
      }
      if (st < 0) break;
      if (lr.blank()) continue;
      const text = lr.text;
      try {
        sc.scan(text, lr.s, lr.e);
      } catch (err) {
        throw lineError(path, lr.lines, err);
      }
      seen.fill(0);
      b.reserve(row);
      const cols = b.columns;
      for (let k = 0; k < sc.count; k++) {
        const key = sc.keys[k] as string;
        const c = index.get(key);
        if (c === undefined) {
          throw new IoError(
            "SCHEMA_MISMATCH",
            `Cannot read key '${key}' at ${
              options.where(lr.lines)
            }: it is not a column of the schema${options.why(key)}`,
            { path, column: key },
          );
        }
        if (seen[c] === 1) {
          throw new IoError(
            "PARSE_FAILED",
            `Cannot parse JSON lines '${path}': key '${key}' appears twice in the object at ${
              options.where(lr.lines)
            }`,
            { path, column: key },
          );
        }
        seen[c] = 1;
        const col = cols[c] as ColumnBuilder;
        const kind = sc.kinds[k] as number;
        if (kind === J_NULL) {
          col.setNull(row);
          continue;
        }
        const vs = sc.vs[k] as number;
        const ve = sc.ve[k] as number;
        switch (kinds[c]) {
          case K_STRING: {
            const s = memberText(sc, k, text);
            // UTF-8 cannot hold a lone surrogate: such a value needs the json type.
            if (!s.isWellFormed()) throw mismatch(c, text.slice(vs, ve));
            col.str[row] = s;
            break;
          }
          case K_JSON:
            col.str[row] = text.slice(vs, ve);
            break;
          case K_TYPED: {
            const cell = kind === J_STRING
              ? sc.strs[k] as string
              : kind === J_NUMBER && schema[c]!.type === "decimal"
              ? text.slice(vs, ve)
              : null;
            if (cell === null || !readTypedCell(col, row, cell, schema[c]!)) {
              throw mismatch(c, text.slice(vs, ve));
            }
            break;
          }
          case K_INT: {
            if (kind !== J_NUMBER) throw mismatch(c, memberText(sc, k, text));
            const x = scanInt(text, vs, ve);
            if (x === Infinity) {
              const v = bigInt64Text(text.slice(vs, ve));
              if (v === null) throw mismatch(c, text.slice(vs, ve));
              col.big[row] = v;
            } else if (x === x) {
              storeInt64(col.big, col.i32, row, x);
            } else {
              throw mismatch(c, text.slice(vs, ve));
            }
            break;
          }
          case K_FLOAT: {
            if (kind !== J_NUMBER) throw mismatch(c, memberText(sc, k, text));
            const x = scanFloat(text, vs, ve);
            if (x !== x && !isNaNText(text, vs, ve)) throw mismatch(c, text.slice(vs, ve));
            if (col.type === "float64") col.f64[row] = x;
            else col.setFloat(row, x);
            break;
          }
          case K_BOOL:
            if (kind === J_TRUE) col.u8[row] = 1;
            else if (kind === J_FALSE) col.u8[row] = 0;
            else throw mismatch(c, memberText(sc, k, text));
            break;
          case K_DATE: {
            const s = kind === J_STRING ? (sc.strs[k] as string) : "";
            const x = kind === J_STRING ? scanDate(s, 0, s.length) : NaN;
            if (x !== x) throw mismatch(c, memberText(sc, k, text));
            storeInt64(col.big, col.i32, row, x);
            break;
          }
          case K_TS: {
            const s = kind === J_STRING ? (sc.strs[k] as string) : "";
            if (kind !== J_STRING || !scanTimestamp(s, 0, s.length, parts)) {
              throw mismatch(c, memberText(sc, k, text));
            }
            const v = timestampTicks(parts, units[c] as TimeUnit);
            if (v === null) throw mismatch(c, s);
            if (typeof v === "number") storeInt64(col.big, col.i32, row, v);
            else col.big[row] = v;
            break;
          }
        }
      }
      if (sc.count < ncols) {
        for (let c = 0; c < ncols; c++) if (seen[c] === 0) (cols[c] as ColumnBuilder).setNull(row);
      }
      row++;
      if (row === options.batchRows) {
        b.length = row;
        yield b.finish();
        b = new BatchBuilder(schema, options.batchRows, { growable: true });
        row = 0;
      }
    }
    if (row > 0) {
      b.length = row;
      yield b.finish();
    }
  } finally {
    file.close();
  }
}

function findByte(buf: Uint8Array, byte: number, from: number): number {
  const at = buf.indexOf(byte, from);
  return at < 0 ? Infinity : at;
}

function blankBytes(buf: Uint8Array, s: number, e: number): boolean {
  for (let i = s; i < e; i++) {
    const c = buf[i];
    if (c !== 32 && c !== 9 && c !== 13 && c !== LF) return false;
  }
  return true;
}

/**
 * Finds the byte offsets that cut a JSON-lines file into ranges of `everyRows` rows
 * (blank lines are not rows, as the reader skips them).
 *
 * @param path The JSON-lines file.
 * @param everyRows Rows per range.
 * @returns The offsets and the row count.
 * @throws {IoError} READ_FAILED or INVALID_OPTION.
 */
export async function jsonlRowBoundaries(
  path: string,
  everyRows: number,
): Promise<JsonlBoundaries> {
  const every = positiveInt("everyRows", everyRows, 1);
  const bytes = await fileSize(path);
  const offsets = [0];
  let rows = 0;
  let inRange = 0;
  // Whether the current line (which may span chunks) has a non-blank byte so far.
  let pending = false;
  // Whether the last chunk ended with a CR, whose LF (CRLF) may start this one.
  let crPending = false;
  const file = await openForRead(path);
  try {
    let base = 0;
    for await (const buf of readRange(file, path, 0, bytes, SCAN_CHUNK)) {
      let pos = 0;
      if (crPending && buf[0] === LF) {
        pos = 1;
        if (offsets.length > 1 && offsets[offsets.length - 1] === base) {
          offsets[offsets.length - 1] = base + 1;
        }
      }
      crPending = false;
      // Line ends as the reader's: LF, CRLF or a lone CR.
      let nextLf = -1;
      let nextCr = -1;
      for (;;) {
        if (nextLf !== Infinity && nextLf < pos) nextLf = findByte(buf, LF, pos);
        if (nextCr !== Infinity && nextCr < pos) nextCr = findByte(buf, CR, pos);
        const t = Math.min(nextLf, nextCr);
        if (!blankBytes(buf, pos, t === Infinity ? buf.length : t)) pending = true;
        if (t === Infinity) break;
        let end = t + 1;
        if (buf[t] === CR) {
          if (end === buf.length) crPending = true;
          else if (buf[end] === LF) end++;
        }
        if (pending) {
          rows++;
          if (++inRange === every) {
            offsets.push(base + end);
            inRange = 0;
          }
        }
        pending = false;
        pos = end;
      }
      base += buf.length;
    }
    if (pending) {
      rows++;
      inRange++;
    }
  } finally {
    file.close();
  }
  if (inRange > 0) offsets.push(bytes);
  else if (offsets.length > 1) offsets[offsets.length - 1] = bytes;
  return { offsets, rows, bytes };
}
