/**
 * `s3://bucket/key`: AWS S3 and S3-compatible stores (MinIO, Ceph, R2, s3rver),
 * requests signed with SigV4 by `aws4fetch`.
 *
 * Settings come from the variables AWS users already set: `AWS_ACCESS_KEY_ID`,
 * `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION` (default `us-east-1`),
 * `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` (default AWS). Addressing is
 * virtual-hosted (`bucket.host/key`) except for an IP-address or `localhost` endpoint,
 * or with `PERMAFROST_S3_PATH_STYLE=1`, where it is path-style (`host/bucket/key`).
 *
 * Uploads are multipart: parts of {@link PART_BYTES} go up as they fill (an object
 * smaller than one part is one PUT), each retried; a part that fails 3 times aborts
 * the upload (`ResumableUploadError`), so nothing partial is ever visible. Secrets
 * never appear in messages: errors name the URI and the status only.
 *
 * @module
 */
import { AwsClient } from "aws4fetch";
import { ResumableUploadError, StorageError } from "./errors.ts";
import {
  HttpFailure,
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

/** Size of each part of an upload but the last (S3's minimum is 5 MiB). */
export const PART_BYTES = 8 * 1024 * 1024;

/** What an S3 store needs (tests inject `env` and `fetch`). */
export interface S3Options {
  /** Reads a variable (default `Deno.env.get`). */
  env?: (name: string) => string | undefined;
  /** Transport (default `fetch`). */
  fetch?: typeof fetch;
  /** First back-off pause in ms (default 200). */
  baseBackoffMs?: number;
}

/**
 * Creates the S3 store.
 *
 * @param options Environment and transport.
 * @returns The store.
 */
export function s3Store(options: S3Options = {}): ObjectStore {
  const env = options.env ?? ((name: string) => Deno.env.get(name));
  const doFetch = options.fetch ?? fetch;
  const baseMs = options.baseBackoffMs ?? 200;
  let client: AwsClient | null = null;

  function signer(uri: string): AwsClient {
    if (client) return client;
    const accessKeyId = env("AWS_ACCESS_KEY_ID");
    const secretAccessKey = env("AWS_SECRET_ACCESS_KEY");
    if (!accessKeyId || !secretAccessKey) {
      throw new StorageError(
        "MISSING_CREDENTIALS",
        `Cannot reach '${uri}': set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_REGION, AWS_ENDPOINT_URL_S3 for a store other than AWS)`,
        { path: uri },
      );
    }
    client = new AwsClient({
      accessKeyId,
      secretAccessKey,
      sessionToken: env("AWS_SESSION_TOKEN") || undefined,
      region: env("AWS_REGION") || env("AWS_DEFAULT_REGION") || "us-east-1",
      service: "s3",
      retries: 0,
    });
    return client;
  }

  function urlOf(bucket: string, key: string): URL {
    const region = env("AWS_REGION") || env("AWS_DEFAULT_REGION") || "us-east-1";
    const endpoint = new URL(
      env("AWS_ENDPOINT_URL_S3") || env("AWS_ENDPOINT_URL") || `https://s3.${region}.amazonaws.com`,
    );
    const host = endpoint.hostname;
    const pathStyle = env("PERMAFROST_S3_PATH_STYLE") === "1" || host === "localhost" ||
      /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.startsWith("[");
    const path = key.split("/").map(encodeURIComponent).join("/");
    const base = endpoint.pathname.replace(/\/+$/, "");
    if (pathStyle) return new URL(`${endpoint.origin}${base}/${bucket}/${path}`);
    return new URL(`${endpoint.protocol}//${bucket}.${endpoint.host}${base}/${path}`);
  }

  const sender = (uri: string): Sender => {
    const aws = signer(uri);
    return {
      sign: (url, init) => aws.sign(url.toString(), init),
      fetch: doFetch,
      baseMs,
      missingContainer: (code) => code === "NoSuchBucket",
    };
  };
  const request = (
    uri: string,
    url: URL,
    init: RequestInit,
    ok?: (status: number) => boolean,
  ): Promise<Response> => send(sender(uri), uri, url, init, ok);

  const store: ObjectStore = {
    scheme: "s3",

    async stat(uri: string): Promise<ObjectInfo | null> {
      const { bucket, key } = parseUri(uri);
      const res = await request(
        uri,
        urlOf(bucket, key),
        { method: "HEAD" },
        okOr(404),
      );
      if (res.status === 404) return null;
      return {
        size: Number(res.headers.get("content-length") ?? 0),
        etag: unquote(res.headers.get("etag")),
        storageClass: res.headers.get("x-amz-storage-class") ?? "STANDARD",
      };
    },

    async read(uri: string, range?: ByteRange): Promise<{ bytes: Uint8Array; size: number }> {
      const { bucket, key } = parseUri(uri);
      const headers: Record<string, string> = {};
      if (range) {
        headers.range = `bytes=${range.offset}-${range.offset + range.length - 1}`;
      }
      // A range past the end (an empty object read from byte 0) is 416: no bytes.
      return await sendAndRead(
        sender(uri),
        uri,
        urlOf(bucket, key),
        { headers },
        okOr(416),
        (res) => rangedBody(res, range),
      );
    },

    async list(prefix: string, options: { recursive?: boolean } = {}): Promise<string[]> {
      const { bucket, key } = parseUri(prefix, { prefix: true });
      const out: string[] = [];
      let token: string | null = null;
      do {
        const url = urlOf(bucket, "");
        url.searchParams.set("list-type", "2");
        if (key !== "") url.searchParams.set("prefix", key);
        if (!options.recursive) url.searchParams.set("delimiter", "/");
        if (token) url.searchParams.set("continuation-token", token);
        const xml = await (await request(prefix, url, {})).text();
        for (const m of xml.matchAll(/<Contents>[\s\S]*?<Key>([^<]*)<\/Key>/g)) {
          out.push(formatUri({ scheme: "s3", bucket, key: xmlText(m[1]!) }));
        }
        token = /<IsTruncated>true<\/IsTruncated>/.test(xml)
          ? xmlText(/<NextContinuationToken>([^<]*)</.exec(xml)?.[1] ?? "") || null
          : null;
      } while (token);
      return out;
    },

    async delete(uri: string): Promise<void> {
      const { bucket, key } = parseUri(uri);
      await request(
        uri,
        urlOf(bucket, key),
        { method: "DELETE" },
        okOr(404),
      );
    },

    async abortUpload(uri: string, id: string): Promise<void> {
      const { bucket, key } = parseUri(uri);
      const url = urlOf(bucket, key);
      url.search = `uploadId=${encodeURIComponent(id)}`;
      const res = await request(uri, url, { method: "DELETE" }, okOr(404));
      await res.body?.cancel();
    },

    upload(uri: string, options: UploadOptions = {}): Promise<Upload> {
      const { bucket, key } = parseUri(uri);
      signer(uri);
      const classHeader: Record<string, string> = options.storageClass
        ? { "x-amz-storage-class": options.storageClass }
        : {};
      let uploadId: string | null = null;
      const etags: string[] = [];
      const parts = new PartBuffer(PART_BYTES);
      let finished = false;

      async function begin(): Promise<string> {
        const url = urlOf(bucket, key);
        url.search = "uploads";
        const xml = await (await request(uri, url, { method: "POST", headers: classHeader }))
          .text();
        const id = /<UploadId>([^<]+)<\/UploadId>/.exec(xml)?.[1];
        if (!id) {
          throw new StorageError(
            "REQUEST_FAILED",
            `Cannot start an upload to '${uri}': no UploadId`,
          );
        }
        return xmlText(id);
      }

      async function sendPart(bytes: Uint8Array): Promise<void> {
        uploadId ??= await begin();
        const number = etags.length + 1;
        const url = urlOf(bucket, key);
        url.search = `partNumber=${number}&uploadId=${encodeURIComponent(uploadId)}`;
        try {
          const res = await request(uri, url, { method: "PUT", body: bytes as BodyInit });
          await res.body?.cancel();
          etags.push(res.headers.get("etag") ?? "");
        } catch (err) {
          await abort();
          throw new ResumableUploadError(uri, number, err);
        }
      }

      async function abort(): Promise<void> {
        finished = true;
        parts.clear();
        if (uploadId === null) return;
        const url = urlOf(bucket, key);
        url.search = `uploadId=${encodeURIComponent(uploadId)}`;
        await request(uri, url, { method: "DELETE" }, okOr(404))
          .then((r) => r.body?.cancel(), () => {});
      }

      return Promise.resolve({
        get id() {
          return uploadId;
        },
        async putPart(bytes: Uint8Array): Promise<void> {
          if (finished) {
            throw new StorageError("REQUEST_FAILED", `The upload to '${uri}' has ended`);
          }
          parts.push(bytes);
          for (let part = parts.takeFull(); part; part = parts.takeFull()) await sendPart(part);
        },
        async complete(): Promise<ObjectInfo> {
          if (finished) {
            throw new StorageError("REQUEST_FAILED", `The upload to '${uri}' has ended`);
          }
          if (uploadId === null) {
            // Smaller than one part: one PUT makes it visible at once, whole.
            const body = parts.takeAll();
            try {
              const res = await request(uri, urlOf(bucket, key), {
                method: "PUT",
                body: body as BodyInit,
                headers: classHeader,
              });
              await res.body?.cancel();
            } catch (err) {
              finished = true;
              throw new ResumableUploadError(uri, 1, err);
            }
          } else {
            if (parts.size > 0) await sendPart(parts.takeAll());
            const url = urlOf(bucket, key);
            url.search = `uploadId=${encodeURIComponent(uploadId)}`;
            const xml = "<CompleteMultipartUpload>" +
              etags.map((e, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${e}</ETag></Part>`)
                .join("") +
              "</CompleteMultipartUpload>";
            try {
              const res = await request(uri, url, { method: "POST", body: xml });
              const text = await res.text();
              // S3 may answer 200 and still fail the completion in the body.
              if (/<Error>/.test(text)) throw new HttpFailure(500, text, null);
            } catch (err) {
              await abort();
              throw new ResumableUploadError(uri, null, err);
            }
          }
          finished = true;
          return await uploadedInfo(store, uri);
        },
        abort,
      });
    },
  };
  return store;
}
