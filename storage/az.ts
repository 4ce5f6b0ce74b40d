/**
 * `az://container/blob`: Azure Blob Storage block blobs (and Azurite), authorised
 * with the account's Shared Key (HMAC-SHA256 over the request, as the Blob service's
 * "Authorize with Shared Key" describes) or a SAS token.
 *
 * Settings come from the variables Azure users already set:
 * `AZURE_STORAGE_CONNECTION_STRING` (`AccountName`, `AccountKey`, `BlobEndpoint`,
 * `SharedAccessSignature`, `DefaultEndpointsProtocol`, `EndpointSuffix`), or
 * `AZURE_STORAGE_ACCOUNT` with `AZURE_STORAGE_KEY` or `AZURE_STORAGE_SAS_TOKEN`.
 *
 * Uploads put blocks of {@link BLOCK_BYTES} as they fill and commit the block list at
 * the end (with the access tier asked for): until then nothing is visible, and blocks
 * never committed are dropped by the service. A blob smaller than one block is one
 * Put Blob. Errors name the URI and the status, never the key or a signature.
 *
 * @module
 */
import { ResumableUploadError, StorageError } from "./errors.ts";
import {
  okOr,
  PartBuffer,
  rangedBody,
  send,
  sendAndRead,
  type Sender,
  unquote,
  uploadedInfo,
  xmlText,
} from "./_http.ts";
import type { ByteRange, ObjectInfo, ObjectStore, Upload, UploadOptions } from "./store.ts";
import { formatUri, parseUri } from "./uri.ts";

/** Size of each block of an upload but the last. */
export const BLOCK_BYTES = 8 * 1024 * 1024;

/** The REST API version spoken. */
const API_VERSION = "2021-12-02";

/** What an Azure store needs (tests inject `env` and `fetch`). */
export interface AzureOptions {
  /** Reads a variable (default `Deno.env.get`). */
  env?: (name: string) => string | undefined;
  /** Transport (default `fetch`). */
  fetch?: typeof fetch;
  /** First back-off pause in ms (default 200). */
  baseBackoffMs?: number;
}

interface Account {
  name: string;
  /** Base URL of the Blob service, without a trailing slash. */
  endpoint: string;
  key: Uint8Array | null;
  sas: string | null;
}

function decodeBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function encodeBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

/** The account from the environment. */
function accountFrom(env: (name: string) => string | undefined, uri: string): Account {
  const conn = env("AZURE_STORAGE_CONNECTION_STRING");
  const parts: Record<string, string> = {};
  if (conn) {
    for (const piece of conn.split(";")) {
      const at = piece.indexOf("=");
      if (at > 0) parts[piece.slice(0, at).trim()] = piece.slice(at + 1).trim();
    }
  }
  const name = parts.AccountName ?? env("AZURE_STORAGE_ACCOUNT");
  const key = parts.AccountKey ?? env("AZURE_STORAGE_KEY");
  const sas = parts.SharedAccessSignature ?? env("AZURE_STORAGE_SAS_TOKEN");
  if (!name || (!key && !sas)) {
    throw new StorageError(
      "MISSING_CREDENTIALS",
      `Cannot reach '${uri}': set AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN`,
      { path: uri },
    );
  }
  const protocol = parts.DefaultEndpointsProtocol ?? "https";
  const suffix = parts.EndpointSuffix ?? "core.windows.net";
  const endpoint = (parts.BlobEndpoint ?? `${protocol}://${name}.blob.${suffix}`).replace(
    /\/+$/,
    "",
  );
  return {
    name,
    endpoint,
    key: key ? decodeBase64(key) : null,
    sas: sas ? sas.replace(/^\?/, "") : null,
  };
}

