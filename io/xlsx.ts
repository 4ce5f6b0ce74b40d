/**
 * The xlsx writer behind `output.ts`: an Office Open XML workbook that Excel,
 * LibreOffice and Numbers open, streamed batch by batch into an open file.
 *
 * Why our own writer: xlsx is a zip of a few XML parts; a sheet is one long XML
 * document we can produce row by row. Packages that write xlsx (exceljs,
 * SheetJS) keep the workbook, or at least shared strings, in memory, which
 * breaks thaw's bounded-memory promise on big outputs; this file is ~500 lines
 * on `node:zlib` alone. (`exceljs` reads our output back in the tests.) `node:zlib` is
 * imported when a workbook is written, not with this module: `thaw` imports this file
 * for its row limit, and loading `node:zlib` costs a quick command ~20 ms of CPU.
 *
 * Zip layout: entries with a data descriptor (sizes after the data, so a sheet
 * streams); a sheet is compressed in 1 MiB pieces, each an independent raw
 * deflate ended by a sync flush, the last one finished — together one valid
 * deflate stream. No zip64: a part past 4 GiB is refused (`WRITE_FAILED`).
 *
 * Cells: a header row of column names (bold, frozen); int64 as numbers when
 * exact in a double (|v| <= 2^53), else as text; float64 as numbers, NaN and
 * ±Infinity as the text `NaN`, `Infinity`, `-Infinity`; bool as booleans;
 * strings inline (no shared-strings table, so nothing accumulates); dates and
 * timestamps as date serials (days since 1899-12-30, UTC) formatted
 * `yyyy-mm-dd` / `yyyy-mm-dd hh:mm:ss(.000)`, or as ISO text outside Excel's
 * calendar (before 1900-03-01 or after 9999); decimals as numbers when the double
 * Excel keeps is exactly the decimal, else as their exact text; times, durations and
 * JSON values as text (`01:02:03.5`, `PT1H`, `{"a":1}`). Nulls are empty cells.
 *
 * Limits, Excel's: 1,048,576 rows per sheet (header included) and 16,384
 * columns; a cell holds at most 32,767 characters. Past the row limit the
 * writer throws `INVALID_OPTION` unless `splitSheets`, which starts `Sheet2`,
 * `Sheet3`, ... each with the header row.
 *
 * @module
 */
import { type Batch, cellValue, type Column, type Field, type Schema } from "../format/column.ts";
import { cellText } from "./cell_text.ts";
import { type ByteWriter, writeAll } from "./_file.ts";
import { formatDecimal, parseDecimal } from "../format/decimal_value.ts";
import { formatDate, formatDuration, formatTime, TimestampFormatter } from "./_format.ts";
import { TICKS_PER_SECOND } from "./_parse.ts";
import { IoError } from "./errors.ts";

type Zlib = typeof import("node:zlib");

/** Data rows one sheet holds (Excel's 1,048,576 rows, less the header row). */
export const XLSX_MAX_DATA_ROWS = 1_048_575;

/** Columns one sheet holds. */
export const XLSX_MAX_COLUMNS = 16_384;

/** Characters one cell holds. */
export const XLSX_MAX_CELL_CHARS = 32_767;

/** Options of {@link writeXlsx}. */
export interface XlsxOptions {
  /** Start a new sheet every `XLSX_MAX_DATA_ROWS` rows instead of refusing. */
  splitSheets?: boolean;
  /** Data rows per sheet (default and maximum `XLSX_MAX_DATA_ROWS`; smaller in tests). */
  sheetRows?: number;
}

const PIECE_BYTES = 1 << 20;
const MAX_ZIP_OFFSET = 0xffff_ffff;
/** Days from 1899-12-30 (Excel's day 0, with its 1900 leap-year bug) to 1970-01-01. */
const EPOCH_SERIAL = 25569;
const MIN_SERIAL = 61; // 1900-03-01: earlier serials are off by one in Excel
const MAX_SERIAL = 2958465; // 9999-12-31
const encoder = new TextEncoder();

const STYLE_DATE = 1;
const STYLE_DATETIME = 2;
const STYLE_DATETIME_MS = 3;
const STYLE_HEADER = 4;

