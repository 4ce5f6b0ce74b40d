/**
 * Private byte helpers of the KMS clients: strict base64 both ways and the 32-byte
 * key check, with `KeyError`s. Pure.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { KeyError } from "./errors.ts";

/** Bytes of a data key (AES-256). */
export const DATA_KEY_SIZE = 32;

/** Standard base64 (RFC 4648 §4, with padding). */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** Strict standard base64; `what` names the value in the error. */
export function decodeBase64(text: string, what: string): Uint8Array {
  if (
    typeof text !== "string" || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)
  ) {
    throw new KeyError("KEY_PROVIDER_FAILED", `Cannot read ${what}: not standard base64`);
  }
  return new Uint8Array(Buffer.from(text, "base64"));
}

/** Throws BAD_ARGUMENT unless `bytes` is a 32-byte key. */
export function checkDataKey(bytes: Uint8Array, what: string): void {
  if (!(bytes instanceof Uint8Array) || bytes.length !== DATA_KEY_SIZE) {
    throw new KeyError(
      "BAD_ARGUMENT",
      `Cannot use the ${what}: it is ${bytes?.length ?? 0} bytes, AES-256 needs ${DATA_KEY_SIZE}`,
    );
  }
}
