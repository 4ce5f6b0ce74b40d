/**
 * CSV sources: a streaming, quote-aware RFC 4180 reader that builds typed column
 * batches directly, plus the two pieces the cluster needs to split a CSV without
 * building columns: {@link csvRowBoundaries} (byte offsets every N rows) and
 * {@link readCsvRange} (the rows of one byte range, with a known schema).
 *
 * Dialect: UTF-8 (a leading BOM is skipped; invalid UTF-8 is PARSE_FAILED naming the
 * row and the byte offset), a header row, the delimiter given or told from the first lines
 * (`csv_dialect.ts`: `,` tab `;` `|`), LF,
 * CRLF or CR line ends (mixed too; a CR inside a quoted field is data; a CR then LF is
 * always one CRLF, never a line end and a blank line), `"` quoting with
 * `""` escapes; quoted fields may hold delimiters, quotes and newlines. An empty
 * unquoted field is null; `""` is the empty string. A row with a different field
 * count than the header is PARSE_FAILED; blank lines are skipped (except in a
 * one-column file, where a blank line is a null). Duplicate header names are
 * PARSE_FAILED; more than `MAX_COLUMNS` (10,000) columns is TOO_MANY_COLUMNS.
 *
 * Types come from `infer.ts` over the first `sampleRows` rows; a later cell that does
 * not fit makes the batch iterator throw SCHEMA_MISMATCH naming the column. Memory is
 * bounded by one batch plus one read chunk (and the longest record).
 *
 * @module
 */
import type { Batch, Field, Schema, TimeUnit } from "../format/column.ts";
import { withCodes } from "../format/coded_strings.ts";
import { BatchBuilder, type ColumnBuilder } from "./_builder.ts";
import { blankRecord, CsvByteScanner, CsvRecordReader, END, NEED_MORE } from "./_csv_records.ts";
import { fileSize, openForRead, readFailed, readRange, tracked } from "./_file.ts";
import { CutArea } from "./_csv_cut_simd.ts";
import {
  bigInt64Text,
  isNaNText,
  scanBool,
  scanDate,
  scanFloat,
  scanInt,
  scanSeconds19,
  scanSeconds19Bytes,
  scanTimestamp,
  storeInt64,
  TICKS_PER_SECOND,
  type TimestampParts,
  timestampParts,
  timestampTicks,
} from "./_parse.ts";
import { type CsvDialect, csvDialect } from "./csv_dialect.ts";
import { IoError } from "./errors.ts";
import { fieldOf, forcedTimestampType, forcedType, inferTextType, typeOrigin } from "./infer.ts";
import { readTypedCell } from "./_typed_cell.ts";
import {
  DEFAULT_BATCH_ROWS,
  DEFAULT_SAMPLE_ROWS,
  type ForcedType,
  MAX_COLUMNS,
  type OpenSourceOptions,
  type Source,
} from "./types.ts";

/** CSV dialect options. */
export interface CsvOptions {
  /**
   * Field delimiter: one ASCII character other than `"`, CR or LF (default: told from
   * the first lines, see `csv_dialect.ts`).
   */
  delimiter?: string;
}

/** The header of a CSV file and where its data starts. */
export interface CsvHeader {
  /** Column names, in order. */
  names: string[];
  /** Byte offset of the first data row (after the BOM and header). */
  dataStart: number;
  /** File size in bytes. */
  bytes: number;
}

/** Row-boundary byte offsets of a CSV file, from {@link csvRowBoundaries}. */
export interface CsvBoundaries {
  /** Column names from the header. */
  names: string[];
  /** Byte offset of the first data row. */
  dataStart: number;
  /**
   * `[dataStart, …, bytes]`: consecutive pairs are byte ranges holding `everyRows`
   * rows each, the last one possibly fewer. Just `[dataStart]` when there are no rows.
   */
  offsets: number[];
  /** Data rows in the file. */
  rows: number;
  /** File size in bytes. */
  bytes: number;
}

const HEADER_CHUNK = 64 * 1024;
const SCAN_CHUNK = 4 << 20;
const QUOTE_BYTE = 34;
const LF_BYTE = 10;
const CR_BYTE = 13;
const encoder = new TextEncoder();

function delimiterCode(delimiter: string): number {
  const c = delimiter.charCodeAt(0);
  if (delimiter.length !== 1 || c > 127 || c === 34 || c === 10 || c === 13) {
    throw new IoError(
      "INVALID_OPTION",
      `Cannot use '${delimiter}' as the CSV delimiter: it must be one ASCII character other than a quote, CR or LF`,
    );
  }
  return c;
}

/** The dialect to read `path` with: the delimiter given (checked), else the one sniffed. */
async function dialectOf(
  path: string,
  options: CsvOptions,
): Promise<CsvDialect & { code: number }> {
  if (options.delimiter !== undefined) delimiterCode(options.delimiter);
  const dialect = await csvDialect(path, options.delimiter);
  return { ...dialect, code: delimiterCode(dialect.delimiter) };
}

function positiveInt(name: string, v: number | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (!Number.isSafeInteger(v) || v < 1) {
    throw new IoError("INVALID_OPTION", `Cannot use ${name} '${v}': it must be a positive integer`);
  }
  return v;
}

/**
 * Reads the header row of a CSV file.
 *
 * @param path The CSV file.
 * @param options Dialect.
 * @returns Column names, where the data starts and the file size.
 * @throws {IoError} READ_FAILED when the file cannot be read, PARSE_FAILED when the
 * header is malformed or has duplicate names, TOO_MANY_COLUMNS past `MAX_COLUMNS`.
 */
