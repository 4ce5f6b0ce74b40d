/**
 * The line splitter of `jsonl.ts`: decoded text, fed chunk by chunk, cut at LF, CRLF
 * or a lone CR, with invalid UTF-8 reported at the line that holds it.
 *
 * @module
 */
import { IoError } from "./errors.ts";
import { DecodedText } from "./_utf8.ts";

const LF = 10;
const CR = 13;

/**
 * Splits decoded text into lines, fed chunk by chunk. A line ends at LF, CRLF or a
 * lone CR: JSON never holds a raw CR inside a string, so no value is cut (a CR used
 * as whitespace between tokens, which no JSON-lines writer emits, makes the line fail
 * to parse rather than change a value). A CR at the end of the text waits for the next
 * chunk, so a CRLF split across chunks is one line end.
 */
export class LineReader extends DecodedText {
  /** Start and end (line end excluded) of the current line. */
  s = 0;
  e = 0;
  /** Physical lines returned so far. */
  lines = 0;
  readonly #path: string;
  // Next LF and CR in `text` at or after the last position asked (Infinity: none, -1:
  // unknown), so text without CR is not searched once per line.
  #nextLf = -1;
  #nextCr = -1;

  /**
   * @param chunks Raw bytes, in order.
   * @param path The file, for errors.
   * @param start File offset of the first byte.
   * @param keepBom Keep a leading BOM as U+FEFF (a range that does not start the file).
   */
  constructor(chunks: AsyncIterator<Uint8Array>, path: string, start: number, keepBom: boolean) {
    super(chunks, start, keepBom);
    this.#path = path;
  }

  protected override invalidUtf8(offset: number): IoError {
    return new IoError(
      "PARSE_FAILED",
      `Cannot parse JSON lines '${this.#path}': line ${
        this.lines + 1
      } is not valid UTF-8 (the bad byte is at offset ${offset})`,
      { path: this.#path, offset },
    );
  }

  override async fill(): Promise<void> {
    await super.fill();
    this.#nextLf = -1;
    this.#nextCr = -1;
  }

  /** 1 when a line is in `[s, e)`, 0 when more input is needed, -1 at the end. */
  next(): number {
    const text = this.text;
    const n = text.length;
    const pos = this.pos;
    if (pos >= n) return this.final ? -1 : 0;
    if (this.#nextLf !== Infinity && this.#nextLf < pos) this.#nextLf = findChar(text, "\n", pos);
    if (this.#nextCr !== Infinity && this.#nextCr < pos) this.#nextCr = findChar(text, "\r", pos);
    let stop = Math.min(this.#nextLf, this.#nextCr);
    let next: number;
    if (stop === Infinity) {
      if (!this.final) return 0;
      stop = next = n;
    } else if (text.charCodeAt(stop) === CR) {
      if (stop + 1 >= n && !this.final) return 0;
      next = text.charCodeAt(stop + 1) === LF ? stop + 2 : stop + 1;
    } else {
      next = stop + 1;
    }
    this.s = pos;
    this.e = stop;
    this.pos = next;
    this.lines++;
    return 1;
  }

  /** Whether the current line holds only spaces and tabs. */
  blank(): boolean {
    for (let i = this.s; i < this.e; i++) {
      const c = this.text.charCodeAt(i);
      if (c !== 32 && c !== 9 && c !== 13) return false;
    }
    return true;
  }
}

function findChar(text: string, c: string, from: number): number {
  const at = text.indexOf(c, from);
  return at < 0 ? Infinity : at;
}
