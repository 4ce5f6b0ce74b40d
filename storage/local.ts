/**
 * `file://` URIs and plain paths, behind the same interface as the object stores, so
 * code that takes "a path or a URI" has one way to read and write. An upload goes to
 * a temp file beside the destination and is renamed over it on `complete`, so
 * nothing partial is visible, as with the object stores.
 *
 * @module
 */
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { StorageError } from "./errors.ts";
import type { ByteRange, ObjectInfo, ObjectStore, Upload } from "./store.ts";

/**
 * The local path a `file://` URI or a path names.
 *
 * @param uri A `file://` URI or a path.
 * @returns The absolute path.
 */
export function localPath(uri: string): string {
  return uri.startsWith("file://") ? fileURLToPath(uri) : resolve(uri);
}

/** The name of an upload's temp file beside its destination. */
const UPLOAD_TEMP = /^\.[0-9a-f]{8}\.upload-tmp$/;

function missing(uri: string, cause: unknown): StorageError {
  return cause instanceof Deno.errors.NotFound
    ? new StorageError("NOT_FOUND", `Cannot read '${uri}': no such file (${localPath(uri)})`, {
      path: uri,
      cause,
    })
    : cause instanceof Deno.errors.PermissionDenied
    ? new StorageError("ACCESS_DENIED", `Cannot read '${uri}': permission denied`, {
      path: uri,
      cause,
    })
    : new StorageError("REQUEST_FAILED", `Cannot read '${uri}': ${(cause as Error)?.message}`, {
      path: uri,
      cause,
    });
}

/**
 * Creates the local store.
 *
 * @returns The store.
 */
export function localStore(): ObjectStore {
  return {
    scheme: "file",

    async stat(uri: string): Promise<ObjectInfo | null> {
      try {
        const info = await Deno.stat(localPath(uri));
        if (!info.isFile) return null;
        return {
          size: info.size,
          etag: `${info.mtime?.getTime() ?? 0}-${info.size}`,
          storageClass: null,
        };
      } catch (cause) {
        if (cause instanceof Deno.errors.NotFound) return null;
        throw missing(uri, cause);
      }
    },

    async read(uri: string, range?: ByteRange): Promise<{ bytes: Uint8Array; size: number }> {
      let file: Deno.FsFile;
      try {
        file = await Deno.open(localPath(uri), { read: true });
      } catch (cause) {
        throw missing(uri, cause);
      }
      try {
        const size = (await file.stat()).size;
        const start = range === undefined
          ? 0
          : range.offset < 0
          ? Math.max(0, size + range.offset)
          : range.offset;
        const end = range === undefined || range.offset < 0
          ? size
          : Math.min(size, start + range.length);
        const bytes = new Uint8Array(Math.max(0, end - start));
        await file.seek(start, Deno.SeekMode.Start);
        let at = 0;
        while (at < bytes.length) {
          const n = await file.read(bytes.subarray(at));
          if (n === null || n === 0) break;
          at += n;
        }
        return { bytes: bytes.subarray(0, at), size };
      } finally {
        file.close();
      }
    },

    async list(prefix: string, options: { recursive?: boolean } = {}): Promise<string[]> {
      const root = localPath(prefix);
      const out: string[] = [];
      const walk = async (dir: string) => {
        for await (const e of Deno.readDir(dir)) {
          const path = join(dir, e.name);
          if (e.isFile) out.push(path);
          else if (e.isDirectory && options.recursive) await walk(path);
        }
      };
      try {
        await walk(root);
      } catch (cause) {
        throw missing(prefix, cause);
      }
      return out.sort().map((p) => (prefix.startsWith("file://") ? pathToFileURL(p).href : p));
    },

    async delete(uri: string): Promise<void> {
      await Deno.remove(localPath(uri)).catch((cause) => {
        if (!(cause instanceof Deno.errors.NotFound)) throw missing(uri, cause);
      });
    },

    async upload(uri: string): Promise<Upload> {
      const path = localPath(uri);
      const temp = join(dirname(path), `.${crypto.randomUUID().slice(0, 8)}.upload-tmp`);
      const file = await Deno.open(temp, { write: true, createNew: true }).catch((cause) => {
        throw missing(uri, cause);
      });
      let open = true;
      const close = () => {
        if (open) file.close();
        open = false;
      };
      return {
        id: basename(temp),
        async putPart(bytes: Uint8Array): Promise<void> {
          let at = 0;
          while (at < bytes.length) at += await file.write(bytes.subarray(at));
        },
        async complete(): Promise<ObjectInfo> {
          await file.sync();
          close();
          await Deno.rename(temp, path);
          const info = await Deno.stat(path);
          return {
            size: info.size,
            etag: `${info.mtime?.getTime() ?? 0}-${info.size}`,
            storageClass: null,
          };
        },
        async abort(): Promise<void> {
          close();
          await Deno.remove(temp).catch(() => {});
        },
      };
    },

    async abortUpload(uri: string, id: string): Promise<void> {
      // Only a temp file this store names, beside the destination: never another file.
      if (!UPLOAD_TEMP.test(id)) {
        throw new StorageError("BAD_URI", `'${id}' is not an upload of '${uri}'`, { path: uri });
      }
      await Deno.remove(join(dirname(localPath(uri)), id)).catch((cause) => {
        if (!(cause instanceof Deno.errors.NotFound)) throw missing(uri, cause);
      });
    },
  };
}
