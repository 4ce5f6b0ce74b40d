/**
 * The quote-aware RFC 4180 record splitters behind `csv.ts`: one over decoded text
 * (fields as spans, for reading) and one over raw bytes (record ends only, for cutting
 * a file into row ranges). Both follow the same rules, so a byte range that the byte
 * scanner cuts holds exactly the records the text splitter reads from it:
 * - records end at LF, CRLF or a lone CR (old Mac files; mixed line ends work too),
 *   and a CR at the end of a read buffer waits for the next byte, so a CRLF split
 *   across buffers is one line end, never an extra empty record;
 * - a field starting with `"` is quoted: it runs to the next lone `"`, and `""`
 *   inside stands for one quote; delimiters, CR and LF inside are data;
 * - a `"` inside an unquoted field is data;
 * - after a closing quote only a delimiter, a line end or the end of input may follow.
 *
 * @module
 */
import { IoError } from "./errors.ts";
import { DecodedText } from "./_utf8.ts";

const QUOTE = 34;
const LF = 10;
const CR = 13;

/** `next()` found a record. */
export const RECORD = 1;
/** `next()` needs more input: call `fill()`. */
export const NEED_MORE = 0;
/** `next()` reached the end of input. */
export const END = -1;

/**
 * Splits decoded CSV text into records, fed chunk by chunk. After `next()` returns
 * {@link RECORD}, fields `0..count-1` are the spans `[starts[i], ends[i])` of `text`;
 * `flags[i]` is 0 for an unquoted field, 1 for a quoted one and 2 for a quoted one
 * holding doubled quotes (replace `""` with `"` to get its value).
 */
export class CsvRecordReader extends DecodedText {
  /** Field starts of the current record. */
  starts: Int32Array;
  /** Field ends of the current record. */
  ends: Int32Array;
  /** Field flags of the current record (0 unquoted, 1 quoted, 2 quoted with `""`). */
  flags: Uint8Array;
  /** Fields in the current record (may exceed the arrays' length when not growable). */
  count = 0;
  /** Records returned so far. */
  records = 0;
  readonly #delim: number;
  readonly #path: string;
  readonly #growable: boolean;
  readonly #where: (record: number) => string;

  /**
   * @param chunks Raw bytes, in order.
   * @param options Delimiter code, field capacity, path, the file offset of the first
   * byte (default 0) and a describer of record positions.
   */
  constructor(
    chunks: AsyncIterator<Uint8Array>,
    options: {
      delimiter: number;
      capacity: number;
      growable?: boolean;
      path: string;
      start?: number;
      where: (record: number) => string;
    },
  ) {
    super(chunks, options.start ?? 0, true);
    this.#delim = options.delimiter;
    this.#path = options.path;
    this.#growable = options.growable ?? false;
    this.#where = options.where;
    this.starts = new Int32Array(options.capacity);
    this.ends = new Int32Array(options.capacity);
    this.flags = new Uint8Array(options.capacity);
  }

  protected override invalidUtf8(offset: number): IoError {
    return new IoError(
      "PARSE_FAILED",
      `Cannot parse CSV '${this.#path}': ${
        this.#where(this.records)
      } is not valid UTF-8 (the bad byte is at offset ${offset})`,
      { path: this.#path, offset },
    );
  }

  #fail(what: string): IoError {
    return new IoError(
      "PARSE_FAILED",
      `Cannot parse CSV '${this.#path}': ${what} in ${this.#where(this.records)}`,
      { path: this.#path },
    );
  }

  #grow(): void {
    const n = this.starts.length * 2;
    const s = new Int32Array(n);
    s.set(this.starts);
    this.starts = s;
    const e = new Int32Array(n);
    e.set(this.ends);
    this.ends = e;
    const f = new Uint8Array(n);
    f.set(this.flags);
    this.flags = f;
  }

  /**
   * Splits the next record.
   *
   * @returns {@link RECORD}, {@link NEED_MORE} or {@link END}.
   */
  next(): number {
    const text = this.text;
    const n = text.length;
    let i = this.pos;
    if (i >= n) return this.final ? END : NEED_MORE;
    const d = this.#delim;
    const final = this.final;
    let count = 0;
    for (;;) {
      if (count >= this.starts.length && this.#growable) this.#grow();
      const store = count < this.starts.length;
      if (i < n && text.charCodeAt(i) === QUOTE) {
        let j = i + 1;
        let flag = 1;
        let q: number;
        for (;;) {
          q = text.indexOf('"', j);
          if (q < 0) {
            if (final) throw this.#fail("a quoted field is never closed");
            return NEED_MORE;
          }
          if (q + 1 >= n) {
            if (!final) return NEED_MORE;
            break;
          }
          if (text.charCodeAt(q + 1) === QUOTE) {
            flag = 2;
            j = q + 2;
            continue;
          }
          break;
        }
        if (store) {
          this.starts[count] = i + 1;
          this.ends[count] = q;
          this.flags[count] = flag;
        }
        count++;
        i = q + 1;
        if (i >= n) return this.#done(count, n);
        const c = text.charCodeAt(i);
        if (c === d) {
          i++;
          continue;
        }
        if (c === LF) return this.#done(count, i + 1);
        if (c === CR) return this.#crEnd(count, i);
        throw this.#fail("unexpected text after a closing quote");
      }
      let j = i;
      while (j < n) {
        const c = text.charCodeAt(j);
        if (c === d || c === LF || c === CR) break;
        j++;
      }
      if (j >= n && !final) return NEED_MORE;
      if (store) {
        this.starts[count] = i;
        this.ends[count] = j;
        this.flags[count] = 0;
      }
      count++;
      if (j >= n) return this.#done(count, n);
      const c = text.charCodeAt(j);
      if (c === d) {
        i = j + 1;
        continue;
      }
      if (c === LF) return this.#done(count, j + 1);
      return this.#crEnd(count, j);
    }
  }

  /** Ends the record at the CR at `i`: with the LF after it (CRLF), or alone. */
  #crEnd(count: number, i: number): number {
    if (i + 1 >= this.text.length) return this.final ? this.#done(count, i + 1) : NEED_MORE;
    return this.#done(count, this.text.charCodeAt(i + 1) === LF ? i + 2 : i + 1);
  }

