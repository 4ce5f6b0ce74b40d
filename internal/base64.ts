/**
 * Strict standard base64, in a leaf module: the key settings parse it without
 * loading the archive's crypto code, and `format/crypto.ts` builds on it.
 *
 * @module
 */

const STRICT = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Decodes strict standard base64: padding required, no whitespace, no other alphabet.
 *
 * @param text The text.
 * @returns The bytes, or null when `text` is not strict base64.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { strictBase64 } from "./base64.ts";
 * assert.deepEqual(strictBase64("YWJj"), Uint8Array.of(97, 98, 99));
 * assert.equal(strictBase64("YWJ"), null);
 * assert.equal(strictBase64("YW Jj"), null);
 * ```
 */
export function strictBase64(text: string): Uint8Array | null {
  if (typeof text !== "string" || text.length % 4 !== 0 || !STRICT.test(text)) return null;
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}
