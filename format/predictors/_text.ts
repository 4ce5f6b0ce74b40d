/**
 * Private string helpers of the predictors: the "text stream" that
 * `raw_text`, `category_u8` and `keyed_rank` share, and strict UTF-8.
 *
 * Text stream layout (FORMAT.md §4): `[varint byte length of each string…]
 * [the UTF-8 bytes of every string, concatenated]`. The count is not stored:
 * the caller knows it.
 *
 * Encoding encodes all strings with one `TextEncoder` call (per-string calls
 * cost more than the data), then reads each string's byte length off the bytes.
 * Decoding validates the whole byte run with one fatal `TextDecoder` call,
 * then cuts the decoded text at the string boundaries, after checking that no
 * boundary falls inside a UTF-8 sequence.
 *
 * Strings are Unicode text: a lone UTF-16 surrogate (which no UTF-8 source can
 * produce, but a caller's own strings may hold) is refused with `BAD_ARGUMENT`
 * naming the column and row, never stored as U+FFFD; a json column keeps such a
 * value as its `\uD800` escape. A leading U+FEFF is kept (the decoder here has
 * `ignoreBOM: true`).
 *
 * Pure: no I/O, no globals beyond the encoder and decoder.
 *
 * @module
 */
import type { ByteReader } from "../_bytes.ts";
import { FormatError } from "../errors.ts";
import { varintSize, writeVarint } from "./_ints.ts";

const ENCODER = new TextEncoder();
// ignoreBOM: true keeps a leading U+FEFF; the default would silently drop it.
const DECODER = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The measured and encoded strings of a text stream. */
export interface TextPlan {
  /** UTF-8 length of each string. */
  readonly lengths: Float64Array;
  /** Every string's UTF-8 bytes, concatenated. */
  readonly text: Uint8Array;
  /** Size of the whole text stream (varints + text). */
  readonly size: number;
}

/**
 * Encodes the strings of a text stream and measures each one.
 *
 * One `TextEncoder` call encodes them all; each string's byte length is then
 * read off the encoded bytes (it spans `s.length` UTF-16 units). Only when a
 * lone high surrogate at the end of one string and a lone low one at the
 * start of the next fuse into one character are the strings encoded one by one.
 *
 * @param values The strings.
 * @param column The column's name, for the error.
 * @returns Their lengths, their bytes and the stream size.
 * @throws {FormatError} BAD_ARGUMENT when a string holds a lone surrogate.
 */
export function planTexts(values: readonly string[], column = ""): TextPlan {
  const n = values.length;
  const lengths = new Float64Array(n);
  const joined = values.join("");
  let text = ENCODER.encode(joined);
  if (text.length === joined.length) {
    // Pure ASCII: one byte per unit.
    for (let i = 0; i < n; i++) lengths[i] = values[i]!.length;
  } else if (!joined.isWellFormed() || !measureEncoded(values, text, lengths)) {
    // Lone surrogates, or two that fused across strings: check and encode one by one.
    const bad = values.findIndex((v) => !v.isWellFormed());
    if (bad >= 0) {
      throw new FormatError(
        "BAD_ARGUMENT",
        `Cannot store row ${bad} of column '${column}': the string holds a lone UTF-16 surrogate, which UTF-8 cannot hold; store the value as JSON text (a json column keeps it as an escape)`,
        { column },
      );
    }
    const parts = values.map((v) => ENCODER.encode(v));
    let total = 0;
    for (let i = 0; i < n; i++) total += lengths[i] = parts[i]!.length;
    text = new Uint8Array(total);
    let at = 0;
    for (const part of parts) {
      text.set(part, at);
      at += part.length;
    }
  }
  let varints = 0;
  for (let i = 0; i < n; i++) {
    const len = lengths[i]!;
    varints += len < 0x80 ? 1 : varintSize(len);
  }
  return { lengths, text, size: varints + text.length };
}