export async function readCsvHeader(path: string, options: CsvOptions = {}): Promise<CsvHeader> {
  const delimiter = (await dialectOf(path, options)).code;
  const bytes = await fileSize(path);
  const file = await openForRead(path);
  try {
    const rr = new CsvRecordReader(readRange(file, path, 0, bytes, HEADER_CHUNK), {
      delimiter,
      capacity: 64,
      growable: true,
      path,
      where: () => "the header",
    });
    await rr.fill();
    const bom = rr.text.charCodeAt(0) === 0xfeff;
    if (bom) rr.pos = 1;
    let st: number;
    while ((st = rr.next()) === NEED_MORE) await rr.fill();
    if (st === END) return { names: [], dataStart: bytes, bytes };
    if (rr.count > MAX_COLUMNS) {
      throw new IoError(
        "TOO_MANY_COLUMNS",
        `Cannot read CSV '${path}': its header has ${rr.count} columns, more than the ${MAX_COLUMNS} a source may have; split the table into narrower files`,
        { path },
      );
    }
    const names: string[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < rr.count; i++) {
      const name = rr.field(i) ?? "";
      if (seen.has(name)) {
        throw new IoError(
          "PARSE_FAILED",
          `Cannot read CSV '${path}': the header names column '${name}' twice`,
          { path, column: name },
        );
      }
      seen.add(name);
      names.push(name);
    }
    // fill() drops consumed text, the BOM included, once the header spans chunks.
    const bomDropped = bom && rr.text.charCodeAt(0) !== 0xfeff;
    const dataStart = encoder.encode(rr.text.slice(0, rr.pos)).length + (bomDropped ? 3 : 0);
    return { names, dataStart, bytes };
  } finally {
    file.close();
  }
}

/** Reads the first `rows` data rows as text cells, column by column. */
async function sampleCsv(
  path: string,
  header: CsvHeader,
  delimiter: number,
  rows: number,
): Promise<(string | null)[][]> {
  const ncols = header.names.length;
  const cols: (string | null)[][] = header.names.map(() => []);
  const file = await openForRead(path);
  try {
    const rr = new CsvRecordReader(readRange(file, path, header.dataStart, header.bytes), {
      delimiter,
      capacity: ncols + 1,
      path,
      start: header.dataStart,
      where: (r) => `data row ${r + 1}`,
    });
    let n = 0;
    while (n < rows) {
      const st = rr.next();
      if (st === NEED_MORE) {
        await rr.fill();
        continue;
      }
      if (st === END) break;
      if (rr.count !== ncols) {
        if (ncols > 1 && rr.blank()) continue;
        throw fieldCountError(path, ncols, rr.count, `data row ${rr.records}`);
      }
      for (let c = 0; c < ncols; c++) cols[c]?.push(rr.field(c));
      n++;
    }
  } finally {
    file.close();
  }
  return cols;
}

function fieldCountError(path: string, want: number, got: number, where: string): IoError {
  return new IoError(
    "PARSE_FAILED",
    `Cannot parse CSV '${path}': ${where} has ${got} fields, the header has ${want}`,
    { path },
  );
}

/**
 * Builds a CSV schema from the header and a sample, applying forced types.
 *
 * @param names Header names.
 * @param sample Sampled cells per column.
 * @param types Forced types by column name.
 * @param path The file, for errors.
 * @returns The schema.
 */
function csvSchema(
  names: string[],
  sample: (string | null)[][],
  types: Record<string, ForcedType>,
  path: string,
): Schema {
  for (const name of Object.keys(types)) {
    if (!names.includes(name)) {
      throw new IoError(
        "INVALID_OPTION",
        `Cannot force the type of column '${name}': CSV '${path}' has no such column`,
        { path, column: name },
      );
    }
  }
  return names.map((name, i) => {
    const cells = sample[i] ?? [];
    const forced = Object.hasOwn(types, name) ? types[name] : undefined;
    if (forced === undefined) return fieldOf(name, inferTextType(cells));
    if (forced === "timestamp") return fieldOf(name, forcedTimestampType(cells));
    return fieldOf(name, forcedType(name, forced));
  });
}

/**
 * Opens a CSV file as a {@link Source}: reads the header, samples rows to infer types
 * and streams typed batches on demand.
 *
 * @param path The CSV file.
 * @param options Batch size, sample size, forced types and delimiter.
 * @returns The source.
 * @throws {IoError} READ_FAILED, PARSE_FAILED or INVALID_OPTION; SCHEMA_MISMATCH later,
 * from the batch iterator.
 */
export async function openCsv(path: string, options: OpenSourceOptions = {}): Promise<Source> {
  const batchRows = positiveInt("batchRows", options.batchRows, DEFAULT_BATCH_ROWS);
  const sampleRows = positiveInt("sampleRows", options.sampleRows, DEFAULT_SAMPLE_ROWS);
  const dialect = await dialectOf(path, options);
  const delimiter = dialect.code;
  const header = await readCsvHeader(path, { delimiter: dialect.delimiter });
  const sample = await sampleCsv(path, header, delimiter, sampleRows);
  const schema = csvSchema(header.names, sample, options.types ?? {}, path);
  let position = 0;
  return {
    schema,
    format: "csv",
    bytes: header.bytes,
    position: () => position,
    dialect: { delimiter: dialect.delimiter, sniffed: dialect.sniffed, quoted: dialect.quoted },
    batches: () =>
      csvBatches(path, schema, header.dataStart, header.bytes, {
        delimiter,
        batchRows,
        where: (r) => `data row ${r}`,
        why: typeOrigin(
          options.types,
          ` (the type was inferred from the first ${sampleRows} rows)`,
        ),
        onPosition: (at) => position = at,
      }),
    close: () => Promise.resolve(),
  };
}

/**
 * Reads the rows of one byte range of a CSV file, as cut by {@link csvRowBoundaries},
 * with a schema fixed beforehand (so every range of a job agrees).
 *
 * @param path The CSV file.
 * @param schema The schema of the whole file (one field per CSV column, in order).
 * @param range Byte range `[start, end)`; `start` must be a row boundary.
 * @param options Batch size and delimiter (given: the file's head is not read to tell
 * it); `origin`, to name rows in errors as a read of the whole file does (the range's
 * first data row, and how the schema was made); `file`, the file already open, to read
 * the range from (the caller closes it) instead of opening `path`; or `bytes`, the
 * range's bytes already read (`path` then only names the file in errors).
 * @returns The range's rows, in batches of at most `batchRows`.
 * @throws {IoError} PARSE_FAILED, READ_FAILED or SCHEMA_MISMATCH while iterating.
 */
