/**
 * Where an archive's bytes come from: a local file, or an object read by ranges
 * (`storage/range_reader.ts` fits this interface). The reader asks only for sizes and
 * byte ranges, so it reads archives wherever they are.
 *
 * @module
 */
import { nodePath } from "../internal/node_builtin.ts";
import { FormatError } from "./errors.ts";

/** Random access to an archive's bytes. */
export interface ByteSource {
  /** Name for messages (the path or URI). */
  readonly name: string;
  /** Size in bytes. */
  readonly size: number;
  /** `length` bytes at `offset` (fewer only past the end). */
  read(offset: number, length: number): Promise<Uint8Array>;
  /** A span about to be read block by block (a remote source fetches it in one request). */
  prefetch?(offset: number, length: number): Promise<void>;
  /** Releases it. */
  close(): void;
}

/**
 * Reads of at most this many bytes from a local file are synchronous: a footer, a
 * header, a block. An async seek and read are two round trips through Deno's event
 * loop, ~0.1 ms each when the process is fresh, against ~10 µs for a read the page
 * cache answers; a slice makes ~20 of them. Larger reads stay async, so a slow disk
 * does not hold the event loop for long.
 */
const SYNC_READ_MAX = 256 << 10;

/**
 * Opens a local file as a byte source (reads are serialized: they share the cursor).
 *
 * @param path The file.
 * @returns The source.
 * @throws {FormatError} BAD_ARGUMENT naming the absolute path when it cannot be opened.
 */
// deno-lint-ignore require-await -- async so that a file that cannot be opened is a rejection, as callers await it
export async function openFileSource(path: string): Promise<ByteSource> {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch (cause) {
    const why = cause instanceof Deno.errors.NotFound
      ? `no such file${
        nodePath().isAbsolute(path) ? "" : ` (looked for ${nodePath().resolve(path)})`
      }`
      : String((cause as Error)?.message ?? cause);
    throw new FormatError("BAD_ARGUMENT", `Cannot open archive '${path}': ${why}`, { path, cause });
  }
  let size: number;
  try {
    size = file.statSync().size;
  } catch (cause) {
    file.close();
    throw new FormatError(
      "BAD_ARGUMENT",
      `Cannot open archive '${path}': ${(cause as Error).message}`,
      {
        path,
        cause,
      },
    );
  }
  let lock: Promise<unknown> = Promise.resolve();
  const readSync = (offset: number, length: number): Uint8Array => {
    const out = new Uint8Array(Math.max(0, Math.min(length, size - offset)));
    file.seekSync(offset, Deno.SeekMode.Start);
    let at = 0;
    while (at < out.length) {
      const n = file.readSync(out.subarray(at));
      if (n === null || n === 0) break;
      at += n;
    }
    return at === out.length ? out : out.subarray(0, at);
  };
  const readAt = async (offset: number, length: number): Promise<Uint8Array> => {
    if (length <= SYNC_READ_MAX) return readSync(offset, length);
    const out = new Uint8Array(Math.max(0, Math.min(length, size - offset)));
    await file.seek(offset, Deno.SeekMode.Start);
    let at = 0;
    while (at < out.length) {
      const n = await file.read(out.subarray(at));
      if (n === null || n === 0) break;
      at += n;
    }
    return at === out.length ? out : out.subarray(0, at);
  };
  return {
    name: path,
    size,
    read(offset: number, length: number): Promise<Uint8Array> {
      const next = lock.then(() => readAt(offset, length));
      lock = next.catch(() => {});
      return next;
    },
    close(): void {
      try {
        file.close();
      } catch { /* already closed */ }
    },
  };
}

/**
 * Reads exactly `length` bytes at `offset`, or throws TRUNCATED.
 *
 * @param source The source.
 * @param offset First byte.
 * @param length Bytes.
 * @returns The bytes.
 * @throws {FormatError} TRUNCATED naming where the bytes ran out.
 */
export async function readExact(
  source: ByteSource,
  offset: number,
  length: number,
): Promise<Uint8Array> {
  const bytes = await source.read(offset, length);
  if (bytes.length !== length) {
    throw new FormatError(
      "TRUNCATED",
      `Cannot read archive '${source.name}': expected ${length} bytes at offset ${offset}, found ${bytes.length}`,
      { path: source.name, offset: offset + bytes.length },
    );
  }
  return bytes;
}
