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
 * Small inputs (up to {@link REUSE_MAX} bytes) are compressed by a libzstd context
 * kept between calls ({@link ReusedContext}): `zstdCompressSync` builds a stream
 * object and a fresh context on every call, ~20-50 µs, which is most of the cost of
 * a block of a few hundred bytes and of each predictor trial's sizing
 * ({@link zstdCompressedSize}). The frame is the same: the context is set to the
 * same parameters and pledged size before each input, and the first use in a
 * process checks its bytes against `zstdCompressSync`'s (a Deno whose internals
 * differ falls back to `zstdCompressSync` for good).
 *
 * Determinism: the same Deno build always gives the same bytes. Another Deno
 * release may bundle another libzstd and encode differently (any release
 * decodes every frame), so a cluster's nodes should run the same Deno version.
 *
 * Loading: `node:zlib` is imported on first use, not at startup. Until then the
 * first {@link DECODE_WITHOUT_ZLIB} bytes a process decodes go through
 * `_zstd_decompress.ts` (TypeScript) for small frames and libzstd compiled to
 * WebAssembly (`_zstd_wasm.ts`) for the others, both with the same output, so a quick
 * command that reads a footer and a few blocks (a slice of a large archive: ~70 kB of
 * footer and ~265 kB of blocks) never pays for loading `node:zlib`. Both are imported
 * on first use too; where WebAssembly cannot run, larger frames load `node:zlib`.
 *
 * No I/O; the loaded module, the kept contexts and the byte count above are its only
 * state.
 *
 * @module
 */
import { type Codec, levelFor } from "./codec.ts";
import { CodecError, messageOf } from "./errors.ts";
import { requireNodeBuiltin } from "../internal/node_builtin.ts";

type Zlib = typeof import("node:zlib");

/** Deno's `node:zlib`, once loaded (see {@link loadZlib}). */
let zlib: Zlib | null = null;

/**
 * Loads libzstd's binding on first use. `node:zlib` costs ~15-20 ms of CPU to load,
 * more than a quick command's whole work, so a process that only decodes a footer and
 * a few blocks does that with `_zstd_wasm.ts` and never loads it.
 */
async function loadZlib(): Promise<Zlib> {
  return zlib ??= await import("node:zlib");
}

/**
 * `node:zlib` loaded synchronously, for {@link zstdCompressedSize} (a predictor
 * trial is synchronous); `process.getBuiltinModule` gives the same module object.
 */
