/**
 * The `zstd` codec (wire code `0x01`): Zstandard level 19 through Deno's
 * built-in `node:zlib`, native speed and no extra permission.
 *
 * Encoded form: exactly one Zstandard frame (RFC 8878), no dictionary, no
 * content checksum (every chunk already has a SHA-256 in the archive footer),
 * with the frame content size set (pledged), which costs 0 to 3 bytes and lets
 * {@linkcode zstd.decode} reject a block whose recorded length disagrees before
 * any decompression work.
 *
 * Encoding hands libzstd one output buffer big enough for the whole frame:
 * with smaller ones, Deno's `node:zlib` appends empty 9-byte frames when the
 * output of an incompressible block crosses a buffer boundary (seen on
 * 64 KiB random blocks). The encoder also walks its own frame and checks the
 * declared size before returning it.
 *
 * Decoding trusts nothing: the frame structure is walked first (magic, header,
 * block headers, end of frame at the end of the bytes, since `node:zlib`
 * silently ignores trailing bytes and accepts an empty input), then the
 * decompressor runs with its output capped at the expected length, so a
 * hostile frame cannot allocate more than `rawLength` bytes of output.
 * Every failure is a `CodecError`.
 *
 * Determinism: the same Deno build always gives the same bytes. Another Deno
 * release may bundle another libzstd and encode differently (any release
 * decodes every frame), so a cluster's nodes should run the same Deno version.
 *
 * Loading: `node:zlib` is imported on first use, not at startup. Until then the
 * first {@link DECODE_WITHOUT_ZLIB} bytes a process decodes go through
 * `_zstd_decompress.ts` (TypeScript, same output), so a quick command that reads a
 * footer and a few small blocks never pays for loading `node:zlib`.
 *
 * No I/O; the loaded module and the byte count above are its only state.
 *
 * @module
 */
import { type Codec, levelFor } from "./codec.ts";
import { CodecError, messageOf } from "./errors.ts";
import { zstdDecompress } from "./_zstd_decompress.ts";

type Zlib = typeof import("node:zlib");

/** Deno's `node:zlib`, once loaded (see {@link loadZlib}). */
let zlib: Zlib | null = null;

/**
 * Loads libzstd's binding on first use. `node:zlib` costs ~20 ms of CPU to load,
 * more than a quick command's whole work, so a process that only decodes a footer and
 * a few small blocks does that with `_zstd_decompress.ts` and never loads it.
 */
async function loadZlib(): Promise<Zlib> {
  return zlib ??= await import("node:zlib");
}

/**
 * Raw bytes a process decodes with `_zstd_decompress.ts` before it loads libzstd, in
 * frames of at most {@link SMALL_FRAME} bytes: a small archive's footer and first chunk
 * fit. The TypeScript decoder runs in V8's interpreter in a fresh process, so a larger
 * frame, or more of them, is quicker to decode after loading `node:zlib`.
 */
const DECODE_WITHOUT_ZLIB = 64 << 10;
const SMALL_FRAME = 16 << 10;
let decodedWithoutZlib = 0;

/** Zstandard compression level: the highest that stays in the normal (non-ultra) range. */
export const ZSTD_LEVEL = 19;

/** Zstandard frame magic number, little-endian `0xFD2FB528`. */
const FRAME_MAGIC = 0xfd2fb528;

/**
 * Compresses `data` into one Zstandard frame at level 19.
 *
 * @param data Bytes to compress (any length, including 0).
 * @returns One Zstandard frame with its content size set.
 * @throws {CodecError} `ENCODE_FAILED` if libzstd fails.
 */
export async function zstdEncode(data: Uint8Array, level?: number): Promise<Uint8Array> {
  const lib = await loadZlib();
  try {
    return encodeSync(lib, data, levelFor(zstd, level));
  } catch (cause) {
    throw cause instanceof CodecError ? cause : new CodecError(
      "ENCODE_FAILED",
      `Cannot encode zstd block of ${data.length} bytes: ${messageOf(cause)}`,
      { cause },
    );
  }
}

