/**
 * `KeyError`: failures of the KMS key providers (`keys/`). The codes match the
 * archive reader's own (`FormatError` WRONG_KEY, KEY_PROVIDER_FAILED), which passes
 * them on with the archive's path.
 *
 * @module
 */
import { PermafrostError } from "../internal/errors.ts";

/** Closed list of key-provider error codes. Never rename or reuse one. */
export type KeyErrorCode = "BAD_ARGUMENT" | "KEY_PROVIDER_FAILED" | "WRONG_KEY";

/**
 * A key provider failure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KeyError } from "./errors.ts";
 * assert.equal(new KeyError("WRONG_KEY", "Cannot unwrap: another key wrapped it").code, "WRONG_KEY");
 * ```
 */
export class KeyError extends PermafrostError<KeyErrorCode> {
  /** Always `"KeyError"`. */
  override name = "KeyError";
}
