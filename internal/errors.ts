/**
 * The base of every typed error Permafrost throws.
 *
 * Each layer (format, codecs, io, storage, auth, master, catalog) declares its own
 * subclass with a closed union of SCREAMING_SNAKE codes in its own `errors.ts`.
 * Codes are part of the public contract: never rename or reuse one.
 *
 * Leaf module: imports nothing from the project.
 *
 * @module
 */

/** Structured details a typed error may carry beside its message. */
export interface ErrorDetails {
  /** The underlying failure, kept for stack traces. */
  cause?: unknown;
  /** A byte offset in a file, when the failure is tied to one. */
  offset?: number;
  /** A chunk index, when the failure is tied to one. */
  chunk?: number;
  /** A column name, when the failure is tied to one. */
  column?: string;
  /** A file path, when the failure is tied to one. */
  path?: string;
}

/**
 * Base class of every Permafrost error: a stable `code` plus structured fields.
 *
 * @example Catch any Permafrost error and read its code
 * ```ts
 * import assert from "node:assert/strict";
 * import { PermafrostError } from "./errors.ts";
 * const err = new PermafrostError("EXAMPLE", "Cannot do the thing");
 * assert.equal(err.code, "EXAMPLE");
 * ```
 */
export class PermafrostError<Code extends string = string> extends Error {
  /** Always `"PermafrostError"`. */
  override name = "PermafrostError";
  /** Stable machine-readable code; see each layer's `errors.ts`. */
  readonly code: Code;
  /** Byte offset in the file the error concerns, if any. */
  readonly offset?: number;
  /** Chunk index the error concerns, if any. */
  readonly chunk?: number;
  /** Column name the error concerns, if any. */
  readonly column?: string;
  /** File path the error concerns, if any. */
  readonly path?: string;

  /**
   * Creates an error with a code, a message and structured details.
   *
   * @param code Stable code from the layer's closed union.
   * @param message Sentence-case message naming the action and the state, no final period.
   * @param details Cause and structured fields.
   */
  constructor(code: Code, message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    if (details.offset !== undefined) this.offset = details.offset;
    if (details.chunk !== undefined) this.chunk = details.chunk;
    if (details.column !== undefined) this.column = details.column;
    if (details.path !== undefined) this.path = details.path;
  }
}