export function readCsvRange(
  path: string,
  schema: Schema,
  range: { start: number; end: number },
  options: CsvOptions & {
    batchRows?: number;
    origin?: CsvRangeOrigin;
    file?: Deno.FsFile;
    bytes?: Uint8Array;
  } = {},
): AsyncIterable<Batch> {
  const given = options.delimiter === undefined ? null : delimiterCode(options.delimiter);
  const batchRows = positiveInt("batchRows", options.batchRows, DEFAULT_BATCH_ROWS);
  const origin = options.origin;
  return (async function* () {
    // Every range of a job reads with the same delimiter: the job's (told once from
    // the file's start), else told from the file's start again here.
    const delimiter = given ?? (await dialectOf(path, options)).code;
    yield* csvBatches(path, schema, range.start, range.end, {
      delimiter,
      batchRows,
      file: options.file,
      bytes: options.bytes,
      ...(origin
        ? {
          where: (r: number) => `data row ${origin.firstRow + r}`,
          why: typeOrigin(
            origin.types,
            ` (the type was inferred from the first ${
              origin.sampleRows ?? DEFAULT_SAMPLE_ROWS
            } rows)`,
          ),
        }
        : {
          where: (r: number) => `row ${r} of the byte range starting at ${range.start}`,
          why: () => "",
        }),
    });
  })();
}

/** Where a range read by {@link readCsvRange} sits in a read of the whole file. */
export interface CsvRangeOrigin {
  /** Data rows before the range (0-based index of its first). */
  firstRow: number;
  /** The types the schema was given, as {@link openCsv} took them. */
  types?: Record<string, unknown>;
  /** Rows the schema was inferred from (default as {@link openCsv}). */
  sampleRows?: number;
}

const K_STRING = 0;
const K_INT = 1;
const K_FLOAT = 2;
const K_BOOL = 3;
const K_DATE = 4;
const K_TS = 5;
const K_TIME = 6;
const K_DURATION = 7;
const K_DECIMAL = 8;
const K_JSON = 9;

function kindOf(f: Field): number {
  switch (f.type) {
    case "string":
      return K_STRING;
    case "time":
      return K_TIME;
    case "duration":
      return K_DURATION;
    case "decimal":
      return K_DECIMAL;
    case "json":
      return K_JSON;
    case "int64":
      return K_INT;
    case "float64":
    case "float32":
    case "float16":
      return K_FLOAT;
    case "bool":
      return K_BOOL;
    case "date":
      return K_DATE;
    case "timestamp":
      return K_TS;
  }
}

interface BatchOptions {
  delimiter: number;
  batchRows: number;
  where: (row: number) => string;
  /** Why a column has its type, for SCHEMA_MISMATCH messages (empty, or starting with a space). */
  why: (column: string) => string;
  /** Told the file offset read up to, as reading advances. */
  onPosition?: (offset: number) => void;
  /** The file already open (left open); else `path` is opened and closed. */
  file?: Deno.FsFile;
  /** Bytes `[start, end)` already read (nothing is opened then). */
  bytes?: Uint8Array;
}

