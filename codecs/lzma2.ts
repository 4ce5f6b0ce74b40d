/**
 * The `lzma2` codec (wire code `0x02`): LZMA2 at preset `6e` through the real
 * liblzma compiled to WebAssembly (`node-liblzma/wasm`).
 *
 * Preset: `6 | LZMA_PRESET_EXTREME`. Presets 6 to 9 differ only in dictionary
 * size (8, 16, 32, 64 MiB); the match finder and the extreme search are the
 * same. A dictionary larger than the block cannot find anything more, so for
 * blocks up to 8 MiB `6e` writes the same LZMA2 data as `xz -9e` (checked with
 * xz 5.4 on 1 MiB and 6 MiB samples: only the dictionary byte of the block
 * header differs), while its encoder needs about 94 MiB instead of 674 MiB.
 * That matters twice here: the WebAssembly heap of `node-liblzma` is capped at
 * 256 MiB (`9e` fails to allocate), and workers run several codecs at once.
 * Only a block above 8 MiB (rare for one column of a 50,000-row chunk) could
 * gain from a larger dictionary, by finding repeats more than 8 MiB apart.
 *
 * Encoded form: the raw LZMA2 stream only, without the `.xz` container. An
 * `.xz` file wraps each block in about 50 bytes (stream header and footer,
 * block header, index, CRCs) that carry nothing the archive does not already
 * know: the block length is in the chunk index, integrity is the chunk
 * SHA-256, and the LZMA2 properties (lc/lp/pb) travel inside the LZMA2 chunks.
 * On a column block that compresses to a few hundred bytes they are 10-30% of
 * the output, and would make `auto` prefer zstd for the wrong reason. The
 * wasm build exports no raw LZMA2 coder (`lzma_raw_encoder`/`lzma_raw_decoder`),
 * so:
 * - encode runs the `.xz` stream encoder (check NONE), then cuts the block's
 *   compressed data out of the stream, after checking that the stream has
 *   exactly the layout expected (one block, one LZMA2 filter, dictionary at
 *   most 8 MiB, the input's length in the index);
 * - decode rebuilds a minimal `.xz` stream around those bytes (fixed stream
 *   header, a 12-byte block header naming LZMA2 with a dictionary of at least
 *   `min(rawLength, 8 MiB)`, an index holding `rawLength`, the footer) and runs
 *   the `.xz` stream decoder on it. liblzma then checks the decoded length
 *   against the index for us.
 * The empty block is the one-byte LZMA2 end marker `0x00`.
 *
 * Both directions stream through fixed 1 MiB buffers on the wasm heap, so a
 * block of any size needs the same wasm memory (about 94 MiB to encode, at
 * most 9 MiB to decode), and decoded output is capped at `rawLength`: corrupt
 * or hostile bytes give a `CodecError`, never a hang or an unbounded allocation.
 *
 * Determinism: single-threaded liblzma, input fed in fixed-size slices, and a
 * pinned package version: the same input always gives the same bytes.
 *
 * Permissions: loading the wasm binary reads it from the npm cache
 * (Deno's npm cache, `$DENO_DIR/npm/...`), so `--allow-read` must cover it.
 *
 * @module
 */
import { crc32 } from "node:zlib";
import type { LZMAModule, WasmLzmaStream } from "node-liblzma/wasm";
import { type Codec, levelFor } from "./codec.ts";
import { CodecError, messageOf } from "./errors.ts";

/** liblzma preset: level 6 with the extreme flag (`xz -6e`). */
export const LZMA2_PRESET = (6 | 0x80000000) >>> 0;

