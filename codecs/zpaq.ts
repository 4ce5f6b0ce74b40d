/**
 * The `zpaq` codec (wire code `0x03`): context-mixing compression by the real
 * `zpaq` 7.15 binary (Debian package `zpaq`), run through `Deno.Command` on
 * temp files. Needs `--allow-run=zpaq` and read/write access to the temp
 * directory (the system one, or `tempDir`).
 *
 * Encoded form: a complete one-file zpaq journaling archive, exactly as the
 * binary writes it. ZPAQ archives are self-describing (the decompression
 * model travels in the archive), so any method decodes with the same command
 * and the method is not recorded in the Permafrost header.
 *
 * Method: `-m5` by default, because the smallest output is the only reason to
 * pick this codec. Measured on 1 MiB column-like blocks (bytes; `-m3` and
 * `lzma2` for comparison): CSV text 112,400 (146,939; 176,092), float64 series
 * 97,395 (110,068; 157,632), delta varints 352,347 (354,933; 402,401). So
 * `-m5` is 1-24% smaller than `-m3` and 12-38% smaller than `lzma2`. `-m4` is
 * no middle ground: it lost to `-m3` on the float and varint samples. The
 * price is time, the same each way: about 3-4 s per MiB (6.6 s on random
 * bytes) against 0.2 s for `-m3`. `createZpaqCodec({ method: 3 })` trades size
 * for that speed with no format change. `auto` never picks zpaq unless it is
 * passed as a candidate.
 *
 * Each block costs about 1 KB of archive structure (the model, the block
 * locators, a SHA-1 per fragment, the file index), so zpaq suits big blocks.
 *
 * Determinism: zpaq stores the time of the update (in every block name) and
 * the file's mtime. Both are pinned to 2000-01-01 00:00:00 UTC (`-until` sets
 * the update date; `Deno.utime` the mtime), attributes are dropped
 * (`-noattributes`), the stored name is always `data`, one thread is used, and
 * `-fragment 24` makes the whole block a single dedupe fragment (fewer SHA-1s to
 * store and no content-defined cut points). The same input through the same
 * binary always gives the same bytes.
 *
 * Decoding trusts nothing: the bytes must start with the zpaq block locator
 * and end with an end-of-block byte (zpaq itself accepts an archive cut by one
 * byte); the archive's listing is read first, so a file that is not
 * `rawLength` bytes (say, a dedupe bomb) is rejected before anything is
 * extracted; only the file `data` is extracted, renamed into the temp dir;
 * every run has a timeout; the temp dir is always removed.
 *
 * @module
 */
import { type Codec, levelFor } from "./codec.ts";
import { CodecError, messageOf } from "./errors.ts";

/** Options of {@linkcode createZpaqCodec}. */
export interface ZpaqOptions {
  /** The zpaq executable, a name looked up on `PATH` or a path. Default `"zpaq"`. */
  readonly binary?: string;
  /** Compression method `1`..`5` (`-mN`). Default `5`. Decoding ignores it. */
  readonly method?: 1 | 2 | 3 | 4 | 5;
  /** Parent directory of the per-call temp dirs. Default: the system temp dir. */
  readonly tempDir?: string;
  /**
   * Time limit of one zpaq run, in milliseconds. Default: 2 minutes plus
   * 30 s per MiB of raw data (about ten times `-m5`'s speed), capped at about
   * 24 days (the longest `setTimeout` delay).
   */
  readonly timeoutMs?: number;
}

/** The default zpaq method: the smallest output zpaq 7.15 can write. */
export const ZPAQ_DEFAULT_METHOD = 5;

/** The fixed date of every update and every stored file: 2000-01-01 00:00:00 UTC. */
const FIXED_DATE_SECONDS = 946_684_800;
/** The same date in zpaq's `-until` notation. */
const FIXED_DATE_ZPAQ = "20000101000000";
/** The name the raw block is stored under inside the archive. */
const STORED_NAME = "data";
const ARCHIVE_NAME = "block.zpaq";
const OUTPUT_NAME = "out";
/**
 * How every unencrypted zpaq archive starts: the 13-byte block locator tag,
 * then `zPQ` (ZPAQ level 1/2 block header). A bare ZPAQ block (`zpaqwasm`) starts
 * the same way.
 */
export const ARCHIVE_PREFIX: Uint8Array = Uint8Array.from([
  0x37,
  0x6b,
  0x53,
  0x74,
  0xa0,
  0x31,
  0x83,
  0xd3,
  0x8c,
  0xb2,
  0x28,
  0xb0,
  0xd3,
  0x7a,
  0x50,
  0x51,
]);
/** The byte that ends every ZPAQ block, hence every archive. */
const END_OF_BLOCK = 0xff;
/** The longest delay `setTimeout` honours. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Longest excerpt of zpaq's output quoted in an error message. */
const EXCERPT_CHARS = 300;