function encodeSync(
  { constants, zstdCompressSync, zstdDecompressSync }: Zlib,
  data: Uint8Array,
  level: number,
): Uint8Array {
  const compressed = zstdCompressSync(
    data,
    {
      params: {
        [constants.ZSTD_c_compressionLevel]: level,
        [constants.ZSTD_c_checksumFlag]: 0,
        [constants.ZSTD_c_contentSizeFlag]: 1,
      },
      pledgedSrcSize: data.length,
      // One output buffer that holds the whole frame: with smaller ones, Deno's
      // node:zlib appends empty frames when the output crosses a buffer boundary.
      chunkSize: compressBound(data.length),
    } as Parameters<typeof zstdCompressSync>[1],
  );
  // Copy: the result may be a view of the (input-sized) output buffer.
  let frame = new Uint8Array(compressed);
  const { end, contentSize } = walkFrame(frame, "encode");
  if (contentSize !== BigInt(data.length)) {
    throw new CodecError(
      "ENCODE_FAILED",
      `Cannot encode zstd block of ${data.length} bytes: the frame declares ${
        contentSize === null ? "no size" : `${contentSize} bytes`
      }`,
    );
  }
  if (end < frame.length) {
    // Defence in depth against the empty-frame quirk above: drop what follows
    // the frame only if it decodes to nothing.
    const rest = zstdDecompressSync(frame.subarray(end), { maxOutputLength: 1 });
    if (rest.length !== 0) {
      throw new CodecError(
        "ENCODE_FAILED",
        `Cannot encode zstd block of ${data.length} bytes: libzstd wrote a second non-empty frame`,
      );
    }
    frame = frame.slice(0, end);
  }
  return frame;
}

/** ZSTD_COMPRESSBOUND: the largest frame libzstd can write for `n` bytes, plus slack. */
function compressBound(n: number): number {
  const small = n < 128 << 10 ? ((128 << 10) - n) >> 11 : 0;
  return n + Math.floor(n / 256) + small + 1024;
}

/**
 * Decompresses one Zstandard frame that must expand to exactly `rawLength` bytes.
 *
 * @param data One Zstandard frame, as {@linkcode zstdEncode} writes it.
 * @param rawLength The exact decompressed length recorded for the block.
 * @returns The decompressed bytes.
 * @throws {CodecError} `DECODE_FAILED` if `data` is not exactly one valid
 * frame, `LENGTH_MISMATCH` if it expands to another length.
 * @throws {RangeError} If `rawLength` is not a non-negative safe integer (a caller bug).
 */