/** The dictionary size of preset 6 (8 MiB), the largest a block may need. */
const MAX_DICT_SIZE = 8 << 20;
/** Bytes moved between JS and the wasm heap per `lzma_code` call. */
const IO_CHUNK = 1 << 20;
/** Decoder memory limit: far above what an 8 MiB dictionary needs (about 9 MiB). */
const DECODER_MEMLIMIT = 64 << 20;
/** The LZMA2 filter id in `.xz` block headers. */
const LZMA2_FILTER_ID = 0x21;
/** `.xz` stream header magic. */
const XZ_MAGIC = [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00] as const;
/** `.xz` stream flags: check type NONE. */
const STREAM_FLAGS = [0x00, 0x00] as const;
const XZ_HEADER_SIZE = 12;
const XZ_FOOTER_SIZE = 12;
/** The `.xz` stream header for check type NONE, the same for every block. */
const STREAM_HEADER = Uint8Array.from([
  ...XZ_MAGIC,
  ...STREAM_FLAGS,
  ...le32(crc32(Uint8Array.from(STREAM_FLAGS))),
]);

/** liblzma's `lzma_ret` names, for error messages. */
const LZMA_RET_NAMES: Record<number, string> = {
  2: "LZMA_NO_CHECK",
  3: "LZMA_UNSUPPORTED_CHECK",
  4: "LZMA_GET_CHECK",
  5: "LZMA_MEM_ERROR (out of memory)",
  6: "LZMA_MEMLIMIT_ERROR (memory limit reached)",
  7: "LZMA_FORMAT_ERROR (not an LZMA2 stream)",
  8: "LZMA_OPTIONS_ERROR (unsupported options)",
  9: "LZMA_DATA_ERROR (corrupt data)",
  10: "LZMA_BUF_ERROR (truncated data)",
  11: "LZMA_PROG_ERROR",
};

/** The liblzma package, loaded with its wasm on first use (not when the codec list loads). */
type Liblzma = typeof import("node-liblzma/wasm");

/** The package and its initialised wasm module. */
interface Lzma {
  lib: Liblzma;
  mod: LZMAModule;
}

let modulePromise: Promise<Lzma> | undefined;

// `_liblzma.ts` by a computed specifier: Deno resolves a literal npm import ahead of
// time, on every start, even when no lzma2 block is ever read (cli/lazy.ts says why;
// `deno compile` includes it from its list).
const LIBLZMA = new URL("./_liblzma.ts", import.meta.url);

/** Loads the package and its wasm once per process; a failed load is retried on the next call. */
async function lzmaModule(action: "encode" | "decode"): Promise<Lzma> {
  modulePromise ??= (async () => {
    const lib = (await import(LIBLZMA.href)) as Liblzma;
    return { lib, mod: await lib.initModule() };
  })();
  try {
    return await modulePromise;
  } catch (cause) {
    modulePromise = undefined;
    throw new CodecError(
      action === "encode" ? "ENCODE_FAILED" : "DECODE_FAILED",
      `Cannot ${action} lzma2 block: liblzma WebAssembly failed to load (${messageOf(cause)})`,
      { cause },
    );
  }
}

/**
 * Compresses `data` with LZMA2 preset `6e` and returns the raw LZMA2 stream.
 *
 * @param data Bytes to compress (any length, including 0).
 * @returns The raw LZMA2 stream (no `.xz` container).
 * @throws {CodecError} `ENCODE_FAILED` if liblzma fails or loads no wasm.
 */
export async function lzma2Encode(data: Uint8Array, level?: number): Promise<Uint8Array> {
  // Levels above 6 use dictionaries larger than a block may need (MAX_DICT_SIZE):
  // 0..6, each with the extreme flag, as `xz -Ne`.
  const preset = level === undefined ? LZMA2_PRESET : ((levelFor(lzma2, level) | 0x80000000) >>> 0);
  if (data.length === 0) return Uint8Array.of(0x00); // the LZMA2 end marker alone
  const lzma = await lzmaModule("encode");
  const xz = runCoder(lzma, data, `encode lzma2 block of ${data.length} bytes`, (stream) => {
    lzma.lib.encoderInit(stream, preset, lzma.lib.LZMA_CHECK_NONE);
  });
  return extractLzma2(xz, data.length);
}