  #done(count: number, next: number): number {
    this.count = count;
    this.pos = next;
    this.records++;
    return RECORD;
  }

  /** Whether the current record is a blank line (one empty unquoted field). */
  blank(): boolean {
    return this.count === 1 && this.flags[0] === 0 && this.starts[0] === this.ends[0];
  }

  /** The value of field `i` of the current record (`null` for an empty unquoted field). */
  field(i: number): string | null {
    const s = this.starts[i] ?? 0;
    const e = this.ends[i] ?? 0;
    const f = this.flags[i];
    if (f === 0) return s === e ? null : this.text.slice(s, e);
    if (f === 1) return this.text.slice(s, e);
    return this.text.slice(s, e).replaceAll('""', '"');
  }
}

/**
 * Finds the end of the record starting at `pos` in raw bytes, by the same rules as
 * {@link CsvRecordReader}.
 */
export class CsvByteScanner {
  readonly #delim: number;
  // Next quote, LF and CR at or after the last position asked (Infinity: none in the
  // buffer, -1: unknown), so a buffer without one byte is not searched once per record.
  #nextQuote = -1;
  #nextLf = -1;
  #nextCr = -1;

  /** @param delimiter Delimiter byte. */
  constructor(delimiter: number) {
    this.#delim = delimiter;
  }

  /** Forgets cached positions (call when the buffer changes). */
  reset(): void {
    this.#nextQuote = -1;
    this.#nextLf = -1;
    this.#nextCr = -1;
  }

  /**
   * Returns the index just past the record starting at `pos` (after its line end, or
   * the buffer's end when `final`), or -1 when the buffer does not hold all of it yet.
   */
  recordEnd(buf: Uint8Array, pos: number, final: boolean): number {
    const n = buf.length;
    if (this.#nextLf !== Infinity && this.#nextLf < pos) this.#nextLf = find(buf, LF, pos);
    if (this.#nextCr !== Infinity && this.#nextCr < pos) this.#nextCr = find(buf, CR, pos);
    if (this.#nextQuote !== Infinity && this.#nextQuote < pos) {
      this.#nextQuote = find(buf, QUOTE, pos);
    }
    const stop = Math.min(this.#nextLf, this.#nextCr);
    if (this.#nextQuote > stop) {
      if (stop === Infinity) return final ? n : -1;
      return lineEnd(buf, stop, final);
    }
    const d = this.#delim;
    let i = pos;
    this.#nextQuote = -1;
    for (;;) {
      if (i < n && buf[i] === QUOTE) {
        let j = i + 1;
        for (;;) {
          const q = buf.indexOf(QUOTE, j);
          if (q < 0) return final ? n : -1;
          if (q + 1 >= n) {
            if (!final) return -1;
            i = q + 1;
            break;
          }
          if (buf[q + 1] === QUOTE) {
            j = q + 2;
            continue;
          }
          i = q + 1;
          break;
        }
      }
      while (i < n) {
        const c = buf[i];
        if (c === d || c === LF || c === CR) break;
        i++;
      }
      if (i >= n) return final ? n : -1;
      if (buf[i] === d) {
        i++;
        continue;
      }
      return lineEnd(buf, i, final);
    }
  }
}

function find(buf: Uint8Array, byte: number, from: number): number {
  const at = buf.indexOf(byte, from);
  return at < 0 ? Infinity : at;
}

/** The index past the line end at `i` (LF, CRLF or a lone CR), -1 when a CR ends the buffer. */
function lineEnd(buf: Uint8Array, i: number, final: boolean): number {
  if (buf[i] === LF) return i + 1;
  if (i + 1 >= buf.length) return final ? i + 1 : -1;
  return buf[i + 1] === LF ? i + 2 : i + 1;
}

/** Whether bytes `[s, e)` are a blank line (nothing before its LF, CRLF or CR). */
export function blankRecord(buf: Uint8Array, s: number, e: number): boolean {
  let end = e;
  if (end > s && buf[end - 1] === LF) end--;
  if (end > s && buf[end - 1] === CR) end--;
  return end === s;
}