/**
 * Splits the UTF-8 of the joined strings back into per-string byte lengths.
 * Returns false when a 4-byte character straddles two strings.
 */
function measureEncoded(
  values: readonly string[],
  text: Uint8Array,
  lengths: Float64Array,
): boolean {
  let b = 0;
  for (let i = 0; i < values.length; i++) {
    const start = b;
    let units = values[i]!.length;
    while (units > 0) {
      const lead = text[b]!;
      if (lead < 0x80) {
        b += 1;
        units -= 1;
      } else if (lead < 0xe0) {
        b += 2;
        units -= 1;
      } else if (lead < 0xf0) {
        b += 3;
        units -= 1;
      } else {
        b += 4;
        units -= 2;
      }
    }
    if (units < 0) return false;
    lengths[i] = b - start;
  }
  return true;
}

/**
 * Writes a text stream.
 *
 * @param plan The strings' {@linkcode planTexts}.
 * @param out Destination with room for `plan.size` bytes at `at`.
 * @param at Where to start.
 * @returns The offset after the stream.
 */
export function writeTexts(plan: TextPlan, out: Uint8Array, at: number): number {
  const { lengths, text } = plan;
  for (let i = 0; i < lengths.length; i++) {
    const n = lengths[i]!;
    if (n < 0x80) out[at++] = n;
    else at = writeVarint(out, at, n);
  }
  out.set(text, at);
  return at + text.length;
}

/**
 * Decodes UTF-8 strictly, keeping a leading U+FEFF.
 *
 * @param bytes UTF-8 bytes.
 * @param what What they are, for the error.
 * @returns The text.
 * @throws {FormatError} `CORRUPT` on invalid UTF-8.
 */
export function decodeText(bytes: Uint8Array, what: string): string {
  try {
    return DECODER.decode(bytes);
  } catch (cause) {
    throw new FormatError("CORRUPT", `Cannot decode ${what}: invalid UTF-8`, { cause });
  }
}

/**
 * Reads a text stream of `count` strings.
 *
 * @param reader Positioned at the first length.
 * @param count Number of strings.
 * @param what What they are, for errors.
 * @returns The strings.
 * @throws {FormatError} `CORRUPT` if the lengths need more bytes than are
 *   left, the text is not UTF-8, or a boundary splits a character.
 */
export function readTexts(reader: ByteReader, count: number, what: string): string[] {
  if (count > reader.remaining) {
    throw new FormatError(
      "CORRUPT",
      `Cannot read ${what}: expected at least ${count} bytes of lengths, found ${reader.remaining}`,
      { offset: reader.offset },
    );
  }
  const lengths = new Float64Array(count);
  let total = 0;
  for (let i = 0; i < count; i++) {
    const n = reader.varint("string length");
    lengths[i] = n;
    total += n;
  }
  const textAt = reader.offset;
  const bytes = reader.bytes(total, `${count} strings of ${what}`);
  const text = decodeText(bytes, what);
  const out = new Array<string>(count);
  if (text.length === total) {
    // Only ASCII decodes to one unit per byte: byte offsets are string offsets.
    let at = 0;
    for (let i = 0; i < count; i++) {
      const end = at + lengths[i]!;
      out[i] = text.slice(at, end);
      at = end;
    }
    return out;
  }
  let b = 0;
  let u = 0;
  for (let i = 0; i < count; i++) {
    const end = b + lengths[i]!;
    const start = u;
    if (end > b && (bytes[b]! & 0xc0) === 0x80) {
      throw new FormatError(
        "CORRUPT",
        `Cannot read ${what}: expected string ${i} to start a UTF-8 character, found a continuation byte`,
        { offset: textAt + b },
      );
    }
    for (; b < end; b++) {
      const x = bytes[b]!;
      if ((x & 0xc0) !== 0x80) u += x >= 0xf0 ? 2 : 1;
    }
    out[i] = text.slice(start, u);
  }
  return out;
}