/**
 * Decompresses a raw LZMA2 stream that must expand to exactly `rawLength` bytes.
 *
 * @param data A raw LZMA2 stream, as {@linkcode lzma2Encode} writes it.
 * @param rawLength The exact decompressed length recorded for the block.
 * @returns The decompressed bytes.
 * @throws {CodecError} `DECODE_FAILED` if `data` is not a valid LZMA2 stream,
 * `LENGTH_MISMATCH` if it expands to another length.
 * @throws {RangeError} If `rawLength` is not a non-negative safe integer (a caller bug).
 */
export async function lzma2Decode(data: Uint8Array, rawLength: number): Promise<Uint8Array> {
  if (!Number.isSafeInteger(rawLength) || rawLength < 0) {
    throw new RangeError(`Cannot decode block: rawLength ${rawLength} is not a byte count`);
  }
  if (data.length === 0) {
    throw new CodecError("DECODE_FAILED", "Cannot decode lzma2 block: it is empty");
  }
  const lzma = await lzmaModule("decode");
  const { xz, indexStart } = wrapLzma2(data, rawLength);
  const out = runCoder(lzma, xz, `decode lzma2 block of ${data.length} bytes`, (stream) => {
    lzma.lib.decoderInit(stream, DECODER_MEMLIMIT);
  }, { rawLength, indexStart });
  if (out.length !== rawLength) {
    throw new CodecError(
      "LENGTH_MISMATCH",
      `Cannot decode lzma2 block of ${data.length} bytes: it expands to ${out.length} bytes, expected ${rawLength}`,
    );
  }
  return out;
}

/** Limits of a decode run: the output cap and where the rebuilt index starts. */
interface DecodeLimits {
  rawLength: number;
  indexStart: number;
}

/**
 * Streams `input` through a freshly initialised liblzma coder, 1 MiB at a time
 * each way, and returns everything it wrote. With `limits` (decoding), output
 * beyond `rawLength` stops the run, and the output buffer grows with what is
 * actually decoded, so a bogus `rawLength` allocates nothing up front.
 *
 * @param what The action for error messages, e.g. `decode lzma2 block of 12 bytes`.
 */
function runCoder(
  { lib, mod }: Lzma,
  input: Uint8Array,
  what: string,
  init: (stream: WasmLzmaStream) => void,
  limits?: DecodeLimits,
): Uint8Array {
  const errorCode = limits ? "DECODE_FAILED" : "ENCODE_FAILED";
  let stream: WasmLzmaStream | undefined;
  let inPtr = 0;
  let outPtr = 0;
  try {
    stream = new lib.WasmLzmaStream(mod);
    inPtr = mod._malloc(IO_CHUNK);
    outPtr = mod._malloc(IO_CHUNK);
    if (inPtr === 0 || outPtr === 0) throw new Error("wasm malloc failed");
    init(stream);
    let out = new Uint8Array(Math.min(limits?.rawLength ?? IO_CHUNK, IO_CHUNK));
    let outLength = 0;
    let fed = 0;
    for (;;) {
      if (stream.availIn === 0 && fed < input.length) {
        const n = Math.min(IO_CHUNK, input.length - fed);
        mod.HEAPU8.set(input.subarray(fed, fed + n), inPtr);
        stream.setInput(inPtr, n);
        fed += n;
      }
      stream.setOutput(outPtr, IO_CHUNK);
      const ret = lib.code(stream, fed === input.length ? lib.LZMA_FINISH : lib.LZMA_RUN);
      const produced = IO_CHUNK - stream.availOut;
      if (produced > 0) {
        const needed = outLength + produced;
        if (limits && needed > limits.rawLength) {
          throw new CodecError(
            "LENGTH_MISMATCH",
            `Cannot ${what}: it expands to more than the expected ${limits.rawLength} bytes`,
          );
        }
        if (needed > out.length) {
          const size = Math.max(needed, out.length * 2);
          const grown = new Uint8Array(limits ? Math.min(size, limits.rawLength) : size);
          grown.set(out.subarray(0, outLength));
          out = grown;
        }
        out.set(mod.HEAPU8.subarray(outPtr, outPtr + produced), outLength);
        outLength = needed;
      }
      if (ret === lib.LZMA_STREAM_END) break;
      if (ret !== lib.LZMA_OK) {
        if (limits && stream.totalIn >= limits.indexStart && outLength !== limits.rawLength) {
          // The LZMA2 data ended cleanly and only the index (our rawLength) disagrees.
          throw new CodecError(
            "LENGTH_MISMATCH",
            `Cannot ${what}: it expands to ${outLength} bytes, expected ${limits.rawLength}`,
          );
        }
        const name = LZMA_RET_NAMES[ret] ?? `lzma_ret ${ret}`;
        throw new CodecError(errorCode, `Cannot ${what}: liblzma returned ${name}`);
      }
    }
    return outLength === out.length ? out : out.slice(0, outLength);
  } catch (cause) {
    if (cause instanceof CodecError) throw cause;
    throw new CodecError(errorCode, `Cannot ${what}: ${messageOf(cause)}`, { cause });
  } finally {
    if (stream) {
      lib.end(stream); // a no-op on a stream that never initialised
      stream.free();
    }
    if (inPtr !== 0) mod._free(inPtr);
    if (outPtr !== 0) mod._free(outPtr);
  }
}

