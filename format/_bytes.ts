/**
 * Bounds-checked byte writer and reader used by the predictors and the block layout.
 *
 * The reader never trusts a length: every read checks the bytes left first and
 * throws `FormatError("CORRUPT")` naming what it wanted and what was there.
 * Pure: no I/O.
 *
 * @module
 */
import { FormatError } from "./errors.ts";

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A growable little-endian byte buffer. */
export class ByteWriter {
  #buf: Uint8Array;
  #view: DataView;
  #len = 0;

  constructor(capacity = 1024) {
    this.#buf = new Uint8Array(Math.max(16, capacity));
    this.#view = new DataView(this.#buf.buffer);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#len;
  }

  #ensure(extra: number): void {
    if (this.#len + extra <= this.#buf.length) return;
    let cap = this.#buf.length * 2;
    while (cap < this.#len + extra) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.#buf.subarray(0, this.#len));
    this.#buf = next;
    this.#view = new DataView(next.buffer);
  }

  /** Appends one byte. */
  u8(v: number): void {
    this.#ensure(1);
    this.#buf[this.#len++] = v;
  }

  /** Appends a little-endian uint32. */
  u32(v: number): void {
    this.#ensure(4);
    this.#view.setUint32(this.#len, v, true);
    this.#len += 4;
  }

  /** Appends a little-endian int64. */
  i64(v: bigint): void {
    this.#ensure(8);
    this.#view.setBigInt64(this.#len, v, true);
    this.#len += 8;
  }

  /** Appends a little-endian float64. */
  f64(v: number): void {
    this.#ensure(8);
    this.#view.setFloat64(this.#len, v, true);
    this.#len += 8;
  }

  /** Appends an unsigned LEB128 varint (0 ≤ v < 2^53). */
  varint(v: number): void {
    this.#ensure(8);
    while (v >= 0x80) {
      this.#buf[this.#len++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.#buf[this.#len++] = v;
  }

  /** Appends raw bytes. */
  bytes(b: Uint8Array): void {
    this.#ensure(b.length);
    this.#buf.set(b, this.#len);
    this.#len += b.length;
  }

  /** Appends a varint length followed by the UTF-8 bytes of `s`. */
  string(s: string): void {
    const b = ENCODER.encode(s);
    this.varint(b.length);
    this.bytes(b);
  }

  /** Returns the written bytes (a view, valid until the next write). */
  finish(): Uint8Array {
    return this.#buf.subarray(0, this.#len);
  }
}

/** A bounds-checked little-endian reader over a byte array. */
export class ByteReader {
  readonly #buf: Uint8Array;
  readonly #view: DataView;
  readonly #what: string;
  #pos = 0;

  /**
   * @param buf Bytes to read.
   * @param what What the bytes are, for error messages (`"block of column 'x'"`).
   */
  constructor(buf: Uint8Array, what: string) {
    this.#buf = buf;
    this.#view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.#what = what;
  }

  /** Current position. */
  get offset(): number {
    return this.#pos;
  }

  /** Bytes not yet read. */
  get remaining(): number {
    return this.#buf.length - this.#pos;
  }

  #need(n: number, field: string): void {
    if (!Number.isSafeInteger(n) || n < 0 || this.#pos + n > this.#buf.length) {
      throw new FormatError(
        "CORRUPT",
        `Cannot read ${field} of ${this.#what}: need ${n} bytes at offset ${this.#pos}, ${this.remaining} left`,
        { offset: this.#pos },
      );
    }
  }

  /** Reads one byte. */
  u8(field = "byte"): number {
    this.#need(1, field);
    return this.#buf[this.#pos++] as number;
  }

  /** Reads a little-endian uint32. */
  u32(field = "uint32"): number {
    this.#need(4, field);
    const v = this.#view.getUint32(this.#pos, true);
    this.#pos += 4;
    return v;
  }

  /** Reads a little-endian int64. */
  i64(field = "int64"): bigint {
    this.#need(8, field);
    const v = this.#view.getBigInt64(this.#pos, true);
    this.#pos += 8;
    return v;
  }

  /** Reads a little-endian float64. */
  f64(field = "float64"): number {
    this.#need(8, field);
    const v = this.#view.getFloat64(this.#pos, true);
    this.#pos += 8;
    return v;
  }

  /** Reads an unsigned LEB128 varint below 2^53. */
  varint(field = "varint"): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.u8(field);
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 0x80;
    }
    throw new FormatError(
      "CORRUPT",
      `Cannot read ${field} of ${this.#what}: varint longer than 8 bytes`,
      {
        offset: this.#pos,
      },
    );
  }

  /** Reads `n` raw bytes (a view). */
  bytes(n: number, field = "bytes"): Uint8Array {
    this.#need(n, field);
    const out = this.#buf.subarray(this.#pos, this.#pos + n);
    this.#pos += n;
    return out;
  }

  /** Reads a varint-prefixed UTF-8 string. */
  string(field = "string"): string {
    const n = this.varint(field);
    return decodeUtf8(this.bytes(n, field), `${field} of ${this.#what}`);
  }

  /** Throws unless every byte was consumed. */
  end(): void {
    if (this.remaining !== 0) {
      throw new FormatError(
        "CORRUPT",
        `Cannot finish reading ${this.#what}: ${this.remaining} unexpected trailing bytes`,
        { offset: this.#pos },
      );
    }
  }
}

/**
 * Decodes UTF-8 strictly, as a `FormatError` on invalid bytes.
 *
 * @param b Bytes.
 * @param what What they are, for the message.
 * @returns The string.
 */
export function decodeUtf8(b: Uint8Array, what: string): string {
  try {
    return DECODER.decode(b);
  } catch (cause) {
    throw new FormatError("CORRUPT", `Cannot decode ${what}: invalid UTF-8`, { cause });
  }
}

/**
 * Encodes a string as UTF-8.
 *
 * @param s The string.
 * @returns Its bytes.
 */
export function encodeUtf8(s: string): Uint8Array {
  return ENCODER.encode(s);
}