/** Streams typed batches of bytes `[start, end)` of a CSV file. */
async function* csvBatches(
  path: string,
  schema: Schema,
  start: number,
  end: number,
  options: BatchOptions,
): AsyncGenerator<Batch> {
  const ncols = schema.length;
  if (ncols === 0) return;
  // plainRecord's per-column inputs, each of one fixed shape whichever tier built it
  // (an array from `map` has the elements kind of whichever tier ran `map`: a Worker's
  // optimized plainRecord then met a new kind on a later chunk and was thrown away).
  const kinds = new Int32Array(ncols);
  const perSecond = new Float64Array(ncols);
  const units: TimeUnit[] = [];
  const shared: SharedTexts[] = [];
  for (let c = 0; c < ncols; c++) {
    const f = schema[c]!;
    const unit = f.unit ?? "us";
    kinds[c] = kindOf(f);
    units.push(unit);
    perSecond[c] = TICKS_PER_SECOND[unit];
    // Each string column's short texts, one string each (see plainRecord).
    shared.push(new SharedTexts(kinds[c] === K_STRING ? options.batchRows : 0));
  }
  const parts = timestampParts();
  // A delimiter among a timestamp's own characters could end its field early.
  const tsAt19 = !"0123456789-: T".includes(String.fromCharCode(options.delimiter));
  const given = options.bytes;
  const file = given ? null : options.file ?? await openForRead(path);
  try {
    let b = new BatchBuilder(schema, options.batchRows, { growable: true });
    let cols = columnsOf(b);
    let row = 0;
    let dataRows = 0;
    // Bytes already read (a freeze Worker's chunk) are read as bytes while their records
    // are plain and of the kinds plainBytes reads, before any is decoded to text: the
    // decoding and a string's character reads cost about as much as the rest of the
    // parse. The first other record and the rest are decoded and read as text below.
    const at = { pos: 0 };
    if (given && kinds.every((k) => k === K_INT || k === K_TS || k === K_STRING)) {
      for (;;) {
        const past = plainByteRows(given, at, options.delimiter, kinds, b, cols, row, {
          limit: options.batchRows,
          perSecond,
          tsAt19,
          shared,
        });
        dataRows += past - row;
        row = past;
        if (row < options.batchRows) break; // a record of another kind, or the end
        b.length = row;
        yield withSharedCodes(b.finish(), shared, kinds);
        b = new BatchBuilder(schema, options.batchRows, { growable: true });
        cols = columnsOf(b);
        row = 0;
      }
    }
    const skip = at.pos;
    const chunks = file === null
      ? bytesOnce(skip === 0 ? given! : given!.subarray(skip))
      : tracked(readRange(file, path, start, end), start, options.onPosition);
    const rr = new CsvRecordReader(chunks, {
      delimiter: options.delimiter,
      capacity: ncols + 1,
      path,
      start: start + skip,
      where: (r) => options.where(r + 1),
    });
    // The records read as bytes count, as the text's own would (errors name the row).
    rr.records = dataRows;
    const mismatch = (c: number, cell: string): IoError => {
      const f = schema[c] as Field;
      const shown = cell.length > 40 ? `${cell.slice(0, 40)}…` : cell;
      return new IoError(
        "SCHEMA_MISMATCH",
        `Cannot read '${shown}' as ${f.type}${
          f.type === "timestamp" ? ` (${f.unit ?? "us"})` : ""
        } in column '${f.name}' at ${options.where(dataRows + 1)}${options.why(f.name)}`,
        { path, column: f.name },
      );
    };
    for (;;) {
      b.reserve(row);
      // Most records are plain: read straight into the row, in one pass over the text.
      const past = plainRecord(
        rr.text,
        rr.pos,
        options.delimiter,
        kinds,
        cols,
        row,
        units,
        perSecond,
        parts,
        tsAt19,
        shared,
      );
      if (past >= 0) {
        rr.pos = past;
        rr.records++;
      } else {
        const st = rr.next();
        if (st === NEED_MORE) {
          await rr.fill();
          continue;
        }
        if (st === END) break;
        if (rr.count !== ncols) {
          if (ncols > 1 && rr.blank()) continue;
          throw fieldCountError(path, ncols, rr.count, options.where(dataRows + 1));
        }
        const text = rr.text;
        const starts = rr.starts;
        const ends = rr.ends;
        const flags = rr.flags;
        for (let c = 0; c < ncols; c++) {
          const col = cols[c]!;
          let s = starts[c]!;
          let e = ends[c]!;
          const f = flags[c]!;
          if (f === 0 && s === e) {
            col.setNull(row);
            continue;
          }
          let t = text;
          if (f === 2) {
            t = text.slice(s, e).replaceAll('""', '"');
            s = 0;
            e = t.length;
          }
          switch (kinds[c]) {
            case K_STRING:
              col.str[row] = f === 2 ? t : text.slice(s, e);
              break;
            case K_INT: {
              const x = scanInt(t, s, e);
              if (x === Infinity) {
                const v = bigInt64Text(t.slice(s, e));
                if (v === null) throw mismatch(c, t.slice(s, e));
                col.big[row] = v;
              } else if (x === x) {
                storeInt64(col.big, col.i32, row, x);
              } else {
                throw mismatch(c, t.slice(s, e));
              }
              break;
            }
            case K_FLOAT: {
              const x = scanFloat(t, s, e);
              if (x !== x && !isNaNText(t, s, e)) throw mismatch(c, t.slice(s, e));
              if (col.type === "float64") col.f64[row] = x;
              else col.setFloat(row, x);
              break;
            }
            case K_BOOL: {
              const x = scanBool(t, s, e);
              if (x < 0) throw mismatch(c, t.slice(s, e));
              col.u8[row] = x;
              break;
            }
            case K_DATE: {
              const x = scanDate(t, s, e);
              if (x !== x) throw mismatch(c, t.slice(s, e));
              storeInt64(col.big, col.i32, row, x);
              break;
            }
            case K_TS: {
              if (!scanTimestamp(t, s, e, parts)) throw mismatch(c, t.slice(s, e));
              const v = timestampTicks(parts, units[c]!);
              if (v === null) throw mismatch(c, t.slice(s, e));
              if (typeof v === "number") storeInt64(col.big, col.i32, row, v);
              else col.big[row] = v;
              break;
            }
            default: {
              const cell = t.slice(s, e);
              if (!readTypedCell(col, row, cell, schema[c]!)) throw mismatch(c, cell);
            }
          }
        }
      }
      row++;
      dataRows++;
      if (row === options.batchRows) {
        b.length = row;
        yield withSharedCodes(b.finish(), shared, kinds);
        b = new BatchBuilder(schema, options.batchRows, { growable: true });
        cols = columnsOf(b);
        row = 0;
      }
    }
    if (row > 0) {
      b.length = row;
      yield withSharedCodes(b.finish(), shared, kinds);
    }
  } finally {
    if (file !== null && file !== options.file) file.close();
  }
}

/**
 * The short texts of one string column that {@link plainRecord} shares between rows:
 * each distinct one made a string once (its rows share it, so the predictors' maps
 * hash it once, not once a row), numbered in order of first appearance, and each row's
 * number (its code) recorded, so the batch's values carry their codes
 * (`format/coded_strings.ts`): the keyed predictors number their keys from the codes,
 * with no hashing at all. A row not read by `plainRecord`, or whose text is not
 * shared, keeps a stale code, which a reader of the codes refuses (its value is not
 * that code's entry) and reads by its text.
 */
class SharedTexts {
  /**
   * The codes of the packed texts (see plainRecord), in a table of open addressing:
   * `keys[h]` a packed text (0 for none: a packed text's low bits hold its length,
   * at least 1) and `slots[h]` its code. A `Map` hashed each row's key in a builtin.
   * Room for 512 texts before it grows, so that growing, code a Worker's warm-up rows
   * seldom reach, is rare.
   */
  #keys = new Float64Array(1024);
  #slots = new Int32Array(1024);
  #shift = 22;
  /** The texts by code: distinct, as their packed forms are. */
  readonly dictionary: string[] = noStrings();
  /** Code of each row of the batch being read. */
  codes: Uint32Array;

  constructor(rows: number) {
    this.codes = new Uint32Array(Math.min(rows, 1 << 20));
  }

