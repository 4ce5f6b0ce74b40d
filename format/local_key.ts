/**
 * The `local` key provider: a 32-byte key-encrypting key in a file wraps each
 * archive's data key with AES-256 Key Wrap (RFC 3394, Web Crypto `AES-KW`), giving a
 * 40-byte EDEK. The header records the KEK's fingerprint as `key_id`, so a reader
 * given another key file says so instead of failing obscurely. Implements the
 * `local` row of FORMAT.md §4.4.
 *
 * Also {@link readKeyFile}, the one reader of key files (`--key-file`, `--kms local:`).
 *
 * @module
 */
import { FormatError } from "./errors.ts";
import { checkKeyBytes, decodeBase64, keyFingerprint } from "./crypto.ts";
import type { KeyProvider } from "../internal/key_provider.ts";

/** Size of an AES-KW wrapped 32-byte key. */
export const LOCAL_EDEK_SIZE = 40;

/**
 * A provider that wraps data keys with a local key-encrypting key.
 *
 * @param kek The 32-byte key-encrypting key.
 * @returns The provider (`name: "local"`, `keyId`: the KEK's fingerprint).
 * @throws {FormatError} BAD_ARGUMENT when the key is not 32 bytes.
 *
 * @example Wrap and unwrap a data key
 * ```ts
 * import assert from "node:assert/strict";
 * import { localKeyProvider } from "./local_key.ts";
 * const provider = localKeyProvider(new Uint8Array(32).fill(1));
 * const dataKey = new Uint8Array(32).fill(2);
 * const { edek, keyId } = await provider.wrap(dataKey);
 * assert.equal(edek.length, 40);
 * assert.deepEqual(await provider.unwrap(edek, keyId), dataKey);
 * ```
 */
export function localKeyProvider(kek: Uint8Array): KeyProvider {
  checkKeyBytes(kek, "key-encrypting key");
  const material = kek.slice();
  const keyId = keyFingerprint(material);
  const kekKey = crypto.subtle.importKey("raw", material, { name: "AES-KW" }, false, [
    "wrapKey",
    "unwrapKey",
  ]);
  return {
    name: "local",
    keyId,
    async wrap(dataKey) {
      checkKeyBytes(dataKey, "data key");
      const key = await crypto.subtle.importKey("raw", dataKey.slice(), { name: "AES-GCM" }, true, [
        "encrypt",
      ]);
      const edek = new Uint8Array(await crypto.subtle.wrapKey("raw", key, await kekKey, "AES-KW"));
      return { edek, keyId };
    },
    async unwrap(edek, wantedId) {
      if (wantedId !== null && wantedId !== keyId) {
        throw new FormatError(
          "WRONG_KEY",
          `Cannot unwrap the data key: the archive wants local key '${wantedId}', the key given is '${keyId}'`,
        );
      }
      if (edek.length !== LOCAL_EDEK_SIZE) {
        throw new FormatError(
          "CORRUPT",
          `Cannot unwrap the data key: a local EDEK is ${LOCAL_EDEK_SIZE} bytes, the header holds ${edek.length}`,
        );
      }
      let key: CryptoKey;
      try {
        key = await crypto.subtle.unwrapKey(
          "raw",
          edek.slice(),
          await kekKey,
          "AES-KW",
          { name: "AES-GCM" },
          true,
          ["encrypt", "decrypt"],
        );
      } catch (cause) {
        throw new FormatError(
          "WRONG_KEY",
          `Cannot unwrap the data key with local key '${keyId}': the key does not fit the EDEK (AES-KW integrity check failed)`,
          { cause },
        );
      }
      return new Uint8Array(await crypto.subtle.exportKey("raw", key));
    },
  };
}

/**
 * Reads a key file: exactly 32 raw bytes, or the standard base64 of 32 bytes (as
 * `openssl rand -base64 32` writes it; surrounding whitespace ignored).
 *
 * @param path The file.
 * @returns The 32 key bytes.
 * @throws {FormatError} BAD_ARGUMENT when the file cannot be read or holds no 32-byte key.
 */
export async function readKeyFile(path: string): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (cause) {
    const why = cause instanceof Deno.errors.NotFound ? "no such file" : String(cause);
    throw new FormatError("BAD_ARGUMENT", `Cannot read key file '${path}': ${why}`, {
      path,
      cause,
    });
  }
  if (bytes.length === 32) return bytes;
  if (bytes.length <= 64) {
    try {
      const decoded = decodeBase64(new TextDecoder().decode(bytes).trim(), "key file");
      if (decoded.length === 32) return decoded;
    } catch { /* not base64: fall through to the size message */ }
  }
  throw new FormatError(
    "BAD_ARGUMENT",
    `Cannot use key file '${path}': it holds ${bytes.length} bytes; a key is 32 raw bytes (head -c 32 /dev/urandom > key.bin) or their base64`,
    { path },
  );
}
