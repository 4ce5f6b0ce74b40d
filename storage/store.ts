/**
 * The one interface every storage backend implements: stat, ranged read, list by
 * prefix, delete, and a multipart upload (begin, put part, complete, abort). A new
 * backend is one file implementing {@link ObjectStore} plus one line in
 * `registry.ts`.
 *
 * @module
 */

/** What a store says about an object. */
export interface ObjectInfo {
  /** Size in bytes. */
  size: number;
  /** ETag or version (quotes removed), when the store gives one. */
  etag: string | null;
  /** Storage class or access tier (`STANDARD`, `GLACIER_IR`, `Cool`, …), when known. */
  storageClass: string | null;
}

/** A byte range: `length` bytes from `offset`. */
export interface ByteRange {
  /** First byte. */
  offset: number;
  /** Bytes. */
  length: number;
}

/** An upload in progress. Parts are 5 MiB or more but the last. */
export interface Upload {
  /**
   * The store's id of the upload once it has one (an S3 upload id, a GCS session URL),
   * for {@link ObjectStore.abortUpload}; null before, and for stores whose uploads
   * need no abort (Azure, local files).
   */
  readonly id: string | null;
  /**
   * Sends the next part (retried by the store; a part that fails for good aborts the
   * upload and throws `ResumableUploadError`).
   */
  putPart(bytes: Uint8Array): Promise<void>;
  /** Makes the object visible, whole. */
  complete(): Promise<ObjectInfo>;
  /** Drops every part sent; nothing becomes visible. */
  abort(): Promise<void>;
}

/** Options of {@link ObjectStore.upload}. */
export interface UploadOptions {
  /** Storage class (S3: `STANDARD`, `STANDARD_IA`, `GLACIER_IR`, `DEEP_ARCHIVE`, …; Azure: access tier). */
  storageClass?: string;
}

/** A place objects live. URIs are the store's own scheme (`s3://…`). */
export interface ObjectStore {
  /** The scheme it serves. */
  readonly scheme: string;
  /** The object's size, ETag and class, or null when there is none. */
  stat(uri: string): Promise<ObjectInfo | null>;
  /** Bytes of an object, all of it or a range (cut at its end), with its total size. */
  read(uri: string, range?: ByteRange): Promise<{ bytes: Uint8Array; size: number }>;
  /** URIs of the objects under a prefix (`recursive`: also under deeper `/`). */
  list(prefix: string, options?: { recursive?: boolean }): Promise<string[]>;
  /** Removes an object (no error when there is none). */
  delete(uri: string): Promise<void>;
  /** Starts an upload to `uri`. */
  upload(uri: string, options?: UploadOptions): Promise<Upload>;
  /**
   * Aborts an upload by its id (one a killed process left; see `journal.ts`). An
   * upload already gone is no error.
   */
  abortUpload(uri: string, id: string): Promise<void>;
}
