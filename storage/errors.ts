/**
 * `StorageError`: every failure of the object-storage layer, with a code scripts can
 * test and a message that says what to fix. Messages name the URI, never a secret
 * (no key, token or signature goes into a message or a log line).
 *
 * Codes:
 * - `BAD_URI`: not a URI this layer reads (unknown scheme, no bucket, `..`, a key
 *   ending in `/`).
 * - `MISSING_CREDENTIALS`: the variables a scheme needs are not set (named).
 * - `NOT_FOUND`: no such object (or bucket).
 * - `ACCESS_DENIED`: the store answered 401/403.
 * - `REQUEST_FAILED`: any other answer, or the store could not be reached, after the
 *   retries.
 * - `UPLOAD_FAILED` ({@link ResumableUploadError}): a part of an upload failed 3 times;
 *   the upload was aborted and nothing is visible at the destination.
 *
 * @module
 */
import { type ErrorDetails, PermafrostError } from "../internal/errors.ts";

/** What went wrong, for scripts. */
export type StorageErrorCode =
  | "BAD_URI"
  | "MISSING_CREDENTIALS"
  | "NOT_FOUND"
  | "ACCESS_DENIED"
  | "REQUEST_FAILED"
  | "UPLOAD_FAILED"
  | "NO_JOURNAL";

/** A failure of object storage. */
export class StorageError extends PermafrostError<StorageErrorCode> {
  /**
   * Creates the error.
   *
   * @param code What went wrong.
   * @param message What and how to fix it (names the URI, never a secret).
   * @param details Cause, path (the URI).
   */
  constructor(code: StorageErrorCode, message: string, details: ErrorDetails = {}) {
    super(code, message, details);
    this.name = "StorageError";
  }
}

/** An upload that failed for good: it was aborted, nothing is visible at its URI. */
export class ResumableUploadError extends StorageError {
  /** The part that failed (1-based), or null when completing the upload failed. */
  readonly part: number | null;

  /**
   * Creates the error for an upload that was aborted.
   *
   * @param uri The destination.
   * @param part The part that failed (null: the completion).
   * @param cause The last error.
   */
  constructor(uri: string, part: number | null, cause: unknown) {
    super(
      "UPLOAD_FAILED",
      `Cannot upload '${uri}': ${
        part === null ? "completing the upload" : `part ${part}`
      } failed 3 times (${
        cause instanceof Error ? cause.message : String(cause)
      }); the upload was aborted and nothing was written there`,
      { cause, path: uri },
    );
    this.name = "ResumableUploadError";
    this.part = part;
  }
}
