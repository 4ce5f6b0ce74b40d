/**
 * The `gcp-kms` key provider: wraps data keys with a Google Cloud KMS symmetric key
 * through its REST API (`POST v1/{cryptoKey}:encrypt` and `:decrypt`, an OAuth 2
 * bearer token). The header records the CryptoKey resource name
 * (`projects/P/locations/L/keyRings/R/cryptoKeys/K`); Cloud KMS picks the version
 * from the ciphertext. Implements the `gcp-kms` row of FORMAT.md §4.4.
 *
 * Every call sends the additional authenticated data {@link GCP_AAD} and CRC32C
 * checksums of what it sends, and checks the ones in the answer, as Google
 * recommends for end-to-end integrity. A `:decrypt` refused with `INVALID_ARGUMENT`
 * (the key did not make this ciphertext) is `WRONG_KEY`; any other failure is
 * `KEY_PROVIDER_FAILED` naming Google's status.
 *
 * @module
 */
import { KeyError } from "./errors.ts";
import { checkDataKey, decodeBase64, encodeBase64 } from "./_bytes.ts";
import { crc32c } from "./_crc32c.ts";
import { type HttpClientOptions, postJson } from "./_http.ts";
import { parseEndpoint } from "./aws_kms.ts";
import type { KeyProvider } from "../internal/key_provider.ts";

/** Additional authenticated data of every call. */
export const GCP_AAD: Uint8Array = new TextEncoder().encode("permafrost:archive-data-key");

/** A CryptoKey resource name. */
export const GCP_KEY_NAME =
  /^projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+\/cryptoKeys\/[^/]+$/;

/** Options of {@link gcpKmsProvider}. */
export interface GcpKmsOptions extends HttpClientOptions {
  /** `projects/P/locations/L/keyRings/R/cryptoKeys/K`. */
  keyName: string;
  /** OAuth 2 access token, or a function that returns a fresh one. */
  accessToken: string | (() => Promise<string>);
  /** API endpoint (default `https://cloudkms.googleapis.com`). */
  endpoint?: string;
}

/**
 * A provider that wraps data keys with Google Cloud KMS.
 *
 * @param options Key name, access token, endpoint, fetch.
 * @returns The provider (`name: "gcp-kms"`).
 * @throws {KeyError} BAD_ARGUMENT when the key name or endpoint is malformed.
 */
export function gcpKmsProvider(options: GcpKmsOptions): KeyProvider {
  checkName(options.keyName);
  const endpoint = parseEndpoint(options.endpoint ?? "https://cloudkms.googleapis.com", "gcp-kms");
  const aad = encodeBase64(GCP_AAD);
  const aadCrc = String(crc32c(GCP_AAD));
  async function call(keyName: string, verb: "encrypt" | "decrypt", body: Record<string, unknown>) {
    const token = typeof options.accessToken === "function"
      ? await options.accessToken()
      : options.accessToken;
    if (!token) {
      throw new KeyError(
        "KEY_PROVIDER_FAILED",
        "gcp-kms has no access token: set PERMAFROST_GCP_ACCESS_TOKEN",
      );
    }
    const url = new URL(`v1/${keyName}:${verb}`, endpoint).href;
    const what = `Cloud KMS ${verb}`;
    const answer = await postJson(
      url,
      {
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: new TextEncoder().encode(JSON.stringify(body)),
      },
      options,
      what,
    );
    if (answer.status >= 200 && answer.status < 300) {
      return (answer.body ?? {}) as Record<string, unknown>;
    }
    const err = ((answer.body ?? {}) as { error?: { status?: unknown; message?: unknown } })
      .error ?? {};
    const status = String(err.status ?? `HTTP ${answer.status}`);
    throw new KeyError(
      verb === "decrypt" && status === "INVALID_ARGUMENT" ? "WRONG_KEY" : "KEY_PROVIDER_FAILED",
      `${what} with key '${keyName}' failed: ${status}${err.message ? `: ${err.message}` : ""}`,
    );
  }
  return {
    name: "gcp-kms",
    keyId: options.keyName,
    async wrap(dataKey) {
      checkDataKey(dataKey, "data key");
      const answer = await call(options.keyName, "encrypt", {
        plaintext: encodeBase64(dataKey),
        additionalAuthenticatedData: aad,
        plaintextCrc32c: String(crc32c(dataKey)),
        additionalAuthenticatedDataCrc32c: aadCrc,
      });
      if (
        answer.verifiedPlaintextCrc32c !== true ||
        answer.verifiedAdditionalAuthenticatedDataCrc32c !== true
      ) {
        throw corrupted("encrypt", "did not verify the request's CRC32C");
      }
      const ciphertext = bytesField(answer, "ciphertext", "encrypt");
      checkCrc(answer.ciphertextCrc32c, ciphertext, "encrypt", "ciphertext");
      return { edek: ciphertext, keyId: options.keyName };
    },
    async unwrap(edek, keyId) {
      const name = keyId ?? options.keyName;
      checkName(name);
      const answer = await call(name, "decrypt", {
        ciphertext: encodeBase64(edek),
        additionalAuthenticatedData: aad,
        ciphertextCrc32c: String(crc32c(edek)),
        additionalAuthenticatedDataCrc32c: aadCrc,
      });
      const plaintext = bytesField(answer, "plaintext", "decrypt");
      checkCrc(answer.plaintextCrc32c, plaintext, "decrypt", "plaintext");
      return plaintext;
    },
  };
}

function checkName(name: string): void {
  if (typeof name !== "string" || !GCP_KEY_NAME.test(name)) {
    throw new KeyError(
      "BAD_ARGUMENT",
      `gcp-kms needs a key name projects/P/locations/L/keyRings/R/cryptoKeys/K, got '${name}'`,
    );
  }
}

function bytesField(answer: Record<string, unknown>, name: string, verb: string): Uint8Array {
  const v = answer[name];
  try {
    if (typeof v !== "string" || v === "") throw new Error("missing");
    return decodeBase64(v, name);
  } catch (cause) {
    throw new KeyError(
      "KEY_PROVIDER_FAILED",
      `Cloud KMS ${verb} answered without a base64 ${name}`,
      { cause },
    );
  }
}

function checkCrc(given: unknown, bytes: Uint8Array, verb: string, name: string): void {
  if (given !== undefined && String(given) !== String(crc32c(bytes))) {
    throw corrupted(verb, `sent a ${name} whose CRC32C does not match`);
  }
}

function corrupted(verb: string, what: string): KeyError {
  return new KeyError(
    "KEY_PROVIDER_FAILED",
    `Cloud KMS ${verb} ${what}: the request or answer was corrupted in transit`,
  );
}