function zlibSync(): Zlib {
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

function encodeSync(lib: Zlib, data: Uint8Array, level: number): Uint8Array {
  const { constants, zstdCompressSync, zstdDecompressSync } = lib;
  const params = {
    [constants.ZSTD_c_compressionLevel]: level,
    [constants.ZSTD_c_checksumFlag]: 0,
    [constants.ZSTD_c_contentSizeFlag]: 1,
  };
  const reused = data.length <= REUSE_MAX
    ? reusedContext(lib, `block ${level}`, params)?.compress(data)
    : undefined;
  // Copy: the result is a view of an output buffer (the kept context's, or one
  // sized to the input).
  let frame = reused ? reused.slice() : new Uint8Array(zstdCompressSync(
    data,
    {
      params,
      pledgedSrcSize: data.length,
      // One output buffer that holds the whole frame: with smaller ones, Deno's
      // node:zlib appends empty frames when the output crosses a buffer boundary.
      chunkSize: compressBound(data.length),
    } as Parameters<typeof zstdCompressSync>[1],
  ));
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

/**
 * The size of `data` compressed into one zstd frame at `level` (no checksum, its
 * content size pledged), exactly as `zstdCompressSync(data, { params: { level },
 * pledgedSrcSize })` writes it: the yardstick of the writer's predictor trials.
 * Inputs up to {@link REUSE_MAX} bytes go through a kept context.
 *
 * @param data The bytes.
 * @param level The zstd level.
 * @returns The frame's length in bytes.
 */
export function zstdCompressedSize(data: Uint8Array, level: number): number {
  const lib = zlibSync();
  const params = { [lib.constants.ZSTD_c_compressionLevel]: level };
  if (data.length <= REUSE_MAX) {
    const frame = reusedContext(lib, `size ${level}`, params)?.compress(data);
    if (frame) return frame.length;
  }
  return lib.zstdCompressSync(
    data,
    { params, pledgedSrcSize: data.length } as Parameters<typeof lib.zstdCompressSync>[1],
  ).length;
}

/**
 * Inputs up to this size are compressed by a kept context. Above it the set-up is a
 * small part of the work, and a context sized for a large input is not kept alive;
 * the output also stays within `zstdCompressSync`'s default 16 KiB output buffer,
 * whose boundary adds empty frames to the size a trial measures.
 */
const REUSE_MAX = 8 << 10;

/** The native handle inside Deno's `ZstdCompress` stream (not a public API). */
interface ZstdHandle {
  reset(): void;
  init(params: Uint32Array, onProcess: () => void, pledgedSrcSize: number): boolean;
  writeSync(
    flush: number,
    input: Uint8Array,
    inOff: number,
    inLen: number,
    out: Uint8Array,
    outOff: number,
    outLen: number,
  ): void;
}

/**
 * A libzstd compression context kept between calls, through the handle of a
 * `node:zlib` `ZstdCompress` stream: before each input it is reset and set to the
 * same parameters with the input's size pledged, as a fresh `zstdCompressSync` sets
 * up its own, then the whole input is compressed in one `ZSTD_e_end` call.
 */
class ReusedContext {
  /** The stream that owns the handle, kept so the handle lives as long as this. */
  readonly #stream: unknown;
  readonly #handle: ZstdHandle;
  /** `[output bytes left, input bytes left]` after a write. */
  readonly #state: Uint32Array;
  /** Parameter values by parameter id, `0xFFFFFFFF` for unset (as `node:zlib` builds it). */
  readonly #params: Uint32Array;
  readonly #end: number;
  #out = new Uint8Array(compressBound(REUSE_MAX));

  constructor(
    stream: unknown,
    handle: ZstdHandle,
    state: Uint32Array,
    params: Uint32Array,
    end: number,
  ) {
    this.#stream = stream;
    this.#handle = handle;
    this.#state = state;
    this.#params = params;
    this.#end = end;
  }

  /** The frame of `data` (a view of this context's buffer, valid until the next call), or null. */
  compress(data: Uint8Array): Uint8Array | null {
    const handle = this.#handle;
    const out = this.#out;
    handle.reset();
    if (!handle.init(this.#params, noop, data.length)) return null;
    handle.writeSync(this.#end, data, 0, data.length, out, 0, out.length);
    const [outLeft, inLeft] = this.#state;
    // All input taken and room left over: libzstd ended the frame in this call.
    if (inLeft !== 0 || outLeft === undefined || outLeft === 0) return null;
    return out.subarray(0, out.length - outLeft);
  }
}

function noop(): void {}

/** Kept contexts by kind and level; null where one cannot be kept (see {@link makeContext}). */
const contexts = new Map<string, ReusedContext | null>();

function reusedContext(
  lib: Zlib,
  key: string,
  params: Record<number, number>,
): ReusedContext | null {
  let context = contexts.get(key);
  if (context === undefined) {
    try {
      context = makeContext(lib, params);
    } catch {
      context = null;
    }
    contexts.set(key, context);
  }
  return context;
}

/**
 * A kept context with `params`, or null when this runtime's `node:zlib` does not
 * have the internals it uses, or when its frames differ from `zstdCompressSync`'s
 * on a few test inputs.
 */
function makeContext(lib: Zlib, params: Record<number, number>): ReusedContext | null {
  const { constants } = lib;
  const Stream = (lib as unknown as {
    ZstdCompress?: new (options: object) => { _handle?: unknown; _writeState?: unknown };
  }).ZstdCompress;
  if (typeof Stream !== "function" || typeof constants.ZSTD_e_end !== "number") return null;
  const stream = new Stream({ params });
  const handle = stream._handle as Partial<ZstdHandle> | undefined;
  const state = stream._writeState;
  if (
    !handle || typeof handle.reset !== "function" || typeof handle.init !== "function" ||
    typeof handle.writeSync !== "function" || !(state instanceof Uint32Array) ||
    state.length !== 2
  ) {
    return null;
  }
  const ids = Object.keys(params).map(Number);
  const values = new Uint32Array(Math.max(...ids, 0) + 1).fill(0xFFFFFFFF);
  for (const id of ids) values[id] = params[id]!;
  const context = new ReusedContext(
    stream,
    handle as ZstdHandle,
    state,
    values,
    constants.ZSTD_e_end,
  );
  for (const sample of selfCheckInputs()) {
    const mine = context.compress(sample);
    const theirs = lib.zstdCompressSync(
      sample,
      { params, pledgedSrcSize: sample.length } as Parameters<typeof lib.zstdCompressSync>[1],
    );
    if (mine === null || !equalBytes(mine, theirs)) return null;
  }
  return context;
}

/**
 * Inputs a kept context must frame as `zstdCompressSync` does before it is used; made
 * when an encoder first needs them, not by every process that loads this module.
 */
function selfCheckInputs(): Uint8Array[] {
  return [
    new Uint8Array(0),
    new TextEncoder().encode("permafrost,".repeat(40)),
    Uint8Array.from({ length: 3000 }, (_, i) => (i * 2654435761) >>> 24),
  ];
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
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
