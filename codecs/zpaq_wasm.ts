/**
 * The `zpaqwasm` codec (wire code `0x04`): zpaq's context mixing in process,
 * libzpaq 7.15 compiled to WebAssembly (`zpaq_wasm/zpaq.wasm`, built by
 * `zpaq_wasm/build.sh` from the vendored public-domain sources). No binary, no
 * temp files, no process per block, no permission beyond reading the `.wasm`.
 *
 * Encoded form: one ZPAQ block as `libzpaq::compressBlock()` writes it: the
 * 13-byte locator tag, `zPQ`, level 2, the model (COMP and HCOMP), one segment
 * with an empty name and the raw length in decimal as its comment, the
 * compressed data, end of segment without SHA-1 (every chunk has a SHA-256),
 * end of block. About 30 bytes plus the model, where the `zpaq` codec's
 * journaling archive costs about 1 KB per block. Any ZPAQ decoder reads it
 * (`zpaq x` extracts it as a streaming archive); the model travels with the
 * data, so a level is never needed to decode.
 *
 * Levels 1..5 are zpaq's methods `-m1`..`-m5`, with the arguments zpaq 7.15's
 * `add` computes for a one-fragment block (its redundancy, text and x86
 * tests, as `zpaq a -m5 -fragment 24` does for the `zpaq` codec): the same
 * compressed data as the binary, without the archive around it.
 *
 * Decoding trusts nothing (see `zpaq_wasm/zpaq_wasm.cpp`): the block must
 * start at byte 0 and end at the last byte; its model may not need more
 * memory than the encoder could have given a block of `rawLength` bytes;
 * the segment must declare `rawLength` (else `LENGTH_MISMATCH` before any
 * decoding); the output is capped at `rawLength`; the model may decode at most
 * {@linkcode decodedLimit} bytes and run at most {@linkcode stepBudget} ZPAQL
 * instructions, so a corrupt or hostile model fails in time proportional to
 * `rawLength`, never loops. Every failure is a `CodecError`.
 *
 * Each call runs in a fresh instance of the compiled module, so a failure
 * (which unwinds the wasm stack through a JavaScript exception) leaves nothing
 * behind, and the memory a large block needed goes with the instance. The work
 * is synchronous on the calling thread, like `lzma2`: freezes encode in the
 * block pool's Workers.
 *
 * Determinism: single-threaded, no clock, no randomness: the same `.wasm`
 * always gives the same bytes.
 *
 * @module
 */
import { type Codec, levelFor } from "./codec.ts";
import { CodecError, messageOf } from "./errors.ts";

/** Where the module is, beside this file. */
const WASM_URL = new URL("./zpaq_wasm/zpaq.wasm", import.meta.url);

/** The failure kinds `pf_fail` reports (`zpaq_wasm.cpp`). */
const FAIL_CORRUPT = 1;
const FAIL_LENGTH = 2;
const FAIL_MEMORY = 3;

/**
 * ZPAQL instructions a block may run per byte (of `decodedLimit` plus
 * `rawLength`) before the decoder gives up. The encoder's own models run at most
 * about 180 per raw byte (level 5 on text; 30 to 60 at levels 1..4), so this is
 * over 15 times what a real block needs, and a hostile model stops after a few
 * seconds per MiB.
 */
const STEPS_PER_BYTE = 1024;
/** The smallest block length the memory limit assumes (`compressBlock()` sizes its tables for 1 MiB at least). */
const MIN_TABLE_BLOCK = 1 << 20;
/** Headroom of the decoded-bytes limit: the postprocessor program (at most 64 KiB) and tiny blocks. */
const DECODED_ALLOWANCE = 1 << 16;

/** The exports of `zpaq.wasm`. */
interface ZpaqExports {
  memory: WebAssembly.Memory;
  _initialize(): void;
  pf_input(length: number): number;
  pf_output(): number;
  pf_output_length(): number;
  pf_compress(length: number, level: number): void;
  pf_decompress(
    length: number,
    rawLength: number,
    memoryLimit: number,
    decodedLimit: number,
    stepBudget: number,
  ): void;
}

/** What `pf_fail` throws through the wasm frames. */
class ZpaqFailure extends Error {
  readonly kind: number;
  constructor(kind: number, message: string) {
    super(message);
    this.kind = kind;
  }
}

