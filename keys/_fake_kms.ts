/**
 * Local fakes of AWS KMS and Google Cloud KMS for tests: Hono apps that follow each
 * real API's request and answer shapes closely enough that a provider passing
 * against them speaks the real protocol. Tests only.
 *
 * - AWS: `POST /` with `X-Amz-Target: TrentService.Encrypt|Decrypt`,
 *   `Content-Type: application/x-amz-json-1.1`, a Signature V4 `Authorization`
 *   (checked), bodies `{KeyId, Plaintext, EncryptionContext}` /
 *   `{CiphertextBlob, KeyId?, EncryptionContext?}`, answers
 *   `{CiphertextBlob|Plaintext, KeyId, EncryptionAlgorithm}` and errors
 *   `400 {"__type": "...Exception", "message"}`.
 * - GCP: `POST /v1/{cryptoKey}:encrypt|decrypt` with `Authorization: Bearer`,
 *   bodies with base64 fields and CRC32C checksums (checked), answers
 *   `{name, ciphertext, ciphertextCrc32c, verified…}` / `{plaintext, plaintextCrc32c}`
 *   and errors `{"error": {code, message, status}}`.
 *
 * Ciphertexts are opaque blobs that name their key (as the real ones do), sealed
 * with AES-GCM under a per-key secret of the fake.
 *
 * @module
 */
import { Hono } from "hono";
import { decodeBase64, encodeBase64 } from "./_bytes.ts";
import { crc32c } from "./_crc32c.ts";
import { type AwsCredentials, signV4 } from "./_sigv4.ts";

/** A fake listening on 127.0.0.1, port from the OS. */
export interface FakeServer {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Calls seen, oldest first (operation names). */
  calls: string[];
  /** Stops the server. */
  close(): Promise<void>;
}

/** Serves a Hono app on 127.0.0.1, port 0. */
async function serve(app: Hono, calls: string[]): Promise<FakeServer> {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
  await Promise.resolve();
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    calls,
    close: () => server.shutdown(),
  };
}

async function seal(secret: CryptoKey, plain: Uint8Array, aad: Uint8Array): Promise<Uint8Array> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: aad.slice() },
      secret,
      plain.slice(),
    ),
  );
  const out = new Uint8Array(12 + ct.length);
  out.set(iv);
  out.set(ct, 12);
  return out;
}

async function open(secret: CryptoKey, blob: Uint8Array, aad: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(
    await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: blob.slice(0, 12), additionalData: aad.slice() },
      secret,
      blob.slice(12),
    ),
  );
}

function newSecret(): Promise<CryptoKey> {
  return crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, [
    "encrypt",
    "decrypt",
  ]) as Promise<CryptoKey>;
}

// ---------------------------------------------------------------------------
// AWS KMS

/** Options of {@link startFakeAwsKms}. */
export interface FakeAwsKmsOptions {
  /** Region the fake signs for (default `us-east-1`). */
  region?: string;
  /** The one accepted access key. */
  credentials: AwsCredentials;
  /** Key ids (UUIDs) it holds, with their aliases (`alias/name`). */
  keys: Record<string, string[]>;
}

/**
 * Starts a fake AWS KMS.
 *
 * @param options Region, credentials, keys.
 * @returns The running fake; ARNs are `arn:aws:kms:<region>:111122223333:key/<id>`.
 */