  /** The code of a packed text; -1 when it has none. */
  find(key: number): number {
    const keys = this.#keys;
    const mask = keys.length - 1;
    for (let h = packedHash(key, this.#shift);; h = (h + 1) & mask) {
      const k = keys[h]!;
      if (k === key) return this.#slots[h]!;
      if (k === 0) return -1;
    }
  }

  /** Gives a packed text (with no code yet) the next code, for `value`; returns it. */
  add(key: number, value: string): number {
    const code = this.dictionary.length;
    if (2 * (code + 1) > this.#keys.length) this.#grow();
    this.#put(key, code);
    this.dictionary.push(value);
    return code;
  }

  #put(key: number, code: number): void {
    const keys = this.#keys;
    const mask = keys.length - 1;
    let h = packedHash(key, this.#shift);
    while (keys[h] !== 0) h = (h + 1) & mask;
    keys[h] = key;
    this.#slots[h] = code;
  }

  #grow(): void {
    const keys = this.#keys;
    const slots = this.#slots;
    this.#keys = new Float64Array(2 * keys.length);
    this.#slots = new Int32Array(2 * keys.length);
    this.#shift--;
    for (let h = 0; h < keys.length; h++) if (keys[h] !== 0) this.#put(keys[h]!, slots[h]!);
  }

  /** Records `code` at `row`, growing the codes as the batch grows. */
  set(row: number, code: number): void {
    if (row >= this.codes.length) {
      const grown = new Uint32Array(Math.max(2 * this.codes.length, row + 1, 1024));
      grown.set(this.codes);
      this.codes = grown;
    }
    this.codes[row] = code;
  }
}

/**
 * Where a packed text (see plainRecord) starts its search in a {@link SharedTexts}
 * table of `2 ** (32 - shift)` slots: the top bits of a multiplicative hash of its two
 * halves.
 */
function packedHash(key: number, shift: number): number {
  return Math.imul((key | 0) ^ ((key / 4294967296) | 0), -1640531535) >>> shift;
}

/**
 * An empty array of strings born with the elements kind strings give it (`[]` starts
 * as one of small integers and changes kind at its first string: code optimized on
 * grown dictionaries then meets a fresh one of the other kind).
 */
function noStrings(): string[] {
  const strings = [""];
  strings.pop();
  return strings;
}

/** A batch's string columns with the codes {@link SharedTexts} recorded; fresh codes for the next batch. */
function withSharedCodes(
  batch: Batch,
  shared: readonly SharedTexts[],
  kinds: Int32Array,
): Batch {
  for (let c = 0; c < kinds.length; c++) {
    const column = batch.columns[c]!;
    const texts = shared[c]!;
    if (kinds[c] !== K_STRING || column.type !== "string" || texts.dictionary.length === 0) {
      continue;
    }
    const rows = column.values.length;
    withCodes(column.values, texts.codes.subarray(0, rows), texts.dictionary);
    texts.codes = new Uint32Array(texts.codes.length);
  }
  return batch;
}

/** Longest text {@link plainRecord} shares between rows: 7 ASCII characters and the length fit a double's 53 bits. */
const SHARED_TEXT_LENGTH = 7;
/** Most distinct texts of a column shared within one read (beyond, each row has its own). */
const MAX_SHARED_TEXTS = 65_536;

/**
 * Reads the record at `i` of `text` straight into row `row` of `cols`, in one pass,
 * when it is plain: it ends at an LF within `text`, has one field per column, none
 * quoted and no CR, and every cell reads as its column's type. Returns the index past
 * its LF, or -1 for any other record, which the caller then splits with the record
 * reader and reads cell by cell (that path reports what is wrong, and writes every
 * cell of the row again over what this one may have written). An empty field is null,
 * as there.
 */
function plainRecord(
  text: string,
  i: number,
  d: number,
  kinds: Int32Array,
  cols: readonly ColumnBuilder[],
  row: number,
  units: readonly TimeUnit[],
  perSecond: Float64Array,
  parts: TimestampParts,
  tsAt19: boolean,
  shared: readonly SharedTexts[],
): number {
  const n = text.length;
  const last = kinds.length - 1;
  for (let c = 0; c <= last; c++) {
    const end = c === last ? LF_BYTE : d;
    const col = cols[c]!;
    if (i >= n) return -1;
    let ch = text.charCodeAt(i);
    if (ch === end) {
      col.setNull(row);
      i++;
      continue;
    }
    const kind = kinds[c]!;
    if (kind === K_INT) {
      // -?(0|[1-9][0-9]*), at most 15 digits: scanInt's numbers, read as they are found.
      let j = i;
      const neg = ch === 45;
      if (neg) {
        if (++j >= n) return -1;
        ch = text.charCodeAt(j);
      }
      let x = ch - 48;
      if (x < 0 || x > 9) return -1;
      const first = j;
      for (j++; j < n; j++) {
        const digit = text.charCodeAt(j) - 48;
        if (digit < 0 || digit > 9) break;
        x = x * 10 + digit;
      }
      if (j >= n || text.charCodeAt(j) !== end || j - first > 15) return -1;
      if (ch === 48 && (neg || j - first > 1)) return -1; // -0, or a leading zero
      storeInt64(col.big, col.i32, row, neg ? -x : x);
      i = j + 1;
      continue;
    }
    if (ch === QUOTE_BYTE) return -1;
    if (kind === K_STRING) {
      // A short ASCII text is packed into a number as its end is found, and each
      // distinct one made a string once: its rows share it, so the predictors' maps
      // hash it once, not once a row.
      let key = 0;
      let j = i;
      for (; j < n; j++) {
        ch = text.charCodeAt(j);
        if (ch === d || ch === LF_BYTE || ch === CR_BYTE) break;
        key = ch < 128 ? key * 128 + ch : Infinity;
      }
      if (j >= n || ch !== end) return -1;
      const length = j - i;
      if (length > SHARED_TEXT_LENGTH || key === Infinity) {
        col.str[row] = text.slice(i, j);
      } else {
        const texts = shared[c]!;
        key = key * 8 + length;
        const code = texts.find(key);
        if (code >= 0) {
          col.str[row] = texts.dictionary[code]!;
          texts.set(row, code);
        } else {
          const value = text.slice(i, j);
          if (texts.dictionary.length < MAX_SHARED_TEXTS) texts.set(row, texts.add(key, value));
          col.str[row] = value;
        }
      }
      i = j + 1;
      continue;
    }
    // The field's end: right after a timestamp's usual 19 characters (when no delimiter
    // can hide among them: scanTimestamp checks each), else found.
    let j = i + 19;
    if (kind !== K_TS || !tsAt19 || j >= n || text.charCodeAt(j) !== end) {
      for (j = i; j < n; j++) {
        ch = text.charCodeAt(j);
        if (ch === d || ch === LF_BYTE || ch === CR_BYTE) break;
      }
      if (j >= n || ch !== end) return -1;
    }
    switch (kind) {
      case K_FLOAT: {
        const x = scanFloat(text, i, j);
        if (x !== x && !isNaNText(text, i, j)) return -1;
        if (col.type === "float64") col.f64[row] = x;
        else col.setFloat(row, x);
        break;
      }
      case K_BOOL: {
        const x = scanBool(text, i, j);
        if (x < 0) return -1;
        col.u8[row] = x;
        break;
      }
      case K_DATE: {
        const x = scanDate(text, i, j);
        if (x !== x) return -1;
        storeInt64(col.big, col.i32, row, x);
        break;
      }
      case K_TS: {
        if (j - i === 19) {
          // Whole seconds: ticks are seconds × the unit's, while that stays safe (as
          // timestampTicks has them).
          const seconds = scanSeconds19(text, i);
          const per = perSecond[c]!;
          if (seconds === seconds && Math.abs(seconds) * per < 9e15) {
            storeInt64(col.big, col.i32, row, seconds * per);
            break;
          }
        }
        if (!scanTimestamp(text, i, j, parts)) return -1;
        const v = timestampTicks(parts, units[c]!);
        if (v === null) return -1;
        if (typeof v === "number") storeInt64(col.big, col.i32, row, v);
        else col.big[row] = v;
        break;
      }
      default:
        return -1; // time, duration, decimal, JSON: the record reader's path
    }
    i = j + 1;
  }
  return i;
}

/**
 * Reads records of `bytes` from `at.pos` with {@link plainBytes} into rows `row`, `row
 * + 1`, ... of `b` (`cols` its columns) until row `limit`, a record of another kind or
 * the bytes' end, moving `at.pos` past the last one read.
 *
 * The loop over a chunk's rows lives here rather than in `csvBatches`: V8 optimizes the
 * function that holds a hot loop, and `csvBatches` (an async generator, with the whole
 * text path) was compiled four or five times per Worker, ~120 ms in all in a max_speed
 * freeze of flights-3m (`--trace-opt`; this function's compiles take ~10 ms), in V8's
 * background threads, on the cores that parse. `csvBatches` now runs once per chunk
 * and is left unoptimized.
 *
 * @returns The row after the last one read.
 */
function plainByteRows(
  bytes: Uint8Array,
  at: { pos: number },
  delimiter: number,
  kinds: Int32Array,
  b: BatchBuilder,
  cols: readonly ColumnBuilder[],
  row: number,
  options: {
    limit: number;
    perSecond: Float64Array;
    tsAt19: boolean;
    shared: readonly SharedTexts[];
  },
): number {
  const { limit, perSecond, tsAt19, shared } = options;
  for (; row < limit; row++) {
    b.reserve(row);
    const past = plainBytes(bytes, at.pos, delimiter, kinds, cols, row, perSecond, tsAt19, shared);
    if (past < 0) break;
    at.pos = past;
  }
  return row;
}

/**
 * {@link plainRecord} on bytes, for the records whose every field is an int, a
 * timestamp of 19 characters (`YYYY-MM-DD HH:MM:SS`) or a text of at most
 * {@link SHARED_TEXT_LENGTH} ASCII characters among the shared ones (or empty: null):
 * reads the record at `i` of `bytes` into row `row`, as plainRecord reads its text, and
 * returns the index past its LF; -1 for any other record (its cells may be written:
 * the text's read writes them again).
 */
function plainBytes(
  bytes: Uint8Array,
  i: number,
  d: number,
  kinds: Int32Array,
  cols: readonly ColumnBuilder[],
  row: number,
  perSecond: Float64Array,
  tsAt19: boolean,
  shared: readonly SharedTexts[],
): number {
  const n = bytes.length;
  const last = kinds.length - 1;
  for (let c = 0; c <= last; c++) {
    const end = c === last ? LF_BYTE : d;
    const col = cols[c]!;
    if (i >= n) return -1;
    let ch = bytes[i]!;
    if (ch === end) {
      col.setNull(row);
      i++;
      continue;
    }
    const kind = kinds[c]!;
    if (kind === K_INT) {
      let j = i;
      const neg = ch === 45;
      if (neg) {
        if (++j >= n) return -1;
        ch = bytes[j]!;
      }
      let x = ch - 48;
      if (x < 0 || x > 9) return -1;
      const first = j;
      for (j++; j < n; j++) {
        const digit = bytes[j]! - 48;
        if (digit < 0 || digit > 9) break;
        x = x * 10 + digit;
      }
      if (j >= n || bytes[j] !== end || j - first > 15) return -1;
      if (ch === 48 && (neg || j - first > 1)) return -1; // -0, or a leading zero
      storeInt64(col.big, col.i32, row, neg ? -x : x);
      i = j + 1;
      continue;
    }
    if (ch === QUOTE_BYTE) return -1;
    if (kind === K_STRING) {
      let key = 0;
      let j = i;
      for (; j < n; j++) {
        ch = bytes[j]!;
        if (ch === d || ch === LF_BYTE || ch === CR_BYTE) break;
        if (ch >= 128) return -1;
        key = key * 128 + ch;
      }
      if (j >= n || ch !== end || j - i > SHARED_TEXT_LENGTH) return -1;
      const texts = shared[c]!;
      key = key * 8 + (j - i);
      const code = texts.find(key);
      if (code >= 0) {
        col.str[row] = texts.dictionary[code]!;
        texts.set(row, code);
      } else {
        if (texts.dictionary.length >= MAX_SHARED_TEXTS) return -1;
        const value = String.fromCharCode(...bytes.subarray(i, j));
        texts.set(row, texts.add(key, value));
        col.str[row] = value;
      }
      i = j + 1;
      continue;
    }
    // A timestamp (the only other kind read here) of whole seconds.
    const j = i + 19;
    if (!tsAt19 || j >= n || bytes[j] !== end) return -1;
    const seconds = scanSeconds19Bytes(bytes, i);
    const per = perSecond[c]!;
    if (seconds !== seconds || Math.abs(seconds) * per >= 9e15) return -1;
    storeInt64(col.big, col.i32, row, seconds * per);
    i = j + 1;
  }
  return i;
}

/**
 * A batch builder's columns in an array of one fixed elements kind (see csvBatches'
 * inputs of plainRecord): `BatchBuilder` makes its own with `map`.
 */
function columnsOf(b: BatchBuilder): ColumnBuilder[] {
  const cols: ColumnBuilder[] = [];
  for (const col of b.columns) cols.push(col);
  return cols;
}

/** Bytes already read, as the one chunk of a read. */
async function* bytesOnce(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  if (bytes.length > 0) yield bytes;
}

/**
 * Finds the byte offsets that cut a CSV file into ranges of `everyRows` data rows,
 * quote-aware, without decoding or building columns. Blank lines are not rows (in a
 * file of two or more columns), exactly as the reader skips them.
 *
 * @param path The CSV file.
 * @param everyRows Rows per range.
 * @param options Dialect.
 * @returns The header names, the offsets and the row count.
 * @throws {IoError} READ_FAILED, PARSE_FAILED (header) or INVALID_OPTION.
 *
 * @example Cut a file into ranges of two rows
 * ```ts ignore
 * const { offsets } = await csvRowBoundaries("data.csv", 2);
 * for (let i = 0; i + 1 < offsets.length; i++) {
 *   for await (const batch of readCsvRange("data.csv", schema, { start: offsets[i], end: offsets[i + 1] })) {
 *     // ...
 *   }
 * }
 * ```
 */
export async function csvRowBoundaries(
  path: string,
  everyRows: number,
  options: CsvOptions = {},
): Promise<CsvBoundaries> {
  const every = positiveInt("everyRows", everyRows, 1);
  const dialect = await dialectOf(path, options);
  const header = await readCsvHeader(path, { delimiter: dialect.delimiter });
  const { dataStart, bytes } = header;
  const offsets = [dataStart];
  let rows = 0;
  for await (const range of scanRanges(path, header, dialect.code, every)) {
    offsets.push(range.end);
    rows += range.rows;
  }
  return { names: header.names, dataStart, offsets, rows, bytes };
}

/** One range of {@link csvRowRanges}. */
export interface CsvRowRange {
  /** First byte (a row's start). */
  start: number;
  /** Byte just past the range (the next range's start, or the file's size). */
  end: number;
  /** Data rows in it: `everyRows`, the last range possibly fewer. */
  rows: number;
}

/**
 * The ranges of {@link csvRowBoundaries}, each given as soon as the scan has passed
 * it, so a reader can start on the first ranges while the rest of the file is cut.
 *
 * @param path The CSV file.
 * @param everyRows Rows per range.
 * @param options Dialect.
 * @returns The file's header and its ranges, in order (none for a file without rows).
 * @throws {IoError} READ_FAILED, PARSE_FAILED (header) or INVALID_OPTION.
 */
export async function csvRowRanges(
  path: string,
  everyRows: number,
  options: CsvOptions = {},
): Promise<{ header: CsvHeader; ranges: AsyncGenerator<CsvRowRange> }> {
  const every = positiveInt("everyRows", everyRows, 1);
  const dialect = await dialectOf(path, options);
  const header = await readCsvHeader(path, { delimiter: dialect.delimiter });
  return { header, ranges: scanRanges(path, header, dialect.code, every) };
}

/**
 * Scans a CSV file's data for ranges of `every` records (quote-aware; blank lines are
 * not rows in a file of two or more columns, exactly as the reader skips them). A
 * range is given once the first record after it is found, or at the end of the file,
 * where the last range also takes whatever trails its last record.
 */
async function* scanRanges(
  path: string,
  header: CsvHeader,
  delimiter: number,
  every: number,
): AsyncGenerator<CsvRowRange> {
  const { dataStart, bytes } = header;
  const cut: RangeCut = {
    every,
    oneColumn: header.names.length === 1,
    offsets: [dataStart],
    rows: 0,
    inRange: 0,
    paused: false,
  };
  // Ranges given so far; the last boundary found waits for a record after it.
  let given = 0;
  const ready = function* (): Generator<CsvRowRange> {
    const { offsets } = cut;
    // offsets[k + 1] is final once a record past it was counted (inRange > 0 or more).
    const complete = cut.inRange > 0 ? offsets.length - 1 : offsets.length - 2;
    for (; given < complete; given++) {
      yield { start: offsets[given]!, end: offsets[given + 1]!, rows: every };
    }
  };
  const file = await openForRead(path);
  try {
    const data = await CutBytes.open(file, path, dataStart, bytes);
    const scanner = new CsvByteScanner(delimiter);
    let pos = 0;
    for (;;) {
      const buf = data.bytes;
      if (pos >= buf.length && data.final) break;
      // Records without a quote or a CR end at their LF: one pass over the bytes finds
      // them all. The scanner (several times slower) takes any record holding either.
      const n = buf.length;
      pos = data.area
        ? simdRecords(data.area, pos, data.base, cut)
        : plainRecords(buf, pos, data.base, cut);
      if (cut.paused) {
        // A range was just completed: give it before scanning on.
        cut.paused = false;
        yield* ready();
        continue;
      }
      if (pos >= n && data.final) break;
      const end = pos >= n ? -1 : scanner.recordEnd(buf, pos, data.final);
      if (end < 0) {
        yield* ready();
        await data.more(pos);
        pos = 0;
        scanner.reset();
        continue;
      }
      if (cut.oneColumn || !blankRecord(buf, pos, end)) countRecord(cut, data.base + end);
      pos = end;
    }
  } finally {
    file.close();
  }
  yield* ready();
  // The last range runs to the end of the file: past its last record, or in place
  // of the boundary after a full last range.
  const { offsets } = cut;
  if (cut.inRange > 0) {
    yield { start: offsets[given]!, end: bytes, rows: cut.inRange };
  } else if (offsets.length > 1) {
    yield { start: offsets[given]!, end: bytes, rows: every };
  }
}

/**
 * The bytes {@link scanRanges} is at: the file's data from `base`, read
 * {@link SCAN_CHUNK} at a time after what is left of the last read. They are held in
 * a Wasm memory (`area`) where the SIMD count runs (`_csv_cut_simd.ts`), else in
 * fresh buffers.
 */
class CutBytes {
  /** The bytes read and not yet passed. */
  bytes: Uint8Array = new Uint8Array(0);
  /** File offset of `bytes[0]`. */
  base: number;
  /** Whether the file's data is all in `bytes`. */
  final: boolean;
  #at: number;

