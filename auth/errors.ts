/**
 * `AuthError`: every failure of authentication and authorization (`auth/`).
 *
 * Codes, with the HTTP status `internal/http_error.ts` answers for each:
 * - `UNAUTHORIZED` (401): no bearer token where one is needed.
 * - `INVALID_TOKEN` (401): a token that is malformed, not signed with the secret,
 *   from another issuer, or names a user that no longer exists.
 * - `TOKEN_EXPIRED` (401): a token past its `exp`.
 * - `FORBIDDEN` (403): a valid token without the claim or namespace the request needs.
 * - `INVALID_USER` (400): a bad user name, namespace or token lifetime.
 * - `USER_EXISTS` (409): adding a user whose name is taken.
 * - `USER_NOT_FOUND` (404): no user of that name.
 * - `AUTH_DISABLED` (400): a token was asked of a manager without a secret.
 * - `BAD_SECRET` (500, a startup failure): a JWT secret shorter than 32 bytes.
 * - `STORE_FAILED` (500): the user store could not be read or written.
 *
 * @module
 */
import { PermafrostError } from "../internal/errors.ts";

/** Closed list of auth error codes. Never rename or reuse one. */
export type AuthErrorCode =
  | "UNAUTHORIZED"
  | "INVALID_TOKEN"
  | "TOKEN_EXPIRED"
  | "FORBIDDEN"
  | "INVALID_USER"
  | "USER_EXISTS"
  | "USER_NOT_FOUND"
  | "AUTH_DISABLED"
  | "BAD_SECRET"
  | "STORE_FAILED";

/**
 * An authentication or authorization failure.
 *
 * @example Check the code of an auth error
 * ```ts
 * import assert from "node:assert/strict";
 * import { AuthError } from "./errors.ts";
 * assert.equal(new AuthError("FORBIDDEN", "Token of 'bob' lacks can_thaw").code, "FORBIDDEN");
 * ```
 */
export class AuthError extends PermafrostError<AuthErrorCode> {
  /** Always `"AuthError"`. */
  override name = "AuthError";
}