/**
 * Cuts the single block's LZMA2 data out of an `.xz` stream written by the
 * encoder, after checking the stream has exactly the layout `wrapLzma2` rebuilds.
 */
function extractLzma2(xz: Uint8Array, rawLength: number): Uint8Array {
  try {
    return extractLzma2Unchecked(xz, rawLength);
  } catch (cause) {
    if (cause instanceof CodecError) throw cause;
    throw new CodecError(
      "ENCODE_FAILED",
      `Cannot encode lzma2 block of ${rawLength} bytes: liblzma wrote an unreadable .xz stream`,
      { cause },
    );
  }
}

function extractLzma2Unchecked(xz: Uint8Array, rawLength: number): Uint8Array {
  const fail = (what: string): never => {
    throw new CodecError(
      "ENCODE_FAILED",
      `Cannot encode lzma2 block of ${rawLength} bytes: liblzma wrote an unexpected .xz layout (${what})`,
    );
  };
  if (xz.length < XZ_HEADER_SIZE + XZ_FOOTER_SIZE + 12) fail(`only ${xz.length} bytes`);
  if (!STREAM_HEADER.every((b, i) => xz[i] === b)) fail("stream header");
  const footer = new DataView(xz.buffer, xz.byteOffset + xz.length - XZ_FOOTER_SIZE);
  const indexSize = (footer.getUint32(4, true) + 1) * 4;
  const indexStart = xz.length - XZ_FOOTER_SIZE - indexSize;
  if (indexStart <= XZ_HEADER_SIZE) fail("index size");
  const index = new VarintReader(xz, indexStart);
  if (index.byte() !== 0x00) fail("index indicator");
  if (index.varint() !== 1) fail("block count is not 1");
  const unpaddedSize = index.varint();
  if (index.varint() !== rawLength) fail("uncompressed size");

  const headerSize = ((xz[XZ_HEADER_SIZE] ?? 0) + 1) * 4;
  const header = new VarintReader(xz, XZ_HEADER_SIZE + 1);
  const flags = header.byte();
  if ((flags & 0x03) !== 0) fail("more than one filter");
  if ((flags & 0x40) !== 0) header.varint(); // compressed size
  if ((flags & 0x80) !== 0) header.varint(); // uncompressed size
  if (header.varint() !== LZMA2_FILTER_ID) fail("filter is not LZMA2");
  if (header.varint() !== 1) fail("LZMA2 properties size");
  if (dictSize(header.byte()) > MAX_DICT_SIZE) fail("dictionary above 8 MiB");

  const start = XZ_HEADER_SIZE + headerSize;
  const end = start + unpaddedSize - headerSize; // check NONE adds no bytes
  if (unpaddedSize <= headerSize || end > indexStart) fail("block size");
  return xz.slice(start, end);
}

/**
 * Rebuilds a minimal `.xz` stream (check NONE, one block) around a raw LZMA2
 * stream (`.xz` format 1.2.0, sections 2 and 3).
 */
