/**
 * Object URIs: `s3://bucket/key`, `az://container/blob`, `gs://bucket/object`, and
 * `file://` or a plain path for local files. A URI is checked once, here: a known
 * scheme, a bucket name, a key without empty, `.` or `..` segments.
 *
 * @module
 */
import { StorageError } from "./errors.ts";

export { isRemote } from "./is_remote.ts";

/** Schemes of object stores (a plain path or `file://` is local). */
export const REMOTE_SCHEMES: readonly string[] = Object.freeze(["s3", "az", "gs"]);

/** An object's address. */
export interface ObjectUri {
  /** `s3`, `az` or `gs`. */
  scheme: string;
  /** Bucket (S3, GCS) or container (Azure). */
  bucket: string;
  /** Key within it, without a leading `/` (may be empty for a bucket's root as a prefix). */
  key: string;
}

/**
 * Parses an object URI.
 *
 * @param text The URI.
 * @param options `prefix`: a key that is a prefix (may be empty or end in `/`).
 * @returns Its parts.
 * @throws {StorageError} BAD_URI saying what is wrong.
 */
export function parseUri(text: string, options: { prefix?: boolean } = {}): ObjectUri {
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)(\/[^?#]*)?$/i.exec(text);
  if (!m) {
    throw new StorageError(
      "BAD_URI",
      `'${text}' is not an object URI: expected scheme://bucket/key`,
      {
        path: text,
      },
    );
  }
  const scheme = m[1]!.toLowerCase();
  if (!REMOTE_SCHEMES.includes(scheme)) {
    throw new StorageError(
      "BAD_URI",
      `Unknown storage scheme '${scheme}://' in '${text}': use s3://, az://, gs://, file:// or a path`,
      { path: text },
    );
  }
  const bucket = m[2]!;
  if (!/^[a-z0-9][a-z0-9._-]{1,62}$/.test(bucket)) {
    throw new StorageError(
      "BAD_URI",
      `'${text}' has no valid bucket name: expected ${scheme}://bucket/key with a lower-case bucket`,
      { path: text },
    );
  }
  const key = (m[3] ?? "").replace(/^\//, "");
  if (!options.prefix && (key === "" || key.endsWith("/"))) {
    throw new StorageError(
      "BAD_URI",
      `'${text}' names a "directory", not an object: add the object's name after the last '/'`,
      { path: text },
    );
  }
  const segments = key === "" ? [] : key.split("/");
  const last = segments.length - 1;
  for (const [i, s] of segments.entries()) {
    if (s === "." || s === "..") {
      throw new StorageError(
        "BAD_URI",
        `'${text}' holds a '${s}' segment; name the object directly`,
        {
          path: text,
        },
      );
    }
    if (s === "" && !(options.prefix && i === last)) {
      throw new StorageError("BAD_URI", `'${text}' holds an empty path segment ('//')`, {
        path: text,
      });
    }
  }
  return { scheme, bucket, key };
}

/**
 * The URI of an object.
 *
 * @param uri Its parts.
 * @returns `scheme://bucket/key`.
 */
export function formatUri(uri: ObjectUri): string {
  return `${uri.scheme}://${uri.bucket}/${uri.key}`;
}
