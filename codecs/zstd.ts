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
 * Decoding (`_zstd_decode.ts`, re-exported here) trusts nothing: the frame structure
 * is walked first, then the decoder runs with its output capped at the expected
 * length. It lives in a module of its own so that a read (a slice, an audit) loads
 * none of the encoder below; every failure is a `CodecError`.
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
 * Loading: `node:zlib` is imported on first use (through `_zstd_decode.ts`, which
 * holds it for both directions and decodes without it until a process has read more
 * than a footer and a few blocks).
 *
 * No I/O; the kept contexts are its only state.
 *
 * @module
 */
import { type Codec, levelFor } from "./codec.ts";
import { CodecError, messageOf } from "./errors.ts";
import { loadZlib, walkFrame, type Zlib, zlibSync, zstdDecode } from "./_zstd_decode.ts";

export { zstdDecode };

/** Zstandard compression level: the highest that stays in the normal (non-ultra) range. */
export const ZSTD_LEVEL = 19;

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