/**
 * Writes batches as an xlsx workbook into an open file.
 *
 * @param file The output file, positioned at 0.
 * @param schema The schema of every batch.
 * @param batches The rows.
 * @param options `splitSheets`.
 * @returns Data rows written.
 * @throws {IoError} INVALID_OPTION past Excel's row (without `splitSheets`) or
 * column limits; WRITE_FAILED for a cell over 32,767 characters or a part over 4 GiB.
 */
export async function writeXlsx(
  file: ByteWriter,
  schema: Schema,
  batches: AsyncIterable<Batch>,
  options: XlsxOptions = {},
): Promise<number> {
  if (schema.length > XLSX_MAX_COLUMNS) {
    throw new IoError(
      "INVALID_OPTION",
      `Cannot write ${schema.length} columns to xlsx: a sheet holds at most ${XLSX_MAX_COLUMNS}; pick fewer columns or another format`,
    );
  }
  const perSheet = Math.min(options.sheetRows ?? XLSX_MAX_DATA_ROWS, XLSX_MAX_DATA_ROWS);
  const zip = new ZipWriter(file, await import("node:zlib"));
  const cells = schema.map((f, i) => new CellWriter(f, columnLetters(i)));
  let sheets = 0;
  let inSheet = 0;
  let rows = 0;
  let entry: StreamEntry | null = null;
  const openSheet = async () => {
    sheets++;
    entry = await zip.begin(`xl/worksheets/sheet${sheets}.xml`);
    await entry.write(sheetStart(schema));
    inSheet = 0;
  };
  await openSheet();
  for await (const batch of batches) {
    if (batch.columns.length !== schema.length) {
      throw new IoError(
        "SCHEMA_MISMATCH",
        `Cannot write a batch of ${batch.columns.length} columns to a ${schema.length}-column xlsx sheet`,
      );
    }
    for (let r = 0; r < batch.length; r++) {
      if (inSheet === perSheet) {
        if (!options.splitSheets) {
          throw new IoError(
            "INVALID_OPTION",
            `Cannot write more than ${perSheet} rows to one xlsx sheet (Excel's limit is 1,048,576 rows with the header): pass --split-sheets (splitSheets: true) to continue on new sheets, filter with --where or --rows, or pick another format`,
          );
        }
        await entry!.write(SHEET_END);
        await entry!.end();
        await openSheet();
      }
      inSheet++;
      rows++;
      const rowNumber = inSheet + 1;
      let xml = `<row r="${rowNumber}">`;
      for (let c = 0; c < cells.length; c++) {
        xml += cells[c]!.cell(batch.columns[c]!, r, rowNumber, rows);
      }
      xml += "</row>";
      await entry!.write(xml);
    }
  }
  await entry!.write(SHEET_END);
  await entry!.end();
  await zip.add("xl/workbook.xml", workbookXml(sheets));
  await zip.add("xl/_rels/workbook.xml.rels", workbookRelsXml(sheets));
  await zip.add("xl/styles.xml", STYLES_XML);
  await zip.add("_rels/.rels", ROOT_RELS_XML);
  await zip.add("[Content_Types].xml", contentTypesXml(sheets));
  await zip.finish();
  return rows;
}

/**
 * Column letters of a 0-based column index (0 → A, 26 → AA).
 *
 * @param index Column index.
 * @returns Its letters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { columnLetters } from "./xlsx.ts";
 * assert.equal(columnLetters(0), "A");
 * assert.equal(columnLetters(27), "AB");
 * assert.equal(columnLetters(16383), "XFD");
 * ```
 */
export function columnLetters(index: number): string {
  let n = index + 1;
  let out = "";
  while (n > 0) {
    const r = (n - 1) % 26;
    out = String.fromCharCode(65 + r) + out;
    n = Math.floor((n - 1) / 26);
  }
  return out;
}

/** Turns one column's cells into XML. */
class CellWriter {
  readonly #field: Field;
  readonly #letters: string;
  readonly #ticksPerDay: number;
  readonly #style: number;
  readonly #iso: TimestampFormatter | null;

  constructor(field: Field, letters: string) {
    this.#field = field;
    this.#letters = letters;
    const unit = field.unit ?? "us";
    this.#ticksPerDay = TICKS_PER_SECOND[unit] * 86400;
    this.#style = field.type === "date"
      ? STYLE_DATE
      : field.type === "timestamp"
      ? (unit === "s" ? STYLE_DATETIME : STYLE_DATETIME_MS)
      : 0;
    this.#iso = field.type === "timestamp" ? new TimestampFormatter(unit, true, true) : null;
  }

