/**
 * Which file a path names, by device and inode (and size and modification time), so
 * that a check made once — a job's source confined to its owner's data root when it
 * was submitted — still holds when the file is opened later: a path swapped for a
 * symbolic link to another file, or replaced by another file, opens something with
 * another identity, and that is refused rather than read.
 *
 * {@link openedIdentity} takes the identity from the file as opened (`fstat` on the
 * open handle), so a link is followed exactly as a reader would follow it.
 *
 * {@link handleIdentity} checks a file already open, for readers that then read from
 * that handle (a CSV task window): nothing can be swapped in between.
 *
 * Limits: other readers open the path again by name (DuckDB for Parquet does so
 * itself), so a swap in between the check and the read, undone right after, is not
 * seen; the checks run before and after every read to keep that window small.
 *
 * Leaf module.
 *
 * @module
 */

/** A file's identity. */
export interface FileIdentity {
  /** Device. */
  dev: number;
  /** Inode. */
  ino: number;
  /** Size in bytes. */
  size: number;
  /** Modification time, epoch milliseconds (null where the file system has none). */
  mtime_ms: number | null;
  /** For a copy of an object in a store: the object's ETag when it was copied. */
  etag?: string;
}

/**
 * The identity of `path` itself, without following a final symbolic link.
 *
 * @param path A path.
 * @returns Its identity, or null when it is missing, not a regular file, or a link.
 */
export async function identityOf(path: string): Promise<FileIdentity | null> {
  try {
    return identity(await Deno.lstat(path));
  } catch {
    return null;
  }
}

/**
 * The identity of the file `path` opens (links followed, as a reader follows them).
 *
 * @param path A path.
 * @returns Its identity, or null when it cannot be opened or is not a regular file.
 */
export async function openedIdentity(path: string): Promise<FileIdentity | null> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch {
    return null;
  }
  try {
    return identity(await file.stat());
  } catch {
    return null;
  } finally {
    file.close();
  }
}

/**
 * The identity of a file already open (`fstat` on the handle): a reader that checks
 * it and then reads from the same handle reads exactly the file it checked.
 *
 * @param file An open file.
 * @returns Its identity, or null when it cannot be read or is not a regular file.
 */
export async function handleIdentity(file: Deno.FsFile): Promise<FileIdentity | null> {
  try {
    return identity(await file.stat());
  } catch {
    return null;
  }
}

/**
 * {@link handleIdentity} without waiting on the runtime's I/O threads, for a reader
 * that reads a small file range synchronously.
 *
 * @param file An open file.
 * @returns Its identity, or null when it cannot be read or is not a regular file.
 */
export function handleIdentitySync(file: Deno.FsFile): FileIdentity | null {
  try {
    return identity(file.statSync());
  } catch {
    return null;
  }
}

/**
 * Whether two identities are the same file (device and inode).
 *
 * @param a One.
 * @param b The other.
 * @returns True when both are known and equal.
 */
export function sameFile(a: FileIdentity | null, b: FileIdentity | null): boolean {
  return a !== null && b !== null && a.dev === b.dev && a.ino === b.ino;
}

/**
 * Whether `now` is the file `then` was, unchanged (same file, size and modification time).
 *
 * @param then The identity recorded.
 * @param now The identity seen.
 * @returns True when nothing changed.
 */
export function unchanged(then: FileIdentity, now: FileIdentity | null): boolean {
  return sameFile(then, now) && now!.size === then.size && now!.mtime_ms === then.mtime_ms;
}

function identity(info: Deno.FileInfo): FileIdentity | null {
  if (!info.isFile || info.dev === null || info.ino === null) return null;
  return {
    dev: info.dev,
    ino: info.ino,
    size: info.size,
    mtime_ms: info.mtime?.getTime() ?? null,
  };
}
