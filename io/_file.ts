/**
 * File plumbing for the readers and writers: opening with typed errors, reading a
 * byte range in chunks, writing fully, and removing what a failed write left.
 *
 * @module
 */
import { nodePath } from "../internal/node_builtin.ts";
import { IoError } from "./errors.ts";

/** Default size of one read from a source file. */
export const READ_CHUNK_BYTES = 1 << 20;

/**
 * Opens a file for reading, mapping failures to `IoError` READ_FAILED.
 *
 * @param path File to open.
 * @returns The open file.
 */
export async function openForRead(path: string): Promise<Deno.FsFile> {
  try {
    return await Deno.open(path, { read: true });
  } catch (cause) {
    throw readFailed(path, cause);
  }
}

/**
 * Returns a file's size in bytes, mapping failures to `IoError` READ_FAILED.
 *
 * @param path File to stat.
 * @returns Its size.
 */
export async function fileSize(path: string): Promise<number> {
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) {
      throw new IoError("READ_FAILED", `Cannot read '${path}': it is not a file`, { path });
    }
    return info.size;
  } catch (cause) {
    if (cause instanceof IoError) throw cause;
    throw readFailed(path, cause);
  }
}

/** Builds the READ_FAILED error for an OS failure on `path`. */
export function readFailed(path: string, cause: unknown): IoError {
  if (cause instanceof Deno.errors.NotFound) {
    const tried = nodePath().isAbsolute(path) ? "" : ` (looked for ${nodePath().resolve(path)})`;
    return new IoError("READ_FAILED", `Cannot read '${path}': no such file${tried}`, {
      path,
      cause,
    });
  }
  if (cause instanceof Deno.errors.PermissionDenied || cause instanceof Deno.errors.NotCapable) {
    return new IoError("READ_FAILED", `Cannot read '${path}': permission denied`, {
      path,
      cause,
    });
  }
  const why = cause instanceof Error ? cause.message : String(cause);
  return new IoError("READ_FAILED", `Cannot read '${path}': ${why}`, { path, cause });
}

/**
 * Reads bytes `[start, end)` of an open file in chunks (fresh buffers, never reused).
 *
 * @param file The open file.
 * @param path Its path, for errors.
 * @param start First byte.
 * @param end Byte after the last one.
 * @param chunkBytes Bytes per read.
 */
export async function* readRange(
  file: Deno.FsFile,
  path: string,
  start: number,
  end: number,
  chunkBytes = READ_CHUNK_BYTES,
): AsyncGenerator<Uint8Array> {
  let at = start;
  try {
    await file.seek(start, Deno.SeekMode.Start);
  } catch (cause) {
    throw readFailed(path, cause);
  }
  while (at < end) {
    const buf = new Uint8Array(Math.min(chunkBytes, end - at));
    let filled = 0;
    while (filled < buf.length) {
      let n: number | null;
      try {
        n = await file.read(buf.subarray(filled));
      } catch (cause) {
        throw readFailed(path, cause);
      }
      if (n === null) break;
      filled += n;
    }
    if (filled === 0) return;
    at += filled;
    yield filled === buf.length ? buf : buf.subarray(0, filled);
    if (filled < buf.length) return;
  }
}

/** Where the writers put bytes: an open file, stdout, or anything that writes like them. */
export type ByteWriter = Pick<Deno.FsFile, "write">;

/**
 * Writes every byte of `data`, looping over short writes.
 *
 * @param file The open file (or stream).
 * @param data Bytes to write.
 */
export async function writeAll(file: ByteWriter, data: Uint8Array): Promise<void> {
  let off = 0;
  while (off < data.length) off += await file.write(data.subarray(off));
}

/**
 * Removes a file (or directory tree) if it exists, ignoring every failure (cleanup
 * path only).
 *
 * @param path File to remove.
 */
export async function removeQuietly(path: string): Promise<void> {
  try {
    await Deno.remove(path, { recursive: true });
  } catch {
    // Nothing to clean up, or nothing we can do about it.
  }
}

/**
 * Passes chunks through, telling `onPosition` the byte offset reached after each (for
 * progress reporting: how far into the file a reader is).
 *
 * @param chunks The chunks of bytes `[start, …)`.
 * @param start Offset of the first chunk.
 * @param onPosition Called with `start` plus the bytes passed so far.
 */
export async function* tracked(
  chunks: AsyncIterable<Uint8Array>,
  start: number,
  onPosition: ((offset: number) => void) | undefined,
): AsyncGenerator<Uint8Array> {
  let at = start;
  for await (const chunk of chunks) {
    at += chunk.length;
    onPosition?.(at);
    yield chunk;
  }
}
