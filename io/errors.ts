/**
 * `IoError`: failures reading a source or writing a thaw output.
 *
 * @module
 */
import type { SerializedError } from "../format/pool.ts";
import { PermafrostError } from "../internal/errors.ts";

/** Closed list of I/O error codes. Never rename or reuse one. */
export type IoErrorCode =
  | "UNKNOWN_FORMAT"
  | "PARSE_FAILED"
  | "READ_FAILED"
  | "WRITE_FAILED"
  | "SCHEMA_MISMATCH"
  | "INVALID_OPTION"
  | "UNSUPPORTED_TYPE"
  | "TOO_MANY_COLUMNS"
  | "DESTINATION_EXISTS";

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

/**
 * Revives an IoError that comes back from a pool Worker (`format/pool.ts`: a freeze
 * Worker or a cluster worker's task thread that reads its own rows), with its code,
 * `column` and `path`.
 *
 * @param e The serialized error.
 * @returns The error, or undefined for another class.
 */
export function reviveIoError(e: SerializedError): Error | undefined {
  if (e.name === "IoError" && e.code) {
    return new IoError(e.code as IoErrorCode, e.message, e.details);
  }
  return undefined;
}
