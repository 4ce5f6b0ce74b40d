/**
 * Streaming UTF-8 decoding for the text readers (CSV, JSON lines) that knows where
 * invalid bytes are: `TextDecoder` only says that a chunk failed, so a reader could
 * name nothing better than the row it had reached when it read the chunk (up to a
 * megabyte earlier). {@link Utf8Chunks} hands back the valid text before the first
 * invalid byte and that byte's offset in the file, and {@link DecodedText}, the base of
 * the record and line splitters, parses the rows before it and only then reports the
 * row that holds it.
 *
 * No I/O of its own: the bytes come from the caller's iterator.
 *
 * @module
 */

const EMPTY = new Uint8Array(0);

/** What {@link Utf8Chunks.decode} returns. */
export interface DecodedChunk {
  /** The decoded text (only the valid part before `bad` when `bad >= 0`). */
  text: string;
  /** File offset of the first invalid byte, or -1 when every byte decoded. */
  bad: number;
}

/** U+FFFD, what a decoder that is not fatal puts in place of invalid bytes. */
const REPLACEMENT = "\uFFFD";

/** Decodes a file's bytes chunk by chunk, tracking file offsets. */
export class Utf8Chunks {
  /**
   * The decoder of every chunk until one decodes with a U+FFFD: not fatal, because a
   * fatal decoder is several times slower (Deno 2.9: ~50 ms for flights-3m's 106 MB of
   * ASCII against ~6 ms), most of a CSV file's decoding. Text without U+FFFD came from
   * valid UTF-8, and is what the fatal decoder gives. Only where a BOM is kept (the CSV
   * reader): Deno's decoder that drops a leading BOM drops one past an ASCII start too,
   * when it is all a chunk holds.
   */
  readonly #fast: TextDecoder | null;
  /** The fatal decoder, from the first chunk whose text held a U+FFFD on (see `#fast`). */
  #exact: TextDecoder | null;
  readonly #ignoreBom: boolean;
  /** File offset just past the bytes given so far. */
  #offset: number;
  /** Trailing bytes of the last chunk that start a sequence not yet complete. */
  #carry: Uint8Array = EMPTY;

  /**
   * @param start File offset of the first byte.
   * @param ignoreBom Keep a leading BOM as U+FEFF (true) or drop it (false).
   */
  constructor(start: number, ignoreBom: boolean) {
    this.#offset = start;
    this.#ignoreBom = ignoreBom;
    this.#fast = ignoreBom ? new TextDecoder("utf-8", { ignoreBOM: true }) : null;
    this.#exact = ignoreBom ? null : new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  }

  /**
   * Decodes the next chunk, or flushes at the end of input.
   *
   * @param bytes The next bytes, or undefined at the end.
   * @returns The text, and the offset of the first invalid byte (-1 when none).
   */
  decode(bytes: Uint8Array | undefined): DecodedChunk {
    const at = this.#offset - this.#carry.length;
    let exact = this.#exact;
    // The bytes the fatal decoder is given: this chunk's, after the carry the fast one
    // held when the fatal one takes over.
    let input = bytes;
    if (exact === null) {
      const fast = this.#fast!;
      const text = bytes === undefined ? fast.decode() : fast.decode(bytes, { stream: true });
      if (!text.includes(REPLACEMENT)) {
        this.#advance(bytes);
        return { text, bad: -1 };
      }
      // Invalid bytes, or a U+FFFD written in the file: decoded again by a fatal
      // decoder, from the first byte the fast one had not given back as text, as
      // every chunk after.
      exact = this.#exact = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
      input = bytes === undefined ? this.#carry : concat(this.#carry, bytes);
    }
    try {
      const text = bytes === undefined
        ? exact.decode(input)
        : exact.decode(input, { stream: true });
      this.#advance(bytes);
      return { text, bad: -1 };
    } catch {
      const all = bytes === undefined ? this.#carry : concat(this.#carry, bytes);
      const valid = validPrefix(all);
      const text = new TextDecoder("utf-8", {
        ignoreBOM: this.#ignoreBom || at > 0,
      }).decode(all.subarray(0, valid));
      return { text, bad: at + valid };
    }
  }

  /** Counts a chunk decoded (none at the end of input). */
  #advance(bytes: Uint8Array | undefined): void {
    if (bytes === undefined) return;
    this.#offset += bytes.length;
    this.#carry = incompleteTail(this.#carry, bytes);
  }
}

/**
 * Text decoded from a file's chunks, consumed from the front by a splitter (the CSV
 * record reader, the JSON-lines line reader). Invalid UTF-8 ends the text just
 * before the bad byte; the `fill()` after it throws {@link DecodedText.invalidUtf8},
 * so every record before the bad byte is handed out first and the error can name the
 * one that holds it.
 */
export abstract class DecodedText {
  /** Decoded text not yet consumed (plus the current record). */
  text = "";
  /** Start of the next record in `text`. */
  pos = 0;
  /** Whether all input is in `text`. */
  final = false;
  readonly #chunks: AsyncIterator<Uint8Array>;
  readonly #utf8: Utf8Chunks;
  /** File offset of the first invalid byte read, -1 while none. */
  #bad = -1;

  /**
   * @param chunks Raw bytes, in order.
   * @param start File offset of the first byte.
   * @param ignoreBom Keep a leading BOM as U+FEFF (true) or drop it (false).
   */
  constructor(chunks: AsyncIterator<Uint8Array>, start: number, ignoreBom: boolean) {
    this.#chunks = chunks;
    this.#utf8 = new Utf8Chunks(start, ignoreBom);
  }

  /**
   * The error for invalid UTF-8 at a file offset, named after the record the
   * splitter has reached (the one holding the bad byte).
   */
  protected abstract invalidUtf8(offset: number): Error;

  /** Reads and decodes the next chunk onto the unconsumed text. */
  async fill(): Promise<void> {
    if (this.#bad >= 0) throw this.invalidUtf8(this.#bad);
    const r = await this.#chunks.next();
    const { text: more, bad } = this.#utf8.decode(r.done ? undefined : r.value);
    if (bad >= 0) this.#bad = bad;
    else if (r.done) this.final = true;
    this.text = this.pos < this.text.length ? this.text.slice(this.pos) + more : more;
    this.pos = 0;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** The bytes at the end of `prev + bytes` that start a sequence not yet complete. */
function incompleteTail(prev: Uint8Array, bytes: Uint8Array): Uint8Array {
  const all = bytes.length >= 3 ? bytes : concat(prev, bytes);
  for (let k = 1; k <= Math.min(3, all.length); k++) {
    const b = all[all.length - k]!;
    if (b < 0x80) return EMPTY;
    if (b >= 0xc0) return sequenceLength(b) > k ? all.slice(all.length - k) : EMPTY;
  }
  return EMPTY;
}

function sequenceLength(lead: number): number {
  return lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
}

/**
 * Returns how many leading bytes of `bytes` are valid UTF-8 (WHATWG rules: no
 * overlong forms, no surrogates, nothing above U+10FFFF); a sequence cut off by
 * the end counts as invalid.
 *
 * @param bytes The bytes.
 * @returns The index of the first byte of the first invalid sequence, or the length.
 */
export function validPrefix(bytes: Uint8Array): number {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    if (i + need >= n) return i;
    const c1 = bytes[i + 1]!;
    if (c1 < lo || c1 > hi) return i;
    for (let k = 2; k <= need; k++) {
      const c = bytes[i + k]!;
      if (c < 0x80 || c > 0xbf) return i;
    }
    i += need + 1;
  }
  return n;
}
