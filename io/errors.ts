/**
 * `IoError`: failures reading a source or writing a thaw output.
 *
 * @module
 */
import { PermafrostError } from "../internal/errors.ts";

/** Closed list of I/O error codes. Never rename or reuse one. */
export type IoErrorCode =
  | "UNKNOWN_FORMAT"
  | "PARSE_FAILED"
  | "READ_FAILED"
  | "WRITE_FAILED"
  | "SCHEMA_MISMATCH"
  | "INVALID_OPTION";

/**
 * A source or output failure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { IoError } from "./errors.ts";
 * assert.equal(new IoError("UNKNOWN_FORMAT", "Cannot tell the format of 'x.txt'").code, "UNKNOWN_FORMAT");
 * ```
 */
export class IoError extends PermafrostError<IoErrorCode> {
  /** Always `"IoError"`. */
  override name = "IoError";
}
