/**
 * `FormatError`: every failure on archive bytes, schemas and predictors.
 *
 * A reader never leaks a `RangeError`, a zlib error or wrong data: it throws one
 * of these with a code from the closed list below (also listed in `FORMAT.md`).
 *
 * @module
 */
import { PermafrostError } from "../internal/errors.ts";

/** Closed list of format error codes. Never rename or reuse one. */
export type FormatErrorCode =
  | "BAD_MAGIC"
  | "UNSUPPORTED_VERSION"
  | "TRUNCATED"
  | "HASH_MISMATCH"
  | "CORRUPT"
  | "UNKNOWN_CODEC"
  | "UNKNOWN_PREDICTOR"
  | "SCHEMA_MISMATCH"
  | "BAD_ARGUMENT"
  | "WRITE_FAILED"
  // The destination exists and the caller did not allow replacing it.
  | "DESTINATION_EXISTS"
  // Encryption (FORMAT.md §4.4): no key given, a key that is not the archive's,
  // a block that fails AES-GCM authentication, a key provider (KMS) that failed.
  | "KEY_REQUIRED"
  | "WRONG_KEY"
  | "DECRYPT_FAILED"
  | "KEY_PROVIDER_FAILED";

/**
 * An archive, schema or predictor failure.
 *
 * @example Check the code of a format error
 * ```ts
 * import assert from "node:assert/strict";
 * import { FormatError } from "./errors.ts";
 * const err = new FormatError("TRUNCATED", "Cannot read footer: file is 3 bytes", { offset: 3 });
 * assert.equal(err.code, "TRUNCATED");
 * ```
 */
export class FormatError extends PermafrostError<FormatErrorCode> {
  /** Always `"FormatError"`. */
  override name = "FormatError";
}