export async function startFakeAwsKms(options: FakeAwsKmsOptions): Promise<FakeServer> {
  const region = options.region ?? "us-east-1";
  const arn = (id: string) => `arn:aws:kms:${region}:111122223333:key/${id}`;
  const secrets = new Map<string, CryptoKey>();
  for (const id of Object.keys(options.keys)) secrets.set(id, await newSecret());
  const resolveKey = (keyId: string): string | undefined => {
    for (const [id, aliases] of Object.entries(options.keys)) {
      if (keyId === id || keyId === arn(id)) return id;
      for (const a of aliases) {
        if (keyId === a || keyId === `arn:aws:kms:${region}:111122223333:${a}`) return id;
      }
    }
    return undefined;
  };
  const calls: string[] = [];
  const app = new Hono();
  const fail = (type: string, message: string, status: 400 | 403 = 400) =>
    Response.json({ __type: type, message }, {
      status,
      headers: { "content-type": "application/x-amz-json-1.1" },
    });
  const context = (v: unknown) => {
    const ctx = (v ?? {}) as Record<string, string>;
    const sorted = Object.keys(ctx).sort().map((k) => [k, ctx[k]]);
    return new TextEncoder().encode(JSON.stringify(sorted));
  };
  app.post("/", async (c) => {
    const target = c.req.header("x-amz-target") ?? "";
    calls.push(target);
    if (c.req.header("content-type") !== "application/x-amz-json-1.1") {
      return fail("SerializationException", "Content-Type must be application/x-amz-json-1.1");
    }
    const body = new Uint8Array(await c.req.arrayBuffer());
    const auth = c.req.header("authorization") ?? "";
    const m =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/kms\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/
        .exec(auth);
    if (!m || m[1] !== options.credentials.accessKeyId) {
      return fail(
        "UnrecognizedClientException",
        "The security token included in the request is invalid.",
      );
    }
    const headers: Record<string, string> = {};
    for (const name of m[4]!.split(";")) headers[name] = c.req.header(name) ?? "";
    const expected = signV4(
      { method: "POST", url: new URL(c.req.url), headers, body },
      { region, service: "kms", credentials: options.credentials },
    );
    if (m[3] !== region || expected !== auth) {
      return fail(
        "InvalidSignatureException",
        "The request signature we calculated does not match the signature you provided.",
      );
    }
    let req: Record<string, unknown>;
    try {
      req = JSON.parse(new TextDecoder().decode(body));
    } catch {
      return fail("SerializationException", "Start of structure or map found where not expected.");
    }
    if (target === "TrentService.Encrypt") {
      const id = resolveKey(String(req.KeyId ?? ""));
      if (!id) return fail("NotFoundException", `Key '${req.KeyId}' does not exist`);
      const plain = decodeBase64(String(req.Plaintext ?? ""), "Plaintext");
      if (plain.length < 1 || plain.length > 4096) {
        return fail("ValidationException", "Plaintext must be 1 to 4096 bytes");
      }
      const idBytes = new TextEncoder().encode(id);
      const sealed = await seal(secrets.get(id)!, plain, context(req.EncryptionContext));
      const blob = new Uint8Array(1 + idBytes.length + sealed.length);
      blob[0] = idBytes.length;
      blob.set(idBytes, 1);
      blob.set(sealed, 1 + idBytes.length);
      return c.json({
        CiphertextBlob: encodeBase64(blob),
        KeyId: arn(id),
        EncryptionAlgorithm: "SYMMETRIC_DEFAULT",
      });
    }
    if (target === "TrentService.Decrypt") {
      let blob: Uint8Array;
      try {
        blob = decodeBase64(String(req.CiphertextBlob ?? ""), "CiphertextBlob");
      } catch {
        return fail("InvalidCiphertextException", "");
      }
      const id = new TextDecoder().decode(blob.subarray(1, 1 + (blob[0] ?? 0)));
      if (!secrets.has(id)) return fail("InvalidCiphertextException", "");
      if (req.KeyId !== undefined && resolveKey(String(req.KeyId)) !== id) {
        return fail(
          "IncorrectKeyException",
          "The key ID in the request does not identify a KMS key that can perform this operation.",
        );
      }
      try {
        const plain = await open(
          secrets.get(id)!,
          blob.subarray(1 + id.length),
          context(req.EncryptionContext),
        );
        return c.json({
          Plaintext: encodeBase64(plain),
          KeyId: arn(id),
          EncryptionAlgorithm: "SYMMETRIC_DEFAULT",
        });
      } catch {
        return fail("InvalidCiphertextException", "");
      }
    }
    return fail("UnknownOperationException", "");
  });
  return await serve(app, calls);
}

// ---------------------------------------------------------------------------
// Google Cloud KMS

