/**
 * The `aws-kms` key provider: wraps data keys with an AWS KMS key through the KMS
 * JSON API (`TrentService.Encrypt` / `TrentService.Decrypt`, `application/x-amz-json-1.1`,
 * Signature Version 4). The header records the key ARN KMS answers with. Implements
 * the `aws-kms` row of FORMAT.md §4.4.
 *
 * Every call carries the encryption context {@link AWS_ENCRYPTION_CONTEXT}, so a
 * ciphertext made for another purpose with the same key does not decrypt here. KMS
 * errors `InvalidCiphertextException` and `IncorrectKeyException` are `WRONG_KEY`;
 * every other failure is `KEY_PROVIDER_FAILED` naming the KMS error type.
 *
 * @module
 */
import { KeyError } from "./errors.ts";
import { checkDataKey, decodeBase64, encodeBase64 } from "./_bytes.ts";
import { type HttpClientOptions, postJson } from "./_http.ts";
import { amzDate, type AwsCredentials } from "./_sigv4.ts";
import type { KeyProvider } from "../internal/key_provider.ts";

export type { AwsCredentials, HttpClientOptions };

/** The encryption context of every Encrypt and Decrypt call. */
export const AWS_ENCRYPTION_CONTEXT: Readonly<Record<string, string>> = Object.freeze({
  "permafrost:purpose": "archive-data-key",
});

/** KMS error types that mean "this key did not make this ciphertext". */
const WRONG_KEY_TYPES = new Set(["InvalidCiphertextException", "IncorrectKeyException"]);

/** Options of {@link awsKmsProvider}. */
export interface AwsKmsOptions extends HttpClientOptions {
  /** Key id, key ARN, alias name (`alias/…`) or alias ARN. */
  keyId: string;
  /** Region, e.g. `eu-west-1`. */
  region: string;
  /** Credentials, or a function that returns fresh ones. */
  credentials: AwsCredentials | (() => Promise<AwsCredentials>);
  /** API endpoint (default `https://kms.<region>.amazonaws.com`). */
  endpoint?: string;
  /** Clock for `x-amz-date` (default: now). */
  now?: () => Date;
}

/** aws4fetch's signer, loaded when first needed (see where it is imported). */
const AWS4FETCH = new URL("./_aws4fetch.ts", import.meta.url);

/**
 * A provider that wraps data keys with AWS KMS.
 *
 * @param options Key, region, credentials, endpoint, fetch.
 * @returns The provider (`name: "aws-kms"`).
 * @throws {KeyError} BAD_ARGUMENT when the key id, region or endpoint is empty or malformed.
 */
export function awsKmsProvider(options: AwsKmsOptions): KeyProvider {
  if (!options.keyId?.trim()) throw new KeyError("BAD_ARGUMENT", "aws-kms needs a key id");
  if (!/^[a-z0-9-]+$/.test(options.region ?? "")) {
    throw new KeyError(
      "BAD_ARGUMENT",
      `aws-kms needs a region like eu-west-1, got '${
        options.region ?? ""
      }' (PERMAFROST_AWS_REGION)`,
    );
  }
  const endpoint = parseEndpoint(
    options.endpoint ?? `https://kms.${options.region}.amazonaws.com`,
    "aws-kms",
  );
  async function call(target: "Encrypt" | "Decrypt", body: Record<string, unknown>) {
    const credentials = typeof options.credentials === "function"
      ? await options.credentials()
      : options.credentials;
    if (!credentials?.accessKeyId || !credentials.secretAccessKey) {
      throw new KeyError(
        "KEY_PROVIDER_FAILED",
        "aws-kms has no credentials: set PERMAFROST_AWS_ACCESS_KEY_ID and PERMAFROST_AWS_SECRET_ACCESS_KEY",
      );
    }
    const bytes = new TextEncoder().encode(JSON.stringify(body));
    // Signature V4 by aws4fetch, the library the s3:// store signs with too (loaded
    // here, when a key is wrapped, so commands that never use KMS do not load it; by a
    // computed specifier, which Deno does not resolve ahead of time: cli/lazy.ts).
    const { AwsV4Signer } = (await import(AWS4FETCH.href)) as typeof import("./_aws4fetch.ts");
    const signed = await new AwsV4Signer({
      method: "POST",
      url: endpoint.href,
      headers: {
        "content-type": "application/x-amz-json-1.1",
        "x-amz-target": `TrentService.${target}`,
      },
      body: bytes,
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      sessionToken: credentials.sessionToken || undefined,
      service: "kms",
      region: options.region,
      datetime: amzDate(options.now?.() ?? new Date()),
    }).sign();
    const sent = Object.fromEntries(signed.headers.entries());
    const what = `AWS KMS ${target}`;
    const answer = await postJson(endpoint.href, { headers: sent, body: bytes }, options, what);
    if (answer.status >= 200 && answer.status < 300) {
      return (answer.body ?? {}) as Record<string, unknown>;
    }
    const err = (answer.body ?? {}) as { __type?: unknown; message?: unknown; Message?: unknown };
    const type = String(err.__type ?? `HTTP ${answer.status}`).split("#").pop()!;
    const message = String(err.message ?? err.Message ?? "");
    throw new KeyError(
      WRONG_KEY_TYPES.has(type) ? "WRONG_KEY" : "KEY_PROVIDER_FAILED",
      `${what} with key '${body.KeyId}' failed: ${type}${message ? `: ${message}` : ""}`,
    );
  }
  return {
    name: "aws-kms",
    keyId: options.keyId,
    async wrap(dataKey) {
      checkDataKey(dataKey, "data key");
      const answer = await call("Encrypt", {
        KeyId: options.keyId,
        Plaintext: encodeBase64(dataKey),
        EncryptionContext: AWS_ENCRYPTION_CONTEXT,
      });
      const blob = field(answer, "CiphertextBlob", "Encrypt");
      const keyId = typeof answer.KeyId === "string" && answer.KeyId !== ""
        ? answer.KeyId
        : options.keyId;
      return { edek: blob, keyId };
    },
    async unwrap(edek, keyId) {
      const answer = await call("Decrypt", {
        CiphertextBlob: encodeBase64(edek),
        KeyId: keyId ?? options.keyId,
        EncryptionContext: AWS_ENCRYPTION_CONTEXT,
      });
      return field(answer, "Plaintext", "Decrypt");
    },
  };
}

function field(answer: Record<string, unknown>, name: string, target: string): Uint8Array {
  const v = answer[name];
  try {
    if (typeof v !== "string" || v === "") throw new Error("missing");
    return decodeBase64(v, name);
  } catch (cause) {
    throw new KeyError(
      "KEY_PROVIDER_FAILED",
      `AWS KMS ${target} answered without a base64 ${name}`,
      { cause },
    );
  }
}

/**
 * Parses a provider endpoint: an http(s) URL, kept as its origin plus `/`.
 *
 * @param text The endpoint.
 * @param who Provider name, for the message.
 * @returns The URL.
 * @throws {KeyError} BAD_ARGUMENT when it is not an http(s) URL.
 */
export function parseEndpoint(text: string, who: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch (cause) {
    throw new KeyError("BAD_ARGUMENT", `${who} endpoint '${text}' is not a URL`, { cause });
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new KeyError("BAD_ARGUMENT", `${who} endpoint '${text}' is not http(s)`);
  }
  return new URL(url.origin + url.pathname.replace(/\/*$/, "/"));
}
