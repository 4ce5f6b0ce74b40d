/**
 * Where an encrypted archive's data key comes from (FORMAT.md §4.4, header §3):
 *
 * - **raw**: the key the user gives (`--key-file`, `PERMAFROST_KEY`) is the data key;
 *   the header records its fingerprint, no EDEK.
 * - **envelope**: a fresh random data key per archive, wrapped by a
 *   {@link KeyProvider} (`local` key file, `aws-kms`, `gcp-kms`); the wrapped key
 *   (EDEK) goes into the header, and reading it back asks the provider to unwrap it.
 *
 * {@link prepareEncryption} is the writer's side, {@link unlockDataKey} the reader's.
 * Both check the header's `key_check`, so a wrong key is `WRONG_KEY` before any block
 * is read, and a block that then fails authentication was tampered with.
 *
 * @module
 */
import { FormatError } from "./errors.ts";
import type { EncryptionHeader } from "./header.ts";
import {
  checkKeyBytes,
  decodeBase64,
  encodeBase64,
  ENCRYPTION_ALGORITHM,
  importDataKey,
  keyFingerprint,
  keyMatches,
  makeKeyCheck,
  randomDataKey,
} from "./crypto.ts";
import { localKeyProvider } from "./local_key.ts";
import type { KeyProvider } from "../internal/key_provider.ts";
import { PermafrostError } from "../internal/errors.ts";

/**
 * Runs a provider call; a provider's own typed failure (a KMS client's `KeyError`)
 * becomes the `FormatError` of the same code, so callers see one error class here.
 */
async function viaProvider<T>(call: () => Promise<T>, path: string): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof FormatError || !(err instanceof PermafrostError)) throw err;
    const code = err.code === "WRONG_KEY" || err.code === "BAD_ARGUMENT"
      ? err.code
      : "KEY_PROVIDER_FAILED";
    throw new FormatError(code, err.message, { cause: err, path: path || undefined });
  }
}

export type { KeyProvider };

/** How to encrypt a new archive: exactly one of `key` and `provider`. */
export interface EncryptionOptions {
  /** A 32-byte key used directly as the data key (`raw`). */
  key?: Uint8Array;
  /** A provider that wraps a fresh data key per archive (envelope encryption). */
  provider?: KeyProvider;
}

/** The data key of a new archive and the header member that describes it. */
export interface PreparedEncryption {
  /** The 32-byte data key every block is encrypted with. */
  dataKey: Uint8Array;
  /** The header's `encryption` member. */
  header: EncryptionHeader;
}

/** The keys a reader may try, matched against an archive's `encryption` member. */
export interface KeyRing {
  /** A 32-byte key: the data key of `raw` archives, and the key-encrypting key of `local` ones. */
  key?: Uint8Array;
  /** Providers, matched by `name` (an exact `keyId` match is preferred). */
  providers?: readonly KeyProvider[];
  /**
   * Builds a provider for an archive's `key_provider` and `key_id` when none of
   * `providers` matches (the CLI uses it to reach the KMS named in the header with
   * credentials from the environment).
   */
  providerFor?: (name: string, keyId: string | null) => KeyProvider | undefined;
}

/**
 * Makes the data key and the header member of a new encrypted archive.
 *
 * @param options A raw key or a provider.
 * @returns The data key and the `encryption` header member.
 * @throws {FormatError} BAD_ARGUMENT for neither or both, or a key not 32 bytes;
 * KEY_PROVIDER_FAILED from the provider.
 *
 * @example Encrypt with a raw key
 * ```ts
 * import assert from "node:assert/strict";
 * import { prepareEncryption } from "./key_provider.ts";
 * const { dataKey, header } = await prepareEncryption({ key: new Uint8Array(32).fill(7) });
 * assert.equal(header.key_provider, "raw");
 * assert.equal(header.edek, null);
 * assert.equal(dataKey.length, 32);
 * ```
 */