/** Signs a request with the account key (Shared Key for the Blob service). */
async function signSharedKey(account: Account, url: URL, init: RequestInit): Promise<Request> {
  // The headers as sent: a string body gets its content type from the Request itself.
  const headers = new Headers(new Request(url, init).headers);
  headers.set("x-ms-date", new Date().toUTCString());
  headers.set("x-ms-version", API_VERSION);
  const body = init.body as Uint8Array | string | undefined;
  const length = body === undefined
    ? 0
    : typeof body === "string"
    ? new TextEncoder().encode(body).length
    : body.length;
  const canonicalHeaders = [...headers.entries()]
    .filter(([k]) => k.toLowerCase().startsWith("x-ms-"))
    .map(([k, v]) => `${k.toLowerCase()}:${v.trim()}`)
    .sort()
    .join("\n");
  const query = [...url.searchParams.entries()]
    .map(([k, v]) => [k.toLowerCase(), v] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `\n${k}:${v}`)
    .join("");
  const resource = `/${account.name}${url.pathname}${query}`;
  const method = (init.method ?? "GET").toUpperCase();
  const stringToSign = [
    method,
    headers.get("content-encoding") ?? "",
    headers.get("content-language") ?? "",
    length === 0 ? "" : String(length),
    headers.get("content-md5") ?? "",
    headers.get("content-type") ?? "",
    "", // Date: x-ms-date is used instead
    headers.get("if-modified-since") ?? "",
    headers.get("if-match") ?? "",
    headers.get("if-none-match") ?? "",
    headers.get("if-unmodified-since") ?? "",
    headers.get("range") ?? "",
    canonicalHeaders,
  ].join("\n") + "\n" + resource;
  const key = await crypto.subtle.importKey(
    "raw",
    account.key! as Uint8Array<ArrayBuffer>,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const signature = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(stringToSign)),
  );
  headers.set("authorization", `SharedKey ${account.name}:${encodeBase64(signature)}`);
  return new Request(url, { ...init, headers });
}

/**
 * Signs a request with the account from the environment, for what the store has no
 * method for (creating a container, in tests and tools).
 *
 * @param url The request URL.
 * @param init Method, headers, body.
 * @param env Reads a variable (default `Deno.env.get`).
 * @returns The signed request.
 * @throws {StorageError} MISSING_CREDENTIALS.
 */
export function azureSignedRequest(
  url: URL,
  init: RequestInit,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): Promise<Request> {
  const account = accountFrom(env, url.href);
  if (account.key) return signSharedKey(account, url, init);
  if (account.sas) {
    for (const [k, v] of new URLSearchParams(account.sas)) url.searchParams.set(k, v);
  }
  const headers = new Headers(init.headers);
  headers.set("x-ms-version", API_VERSION);
  return Promise.resolve(new Request(url, { ...init, headers }));
}

/**
 * Creates the Azure Blob store.
 *
 * @param options Environment and transport.
 * @returns The store.
 */