export async function zstdDecode(data: Uint8Array, rawLength: number): Promise<Uint8Array> {
  checkRawLength(rawLength);
  const { end, contentSize, hasChecksum } = walkFrame(data, "decode");
  if (end !== data.length) {
    throw new CodecError(
      "DECODE_FAILED",
      `Cannot decode zstd block of ${data.length} bytes: ${
        data.length - end
      } bytes follow the frame`,
    );
  }
  if (contentSize !== null && contentSize !== BigInt(rawLength)) {
    throw new CodecError(
      "LENGTH_MISMATCH",
      `Cannot decode zstd block: frame declares ${contentSize} bytes, expected ${rawLength}`,
    );
  }
  // Both decoders return the same bytes for every frame (`_zstd_decompress_test.ts`).
  if (
    zlib === null && !hasChecksum && rawLength <= SMALL_FRAME &&
    decodedWithoutZlib + rawLength <= DECODE_WITHOUT_ZLIB
  ) {
    decodedWithoutZlib += rawLength;
    return zstdDecompress(data, rawLength);
  }
  const { zstdDecompressSync } = await loadZlib();
  let out: Uint8Array;
  try {
    // maxOutputLength must be at least 1; an empty block decodes to 0 bytes anyway.
    out = zstdDecompressSync(data, { maxOutputLength: Math.max(1, rawLength) });
  } catch (cause) {
    if ((cause as { code?: unknown }).code === "ERR_BUFFER_TOO_LARGE") {
      throw new CodecError(
        "LENGTH_MISMATCH",
        `Cannot decode zstd block: it expands to more than the expected ${rawLength} bytes`,
        { cause },
      );
    }
    throw new CodecError(
      "DECODE_FAILED",
      `Cannot decode zstd block of ${data.length} bytes: ${messageOf(cause)}`,
      { cause },
    );
  }
  if (out.length !== rawLength) {
    throw new CodecError(
      "LENGTH_MISMATCH",
      `Cannot decode zstd block: it expands to ${out.length} bytes, expected ${rawLength}`,
    );
  }
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** Where a frame ends and the content size it declares (`null` when it declares none). */
interface FrameShape {
  end: number;
  contentSize: bigint | null;
  /** The frame ends with a content checksum (libzstd checks it). */
  hasChecksum: boolean;
}

/**
 * Walks the Zstandard frame at the start of `data` (RFC 8878 §3.1.1) without
 * decompressing it: magic, header, then block headers up to the last block.
 */
function walkFrame(data: Uint8Array, action: "encode" | "decode"): FrameShape {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const fail = (what: string): never => {
    throw new CodecError(
      action === "encode" ? "ENCODE_FAILED" : "DECODE_FAILED",
      `Cannot ${action} zstd block of ${data.length} bytes: ${what}`,
    );
  };
  if (data.length < 6) fail("too short for a frame header");
  if (view.getUint32(0, true) !== FRAME_MAGIC) {
    fail(`bad frame magic 0x${view.getUint32(0, true).toString(16).padStart(8, "0")}`);
  }
  const descriptor = view.getUint8(4);
  const fcsFlag = descriptor >> 6;
  const singleSegment = (descriptor & 0x20) !== 0;
  const hasChecksum = (descriptor & 0x04) !== 0;
  if ((descriptor & 0x08) !== 0) fail("reserved bit set in the frame header");
  if ((descriptor & 0x03) !== 0) fail("frame needs a dictionary, and blocks never use one");
  let pos = 5 + (singleSegment ? 0 : 1);
  const fcsBytes = [singleSegment ? 1 : 0, 2, 4, 8][fcsFlag] ?? 0;
  if (pos + fcsBytes > data.length) fail("truncated frame header");
  let contentSize: bigint | null = null;
  if (fcsBytes === 1) contentSize = BigInt(view.getUint8(pos));
  else if (fcsBytes === 2) contentSize = BigInt(view.getUint16(pos, true) + 256);
  else if (fcsBytes === 4) contentSize = BigInt(view.getUint32(pos, true));
  else if (fcsBytes === 8) contentSize = view.getBigUint64(pos, true);
  pos += fcsBytes;
  for (;;) {
    if (pos + 3 > data.length) fail(`truncated block header at byte ${pos}`);
    const header = view.getUint8(pos) | (view.getUint8(pos + 1) << 8) |
      (view.getUint8(pos + 2) << 16);
    pos += 3;
    const blockType = (header >> 1) & 3;
    const blockSize = header >>> 3;
    if (blockType === 3) fail(`reserved block type at byte ${pos - 3}`);
    pos += blockType === 1 ? 1 : blockSize; // an RLE block stores its one byte
    if (pos > data.length) fail(`truncated block ending at byte ${pos}`);
    if ((header & 1) !== 0) break;
  }
  if (hasChecksum) pos += 4;
  if (pos > data.length) fail("truncated frame checksum");
  return { end: pos, contentSize, hasChecksum };
}

function checkRawLength(rawLength: number): void {
  if (!Number.isSafeInteger(rawLength) || rawLength < 0) {
    throw new RangeError(`Cannot decode block: rawLength ${rawLength} is not a byte count`);
  }
}

/**
 * The `zstd` codec: Zstandard level 19, fast to decode, the default of `auto` on ties.
 *
 * @example Round-trip a block
 * ```ts
 * import assert from "node:assert/strict";
 * import { zstd } from "./zstd.ts";
 * const raw = new TextEncoder().encode("ab".repeat(1000));
 * const packed = await zstd.encode(raw);
 * assert.ok(packed.length < 100);
 * assert.deepEqual(await zstd.decode(packed, raw.length), raw);
 * ```
 */
export const zstd: Codec = Object.freeze({
  id: "zstd",
  code: 0x01,
  levels: Object.freeze({ min: 1, max: ZSTD_LEVEL, default: ZSTD_LEVEL }),
  encode: zstdEncode,
  decode: zstdDecode,
});