export async function prepareEncryption(options: EncryptionOptions): Promise<PreparedEncryption> {
  if ((options.key === undefined) === (options.provider === undefined)) {
    throw new FormatError(
      "BAD_ARGUMENT",
      "Cannot encrypt: give exactly one of a key (--key-file, PERMAFROST_KEY) and a key provider (--kms)",
    );
  }
  if (options.key !== undefined) {
    checkKeyBytes(options.key, "key");
    const dataKey = options.key.slice();
    return {
      dataKey,
      header: {
        algorithm: ENCRYPTION_ALGORITHM,
        key_provider: "raw",
        key_id: keyFingerprint(dataKey),
        edek: null,
        key_check: await makeKeyCheck(await importDataKey(dataKey)),
      },
    };
  }
  const provider = options.provider!;
  const dataKey = randomDataKey();
  const wrapped = await viaProvider(() => provider.wrap(dataKey), "");
  return {
    dataKey,
    header: {
      algorithm: ENCRYPTION_ALGORITHM,
      key_provider: provider.name,
      key_id: wrapped.keyId,
      edek: encodeBase64(wrapped.edek),
      key_check: await makeKeyCheck(await importDataKey(dataKey)),
    },
  };
}

/**
 * Finds the data key of an encrypted archive and checks it against `key_check`.
 *
 * @param encryption The header's `encryption` member.
 * @param ring The keys to try (none: `KEY_REQUIRED`).
 * @param path The archive, for messages.
 * @returns The 32-byte data key.
 * @throws {FormatError} KEY_REQUIRED when no key or provider fits; WRONG_KEY when the
 * key is not the archive's; KEY_PROVIDER_FAILED when a KMS fails.
 */
export async function unlockDataKey(
  encryption: EncryptionHeader,
  ring: KeyRing | undefined,
  path: string,
): Promise<Uint8Array> {
  const which = encryption.key_id ? ` '${encryption.key_id}'` : "";
  let dataKey: Uint8Array;
  if (encryption.key_provider === "raw") {
    if (!ring?.key) {
      throw new FormatError(
        "KEY_REQUIRED",
        `Cannot read archive '${path}': it is encrypted with key${which}; pass --key-file or set PERMAFROST_KEY`,
        { path },
      );
    }
    checkKeyBytes(ring.key, "key");
    dataKey = ring.key;
  } else {
    const provider = findProvider(encryption, ring);
    if (!provider) {
      throw new FormatError(
        "KEY_REQUIRED",
        `Cannot read archive '${path}': its data key is wrapped by ${encryption.key_provider} key${which}; pass --kms ${encryption.key_provider}:<key>${
          encryption.key_provider === "local" ? " or --key-file" : " with its credentials"
        }`,
        { path },
      );
    }
    const edek = decodeBase64(encryption.edek ?? "", "the header's edek");
    dataKey = await viaProvider(() => provider.unwrap(edek, encryption.key_id), path);
    if (dataKey.length !== 32) {
      throw new FormatError(
        "KEY_PROVIDER_FAILED",
        `Cannot read archive '${path}': ${provider.name} unwrapped a ${dataKey.length}-byte key, expected 32`,
        { path },
      );
    }
  }
  if (!(await keyMatches(await importDataKey(dataKey), encryption.key_check))) {
    const given = encryption.key_provider === "raw"
      ? `; the key given is ${keyFingerprint(dataKey)}`
      : "";
    throw new FormatError(
      "WRONG_KEY",
      `Cannot read archive '${path}': the key does not match the archive's key_check (the archive wants key${which}${given})`,
      { path },
    );
  }
  return dataKey;
}

function findProvider(
  encryption: EncryptionHeader,
  ring: KeyRing | undefined,
): KeyProvider | undefined {
  const named = (ring?.providers ?? []).filter((p) => p.name === encryption.key_provider);
  return named.find((p) => p.keyId === encryption.key_id) ?? named[0] ??
    ring?.providerFor?.(encryption.key_provider, encryption.key_id) ??
    (encryption.key_provider === "local" && ring?.key ? localKeyProvider(ring.key) : undefined);
}
