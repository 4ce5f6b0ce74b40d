/**
 * libzstd's decoder in WebAssembly (`_zstd_wasm_module.ts`): what `zstd.ts` decodes
 * with until the process has loaded `node:zlib`. Loading Deno's `node:zlib` costs
 * ~15 ms (with the Node compatibility layer it brings up), more than a quick
 * command's other work; compiling this 54 kB module costs ~0.5 ms and its first call
 * a few more (V8 compiles each function on its first call, Liftoff, then the hot ones
 * again in the background), after which it decodes at ~150-600 MB/s. The TypeScript
 * decoder (`_zstd_decompress.ts`), run cold in V8's interpreter, is slower than both
 * beyond a few kilobytes.
 *
 * It is libzstd itself, so it returns the bytes `node:zlib` returns; on a damaged
 * frame it fails, or returns what `node:zlib` returns (one-shot decoding refuses some
 * damaged frames that the streaming decoder lets through; `_zstd_wasm_test.ts`). The output is
 * capped at `rawLength` (libzstd fails with "destination buffer too small" rather
 * than write more), every failure is a `CodecError`, and a trap (a bug, or memory
 * the module could not grow) drops the instance so the next call starts afresh.
 *
 * State: one instance per thread (a Worker has its own), created on first use; its
 * heap grows to the largest frame decoded and stays.
 *
 * @module
 */
import { CodecError } from "./errors.ts";
import { ZSTD_WASM_BASE64 } from "./_zstd_wasm_module.ts";

/** The exports the module has (`_zstd_wasm_module.ts` names its build). */
interface Exports {
  memory: WebAssembly.Memory;
  malloc(size: number): number;
  free(pointer: number): void;
  /** Returns the decoded size, or a libzstd error code as a negative number. */
  ZSTD_decompress(dst: number, dstCapacity: number, src: number, srcSize: number): number;
}

/** libzstd's `ZSTD_error_dstSize_tooSmall`: the frame expands to more than asked. */
const DST_TOO_SMALL = 70;

/** `ZSTD_getErrorName` of the codes a damaged frame gives (the module does not export it). */
const ERROR_NAMES: Readonly<Record<number, string>> = {
  1: "Error (generic)",
  10: "Unknown frame descriptor",
  12: "Version not supported",
  14: "Unsupported frame parameter",
  16: "Frame requires too much memory for decoding",
  20: "Data corruption detected",
  22: "Restored data doesn't match checksum",
  24: "Header of Literals' block doesn't respect format specification",
  64: "Allocation error : not enough memory",
  72: "Src size is incorrect",
};

/** The instance of this thread: undefined before the first call, null where none can be made. */
let instance: Exports | null | undefined;

function exportsOrNull(): Exports | null {
  if (instance !== undefined) return instance;
  try {
    const bytes = fromBase64(ZSTD_WASM_BASE64);
    const module = new WebAssembly.Module(bytes);
    // The module tells its host when its memory grows; views are made per call instead.
    const made = new WebAssembly.Instance(module, {
      env: { emscripten_notify_memory_growth: () => {} },
    });
    instance = made.exports as unknown as Exports;
  } catch {
    // No WebAssembly in this runtime (e.g. --jitless): the caller uses libzstd itself.
    instance = null;
  }
  return instance;
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const native = (Uint8Array as { fromBase64?: (s: string) => Uint8Array<ArrayBuffer> })
    .fromBase64;
  if (native) return native(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * Whether this runtime can run the module (compiled and instantiated on the first
 * call, then kept).
 *
 * @returns True where {@linkcode zstdWasmDecompress} can decode.
 */
export function zstdWasmAvailable(): boolean {
  return exportsOrNull() !== null;
}

/**
 * Decompresses one Zstandard frame into exactly `rawLength` bytes with libzstd in
 * WebAssembly.
 *
 * @param data One Zstandard frame (`zstd.ts` has checked its structure).
 * @param rawLength The exact decompressed length.
 * @returns The decompressed bytes, or null where the module cannot run here or cannot
 * get the memory (the caller then uses `node:zlib`).
 * @throws {CodecError} `DECODE_FAILED` where libzstd fails, `LENGTH_MISMATCH` when the
 * frame expands to another length.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { zstdWasmDecompress } from "./_zstd_wasm.ts";
 * // A raw block: magic, descriptor (single segment, 1-byte size), size 3, header, "abc".
 * const frame = new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0x20, 3, 0x19, 0, 0, 97, 98, 99]);
 * assert.deepEqual(zstdWasmDecompress(frame, 3), new TextEncoder().encode("abc"));
 * ```
 */
export function zstdWasmDecompress(data: Uint8Array, rawLength: number): Uint8Array | null {
  const lib = exportsOrNull();
  if (lib === null) return null;
  // malloc(0) may return 0, which also means failure: ask for at least one byte.
  const src = lib.malloc(Math.max(1, data.length));
  const dst = src === 0 ? 0 : lib.malloc(Math.max(1, rawLength));
  if (dst === 0) {
    if (src !== 0) lib.free(src);
    return null;
  }
  let size: number;
  try {
    new Uint8Array(lib.memory.buffer, src, data.length).set(data);
    size = lib.ZSTD_decompress(dst, rawLength, src, data.length);
  } catch (cause) {
    // A trap leaves the heap in an unknown state: the next call makes a new instance.
    instance = undefined;
    throw new CodecError(
      "DECODE_FAILED",
      `Cannot decode zstd block of ${data.length} bytes: libzstd (WebAssembly) trapped`,
      { cause },
    );
  }
  try {
    if (size < 0) {
      const code = -size;
      if (code === DST_TOO_SMALL) {
        throw new CodecError(
          "LENGTH_MISMATCH",
          `Cannot decode zstd block: it expands to more than the expected ${rawLength} bytes`,
        );
      }
      const name = ERROR_NAMES[code] ?? `libzstd error ${code}`;
      throw new CodecError(
        "DECODE_FAILED",
        `Cannot decode zstd block of ${data.length} bytes: ${name}`,
        { cause: new Error(name) },
      );
    }
    if (size !== rawLength) {
      throw new CodecError(
        "LENGTH_MISMATCH",
        `Cannot decode zstd block: it expands to ${size} bytes, expected ${rawLength}`,
      );
    }
    // A copy: the heap is reused by the next call.
    return new Uint8Array(lib.memory.buffer, dst, size).slice();
  } finally {
    lib.free(src);
    lib.free(dst);
  }
}