export function azureStore(options: AzureOptions = {}): ObjectStore {
  const env = options.env ?? ((name: string) => Deno.env.get(name));
  const doFetch = options.fetch ?? fetch;
  const baseMs = options.baseBackoffMs ?? 200;
  let cached: Account | null = null;
  const account = (uri: string) => (cached ??= accountFrom(env, uri));

  function urlOf(uri: string, container: string, blob: string): URL {
    const a = account(uri);
    const path = blob === "" ? "" : "/" + blob.split("/").map(encodeURIComponent).join("/");
    const url = new URL(`${a.endpoint}/${container}${path}`);
    if (a.key === null && a.sas) {
      for (const [k, v] of new URLSearchParams(a.sas)) url.searchParams.set(k, v);
    }
    return url;
  }

  const sender = (uri: string): Sender => {
    const a = account(uri);
    return {
      sign: (url, init) => {
        if (a.key) return signSharedKey(a, url, init);
        const headers = new Headers(init.headers);
        headers.set("x-ms-version", API_VERSION);
        return Promise.resolve(new Request(url, { ...init, headers }));
      },
      fetch: doFetch,
      baseMs,
      missingContainer: (code) => code === "ContainerNotFound",
    };
  };
  const request = (
    uri: string,
    url: URL,
    init: RequestInit,
    ok?: (status: number) => boolean,
  ): Promise<Response> => send(sender(uri), uri, url, init, ok);

  const store: ObjectStore = {
    scheme: "az",

    async stat(uri: string): Promise<ObjectInfo | null> {
      const { bucket, key } = parseUri(uri);
      const res = await request(
        uri,
        urlOf(uri, bucket, key),
        { method: "HEAD" },
        okOr(404),
      );
      if (res.status === 404) return null;
      return {
        size: Number(res.headers.get("content-length") ?? 0),
        etag: unquote(res.headers.get("etag")),
        storageClass: res.headers.get("x-ms-access-tier"),
      };
    },

    async read(uri: string, range?: ByteRange): Promise<{ bytes: Uint8Array; size: number }> {
      const { bucket, key } = parseUri(uri);
      const headers: Record<string, string> = {};
      if (range) headers["x-ms-range"] = `bytes=${range.offset}-${range.offset + range.length - 1}`;
      return await sendAndRead(
        sender(uri),
        uri,
        urlOf(uri, bucket, key),
        { headers },
        okOr(416),
        (res) => rangedBody(res, range),
      );
    },

    async list(prefix: string, options: { recursive?: boolean } = {}): Promise<string[]> {
      const { bucket, key } = parseUri(prefix, { prefix: true });
      const out: string[] = [];
      let marker = "";
      do {
        const url = urlOf(prefix, bucket, "");
        url.searchParams.set("restype", "container");
        url.searchParams.set("comp", "list");
        if (key !== "") url.searchParams.set("prefix", key);
        if (!options.recursive) url.searchParams.set("delimiter", "/");
        if (marker) url.searchParams.set("marker", marker);
        const xml = await (await request(prefix, url, {})).text();
        for (const m of xml.matchAll(/<Blob>\s*<Name>([^<]*)<\/Name>/g)) {
          out.push(formatUri({ scheme: "az", bucket, key: xmlText(m[1]!) }));
        }
        marker = xmlText(/<NextMarker>([^<]*)<\/NextMarker>/.exec(xml)?.[1] ?? "");
      } while (marker);
      return out;
    },

    async delete(uri: string): Promise<void> {
      const { bucket, key } = parseUri(uri);
      const res = await request(
        uri,
        urlOf(uri, bucket, key),
        { method: "DELETE" },
        okOr(404),
      );
      await res.body?.cancel();
    },

    abortUpload(): Promise<void> {
      // Block-list uploads get no id (uncommitted blocks expire by themselves).
      return Promise.resolve();
    },

    upload(uri: string, options: UploadOptions = {}): Promise<Upload> {
      const { bucket, key } = parseUri(uri);
      account(uri);
      const tier: Record<string, string> = options.storageClass
        ? { "x-ms-access-tier": options.storageClass }
        : {};
      const blocks: string[] = [];
      const parts = new PartBuffer(BLOCK_BYTES);
      let finished = false;
      const nonce = crypto.randomUUID().replaceAll("-", "").slice(0, 16);

      async function putBlock(bytes: Uint8Array): Promise<void> {
        const number = blocks.length + 1;
        // Every id of a blob has the same length.
        const id = btoa(`${nonce}-${String(number).padStart(6, "0")}`);
        const url = urlOf(uri, bucket, key);
        url.searchParams.set("comp", "block");
        url.searchParams.set("blockid", id);
        try {
          const res = await request(uri, url, { method: "PUT", body: bytes as BodyInit });
          await res.body?.cancel();
          blocks.push(id);
        } catch (err) {
          finished = true;
          throw new ResumableUploadError(uri, number, err);
        }
      }

      return Promise.resolve({
        id: null,
        async putPart(bytes: Uint8Array): Promise<void> {
          if (finished) {
            throw new StorageError("REQUEST_FAILED", `The upload to '${uri}' has ended`);
          }
          parts.push(bytes);
          for (let part = parts.takeFull(); part; part = parts.takeFull()) await putBlock(part);
        },
        async complete(): Promise<ObjectInfo> {
          if (finished) {
            throw new StorageError("REQUEST_FAILED", `The upload to '${uri}' has ended`);
          }
          try {
            if (blocks.length === 0) {
              const res = await request(uri, urlOf(uri, bucket, key), {
                method: "PUT",
                body: parts.takeAll() as BodyInit,
                headers: { "x-ms-blob-type": "BlockBlob", ...tier },
              });
              await res.body?.cancel();
            } else {
              if (parts.size > 0) await putBlock(parts.takeAll());
              const url = urlOf(uri, bucket, key);
              url.searchParams.set("comp", "blocklist");
              const xml = `<?xml version="1.0" encoding="utf-8"?><BlockList>${
                blocks.map((b) => `<Latest>${b}</Latest>`).join("")
              }</BlockList>`;
              const res = await request(uri, url, { method: "PUT", body: xml, headers: tier });
              await res.body?.cancel();
            }
          } catch (err) {
            finished = true;
            if (err instanceof ResumableUploadError) throw err;
            throw new ResumableUploadError(uri, null, err);
          }
          finished = true;
          return await uploadedInfo(store, uri);
        },
        abort(): Promise<void> {
          // Uncommitted blocks are never visible, and the service drops them.
          finished = true;
          parts.clear();
          return Promise.resolve();
        },
      });
    },
  };
  return store;
}
