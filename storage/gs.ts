/**
 * `gs://bucket/object`: Google Cloud Storage through its JSON API, uploads as
 * resumable upload sessions.
 *
 * Access tokens come, in this order, from `STORAGE_EMULATOR_HOST` (an emulator: its
 * URL is the endpoint and no token is sent), from the service-account key file named
 * by `GOOGLE_APPLICATION_CREDENTIALS` (a JWT signed with its key, traded for a token
 * at its `token_uri`, by `jose`), or from the metadata server of the machine
 * (`GCE_METADATA_HOST`, default `metadata.google.internal`). Tokens are kept until a
 * minute before they expire.
 *
 * An upload opens a session (with the storage class asked for) and sends chunks of
 * {@link CHUNK_BYTES} (a multiple of 256 KiB) as they fill; the object appears only
 * when the last chunk, which states the total size, is in. A chunk that fails 3 times
 * cancels the session (`ResumableUploadError`). Errors name the URI and the status,
 * never a token or key.
 *
 * @module
 */
import { importPKCS8, SignJWT } from "jose";
import { ResumableUploadError, StorageError } from "./errors.ts";
import {
  HttpFailure,
  okOr,
  PartBuffer,
  rangedBody,
  retryable,
  send,
  sendAndRead,
  type Sender,
  uploadedInfo,
} from "./_http.ts";
import { withRetries } from "./retry.ts";
import type { ByteRange, ObjectInfo, ObjectStore, Upload, UploadOptions } from "./store.ts";
import { formatUri, parseUri } from "./uri.ts";

/** Bytes of each chunk of an upload but the last (a multiple of 256 KiB). */
export const CHUNK_BYTES = 8 * 1024 * 1024;

const SCOPE = "https://www.googleapis.com/auth/devstorage.read_write";

/** What a GCS store needs (tests inject `env`, `fetch` and `readFile`). */
export interface GcsOptions {
  /** Reads a variable (default `Deno.env.get`). */
  env?: (name: string) => string | undefined;
  /** Transport (default `fetch`). */
  fetch?: typeof fetch;
  /** Reads the key file (default `Deno.readTextFile`). */
  readFile?: (path: string) => Promise<string>;
  /** First back-off pause in ms (default 200). */
  baseBackoffMs?: number;
  /** The JSON API's base URL (default Google's, or `STORAGE_EMULATOR_HOST`'s), with tokens still sent. */
  endpoint?: string;
}

interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  token_uri?: string;
}

/**
 * Creates the GCS store.
 *
 * @param options Environment, transport.
 * @returns The store.
 */
