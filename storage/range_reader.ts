/**
 * Random access to one object over ranged reads, for the archive reader (it fits
 * `format/byte_source.ts`'s `ByteSource`). Opening fetches the object's first
 * {@link HEAD_BYTES} (which gives its size, and holds the preamble and the header) and,
 * when it is longer, its last {@link TAIL_BYTES} (tail and footer): two requests, and
 * no suffix range, which some S3-compatible stores do not serve. A read that misses
 * fetches at least
 * {@link MIN_FETCH} bytes from where it starts, and `prefetch` (the reader calls it
 * with the span of a chunk's wanted blocks) fetches exactly that span in one request.
 * So a 10-row slice of a big archive costs three requests: head, tail, chunk.
 * The last {@link CACHE_RANGES} ranges fetched are kept.
 *
 * @module
 */
import { StorageError } from "./errors.ts";
import { storeFor } from "./registry.ts";
import type { ObjectStore } from "./store.ts";

/** Bytes fetched from the start when opening (the preamble and, for most archives, the header). */
export const HEAD_BYTES = 16 * 1024;
/** Bytes fetched from the end when opening (the tail and, for most archives, the whole footer). */
export const TAIL_BYTES = 32 * 1024;
/** Smallest fetch on a miss. */
export const MIN_FETCH = 64 * 1024;
/** Ranges kept in memory. */
export const CACHE_RANGES = 8;

/** An object read by ranges. */
export interface RangeReader {
  /** The URI. */
  readonly name: string;
  /** Its size. */
  readonly size: number;
  /** Requests made so far. */
  readonly requests: number;
  /** Bytes fetched so far. */
  readonly bytesFetched: number;
  /** Exactly `length` bytes at `offset` (fewer only past the end). */
  read(offset: number, length: number): Promise<Uint8Array>;
  /** Fetches a span about to be read, in one request. */
  prefetch(offset: number, length: number): Promise<void>;
  /** Drops the cache. */
  close(): void;
}

/**
 * Opens an object for ranged reads.
 *
 * @param uri The object.
 * @param store Its store (default: by scheme).
 * @returns The reader.
 * @throws {StorageError} NOT_FOUND, ACCESS_DENIED, REQUEST_FAILED, BAD_URI.
 */
export async function openRangeReader(
  uri: string,
  store: ObjectStore = storeFor(uri),
): Promise<RangeReader> {
  const head = await store.read(uri, { offset: 0, length: HEAD_BYTES });
  const size = head.size;
  let cache: { offset: number; bytes: Uint8Array }[] = [{ offset: 0, bytes: head.bytes }];
  let requests = 1;
  let fetched = head.bytes.length;
  if (size > head.bytes.length) {
    const from = Math.max(head.bytes.length, size - TAIL_BYTES);
    const tail = await store.read(uri, { offset: from, length: size - from });
    cache = [{ offset: from, bytes: tail.bytes }, ...cache];
    requests++;
    fetched += tail.bytes.length;
  }
  let closed = false;

  const hit = (offset: number, length: number): Uint8Array | null => {
    for (const [i, r] of cache.entries()) {
      if (offset >= r.offset && offset + length <= r.offset + r.bytes.length) {
        if (i > 0) cache = [r, ...cache.slice(0, i), ...cache.slice(i + 1)];
        return r.bytes.subarray(offset - r.offset, offset - r.offset + length);
      }
    }
    return null;
  };
  const fetch = async (offset: number, length: number): Promise<void> => {
    if (closed) throw new StorageError("REQUEST_FAILED", `'${uri}' was closed`, { path: uri });
    const { bytes } = await store.read(uri, { offset, length });
    requests++;
    fetched += bytes.length;
    cache = [{ offset, bytes }, ...cache].slice(0, CACHE_RANGES);
  };

  return {
    name: uri,
    size,
    get requests() {
      return requests;
    },
    get bytesFetched() {
      return fetched;
    },
    async read(offset: number, length: number): Promise<Uint8Array> {
      const end = Math.min(size, offset + length);
      if (offset >= end) return new Uint8Array(0);
      const cached = hit(offset, end - offset);
      if (cached) return cached;
      await fetch(offset, Math.min(size, offset + Math.max(end - offset, MIN_FETCH)) - offset);
      return hit(offset, end - offset) ?? new Uint8Array(0);
    },
    async prefetch(offset: number, length: number): Promise<void> {
      const end = Math.min(size, offset + length);
      if (offset >= end || hit(offset, end - offset)) return;
      await fetch(offset, end - offset);
    },
    close(): void {
      closed = true;
      cache = [];
    },
  };
}
