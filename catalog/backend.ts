/**
 * Where the catalog reads archives from: one small interface, `ArchiveBackend`, its
 * local-disk implementation {@link localBackend}, and {@link storageBackend}, which
 * reads `s3://` and `az://` archives through `storage/` (and local paths as the
 * local backend does). Registration reads header and footer only (`readIndex`);
 * `integrity` reads chunk byte ranges (`open`).
 *
 * The storage backend keeps the indexes it has read (header and footer) in memory,
 * up to a byte budget (least recently used first out), and revalidates an entry by
 * the object's ETag (one HEAD request) before using it: an archive replaced in the
 * store is read again, never answered from a stale copy.
 *
 * @module
 */
import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { ArchiveIndex } from "../format/reader.ts";
import { ArchiveReader, readArchiveIndex } from "../format/reader.ts";
import { openRangeReader } from "../storage/range_reader.ts";
import { storeFor } from "../storage/registry.ts";
import { isRemote, parseUri } from "../storage/uri.ts";

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
  /** The object's storage class or tier, as the store names it (optional; null when unknown). */
  storageClass?(path: string): Promise<string | null>;
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

/** An index held by {@link storageBackend}. */
interface CachedIndex {
  etag: string;
  index: ArchiveIndex;
  bytes: number;
  checkedAt: number;
}

/** Options of {@link storageBackend}. */
export interface StorageBackendOptions {
  /** Bytes of indexes kept in memory (default 64 MB). */
  cacheBytes?: number;
  /**
   * Seconds a cached index is used without asking the store (default 0: every use
   * revalidates by ETag). Saves a request per use where objects are never rewritten.
   */
  cacheTtlS?: number;
  /** The clock, in ms (tests). */
  now?: () => number;
  /** How local paths are read (default {@link localBackend}). */
  local?: ArchiveBackend;
}

/**
 * The backend for archives in object storage (`s3://`, `az://`) and on disk.
 *
 * @param options Cache budget, local backend.
 * @returns The backend.
 */
export function storageBackend(options: StorageBackendOptions = {}): ArchiveBackend {
  const local = options.local ?? localBackend();
  const budget = options.cacheBytes ?? 64_000_000;
  const ttlMs = (options.cacheTtlS ?? 0) * 1000;
  const now = options.now ?? Date.now;
  /**
   * Index by URI, with the ETag it was read at, when that was last confirmed, and its
   * estimated size; Map order = recency.
   */
  const cache = new Map<string, CachedIndex>();
  let cached = 0;
  const keep = (uri: string, entry: CachedIndex) => {
    const old = cache.get(uri);
    if (old) cached -= old.bytes;
    cache.delete(uri);
    cache.set(uri, entry);
    cached += entry.bytes;
    for (const [k, v] of cache) {
      if (cached <= budget || k === uri) break;
      cache.delete(k);
      cached -= v.bytes;
    }
  };
  return {
    resolve(path) {
      if (!isRemote(path)) return local.resolve(path);
      parseUri(path, { prefix: true });
      return path;
    },
    async readIndex(path) {
      if (!isRemote(path)) return await local.readIndex(path);
      const hit = cache.get(path);
      if (hit && ttlMs > 0 && now() - hit.checkedAt < ttlMs) {
        keep(path, hit);
        return hit.index;
      }
      const info = await storeFor(path).stat(path);
      if (info !== null && info.etag !== null && hit?.etag === info.etag) {
        keep(path, { ...hit, checkedAt: now() });
        return hit.index;
      }
      const reader = await ArchiveReader.openSource(await openRangeReader(path));
      reader.close();
      const index = reader.index;
      if (info?.etag) {
        // The footer's JSON dominates; its length is a fair estimate of the memory held.
        const bytes = JSON.stringify(index.footer).length * 2;
        keep(path, { etag: info.etag, index, bytes, checkedAt: now() });
      }
      return index;
    },
    async size(path) {
      if (!isRemote(path)) return await local.size(path);
      return (await storeFor(path).stat(path))?.size ?? null;
    },
    async storageClass(path) {
      if (!isRemote(path)) return null;
      return (await storeFor(path).stat(path))?.storageClass ?? null;
    },
    async isDirectory(path) {
      if (!isRemote(path)) return (await local.isDirectory?.(path)) ?? false;
      return path.endsWith("/");
    },
    async open(path) {
      if (!isRemote(path)) return await local.open(path);
      const source = await openRangeReader(path);
      return {
        async read(offset, length) {
          const bytes = await source.read(offset, length);
          if (bytes.length !== length) {
            throw new RangeError(
              `Object '${path}' ends at byte ${offset + bytes.length}, wanted ${offset + length}`,
            );
          }
          return bytes;
        },
        close: () => source.close(),
      };
    },
    async list(dir, options) {
      if (!isRemote(dir)) return await local.list(dir, options);
      const prefix = dir.endsWith("/") ? dir : `${dir}/`;
      const all = await storeFor(prefix).list(prefix, options);
      return all.filter((u) => u.endsWith(ARCHIVE_EXTENSION)).sort();
    },
  };
}