  cell(column: Column, r: number, rowNumber: number, dataRow: number): string {
    if (column.validity && column.validity[r] === 0) return "";
    const ref = this.#letters + rowNumber;
    switch (column.type) {
      case "int64": {
        const v = column.values[r]!;
        const n = Number(v);
        return Number.isSafeInteger(n) ? `<c r="${ref}"><v>${n}</v></c>` : inline(ref, String(v));
      }
      case "float64":
      case "float32":
      case "float16": {
        // A float32 or float16 as the double of its shortest text (0.1, not
        // 0.100000001490116): the number a user wrote, which Excel shows.
        const exact = cellValue(column, r) as number;
        const x = column.type === "float64" || !Number.isFinite(exact)
          ? exact
          : Number(cellText(column, r, this.#field));
        if (Number.isFinite(x)) return `<c r="${ref}"><v>${Object.is(x, -0) ? 0 : x}</v></c>`;
        return inline(ref, x !== x ? "NaN" : x > 0 ? "Infinity" : "-Infinity");
      }
      case "bool":
        return `<c r="${ref}" t="b"><v>${column.values[r]}</v></c>`;
      case "decimal": {
        // A number cell only when the double Excel keeps is exactly this decimal.
        const scale = this.#field.scale ?? 0;
        const unscaled = column.values[r]!;
        const text = formatDecimal(unscaled, scale);
        const x = Number(text);
        return parseDecimal(String(x), scale) === unscaled
          ? `<c r="${ref}"><v>${x}</v></c>`
          : inline(ref, text);
      }
      case "time":
        return inline(ref, formatTime(column.values[r]!, this.#field.unit ?? "us"));
      case "duration":
        return inline(ref, formatDuration(column.values[r]!, this.#field.unit ?? "us"));
      case "string":
      case "json": {
        const s = column.values[r]!;
        if (s.length > XLSX_MAX_CELL_CHARS) {
          throw new IoError(
            "WRITE_FAILED",
            `Cannot write column "${this.#field.name}" row ${dataRow} to xlsx: it holds ${s.length} characters, a cell holds at most ${XLSX_MAX_CELL_CHARS}; pick another format`,
            { column: this.#field.name },
          );
        }
        return inline(ref, s);
      }
      case "date": {
        const days = Number(column.values[r]!);
        const serial = days + EPOCH_SERIAL;
        if (serial < MIN_SERIAL || serial > MAX_SERIAL) return inline(ref, formatDate(days));
        return `<c r="${ref}" s="${this.#style}"><v>${serial}</v></c>`;
      }
      case "timestamp": {
        const ticks = column.values[r]!;
        const serial = Number(ticks) / this.#ticksPerDay + EPOCH_SERIAL;
        if (!(serial >= MIN_SERIAL && serial < MAX_SERIAL + 1)) {
          return inline(ref, this.#iso!.format(ticks));
        }
        return `<c r="${ref}" s="${this.#style}"><v>${serial}</v></c>`;
      }
    }
  }
}

// deno-lint-ignore no-control-regex -- these are exactly the characters XML 1.0 cannot hold
const XML_SPECIAL = /[&<>"\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|_x[0-9A-Fa-f]{4}_/g;

/**
 * Escapes text for an XML text node. Characters XML 1.0 cannot hold are written
 * as OOXML's `_xHHHH_` escapes, and a literal `_xHHHH_` has its underscore escaped.
 *
 * @param s Text.
 * @returns XML-safe text.
 */
export function xmlText(s: string): string {
  return s.replace(XML_SPECIAL, (m) => {
    switch (m) {
      case "&":
        return "&amp;";
      case "<":
        return "&lt;";
      case ">":
        return "&gt;";
      case '"':
        return "&quot;";
    }
    if (m.length > 1) return "_x005F_" + m.slice(1);
    return `_x${m.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}_`;
  });
}

function inline(ref: string, s: string): string {
  const space = /^\s|\s$/.test(s) ? ' xml:space="preserve"' : "";
  return `<c r="${ref}" t="inlineStr"><is><t${space}>${xmlText(s)}</t></is></c>`;
}

const NS_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const NS_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const XML_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const SHEET_END = "</sheetData></worksheet>";

function sheetStart(schema: Schema): string {
  const widths = schema.map((f) => {
    const base = f.type === "date"
      ? 11
      : f.type === "timestamp"
      ? (f.unit === "s" ? 20 : 24)
      : f.type === "string"
      ? 16
      : 12;
    return Math.min(60, Math.max(base, f.name.length + 2));
  });
  const cols = schema.length === 0 ? "" : "<cols>" +
    widths.map((w, i) => `<col min="${i + 1}" max="${i + 1}" width="${w}" customWidth="1"/>`)
      .join("") +
    "</cols>";
  const header = schema.map((f, i) =>
    `<c r="${columnLetters(i)}1" t="inlineStr" s="${STYLE_HEADER}"><is><t>${
      xmlText(f.name)
    }</t></is></c>`
  ).join("");
  return `${XML_DECL}<worksheet xmlns="${NS_MAIN}" xmlns:r="${NS_REL}">` +
    `<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews>` +
    `<sheetFormatPr defaultRowHeight="15"/>${cols}<sheetData><row r="1">${header}</row>`;
}

function workbookXml(sheets: number): string {
  let list = "";
  for (let i = 1; i <= sheets; i++) {
    list += `<sheet name="Sheet${i}" sheetId="${i}" r:id="rId${i}"/>`;
  }
  return `${XML_DECL}<workbook xmlns="${NS_MAIN}" xmlns:r="${NS_REL}"><sheets>${list}</sheets></workbook>`;
}

function workbookRelsXml(sheets: number): string {
  const type = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
  let rels = "";
  for (let i = 1; i <= sheets; i++) {
    rels +=
      `<Relationship Id="rId${i}" Type="${type}/worksheet" Target="worksheets/sheet${i}.xml"/>`;
  }
  rels += `<Relationship Id="rId${sheets + 1}" Type="${type}/styles" Target="styles.xml"/>`;
  return `${XML_DECL}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rels}</Relationships>`;
}

const ROOT_RELS_XML =
  `${XML_DECL}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
  `<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>` +
  `</Relationships>`;

function contentTypesXml(sheets: number): string {
  const base = "application/vnd.openxmlformats-officedocument.spreadsheetml";
  let overrides = `<Override PartName="/xl/workbook.xml" ContentType="${base}.sheet.main+xml"/>` +
    `<Override PartName="/xl/styles.xml" ContentType="${base}.styles+xml"/>`;
  for (let i = 1; i <= sheets; i++) {
    overrides +=
      `<Override PartName="/xl/worksheets/sheet${i}.xml" ContentType="${base}.worksheet+xml"/>`;
  }
  return `${XML_DECL}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
    `<Default Extension="xml" ContentType="application/xml"/>${overrides}</Types>`;
}

// Style indexes: 0 default, 1 date, 2 date-time, 3 date-time with ms, 4 bold header.
const STYLES_XML = `${XML_DECL}<styleSheet xmlns="${NS_MAIN}">` +
  `<numFmts count="3"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/>` +
  `<numFmt numFmtId="165" formatCode="yyyy-mm-dd hh:mm:ss"/>` +
  `<numFmt numFmtId="166" formatCode="yyyy-mm-dd hh:mm:ss.000"/></numFmts>` +
  `<fonts count="2"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font>` +
  `<font><b/><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts>` +
  `<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>` +
  `<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>` +
  `<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>` +
  `<cellXfs count="5"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>` +
  `<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>` +
  `<xf numFmtId="165" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>` +
  `<xf numFmtId="166" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>` +
  `<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/></cellXfs>` +
  `<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>` +
  `</styleSheet>`;

// ---------------------------------------------------------------------------
// Zip (PKWARE APPNOTE 6.3: local headers with data descriptors, central directory)

interface ZipEntry {
  name: Uint8Array;
  crc: number;
  compressed: number;
  size: number;
  offset: number;
}

/** One entry being written: text in, compressed 1 MiB pieces out. */
interface StreamEntry {
  write(text: string): Promise<void>;
  end(): Promise<void>;
}

class ZipWriter {
  readonly #file: ByteWriter;
  readonly #zlib: Zlib;
  #offset = 0;
  readonly #entries: ZipEntry[] = [];

  constructor(file: ByteWriter, zlib: Zlib) {
    this.#file = file;
    this.#zlib = zlib;
  }

  async #raw(bytes: Uint8Array): Promise<void> {
    if (this.#offset + bytes.length > MAX_ZIP_OFFSET) throw tooBig();
    await writeAll(this.#file, bytes);
    this.#offset += bytes.length;
  }

  async begin(name: string): Promise<StreamEntry> {
    const entry: ZipEntry = {
      name: encoder.encode(name),
      crc: 0,
      compressed: 0,
      size: 0,
      offset: this.#offset,
    };
    await this.#raw(localHeader(entry));
    let pending: string[] = [];
    let pendingChars = 0;
    const zlib = this.#zlib;
    const flush = async (final: boolean) => {
      const bytes = encoder.encode(pending.join(""));
      pending = [];
      pendingChars = 0;
      entry.crc = zlib.crc32(bytes, entry.crc);
      entry.size += bytes.length;
      if (entry.size > MAX_ZIP_OFFSET) throw tooBig();
      const packed = zlib.deflateRawSync(
        bytes,
        final ? {} : { finishFlush: zlib.constants.Z_SYNC_FLUSH },
      );
      entry.compressed += packed.length;
      await this.#raw(packed);
    };
    return {
      write: async (text: string) => {
        pending.push(text);
        pendingChars += text.length;
        if (pendingChars >= PIECE_BYTES) await flush(false);
      },
      end: async () => {
        await flush(true);
        await this.#raw(dataDescriptor(entry));
        this.#entries.push(entry);
      },
    };
  }

  async add(name: string, text: string): Promise<void> {
    const entry = await this.begin(name);
    await entry.write(text);
    await entry.end();
  }

  async finish(): Promise<void> {
    const start = this.#offset;
    for (const e of this.#entries) await this.#raw(centralHeader(e));
    const size = this.#offset - start;
    const end = new Uint8Array(22);
    const v = new DataView(end.buffer);
    v.setUint32(0, 0x06054b50, true);
    v.setUint16(8, this.#entries.length, true);
    v.setUint16(10, this.#entries.length, true);
    v.setUint32(12, size, true);
    v.setUint32(16, start, true);
    await this.#raw(end);
  }
}

function tooBig(): IoError {
  return new IoError(
    "WRITE_FAILED",
    "Cannot write xlsx: the workbook passes 4 GiB, which needs zip64; thaw fewer rows or columns, or pick another format",
  );
}

// Fixed DOS timestamp 1980-01-01 00:00: the bytes depend only on the data.
const DOS_DATE = (0 << 9) | (1 << 5) | 1;
const FLAGS = 0x0808; // bit 3: sizes in the data descriptor; bit 11: UTF-8 names

function localHeader(e: ZipEntry): Uint8Array {
  const h = new Uint8Array(30 + e.name.length);
  const v = new DataView(h.buffer);
  v.setUint32(0, 0x04034b50, true);
  v.setUint16(4, 20, true);
  v.setUint16(6, FLAGS, true);
  v.setUint16(8, 8, true);
  v.setUint16(10, 0, true);
  v.setUint16(12, DOS_DATE, true);
  v.setUint16(26, e.name.length, true);
  h.set(e.name, 30);
  return h;
}

function dataDescriptor(e: ZipEntry): Uint8Array {
  const d = new Uint8Array(16);
  const v = new DataView(d.buffer);
  v.setUint32(0, 0x08074b50, true);
  v.setUint32(4, e.crc >>> 0, true);
  v.setUint32(8, e.compressed, true);
  v.setUint32(12, e.size, true);
  return d;
}

function centralHeader(e: ZipEntry): Uint8Array {
  const h = new Uint8Array(46 + e.name.length);
  const v = new DataView(h.buffer);
  v.setUint32(0, 0x02014b50, true);
  v.setUint16(4, 20, true);
  v.setUint16(6, 20, true);
  v.setUint16(8, FLAGS, true);
  v.setUint16(10, 8, true);
  v.setUint16(12, 0, true);
  v.setUint16(14, DOS_DATE, true);
  v.setUint32(16, e.crc >>> 0, true);
  v.setUint32(20, e.compressed, true);
  v.setUint32(24, e.size, true);
  v.setUint16(28, e.name.length, true);
  v.setUint32(42, e.offset, true);
  h.set(e.name, 46);
  return h;
}
