/**
 * What the HTTP stores (S3, Azure Blob) share: a request that is signed, sent, and
 * retried (network failures, 5xx and 429), and the mapping of a final failure to a
 * {@link StorageError} naming the URI — never a header, key or signature.
 *
 * @module
 */
import { StorageError } from "./errors.ts";
import { withRetries } from "./retry.ts";
import type { ObjectInfo } from "./store.ts";

/** An answer the store gave that was not the one wanted. */
export class HttpFailure extends Error {
  /**
   * @param status The HTTP status.
   * @param body The body (the store's error document).
   * @param code The store's error code from it, if any.
   */
  constructor(readonly status: number, readonly body: string, readonly code: string | null) {
    super(`HTTP ${status}${code ? ` ${code}` : ""}`);
  }
}

/** The `<Code>` of an S3 or Azure XML error document. */
export function xmlErrorCode(body: string): string | null {
  return /<Code>([^<]+)<\/Code>/.exec(body)?.[1] ?? null;
}

/** Whether another attempt may help. */
export function retryable(err: unknown): boolean {
  if (err instanceof HttpFailure) return err.status >= 500 || err.status === 429;
  return !(err instanceof StorageError);
}

/** XML text with its five entities decoded. */
export function xmlText(s: string): string {
  return s.replace(
    /&(lt|gt|quot|apos|amp);/g,
    (_, e) => ({ lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" } as Record<string, string>)[e]!,
  );
}

/** An ETag without quotes or a weak marker. */
export function unquote(etag: string | null): string | null {
  return etag === null ? null : etag.replace(/^W\//, "").replace(/^"|"$/g, "");
}

/** How a store sends one request. */
export interface Sender {
  /** Signs (or otherwise authorises) a request. */
  sign(url: URL, init: RequestInit): Promise<Request>;
  /** Transport. */
  fetch: typeof fetch;
  /** First back-off pause, ms. */
  baseMs: number;
  /** Whether a 404 means the bucket/container is missing (from the error code). */
  missingContainer(code: string | null): boolean;
}

/**
 * Sends a request, retried; answers the response when `ok(status)`.
 *
 * @param sender The store's signing and transport.
 * @param uri The URI it concerns, for messages.
 * @param url The request URL.
 * @param init Method, headers, body.
 * @param ok Which statuses are answers (default 2xx).
 * @returns The response.
 * @throws {StorageError} NOT_FOUND, ACCESS_DENIED or REQUEST_FAILED.
 */
export async function send(
  sender: Sender,
  uri: string,
  url: URL,
  init: RequestInit,
  ok: (status: number) => boolean = (s) => s >= 200 && s < 300,
): Promise<Response> {
  return await sendAndRead(sender, uri, url, init, ok, (res) => Promise.resolve(res));
}

/**
 * {@link send}, with the answer's body read inside the retries: a connection that
 * breaks while the body comes is tried again like one that fails before.
 *
 * @param sender The store's signing and transport.
 * @param uri The URI it concerns, for messages.
 * @param url The request URL.
 * @param init Method, headers, body.
 * @param ok Which statuses are answers.
 * @param read Reads the answer.
 * @returns What `read` returned.
 * @throws {StorageError} NOT_FOUND, ACCESS_DENIED or REQUEST_FAILED.
 */
export async function sendAndRead<T>(
  sender: Sender,
  uri: string,
  url: URL,
  init: RequestInit,
  ok: (status: number) => boolean,
  read: (res: Response) => Promise<T>,
): Promise<T> {
  try {
    return await withRetries(async () => {
      const res = await sender.fetch(await sender.sign(url, init));
      if (ok(res.status)) return await read(res);
      const body = await res.text();
      throw new HttpFailure(res.status, body, xmlErrorCode(body));
    }, { baseMs: sender.baseMs, retryable });
  } catch (err) {
    throw storageFailure(uri, err, sender);
  }
}

/**
 * The typed error for a request that failed for good.
 *
 * @param uri The URI.
 * @param err What happened.
 * @param sender Tells a missing container from a missing object.
 * @returns The error.
 */
export function storageFailure(
  uri: string,
  err: unknown,
  sender: Pick<Sender, "missingContainer">,
): StorageError {
  if (err instanceof StorageError) return err;
  if (err instanceof HttpFailure) {
    if (err.status === 404) {
      const what = sender.missingContainer(err.code)
        ? "no such bucket or container"
        : "no such object";
      return new StorageError("NOT_FOUND", `Cannot read '${uri}': ${what}`, { path: uri });
    }
    if (err.status === 401 || err.status === 403) {
      return new StorageError(
        "ACCESS_DENIED",
        `Access to '${uri}' was refused (${err.message}): check the credentials and the bucket's policy`,
        { path: uri },
      );
    }
    return new StorageError("REQUEST_FAILED", `Request for '${uri}' failed: ${err.message}`, {
      path: uri,
      cause: err,
    });
  }
  return new StorageError(
    "REQUEST_FAILED",
    `Cannot reach the store for '${uri}': ${err instanceof Error ? err.message : String(err)}`,
    { path: uri, cause: err },
  );
}

/**
 * Statuses that are answers: 2xx and the ones given (404 for "none", 416 for "past the end").
 *
 * @param also Other statuses that are answers.
 * @returns The test.
 */
export function okOr(...also: number[]): (status: number) => boolean {
  return (s) => (s >= 200 && s < 300) || also.includes(s);
}

/**
 * The bytes and the object's total size from the answer to a (ranged) GET; a 416 (the
 * range starts past the end) is no bytes.
 *
 * @param res The answer (2xx or 416).
 * @param range The range asked for, if any.
 * @returns Bytes and size.
 */
export async function rangedBody(
  res: Response,
  range: { offset: number } | undefined,
): Promise<{ bytes: Uint8Array; size: number }> {
  const total = /\/(\d+)$/.exec(res.headers.get("content-range") ?? "")?.[1];
  if (res.status === 416) {
    await res.body?.cancel();
    return {
      bytes: new Uint8Array(0),
      size: total === undefined ? range?.offset ?? 0 : Number(total),
    };
  }
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { bytes, size: total === undefined ? bytes.length : Number(total) };
}

/**
 * What the store says of an object just uploaded.
 *
 * @param store The store.
 * @param uri The object.
 * @returns Its information.
 * @throws {StorageError} REQUEST_FAILED when the object is not there.
 */
export async function uploadedInfo(
  store: { stat(uri: string): Promise<ObjectInfo | null> },
  uri: string,
): Promise<ObjectInfo> {
  const info = await store.stat(uri);
  if (info === null) {
    throw new StorageError(
      "REQUEST_FAILED",
      `The upload to '${uri}' completed but the object is missing`,
      {
        path: uri,
      },
    );
  }
  return info;
}

/**
 * Collects parts pushed in any sizes into parts of `partBytes` (the last one shorter).
 */
export class PartBuffer {
  #pending: Uint8Array[] = [];
  #bytes = 0;

  /** @param partBytes Size of each full part. */
  constructor(readonly partBytes: number) {}

  /** Bytes waiting. */
  get size(): number {
    return this.#bytes;
  }

  /** Adds bytes (copied). */
  push(bytes: Uint8Array): void {
    this.#pending.push(bytes.slice());
    this.#bytes += bytes.length;
  }

  /** The next full part, or null while fewer than `partBytes` wait. */
  takeFull(): Uint8Array | null {
    if (this.#bytes < this.partBytes) return null;
    const all = this.takeAll();
    if (all.length > this.partBytes) {
      this.#pending = [all.subarray(this.partBytes)];
      this.#bytes = all.length - this.partBytes;
    }
    return all.subarray(0, this.partBytes);
  }

  /** Everything waiting, as one array. */
  takeAll(): Uint8Array {
    const out = new Uint8Array(this.#bytes);
    let at = 0;
    for (const p of this.#pending) {
      out.set(p, at);
      at += p.length;
    }
    this.#pending = [];
    this.#bytes = 0;
    return out;
  }

  /** Drops everything. */
  clear(): void {
    this.#pending = [];
    this.#bytes = 0;
  }
}