  private constructor(
    readonly area: CutArea | null,
    readonly file: Deno.FsFile,
    readonly path: string,
    start: number,
    readonly end: number,
  ) {
    this.base = start;
    this.#at = start;
    this.final = start >= end;
    area?.setLength(0);
  }

  /** The data `[start, end)` of an open file, none read yet. */
  static async open(
    file: Deno.FsFile,
    path: string,
    start: number,
    end: number,
  ): Promise<CutBytes> {
    try {
      await file.seek(start, Deno.SeekMode.Start);
    } catch (cause) {
      throw readFailed(path, cause);
    }
    // Room for a read and what the last one left (a record cut short, most often):
    // growing a Wasm memory detaches its buffer, and a thread's first detach deoptimizes
    // its typed-array code (V8's ArrayBufferDetaching protector).
    return new CutBytes(CutArea.open(2 * SCAN_CHUNK), file, path, start, end);
  }

  /** Reads on: keeps the bytes from `pos` and appends the next read (`final` set at the end). */
  async more(pos: number): Promise<void> {
    const rest = this.bytes.length - pos;
    const want = Math.min(SCAN_CHUNK, this.end - this.#at);
    let room: Uint8Array;
    if (this.area) {
      this.area.room.copyWithin(0, pos, this.bytes.length);
      this.area.reserve(rest + want);
      room = this.area.room;
    } else {
      room = new Uint8Array(rest + want);
      room.set(this.bytes.subarray(pos));
    }
    let filled = rest;
    while (filled < rest + want) {
      let n: number | null;
      try {
        n = await this.file.read(room.subarray(filled, rest + want));
      } catch (cause) {
        throw readFailed(this.path, cause);
      }
      if (n === null) break;
      filled += n;
    }
    this.#at += filled - rest;
    this.base += pos;
    if (filled < rest + want || this.#at >= this.end) this.final = true;
    if (this.area) {
      this.area.setLength(filled);
      this.bytes = this.area.bytes;
    } else {
      this.bytes = room.subarray(0, filled);
    }
  }
}

/**
 * {@link plainRecords} by the Wasm SIMD count (`CutArea.scan`), asked at most for the
 * records up to the next event of the cut: the record that completes a range, or the
 * first one after a range's end (`paused`). Every range of one row (`every` 1) takes
 * its records one by one.
 */
function simdRecords(area: CutArea, pos: number, base: number, cut: RangeCut): number {
  for (;;) {
    const need = cut.every === 1 || (cut.inRange === 0 && cut.offsets.length > 1)
      ? 1
      : cut.every - cut.inRange;
    const found = area.scan(pos, need, cut.oneColumn);
    if (found.end < 0) {
      // A quote, a CR or the end of the bytes: fewer than `need`, so no range ends.
      cut.rows += found.records;
      cut.inRange += found.records;
      return found.lastLf < 0 ? pos : found.lastLf + 1;
    }
    cut.rows += need - 1;
    cut.inRange += need - 1;
    countRecord(cut, base + found.end);
    if (cut.inRange === 1 && cut.offsets.length > 1) {
      cut.paused = true;
      return found.end;
    }
    pos = found.end;
  }
}

/** Where {@link csvRowBoundaries} is in its count. */
interface RangeCut {
  readonly every: number;
  readonly oneColumn: boolean;
  readonly offsets: number[];
  rows: number;
  inRange: number;
  /** Set by {@link plainRecords} when it stops at the first record after a boundary. */
  paused: boolean;
}

/** Counts a data record ending at byte `end` of the file. */
function countRecord(cut: RangeCut, end: number): void {
  cut.rows++;
  if (++cut.inRange === cut.every) {
    cut.offsets.push(end);
    cut.inRange = 0;
  }
}

/**
 * Counts the records from `pos` that end at an LF with no quote or CR before it,
 * and returns where the first other one starts (or the buffer's end), or where the
 * record after the first one of a range starts (`paused` set), so the range before it
 * can be given. `base` is the file offset of `buf[0]`. Where WebAssembly SIMD runs,
 * {@link simdRecords} does this instead.
 */
function plainRecords(buf: Uint8Array, pos: number, base: number, cut: RangeCut): number {
  const n = buf.length;
  let start = pos;
  for (let i = pos; i < n; i++) {
    const c = buf[i]!;
    if (c === LF_BYTE) {
      // An empty line is no record, unless the file has one column (an empty value).
      if (cut.oneColumn || i > start) {
        countRecord(cut, base + i + 1);
        if (cut.inRange === 1 && cut.offsets.length > 1) {
          // The first record after a boundary completes the range before it.
          cut.paused = true;
          return i + 1;
        }
      }
      start = i + 1;
    } else if (c === QUOTE_BYTE || c === CR_BYTE) break;
  }
  return start;
}