/** Options of {@link startFakeGcpKms}. */
export interface FakeGcpKmsOptions {
  /** The one accepted access token. */
  token: string;
  /** CryptoKey resource names it holds. */
  keys: string[];
}

/**
 * Starts a fake Cloud KMS.
 *
 * @param options Token and keys.
 * @returns The running fake.
 */
export async function startFakeGcpKms(options: FakeGcpKmsOptions): Promise<FakeServer> {
  const secrets = new Map<string, CryptoKey>();
  for (const k of options.keys) secrets.set(k, await newSecret());
  const calls: string[] = [];
  const app = new Hono();
  const fail = (code: number, status: string, message: string) =>
    Response.json({ error: { code, message, status } }, { status: code });
  const crcOk = (given: unknown, bytes: Uint8Array) =>
    given === undefined || String(given) === String(crc32c(bytes));
  app.post("*", async (c) => {
    const m =
      /^\/v1\/(projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+\/cryptoKeys\/[^/:]+):(encrypt|decrypt)$/
        .exec(c.req.path);
    calls.push(m ? m[2]! : c.req.path);
    if (!m) return fail(404, "NOT_FOUND", `The requested URL ${c.req.path} was not found.`);
    if (c.req.header("authorization") !== `Bearer ${options.token}`) {
      return fail(
        401,
        "UNAUTHENTICATED",
        "Request had invalid authentication credentials. Expected OAuth 2 access token.",
      );
    }
    const [, name, verb] = m;
    const secret = secrets.get(name!);
    if (!secret) return fail(404, "NOT_FOUND", `CryptoKey ${name} not found.`);
    let req: Record<string, unknown>;
    try {
      req = await c.req.json();
    } catch {
      return fail(400, "INVALID_ARGUMENT", "Invalid JSON payload received.");
    }
    const aad = req.additionalAuthenticatedData === undefined
      ? new Uint8Array(0)
      : decodeBase64(String(req.additionalAuthenticatedData), "aad");
    if (!crcOk(req.additionalAuthenticatedDataCrc32c, aad)) {
      return fail(
        400,
        "INVALID_ARGUMENT",
        "The checksum in field additional_authenticated_data_crc32c did not match the data in field additional_authenticated_data.",
      );
    }
    if (verb === "encrypt") {
      const plain = decodeBase64(String(req.plaintext ?? ""), "plaintext");
      if (!crcOk(req.plaintextCrc32c, plain)) {
        return fail(
          400,
          "INVALID_ARGUMENT",
          "The checksum in field plaintext_crc32c did not match the data in field plaintext.",
        );
      }
      const ciphertext = await seal(secret, plain, aad);
      return c.json({
        name: `${name}/cryptoKeyVersions/1`,
        ciphertext: encodeBase64(ciphertext),
        ciphertextCrc32c: String(crc32c(ciphertext)),
        verifiedPlaintextCrc32c: req.plaintextCrc32c !== undefined,
        verifiedAdditionalAuthenticatedDataCrc32c: req.additionalAuthenticatedDataCrc32c !==
          undefined,
        protectionLevel: "SOFTWARE",
      });
    }
    let ciphertext: Uint8Array;
    try {
      ciphertext = decodeBase64(String(req.ciphertext ?? ""), "ciphertext");
    } catch {
      return fail(400, "INVALID_ARGUMENT", "Invalid value at 'ciphertext' (TYPE_BYTES).");
    }
    if (!crcOk(req.ciphertextCrc32c, ciphertext)) {
      return fail(
        400,
        "INVALID_ARGUMENT",
        "The checksum in field ciphertext_crc32c did not match the data in field ciphertext.",
      );
    }
    try {
      const plain = await open(secret, ciphertext, aad);
      return c.json({
        plaintext: encodeBase64(plain),
        plaintextCrc32c: String(crc32c(plain)),
        usedPrimary: true,
        protectionLevel: "SOFTWARE",
      });
    } catch {
      return fail(400, "INVALID_ARGUMENT", "Decryption failed: the ciphertext is invalid.");
    }
  });
  return await serve(app, calls);
}