export function gcsStore(options: GcsOptions = {}): ObjectStore {
  const env = options.env ?? ((name: string) => Deno.env.get(name));
  const doFetch = options.fetch ?? fetch;
  const readFile = options.readFile ?? ((path: string) => Deno.readTextFile(path));
  const baseMs = options.baseBackoffMs ?? 200;
  // Read at each request, as the S3 store reads its endpoint: settings may change.
  const emulatorHost = () => env("STORAGE_EMULATOR_HOST");
  const baseUrl = () => {
    const emulator = emulatorHost();
    return (options.endpoint ??
      (emulator
        ? (emulator.includes("://") ? emulator : `http://${emulator}`)
        : "https://storage.googleapis.com"))
      .replace(/\/+$/, "");
  };
  let token: { value: string; until: number } | null = null;

  async function accessToken(uri: string): Promise<string | null> {
    if (emulatorHost()) return null;
    if (token && Date.now() < token.until) return token.value;
    const keyFile = env("GOOGLE_APPLICATION_CREDENTIALS");
    // The token request is retried like any other (a 5xx or a dropped connection).
    const fetchToken = async (): Promise<Response> => {
      let res: Response;
      if (keyFile) {
        const key = JSON.parse(await readFile(keyFile)) as ServiceAccountKey;
        const tokenUri = key.token_uri ?? "https://oauth2.googleapis.com/token";
        const now = Math.floor(Date.now() / 1000);
        const assertion = await new SignJWT({ scope: SCOPE })
          .setProtectedHeader({ alg: "RS256", typ: "JWT" })
          .setIssuer(key.client_email)
          .setAudience(tokenUri)
          .setIssuedAt(now)
          .setExpirationTime(now + 3600)
          .sign(await importPKCS8(key.private_key, "RS256"));
        res = await doFetch(tokenUri, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
            assertion,
          }),
        });
      } else {
        const host = env("GCE_METADATA_HOST") ?? "metadata.google.internal";
        res = await doFetch(
          `http://${host}/computeMetadata/v1/instance/service-accounts/default/token`,
          { headers: { "metadata-flavor": "Google" } },
        );
      }
      if (res.status >= 500 || res.status === 429) {
        throw new HttpFailure(res.status, await res.text(), null);
      }
      return res;
    };
    let res: Response;
    try {
      res = await withRetries(fetchToken, { baseMs, retryable });
    } catch (cause) {
      if (cause instanceof HttpFailure) {
        throw new StorageError(
          "REQUEST_FAILED",
          `Cannot get a token for '${uri}': the token endpoint answered ${cause.status}`,
          { path: uri },
        );
      }
      throw new StorageError(
        "MISSING_CREDENTIALS",
        `Cannot get a token for '${uri}': set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file (or run where the metadata server answers) (${
          cause instanceof Error ? cause.message : String(cause)
        })`,
        { path: uri, cause },
      );
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new StorageError(
        res.status === 401 || res.status === 403 ? "ACCESS_DENIED" : "MISSING_CREDENTIALS",
        `Cannot get a token for '${uri}': the token endpoint answered ${res.status}`,
        { path: uri },
      );
    }
    const body = await res.json() as { access_token?: string; expires_in?: number };
    if (!body.access_token) {
      throw new StorageError(
        "MISSING_CREDENTIALS",
        `Cannot get a token for '${uri}': no access_token`,
        {
          path: uri,
        },
      );
    }
    token = {
      value: body.access_token,
      until: Date.now() + ((body.expires_in ?? 3600) - 60) * 1000,
    };
    return token.value;
  }

  const sender = (uri: string): Sender => ({
    async sign(url, init) {
      const headers = new Headers(init.headers);
      const t = await accessToken(uri);
      if (t) headers.set("authorization", `Bearer ${t}`);
      return new Request(url, { ...init, headers });
    },
    fetch: doFetch,
    baseMs,
    missingContainer: () => false,
  });
  const request = (uri: string, url: URL, init: RequestInit, ok?: (s: number) => boolean) =>
    send(sender(uri), uri, url, init, ok);
  const objectUrl = (
    bucket: string,
    key: string,
    kind: "storage" | "download" | "upload" = "storage",
  ) =>
    new URL(
      `${baseUrl()}${kind === "storage" ? "" : `/${kind}`}/storage/v1/b/${
        encodeURIComponent(bucket)
      }/o${key === "" ? "" : `/${encodeURIComponent(key)}`}`,
    );

  const store: ObjectStore = {
    scheme: "gs",

    async stat(uri: string): Promise<ObjectInfo | null> {
      const { bucket, key } = parseUri(uri);
      const res = await request(
        uri,
        objectUrl(bucket, key),
        {},
        okOr(404),
      );
      if (res.status === 404) {
        await res.body?.cancel();
        return null;
      }
      const o = await res.json() as {
        size?: string;
        etag?: string;
        generation?: string;
        storageClass?: string;
      };
      return {
        size: Number(o.size ?? 0),
        etag: o.generation ?? o.etag ?? null,
        storageClass: o.storageClass ?? null,
      };
    },

    async read(uri: string, range?: ByteRange): Promise<{ bytes: Uint8Array; size: number }> {
      const { bucket, key } = parseUri(uri);
      const url = objectUrl(bucket, key, "download");
      url.searchParams.set("alt", "media");
      const headers: Record<string, string> = {};
      if (range) headers.range = `bytes=${range.offset}-${range.offset + range.length - 1}`;
      return await sendAndRead(
        sender(uri),
        uri,
        url,
        { headers },
        okOr(416),
        (res) => rangedBody(res, range),
      );
    },

    async list(prefix: string, opts: { recursive?: boolean } = {}): Promise<string[]> {
      const { bucket, key } = parseUri(prefix, { prefix: true });
      const out: string[] = [];
      let pageToken: string | undefined;
      do {
        const url = objectUrl(bucket, "");
        if (key !== "") url.searchParams.set("prefix", key);
        if (!opts.recursive) url.searchParams.set("delimiter", "/");
        if (pageToken) url.searchParams.set("pageToken", pageToken);
        const page = await (await request(prefix, url, {})).json() as {
          items?: { name: string }[];
          nextPageToken?: string;
        };
        for (const o of page.items ?? []) {
          out.push(formatUri({ scheme: "gs", bucket, key: o.name }));
        }
        pageToken = page.nextPageToken;
      } while (pageToken);
      return out;
    },

    async delete(uri: string): Promise<void> {
      const { bucket, key } = parseUri(uri);
      const res = await request(
        uri,
        objectUrl(bucket, key),
        { method: "DELETE" },
        okOr(404),
      );
      await res.body?.cancel();
    },

    async abortUpload(uri: string, id: string): Promise<void> {
      // A session URL is the store's own: one on another host would carry our token there.
      const session = new URL(id);
      if (session.origin !== new URL(baseUrl()).origin) {
        throw new StorageError(
          "BAD_URI",
          `The upload session of '${uri}' is not on ${new URL(baseUrl()).origin}`,
          {
            path: uri,
          },
        );
      }
      // 499 is GCS's answer to a cancelled session; 404/410 a session already gone.
      const res = await request(
        uri,
        session,
        { method: "DELETE" },
        (s) => s === 499 || s === 404 || s === 410 || (s >= 200 && s < 300),
      );
      await res.body?.cancel();
    },

    upload(uri: string, opts: UploadOptions = {}): Promise<Upload> {
      const { bucket, key } = parseUri(uri);
      const chunks = new PartBuffer(CHUNK_BYTES);
      let session: URL | null = null;
      let sent = 0;
      let finished = false;

      async function open(): Promise<URL> {
        const url = objectUrl(bucket, "", "upload");
        url.searchParams.set("uploadType", "resumable");
        url.searchParams.set("name", key);
        const res = await request(uri, url, {
          method: "POST",
          headers: { "content-type": "application/json; charset=UTF-8" },
          body: JSON.stringify(opts.storageClass ? { storageClass: opts.storageClass } : {}),
        });
        await res.body?.cancel();
        const location = res.headers.get("location");
        if (!location) {
          throw new StorageError(
            "REQUEST_FAILED",
            `Cannot start an upload to '${uri}': no session`,
          );
        }
        return new URL(location, baseUrl());
      }

      /** Sends one chunk; `total` is set on the last one. */
      async function put(bytes: Uint8Array, total: number | null): Promise<void> {
        const number = Math.floor(sent / CHUNK_BYTES) + 1;
        try {
          session ??= await open();
          const end = sent + bytes.length - 1;
          const range = bytes.length === 0
            ? `bytes */${total}`
            : `bytes ${sent}-${end}/${total === null ? "*" : total}`;
          const res = await request(uri, session, {
            method: "PUT",
            headers: { "content-range": range },
            body: bytes as BodyInit,
          }, (s) => (s >= 200 && s < 300) || s === 308);
          await res.body?.cancel();
          sent += bytes.length;
        } catch (err) {
          await abort();
          throw new ResumableUploadError(uri, total === null ? number : null, err);
        }
      }

      async function abort(): Promise<void> {
        finished = true;
        chunks.clear();
        if (session === null) return;
        const res = await request(uri, session, { method: "DELETE" }, () => true).catch(() => null);
        await res?.body?.cancel();
      }

      return Promise.resolve({
        get id() {
          return session?.href ?? null;
        },
        async putPart(bytes: Uint8Array): Promise<void> {
          if (finished) {
            throw new StorageError("REQUEST_FAILED", `The upload to '${uri}' has ended`);
          }
          chunks.push(bytes);
          for (let c = chunks.takeFull(); c; c = chunks.takeFull()) await put(c, null);
        },
        async complete(): Promise<ObjectInfo> {
          if (finished) {
            throw new StorageError("REQUEST_FAILED", `The upload to '${uri}' has ended`);
          }
          const last = chunks.takeAll();
          await put(last, sent + last.length);
          finished = true;
          return await uploadedInfo(store, uri);
        },
        abort,
      });
    },
  };
  return store;
}