let modulePromise: Promise<WebAssembly.Module> | undefined;

/** Compiles the module once per thread; a failed load is retried on the next call. */
async function compiledModule(what: string, errorCode: ZpaqCode): Promise<WebAssembly.Module> {
  modulePromise ??= (async () => {
    const bytes = WASM_URL.protocol === "file:"
      ? await Deno.readFile(WASM_URL)
      : new Uint8Array(await (await fetch(WASM_URL)).arrayBuffer());
    return await WebAssembly.compile(bytes);
  })();
  try {
    return await modulePromise;
  } catch (cause) {
    modulePromise = undefined;
    throw new CodecError(
      errorCode,
      `Cannot ${what}: ${WASM_URL.pathname} failed to load (${messageOf(cause)})`,
      { cause },
    );
  }
}

type ZpaqCode = "ENCODE_FAILED" | "DECODE_FAILED";

/** A fresh instance, initialised (static constructors run). */
function instantiate(module: WebAssembly.Module): ZpaqExports {
  // The memory is known once instantiated; pf_fail only runs after that.
  const instance: { memory?: WebAssembly.Memory } = {};
  const imports = {
    env: {
      pf_fail(kind: number, message: number, length: number): never {
        const text = instance.memory === undefined
          ? "unknown failure"
          : new TextDecoder().decode(new Uint8Array(instance.memory.buffer, message, length));
        throw new ZpaqFailure(kind, text);
      },
      emscripten_notify_memory_growth(): void {},
    },
    wasi_snapshot_preview1: {
      proc_exit(code: number): never {
        throw new ZpaqFailure(FAIL_CORRUPT, `libzpaq exited with code ${code}`);
      },
    },
  };
  const exports = new WebAssembly.Instance(module, imports).exports as unknown as ZpaqExports;
  instance.memory = exports.memory;
  exports._initialize();
  return exports;
}

/** Copies `data` into the instance's input buffer. */
function setInput(wasm: ZpaqExports, data: Uint8Array): void {
  const ptr = wasm.pf_input(data.length);
  if (data.length > 0) new Uint8Array(wasm.memory.buffer, ptr, data.length).set(data);
}

/** A copy of the instance's output buffer. */
function takeOutput(wasm: ZpaqExports): Uint8Array {
  const length = wasm.pf_output_length();
  if (length === 0) return new Uint8Array(0);
  return new Uint8Array(wasm.memory.buffer, wasm.pf_output(), length).slice();
}

/** Maps anything thrown inside the module to a `CodecError`. */
function codecErrorOf(cause: unknown, what: string, errorCode: ZpaqCode): CodecError {
  if (cause instanceof CodecError) return cause;
  if (cause instanceof ZpaqFailure) {
    const code = cause.kind === FAIL_LENGTH
      ? "LENGTH_MISMATCH"
      : cause.kind === FAIL_MEMORY && errorCode === "DECODE_FAILED"
      ? "DECODE_FAILED"
      : errorCode;
    const reason = cause.kind === FAIL_MEMORY
      ? `out of WebAssembly memory (${cause.message})`
      : cause.message;
    return new CodecError(code, `Cannot ${what}: ${reason}`, { cause });
  }
  // A trap (out-of-bounds access, unreachable) or a failed allocation of the instance.
  return new CodecError(errorCode, `Cannot ${what}: ${messageOf(cause)}`, { cause });
}

/**
 * The most memory (bytes, as libzpaq counts it) a block's model may need.
 * `compressBlock()` sizes its tables by the block's length rounded up to a power
 * of two, at least 1 MiB (`lg(n + 4095) - 20`); level 5 needs the most, about
 * 70 MiB for a block up to 1 MiB and 135 MiB up to 4 MiB (measured): 256 times
 * the rounded length leaves room for every level and its periodic models.
 *
 * @param rawLength The block's expected length.
 */
export function memoryLimit(rawLength: number): number {
  let rounded = MIN_TABLE_BLOCK;
  while (rounded < rawLength + 4096) rounded *= 2;
  return 256 * rounded;
}

/**
 * The most bytes a block's model may decode before postprocessing: LZ77 and
 * BWT output (levels 1..4) is shorter than the raw bytes plus a little.
 *
 * @param rawLength The block's expected length.
 */