function wrapLzma2(lzma2: Uint8Array, rawLength: number): { xz: Uint8Array; indexStart: number } {
  const need = Math.max(4096, Math.min(rawLength, MAX_DICT_SIZE));
  let dictByte = 0;
  while (dictSize(dictByte) < need) dictByte++;
  // Size byte (12 / 4 - 1), flags (one filter, no sizes), LZMA2 id, props size, props, padding.
  const blockHeaderBody = [0x02, 0x00, LZMA2_FILTER_ID, 0x01, dictByte, 0x00, 0x00, 0x00];
  const blockHeader = [...blockHeaderBody, ...le32(crc32(Uint8Array.from(blockHeaderBody)))];
  const padding = (4 - (lzma2.length % 4)) % 4;
  const indexBody = [
    0x00,
    ...varint(1),
    ...varint(blockHeader.length + lzma2.length),
    ...varint(rawLength),
  ];
  while (indexBody.length % 4 !== 0) indexBody.push(0x00);
  const index = [...indexBody, ...le32(crc32(Uint8Array.from(indexBody)))];
  const footerBody = [...le32(index.length / 4 - 1), ...STREAM_FLAGS];
  const footer = [...le32(crc32(Uint8Array.from(footerBody))), ...footerBody, 0x59, 0x5a];

  const indexStart = STREAM_HEADER.length + blockHeader.length + lzma2.length + padding;
  const xz = new Uint8Array(indexStart + index.length + footer.length);
  xz.set(STREAM_HEADER, 0);
  xz.set(blockHeader, STREAM_HEADER.length);
  xz.set(lzma2, STREAM_HEADER.length + blockHeader.length);
  xz.set(index, indexStart);
  xz.set(footer, indexStart + index.length);
  return { xz, indexStart };
}

/** The dictionary size an LZMA2 properties byte encodes (0 → 4 KiB, 22 → 8 MiB). */
function dictSize(props: number): number {
  if (props > 40) return Infinity;
  if (props === 40) return 0xffffffff;
  return (2 | (props & 1)) * 2 ** (Math.floor(props / 2) + 11);
}

/** Sequential reader of bytes and `.xz` multibyte integers (7 bits a byte, little-endian). */
class VarintReader {
  #bytes: Uint8Array;
  #pos: number;
  constructor(bytes: Uint8Array, pos: number) {
    this.#bytes = bytes;
    this.#pos = pos;
  }
  byte(): number {
    const b = this.#bytes[this.#pos++];
    if (b === undefined) throw new RangeError("Cannot read .xz field: past the end");
    return b;
  }
  varint(): number {
    let value = 0;
    for (let shift = 0; shift < 63; shift += 7) {
      const b = this.byte();
      value += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return value;
    }
    throw new RangeError("Cannot read .xz field: integer longer than 9 bytes");
  }
}

function varint(value: number): number[] {
  const out: number[] = [];
  while (value >= 0x80) {
    out.push((value % 0x80) | 0x80);
    value = Math.floor(value / 0x80);
  }
  out.push(value);
  return out;
}

function le32(value: number): number[] {
  return [value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, (value >>> 24) & 0xff];
}

/**
 * The `lzma2` codec: LZMA2 preset `6e` (the ratio of `xz -9e` on blocks up to
 * 8 MiB), raw LZMA2 stream without the `.xz` container.
 *
 * @example Round-trip a block
 * ```ts
 * import assert from "node:assert/strict";
 * import { lzma2 } from "./lzma2.ts";
 * const raw = new TextEncoder().encode("ab".repeat(1000));
 * const packed = await lzma2.encode(raw);
 * assert.ok(packed.length < 100);
 * assert.deepEqual(await lzma2.decode(packed, raw.length), raw);
 * ```
 */
export const lzma2: Codec = Object.freeze({
  id: "lzma2",
  code: 0x02,
  levels: Object.freeze({ min: 0, max: 6, default: 6 }),
  encode: lzma2Encode,
  decode: lzma2Decode,
});
