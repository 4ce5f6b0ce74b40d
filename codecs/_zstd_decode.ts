/**
 * Decoding of the `zstd` codec (`zstd.ts`, which re-exports {@link zstdDecode}):
 * the frame walk, then the decoder this process has — `_zstd_decompress.ts`
 * (TypeScript) or `_zstd_wasm.ts` (libzstd in WebAssembly) until it has loaded
 * `node:zlib`, libzstd itself after (see the budgets below). What reading an archive
 * needs of zstd, without the encoder (`zstd.ts`: reused libzstd contexts, their self
 * check, the trial sizing), which a read never runs: a 10-row slice or an audit loads
 * this module alone (~20 kB instead of ~55 kB of emitted code).
 *
 * Decoding trusts nothing: the frame structure is walked first (magic, header,
 * block headers, end of frame at the end of the bytes, since `node:zlib`
 * silently ignores trailing bytes and accepts an empty input), then the
 * decompressor runs with its output capped at the expected length, so a
 * hostile frame cannot allocate more than `rawLength` bytes of output.
 * Every failure is a `CodecError`.
 *
 * Loading: `node:zlib` is imported on first use, not at startup. Until then the
 * first {@link DECODE_WITHOUT_ZLIB} bytes a process decodes go through
 * `_zstd_decompress.ts` (TypeScript) for small frames and libzstd compiled to
 * WebAssembly (`_zstd_wasm.ts`) for the others, both with the same output, so a quick
 * command that reads a footer and a few blocks (a slice of a large archive: ~70 kB of
 * footer and ~265 kB of blocks) never pays for loading `node:zlib`. Both are imported
 * on first use too; where WebAssembly cannot run, larger frames load `node:zlib`.
 *
 * State: `node:zlib` once loaded ({@link loadZlib}, {@link zlibSync}, shared with the
 * encoder, which loads it through here) and the bytes decoded without it.
 *
 * @module
 */
import { CodecError, messageOf } from "./errors.ts";
import { requireNodeBuiltin } from "../internal/node_builtin.ts";

/** Deno's `node:zlib` module. */
export type Zlib = typeof import("node:zlib");

/** Deno's `node:zlib`, once loaded (see {@link loadZlib}). */
let zlib: Zlib | null = null;

/**
 * Loads libzstd's binding on first use. `node:zlib` costs ~15-20 ms of CPU to load,
 * more than a quick command's whole work, so a process that only decodes a footer and
 * a few blocks does that with `_zstd_wasm.ts` and never loads it.
 */
export async function loadZlib(): Promise<Zlib> {
  return zlib ??= await import("node:zlib");
}

/**
 * `node:zlib` loaded synchronously, for `zstd.ts`'s `zstdCompressedSize` (a predictor
 * trial is synchronous); `process.getBuiltinModule` gives the same module object.
 */
export function zlibSync(): Zlib {
  return zlib ??= requireNodeBuiltin<Zlib>("node:zlib");
}

/**
 * Raw bytes a process decodes before it loads `node:zlib`. Frames of at most
 * {@link SMALL_FRAME} bytes, {@link DECODE_WITHOUT_ZLIB_TS} in all, go through the
 * TypeScript decoder: a small archive's footer and blocks, where compiling the
 * WebAssembly decoder and its first call (~3-4 ms) would cost more than decoding them
 * in V8's interpreter. The rest, up to {@link DECODE_WITHOUT_ZLIB} in all, through
 * libzstd in WebAssembly (~6 ms a MiB at first, against <1 ms native; ~4 ms to set up):
 * a footer and a chunk's blocks (~335 kB for a slice of flights-3m), well under the
 * ~15 ms of loading `node:zlib`. A process that reads more loads `node:zlib` after
 * that anyway, so the budget is what such a process pays for nothing: a full thaw on
 * this thread ~8 ms. Worker threads (a thaw's or freeze's pool) only run for large
 * reads, so they skip the WebAssembly decoder ({@link IN_WORKER}).
 */
const DECODE_WITHOUT_ZLIB = 512 << 10;
const DECODE_WITHOUT_ZLIB_TS = 64 << 10;
const SMALL_FRAME = 16 << 10;
let decodedWithoutZlib = 0;
let decodedInTypeScript = 0;

/**
 * The two decoders' modules, by computed specifiers: a literal `import("./x.ts")` makes
 * Deno read and parse the module (77 kB for the WebAssembly one) whenever it loads this
 * one (`cli/lazy.ts` lists them for `deno compile`, `mod.ts` names them).
 */
const TS_DECODER = new URL("./_zstd_decompress.ts", import.meta.url);
const WASM_DECODER = new URL("./_zstd_wasm.ts", import.meta.url);

/** True in a Worker thread (`DedicatedWorkerGlobalScope`), false on a process's main thread. */
const IN_WORKER = typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope ===
  "function";

/** The WebAssembly decoder's module once imported; null where it cannot run. */
let wasmDecoder: typeof import("./_zstd_wasm.ts") | null | undefined;

/**
 * Decodes `data` without `node:zlib`, or returns null when this process should load it:
 * its budget is spent, or neither decoder here can take the frame.
 */
async function decodeWithoutZlib(
  data: Uint8Array,
  rawLength: number,
  hasChecksum: boolean,
): Promise<Uint8Array | null> {
  if (decodedWithoutZlib + rawLength > DECODE_WITHOUT_ZLIB) return null;
  if (
    !hasChecksum && rawLength <= SMALL_FRAME &&
    decodedInTypeScript + rawLength <= DECODE_WITHOUT_ZLIB_TS
  ) {
    const { zstdDecompress } =
      (await import(TS_DECODER.href)) as typeof import("./_zstd_decompress.ts");
    const out = zstdDecompress(data, rawLength);
    decodedInTypeScript += rawLength;
    decodedWithoutZlib += rawLength;
    return out;
  }
  if (IN_WORKER) return null;
  if (wasmDecoder === undefined) {
    const module = (await import(WASM_DECODER.href)) as typeof import("./_zstd_wasm.ts");
    wasmDecoder = module.zstdWasmAvailable() ? module : null;
  }
  const out = wasmDecoder?.zstdWasmDecompress(data, rawLength) ?? null;
  if (out !== null) decodedWithoutZlib += rawLength;
  return out;
}

/** Zstandard frame magic number, little-endian `0xFD2FB528`. */
const FRAME_MAGIC = 0xfd2fb528;

/**
 * Decompresses one Zstandard frame that must expand to exactly `rawLength` bytes.
 *
 * @param data One Zstandard frame, as `zstd.ts`'s `zstdEncode` writes it.
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
  // Every decoder returns the same bytes for every frame (`_zstd_wasm_test.ts`,
  // `_zstd_decompress_test.ts`).
  if (zlib === null) {
    const out = await decodeWithoutZlib(data, rawLength, hasChecksum);
    if (out !== null) return out;
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
export interface FrameShape {
  end: number;
  contentSize: bigint | null;
  /** The frame ends with a content checksum (libzstd checks it). */
  hasChecksum: boolean;
}

/**
 * Walks the Zstandard frame at the start of `data` (RFC 8878 §3.1.1) without
 * decompressing it: magic, header, then block headers up to the last block.
 */
export function walkFrame(data: Uint8Array, action: "encode" | "decode"): FrameShape {
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