export function decodedLimit(rawLength: number): number {
  return 2 * rawLength + DECODED_ALLOWANCE;
}

/**
 * The most ZPAQL instructions a block may run while decoding.
 *
 * @param rawLength The block's expected length.
 */
export function stepBudget(rawLength: number): number {
  return STEPS_PER_BYTE * (decodedLimit(rawLength) + rawLength);
}

/**
 * Compresses `data` into one ZPAQ block at `level` (zpaq's `-mN`).
 *
 * @param data Bytes to compress (any length below 2 GiB, including 0).
 * @param level 1 (fastest) to 5 (smallest, the default).
 * @returns The ZPAQ block.
 * @throws {CodecError} `ENCODE_FAILED` if the module fails to load or runs out of memory.
 */
export async function zpaqWasmEncode(data: Uint8Array, level?: number): Promise<Uint8Array> {
  const method = levelFor(zpaqWasm, level);
  const what = `encode zpaqwasm block of ${data.length} bytes`;
  if (data.length >= 2 ** 31) {
    throw new CodecError("ENCODE_FAILED", `Cannot ${what}: blocks must be under 2 GiB`);
  }
  const module = await compiledModule(what, "ENCODE_FAILED");
  try {
    const wasm = instantiate(module);
    setInput(wasm, data);
    wasm.pf_compress(data.length, method);
    return takeOutput(wasm);
  } catch (cause) {
    throw codecErrorOf(cause, what, "ENCODE_FAILED");
  }
}

/**
 * Decompresses one ZPAQ block that must expand to exactly `rawLength` bytes.
 *
 * @param data One ZPAQ block, as {@linkcode zpaqWasmEncode} writes it.
 * @param rawLength The exact decompressed length recorded for the block.
 * @returns The decompressed bytes.
 * @throws {CodecError} `DECODE_FAILED` if `data` is not exactly one valid block
 * within the limits above, `LENGTH_MISMATCH` if it expands to another length.
 * @throws {RangeError} If `rawLength` is not a non-negative safe integer (a caller bug).
 */
export async function zpaqWasmDecode(data: Uint8Array, rawLength: number): Promise<Uint8Array> {
  if (!Number.isSafeInteger(rawLength) || rawLength < 0) {
    throw new RangeError(`Cannot decode block: rawLength ${rawLength} is not a byte count`);
  }
  const what = `decode zpaqwasm block of ${data.length} bytes`;
  if (data.length === 0) throw new CodecError("DECODE_FAILED", `Cannot ${what}: it is empty`);
  if (data.length >= 2 ** 31) {
    throw new CodecError("DECODE_FAILED", `Cannot ${what}: blocks must be under 2 GiB`);
  }
  const module = await compiledModule(what, "DECODE_FAILED");
  let out: Uint8Array;
  try {
    const wasm = instantiate(module);
    setInput(wasm, data);
    wasm.pf_decompress(
      data.length,
      rawLength,
      memoryLimit(rawLength),
      decodedLimit(rawLength),
      stepBudget(rawLength),
    );
    out = takeOutput(wasm);
  } catch (cause) {
    throw codecErrorOf(cause, what, "DECODE_FAILED");
  }
  if (out.length !== rawLength) {
    throw new CodecError(
      "LENGTH_MISMATCH",
      `Cannot ${what}: it expands to ${out.length} bytes, expected ${rawLength}`,
    );
  }
  return out;
}

/**
 * The `zpaqwasm` codec: zpaq's methods 1..5 (default 5) in process, one bare
 * ZPAQ block per archive block.
 *
 * @example Round-trip a block
 * ```ts
 * import assert from "node:assert/strict";
 * import { zpaqWasm } from "./zpaq_wasm.ts";
 * const raw = new TextEncoder().encode("ab".repeat(1000));
 * const packed = await zpaqWasm.encode(raw);
 * assert.ok(packed.length < raw.length / 4); // the model description is most of it
 * assert.deepEqual(await zpaqWasm.decode(packed, raw.length), raw);
 * ```
 */
export const zpaqWasm: Codec = Object.freeze({
  id: "zpaqwasm",
  code: 0x04,
  levels: Object.freeze({ min: 1, max: 5, default: 5 }),
  encode: zpaqWasmEncode,
  decode: zpaqWasmDecode,
});
