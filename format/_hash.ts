/**
 * SHA-256 helpers over `node:crypto`, which (unlike Web Crypto) hashes
 * incrementally, so a multi-gigabyte payload never has to sit in memory.
 *
 * @module
 */
import { createHash, type Hash } from "node:crypto";

/** An incremental SHA-256. */
export type Sha256 = Hash;

/** Starts an incremental SHA-256. */
export function sha256(): Sha256 {
  return createHash("sha256");
}

/** SHA-256 of `bytes` as 64 lowercase hex digits. */
export function sha256Hex(...parts: Uint8Array[]): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest("hex");
}

/** SHA-256 of `bytes` as 32 raw bytes. */
export function sha256Bytes(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(bytes).digest());
}
