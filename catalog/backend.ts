/**
 * Where the catalog reads archives from: one small interface, `ArchiveBackend`, and
 * its local-disk implementation {@link localBackend}. Registration reads header and
 * footer only (`readIndex`); `integrity` reads chunk byte ranges (`open`).
 *
 * The seam exists so a storage adapter (s3, gcs, azure) can stand behind the same
 * catalog, and so tests can register archives they describe in memory.
 *
 * @module
 */
import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { ArchiveIndex } from "../format/reader.ts";
import { readArchiveIndex } from "../format/reader.ts";

export type { ArchiveIndex };

/** An open archive, for reading byte ranges. */
export interface ArchiveHandle {
  /**
   * Reads exactly `length` bytes at `offset`.
   *
   * @throws {Error} when the file is shorter than asked.
   */
  read(offset: number, length: number): Promise<Uint8Array>;
  /** Releases the file. */
  close(): void;
}

/** Reads archives for the catalog. */
export interface ArchiveBackend {
  /** Turns a user-given path into the absolute form the catalog records. */
  resolve(path: string): string;
  /**
   * Reads an archive's header and footer.
   *
   * @throws {import("../format/errors.ts").FormatError} when the file is not a readable archive.
   */
  readIndex(path: string): Promise<ArchiveIndex>;
  /**
   * Size of a file in bytes, or null when there is no file there.
   *
   * @throws {Error} when the path may not be read (a permission error, not null).
   */
  size(path: string): Promise<number | null>;
  /** Whether the path is a directory (optional: lets `register` say so instead of "no such file"). */
  isDirectory?(path: string): Promise<boolean>;
  /** Opens an archive to read byte ranges. */
  open(path: string): Promise<ArchiveHandle>;
  /** Archive files (`*.pf`) in a directory, sorted, optionally recursive. */
  list(dir: string, options: { recursive: boolean }): Promise<string[]>;
}

/** File extension `registerDir` picks up. */
export const ARCHIVE_EXTENSION = ".pf";

/**
 * The local-disk backend: paths resolve against the working directory.
 *
 * @returns The backend.
 */
export function localBackend(): ArchiveBackend {
  return {
    resolve: (path) => resolve(path),
    readIndex: (path) => readArchiveIndex(path),
    async size(path) {
      try {
        const info = await stat(path);
        return info.isFile() ? info.size : null;
      } catch (err) {
        if ((err as { code?: string }).code === "ENOENT") return null;
        throw err;
      }
    },
    async isDirectory(path) {
      try {
        return (await stat(path)).isDirectory();
      } catch {
        return false;
      }
    },
    async open(path) {
      const file = await Deno.open(path, { read: true });
      return {
        async read(offset, length) {
          const out = new Uint8Array(length);
          await file.seek(offset, Deno.SeekMode.Start);
          let at = 0;
          while (at < length) {
            const n = await file.read(out.subarray(at));
            if (n === null) {
              throw new RangeError(
                `File '${path}' ends at byte ${offset + at}, wanted ${offset + length}`,
              );
            }
            at += n;
          }
          return out;
        },
        close: () => file.close(),
      };
    },
    async list(dir, options) {
      const out: string[] = [];
      async function walk(d: string): Promise<void> {
        for (const entry of await readdir(d, { withFileTypes: true })) {
          const p = join(d, entry.name);
          if (entry.isDirectory() && options.recursive) await walk(p);
          else if (entry.isFile() && entry.name.endsWith(ARCHIVE_EXTENSION)) out.push(p);
        }
      }
      await walk(resolve(dir));
      return out.sort();
    },
  };
}
