/**
 * `OpsError`: failures of the user-facing operations (bad options, a refused
 * primary key, a failed verification) that are not about archive bytes,
 * codecs or sources — those keep their own layer's error.
 *
 * @module
 */
import { PermafrostError } from "../internal/errors.ts";

/** Closed list of operation error codes. Never rename or reuse one. */
export type OpsErrorCode =
  | "BAD_OPTION"
  | "PRIMARY_KEY"
  | "VERIFY_FAILED"
  | "SCHEMA_MISMATCH"
  | "CONCURRENT_CHANGE"
  | "NOT_ENCRYPTED"
  // SQL over archives: not one SELECT, or DuckDB could not answer it.
  | "SQL_REFUSED"
  | "SQL_FAILED"
  // An object already at a URI given as a destination (without overwrite).
  | "DESTINATION_EXISTS"
  // Rows asked for in a schema that would change or invent a value (thaw --schema).
  | "SCHEMA_INCOMPATIBLE";

/** Codec names `freeze` accepts: a registry id or `auto`. */
export type CodecChoiceName = "zstd" | "lzma2" | "zpaq" | "auto" | (string & Record<never, never>);

/**
 * An operation failure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OpsError } from "./errors.ts";
 * assert.equal(new OpsError("BAD_OPTION", "Chunk rows must be positive").code, "BAD_OPTION");
 * ```
 */
export class OpsError extends PermafrostError<OpsErrorCode> {
  /** Always `"OpsError"`. */
  override name = "OpsError";
}
