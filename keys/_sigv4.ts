/**
 * AWS Signature Version 4 written out independently, as the reference the fake KMS
 * (`_fake_kms.ts`) checks requests against: the `aws-kms` provider signs with
 * `aws4fetch` (as the `s3://` store does), so a request the fake accepts was signed
 * the same way by two implementations. Checked against AWS's published test-suite
 * vectors (`get-vanilla`, `post-vanilla`) in `_sigv4_test.ts`. Also holds the
 * credentials type and `amzDate`.
 *
 * Private to `keys/`. Pure: `node:crypto` HMAC and SHA-256, no I/O.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash, createHmac } from "node:crypto";

/** AWS credentials. */
export interface AwsCredentials {
  /** Access key id (`AKIA…`). */
  accessKeyId: string;
  /** Secret access key. */
  secretAccessKey: string;
  /** Session token of temporary credentials, sent as `x-amz-security-token`. */
  sessionToken?: string;
}

/** One request to sign. */
export interface SigV4Request {
  /** HTTP method. */
  method: string;
  /** Full URL. */
  url: URL;
  /** Headers to sign, `host` and `x-amz-date` included (names in any case). */
  headers: Readonly<Record<string, string>>;
  /** Body bytes (hashed into the signature). */
  body: Uint8Array;
}

/** Scope of a signature. */
export interface SigV4Scope {
  /** Region, e.g. `us-east-1`. */
  region: string;
  /** Service, e.g. `kms`. */
  service: string;
  /** Credentials. */
  credentials: AwsCredentials;
}

/**
 * The `x-amz-date` form of a time: `YYYYMMDDTHHMMSSZ`.
 *
 * @param date The time.
 * @returns The text.
 */
export function amzDate(date: Date): string {
  return date.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
}

/**
 * Signs a request.
 *
 * @param request Method, URL, headers (with `x-amz-date`), body.
 * @param scope Region, service, credentials.
 * @returns The `Authorization` header value.
 */
export function signV4(request: SigV4Request, scope: SigV4Scope): string {
  const headers = Object.entries(request.headers)
    .map(([k, v]) => [k.toLowerCase(), v.trim().replace(/\s+/g, " ")] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const date = headers.find(([k]) => k === "x-amz-date")?.[1];
  if (!date || !/^\d{8}T\d{6}Z$/.test(date)) {
    throw new Error("Cannot sign a request without an x-amz-date header");
  }
  const signedHeaders = headers.map(([k]) => k).join(";");
  const canonical = [
    request.method.toUpperCase(),
    canonicalPath(request.url.pathname),
    canonicalQuery(request.url.searchParams),
    ...headers.map(([k, v]) => `${k}:${v}`),
    "",
    signedHeaders,
    sha256Hex(request.body),
  ].join("\n");
  const day = date.slice(0, 8);
  const credentialScope = `${day}/${scope.region}/${scope.service}/aws4_request`;
  const stringToSign = [
    "AWS4-HMAC-SHA256",
    date,
    credentialScope,
    sha256Hex(new TextEncoder().encode(canonical)),
  ].join("\n");
  let key: Uint8Array = hmac(
    new TextEncoder().encode(`AWS4${scope.credentials.secretAccessKey}`),
    day,
  );
  for (const part of [scope.region, scope.service, "aws4_request"]) key = hmac(key, part);
  const signature = Buffer.from(hmac(key, stringToSign)).toString("hex");
  return `AWS4-HMAC-SHA256 Credential=${scope.credentials.accessKeyId}/${credentialScope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
}

function canonicalPath(path: string): string {
  if (path === "") return "/";
  return path.split("/").map((seg) => rfc3986(decodeURIComponent(seg))).join("/");
}

function canonicalQuery(params: URLSearchParams): string {
  return [...params.entries()]
    .map(([k, v]) => [rfc3986(k), rfc3986(v)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
}

function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function hmac(key: Uint8Array, data: string): Uint8Array {
  return new Uint8Array(createHmac("sha256", key).update(data).digest());
}