/**
 * Builds a zpaq codec. The registry uses {@linkcode zpaq}, built with the
 * defaults; tests and tools build their own (another binary, a faster method).
 *
 * @param options Binary, method, temp dir and time limit; see {@linkcode ZpaqOptions}.
 * @returns A codec with id `zpaq` and wire code `0x03`.
 * @throws {RangeError} If an option is out of range.
 *
 * @example A codec that points at a missing binary
 * ```ts
 * import assert from "node:assert/strict";
 * import { createZpaqCodec } from "./zpaq.ts";
 * const codec = createZpaqCodec({ binary: "permafrost-no-such-zpaq" });
 * await assert.rejects(codec.encode(new Uint8Array(1)), { code: "BINARY_MISSING" });
 * ```
 */
export function createZpaqCodec(options: ZpaqOptions = {}): Codec {
  const binary = options.binary ?? "zpaq";
  const method = options.method ?? ZPAQ_DEFAULT_METHOD;
  if (!Number.isInteger(method) || method < 1 || method > 5) {
    throw new RangeError(`Cannot create zpaq codec: method ${method} is not 1..5`);
  }
  const timeoutMs = options.timeoutMs;
  if (timeoutMs !== undefined && !(timeoutMs > 0)) {
    throw new RangeError(`Cannot create zpaq codec: timeoutMs ${timeoutMs} is not positive`);
  }
  const runner: Runner = { binary, tempDir: options.tempDir, timeoutMs };

  const levels = Object.freeze({ min: 1, max: 5, default: method });

  async function zpaqEncode(data: Uint8Array, level?: number): Promise<Uint8Array> {
    const m = levelFor(codec, level);
    const what = `encode zpaq block of ${data.length} bytes`;
    return await inTempDir(runner, what, "ENCODE_FAILED", async (dir) => {
      const input = `${dir}/${STORED_NAME}`;
      await Deno.writeFile(input, data);
      await Deno.utime(input, FIXED_DATE_SECONDS, FIXED_DATE_SECONDS);
      await runZpaq(runner, what, "ENCODE_FAILED", dir, data.length, [
        "a",
        ARCHIVE_NAME,
        STORED_NAME,
        `-m${m}`,
        "-noattributes",
        "-fragment",
        "24",
        "-threads",
        "1",
        "-until",
        FIXED_DATE_ZPAQ,
      ]);
      return await Deno.readFile(`${dir}/${ARCHIVE_NAME}`);
    });
  }

  async function zpaqDecode(data: Uint8Array, rawLength: number): Promise<Uint8Array> {
    if (!Number.isSafeInteger(rawLength) || rawLength < 0) {
      throw new RangeError(`Cannot decode block: rawLength ${rawLength} is not a byte count`);
    }
    const what = `decode zpaq block of ${data.length} bytes`;
    checkFraming(data, what);
    return await inTempDir(runner, what, "DECODE_FAILED", async (dir) => {
      await Deno.writeFile(`${dir}/${ARCHIVE_NAME}`, data);
      const listing = await runZpaq(runner, what, "DECODE_FAILED", dir, rawLength, [
        "l",
        ARCHIVE_NAME,
        "-noattributes",
      ]);
      const listed = listedSize(listing, STORED_NAME);
      if (listed !== undefined && listed !== rawLength) {
        throw new CodecError(
          "LENGTH_MISMATCH",
          `Cannot ${what}: the archive holds ${listed} bytes, expected ${rawLength}`,
        );
      }
      await runZpaq(runner, what, "DECODE_FAILED", dir, rawLength, [
        "x",
        ARCHIVE_NAME,
        STORED_NAME,
        "-to",
        OUTPUT_NAME,
        "-noattributes",
        "-threads",
        "1",
      ]);
      const output = `${dir}/${OUTPUT_NAME}`;
      let info: Deno.FileInfo;
      try {
        info = await Deno.lstat(output);
      } catch (cause) {
        if (!(cause instanceof Deno.errors.NotFound)) throw cause;
        throw new CodecError(
          "DECODE_FAILED",
          `Cannot ${what}: the archive holds no file '${STORED_NAME}'`,
          { cause },
        );
      }
      if (!info.isFile) {
        throw new CodecError(
          "DECODE_FAILED",
          `Cannot ${what}: '${STORED_NAME}' in the archive is not a file`,
        );
      }
      if (info.size !== rawLength) {
        throw new CodecError(
          "LENGTH_MISMATCH",
          `Cannot ${what}: it expands to ${info.size} bytes, expected ${rawLength}`,
        );
      }
      return await Deno.readFile(output);
    });
  }

  const codec: Codec = Object.freeze({
    id: "zpaq",
    code: 0x03,
    binary,
    levels,
    encode: zpaqEncode,
    decode: zpaqDecode,
  });
  return codec;
}

/**
 * Rejects bytes that cannot be a zpaq archive without starting a process, and
 * catches a cut last byte, which zpaq itself tolerates.
 */
function checkFraming(data: Uint8Array, what: string): void {
  if (data.length === 0) throw new CodecError("DECODE_FAILED", `Cannot ${what}: it is empty`);
  if (data.length <= ARCHIVE_PREFIX.length || !ARCHIVE_PREFIX.every((b, i) => data[i] === b)) {
    throw new CodecError("DECODE_FAILED", `Cannot ${what}: it does not start like a zpaq archive`);
  }
  if (data[data.length - 1] !== END_OF_BLOCK) {
    throw new CodecError(
      "DECODE_FAILED",
      `Cannot ${what}: it does not end with a ZPAQ end-of-block byte, so it is truncated`,
    );
  }
}

