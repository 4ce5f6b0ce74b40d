/**
 * `CodecError`: failures of a compression codec (bad input bytes, a missing
 * binary, a failed subprocess) and of the codec registry (an unknown id).
 *
 * Codes:
 * - `DECODE_FAILED`: the bytes are not a valid block of the codec (corrupt,
 *   truncated, wrong codec), or the decoder failed; `cause` holds the original error.
 * - `ENCODE_FAILED`: the encoder failed (a subprocess exited non-zero, timed out).
 * - `BINARY_MISSING`: an external codec binary is not installed; the message names the package.
 * - `BINARY_DENIED`: an external codec binary exists but may not be run (no
 *   `--allow-run` grant, or the file is not executable).
 * - `LENGTH_MISMATCH`: a block decoded to a length other than the one recorded for it.
 * - `UNKNOWN_CODEC`: a codec id or wire code not in `codecs/registry.ts`. The
 *   format layer reports it as its own `FormatError` `UNKNOWN_CODEC`, because
 *   `codecs/` may not import `format/`.
 *
 * @module
 */
import { PermafrostError } from "../internal/errors.ts";

/** Closed list of codec error codes. Never rename or reuse one. */
export type CodecErrorCode =
  | "DECODE_FAILED"
  | "ENCODE_FAILED"
  | "BINARY_MISSING"
  | "BINARY_DENIED"
  | "LENGTH_MISMATCH"
  | "UNKNOWN_CODEC";

/**
 * A codec failure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CodecError } from "./errors.ts";
 * assert.equal(new CodecError("DECODE_FAILED", "Cannot decode zstd block").code, "DECODE_FAILED");
 * ```
 */
export class CodecError extends PermafrostError<CodecErrorCode> {
  /** Always `"CodecError"`. */
  override name = "CodecError";
}

/**
 * The message of anything thrown (an `Error`'s, else its text), for a codec error that
 * quotes its cause.
 *
 * @param err What was thrown.
 * @returns Its message.
 */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
