/**
 * Token lifetimes and the secret's minimum length: what the settings tables need,
 * in a leaf module, so that help and setting parsers load without the JWT library.
 *
 * @module
 */
import { AuthError } from "./errors.ts";

/** Shortest secret accepted: HS256 wants a key at least as long as its hash (RFC 7518 §3.2). */
export const MIN_SECRET_BYTES = 32;

/** Default lifetime of a user token. */
export const DEFAULT_TOKEN_TTL = "24h";

/**
 * Parses a token lifetime: a positive number of seconds, or `N` + `s|m|h|d`.
 *
 * @param value The lifetime.
 * @returns Seconds.
 * @throws {AuthError} INVALID_USER when it is not a positive lifetime of at most 10 years.
 */
export function parseLifetime(value: number | string): number {
  const units: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };
  let seconds = NaN;
  if (typeof value === "number") seconds = value;
  else {
    const m = /^\s*(\d+)\s*([smhd]?)\s*$/.exec(value);
    if (m) seconds = Number(m[1]) * units[m[2] || "s"]!;
  }
  if (!Number.isSafeInteger(seconds) || seconds < 1 || seconds > 10 * 366 * 86400) {
    throw new AuthError(
      "INVALID_USER",
      `Invalid token lifetime '${value}': use seconds or 30s, 15m, 24h, 7d (10 years at most)`,
    );
  }
  return seconds;
}