/** How to run zpaq: fixed per codec instance. */
interface Runner {
  readonly binary: string;
  readonly tempDir: string | undefined;
  readonly timeoutMs: number | undefined;
}

/** Runs `body` in a fresh temp dir that is always removed; wraps stray errors. */
async function inTempDir<T>(
  runner: Runner,
  what: string,
  errorCode: "ENCODE_FAILED" | "DECODE_FAILED",
  body: (dir: string) => Promise<T>,
): Promise<T> {
  let dir: string | undefined;
  try {
    dir = await Deno.makeTempDir({ dir: runner.tempDir, prefix: "permafrost-zpaq-" });
    return await body(dir);
  } catch (cause) {
    if (cause instanceof CodecError) throw cause;
    throw new CodecError(errorCode, `Cannot ${what}: ${messageOf(cause)}`, { cause });
  } finally {
    if (dir !== undefined) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/**
 * Runs zpaq once in `cwd` and returns its stdout. Maps a missing or forbidden
 * binary, a timeout and a non-zero exit to `CodecError`s.
 */
async function runZpaq(
  runner: Runner,
  what: string,
  errorCode: "ENCODE_FAILED" | "DECODE_FAILED",
  cwd: string,
  rawBytes: number,
  args: string[],
): Promise<string> {
  // setTimeout fires at once for delays above 2^31 - 1 ms, so clamp (about 24 days).
  const timeoutMs = Math.min(
    runner.timeoutMs ?? 120_000 + 30_000 * Math.ceil(rawBytes / (1 << 20)),
    MAX_TIMER_MS,
  );
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, timeoutMs);
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(runner.binary, {
      args,
      cwd,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: abort.signal,
    }).output();
  } catch (cause) {
    if (timedOut) throw timeoutError(what, errorCode, timeoutMs, cause);
    throw spawnError(runner.binary, what, errorCode, cause);
  } finally {
    clearTimeout(timer);
  }
  if (timedOut) throw timeoutError(what, errorCode, timeoutMs);
  const stdout = new TextDecoder().decode(output.stdout);
  if (!output.success) {
    const stderr = new TextDecoder().decode(output.stderr);
    const status = output.signal === null
      ? `exited with code ${output.code}`
      : `was killed by ${output.signal}`;
    throw new CodecError(
      errorCode,
      `Cannot ${what}: zpaq ${status} (${excerpt(stderr) || excerpt(stdout) || "no output"})`,
    );
  }
  return stdout;
}

function spawnError(
  binary: string,
  what: string,
  errorCode: "ENCODE_FAILED" | "DECODE_FAILED",
  cause: unknown,
): CodecError {
  if (cause instanceof Deno.errors.NotFound) {
    return new CodecError(
      "BINARY_MISSING",
      `Cannot run '${binary}': the binary is missing; install the Debian package 'zpaq' (apt-get install -y zpaq)`,
      { cause },
    );
  }
  if (cause instanceof Deno.errors.NotCapable) {
    return new CodecError(
      "BINARY_DENIED",
      `Cannot run '${binary}': Deno does not allow it; grant --allow-run=${binary}`,
      { cause },
    );
  }
  if (cause instanceof Deno.errors.PermissionDenied) {
    return new CodecError(
      "BINARY_DENIED",
      `Cannot run '${binary}': permission denied; make the binary executable by this user`,
      { cause },
    );
  }
  return new CodecError(errorCode, `Cannot ${what}: zpaq did not start (${messageOf(cause)})`, {
    cause,
  });
}

function timeoutError(
  what: string,
  errorCode: "ENCODE_FAILED" | "DECODE_FAILED",
  timeoutMs: number,
  cause?: unknown,
): CodecError {
  return new CodecError(
    errorCode,
    `Cannot ${what}: zpaq ran longer than ${timeoutMs} ms and was stopped`,
    cause === undefined ? {} : { cause },
  );
}

/**
 * Reads the size of file `name` from the output of `zpaq l -noattributes`
 * (lines like `- 2000-01-01 00:00:00      1048576 data`). Returns `undefined`
 * when no line names it, so an unfamiliar listing never blocks a decode: the
 * extracted file is checked anyway.
 */
function listedSize(listing: string, name: string): number | undefined {
  for (const line of listing.split(/\r?\n/)) {
    const match = /^- \d{4}-\d\d-\d\d \d\d:\d\d:\d\d +(\d+) (.*)$/.exec(line);
    if (match && match[2] === name) return Number(match[1]);
  }
  return undefined;
}

function excerpt(text: string): string {
  const lines = text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== "");
  const joined = lines.join("; ");
  return joined.length > EXCERPT_CHARS ? `...${joined.slice(-EXCERPT_CHARS)}` : joined;
}

/**
 * The `zpaq` codec with the defaults: binary `zpaq` on `PATH`, method `-m5`,
 * system temp dir.
 */
export const zpaq: Codec = createZpaqCodec();
