/**
 * Private string helpers of the predictors: the "text stream" that
 * `raw_text`, `category_u8` and `keyed_rank` share, and strict UTF-8.
 *
 * Text stream layout (FORMAT.md §4): `[varint byte length of each string…]
 * [the UTF-8 bytes of every string, concatenated]`. The count is not stored:
 * the caller knows it.
 *
 * Encoding measures each string's UTF-8 length in JS, then encodes all of
 * them with one `TextEncoder` call (per-string calls cost more than the data).
 * Decoding validates the whole byte run with one fatal `TextDecoder` call,
 * then cuts the decoded text at the string boundaries, after checking that no
 * boundary falls inside a UTF-8 sequence.
 *
 * Strings are Unicode text: a lone UTF-16 surrogate (which no UTF-8 source can
 * produce) is stored as U+FFFD, as `TextEncoder` does everywhere. A leading
 * U+FEFF is kept (the decoder here has `ignoreBOM: true`).
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

/**
 * Returns the number of bytes `TextEncoder` writes for `s`.
 *
 * @param s Any string (a lone surrogate counts as U+FFFD, 3 bytes).
 * @returns Its UTF-8 length.
 */
export function utf8Length(s: string): number {
  const len = s.length;
  let n = len;
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) {
      n += 1;
    } else if (
      (c & 0xfc00) === 0xd800 && i + 1 < len && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00
    ) {
      n += 2; // a surrogate pair: 2 units, 4 bytes
      i++;
    } else {
      n += 2;
    }
  }
  return n;
}

/** The measured UTF-8 lengths of a list of strings. */
export interface TextPlan {
  /** UTF-8 length of each string. */
  readonly lengths: Float64Array;
  /** Sum of `lengths`. */
  readonly textBytes: number;
  /** Size of the whole text stream (varints + text). */
  readonly size: number;
}

/**
 * Measures a text stream before writing it.
 *
 * @param values The strings.
 * @returns Their lengths and the stream size.
 */
export function planTexts(values: readonly string[]): TextPlan {
  const lengths = new Float64Array(values.length);
  let textBytes = 0;
  let varints = 0;
  for (let i = 0; i < values.length; i++) {
    const n = utf8Length(values[i]!);
    lengths[i] = n;
    textBytes += n;
    varints += n < 0x80 ? 1 : varintSize(n);
  }
  return { lengths, textBytes, size: varints + textBytes };
}

/**
 * Writes a text stream.
 *
 * @param values The strings.
 * @param plan Their {@linkcode planTexts}.
 * @param out Destination with room for `plan.size` bytes at `at`.
 * @param at Where to start.
 * @returns The offset after the stream.
 */
export function writeTexts(
  values: readonly string[],
  plan: TextPlan,
  out: Uint8Array,
  at: number,
): number {
  const { lengths, textBytes } = plan;
  for (let i = 0; i < lengths.length; i++) {
    const n = lengths[i]!;
    if (n < 0x80) out[at++] = n;
    else at = writeVarint(out, at, n);
  }
  const dest = out.subarray(at, at + textBytes);
  const joined = values.join("");
  const r = ENCODER.encodeInto(joined, dest);
  // Joining can pair a trailing lone high surrogate with the next string's
  // lone low one (4 bytes instead of 3 + 3); then encode string by string.
  if (r.read !== joined.length || r.written !== textBytes) {
    let p = 0;
    for (const s of values) p += ENCODER.encodeInto(s, dest.subarray(p)).written;
  }
  return at + textBytes;
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
