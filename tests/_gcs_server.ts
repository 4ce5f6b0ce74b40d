/**
 * A small Google Cloud Storage server for the tests, written here because no GCS
 * emulator can be had from our package registries. It is not a mock of our code: it
 * speaks the documented protocols the `gs://` store must speak to the real service —
 * the JSON API (object metadata, `alt=media` downloads with `Range`, listing with
 * `prefix`/`delimiter`/`pageToken`, delete), resumable upload sessions (`POST
 * uploadType=resumable` → `Location`, `PUT` chunks with `Content-Range`, `308 Resume
 * Incomplete`, a non-final chunk a multiple of 256 KiB, the object visible only after
 * the final chunk, `DELETE` cancels), the OAuth 2.0 JWT-bearer grant (the assertion's
 * RS256 signature, issuer, audience and scope are checked against a service account
 * made here) and the metadata server's token endpoint. Every storage request must
 * carry a token it issued (unless started as an emulator). `failEvery` answers every
 * n-th request 503, to exercise retries; `stallAfterParts` leaves every upload chunk
 * after the first n unanswered until the server stops, so a test can catch an upload
 * in the middle however fast its client is.
 *
 * @module
 */
import { exportPKCS8, exportSPKI, generateKeyPair, importSPKI, jwtVerify } from "jose";

interface StoredObject {
  bytes: Uint8Array;
  generation: number;
  storageClass: string;
}

/** A running server. */
export interface GcsServer {
  /** Its base URL. */
  url: string;
  /** A service-account key file for it (JSON text). */
  keyFile: string;
  /** Objects by `bucket/name`. */
  objects: Map<string, StoredObject>;
  /** Open upload sessions. */
  sessions(): number;
  /** Requests served. */
  requests(): number;
  /** Stops it. */
  stop(): Promise<void>;
}

const QUANTUM = 256 * 1024;

/**
 * Starts the server on a free port.
 *
 * @param options Buckets, `emulator` (no tokens needed), `failEvery`, `stallAfterParts`.
 * @returns The server.
 */
export async function startGcsServer(
  options: { buckets: string[]; emulator?: boolean; failEvery?: number; stallAfterParts?: number },
): Promise<GcsServer> {
  const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
  const publicPem = await exportSPKI(publicKey);
  const verifyKey = await importSPKI(publicPem, "RS256");
  const email = "permafrost-test@example.iam.gserviceaccount.com";
  const objects = new Map<string, StoredObject>();
  const sessions = new Map<
    string,
    { bucket: string; name: string; storageClass: string; parts: Uint8Array[]; at: number }
  >();
  const tokens = new Set<string>();
  /** Upload chunks received, and the requests held by `stallAfterParts`. */
  let partsSeen = 0;
  const stalled = new Set<() => void>();
  let count = 0;
  let generation = 1;
  const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
    Response.json(body, { status, headers });
  const error = (status: number, message: string) =>
    json({ error: { code: status, message } }, status);
  const issue = () => {
    const t = crypto.randomUUID();
    tokens.add(t);
    return json({ access_token: t, expires_in: 3600, token_type: "Bearer" });
  };

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    count++;
    const url = new URL(req.url);
    if (options.failEvery && count % options.failEvery === 0) return error(503, "try again");
    if (url.pathname === "/token" && req.method === "POST") {
      const form = new URLSearchParams(await req.text());
      if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") {
        return json({ error: "unsupported_grant_type" }, 400);
      }
      try {
        const { payload } = await jwtVerify(form.get("assertion") ?? "", verifyKey, {
          issuer: email,
          audience: `${url.origin}/token`,
        });
        if (!String(payload.scope ?? "").includes("devstorage")) throw new Error("scope");
      } catch {
        return json({ error: "invalid_grant" }, 400);
      }
      return issue();
    }
    if (url.pathname === "/computeMetadata/v1/instance/service-accounts/default/token") {
      return req.headers.get("metadata-flavor") === "Google"
        ? issue()
        : error(403, "Metadata-Flavor");
    }
    if (!options.emulator) {
      const auth = req.headers.get("authorization") ?? "";
      if (!tokens.has(auth.replace(/^Bearer /, ""))) return error(401, "Invalid Credentials");
    }
    const session = /^\/upload\/session\/([\w-]+)$/.exec(url.pathname);
    if (session) {
      const s = sessions.get(session[1]!);
      if (!s) return error(404, "No such upload session");
      if (req.method === "DELETE") {
        sessions.delete(session[1]!);
        return new Response(null, { status: 499 });
      }
      const range = /^bytes (?:(\d+)-(\d+)|\*)\/(\d+|\*)$/.exec(
        req.headers.get("content-range") ?? "",
      );
      if (!range) return error(400, "Content-Range required");
      const body = new Uint8Array(await req.arrayBuffer());
      if (options.stallAfterParts !== undefined && ++partsSeen > options.stallAfterParts) {
        await new Promise<void>((resolve) => stalled.add(resolve));
        return error(503, "The server is stopping");
      }
      const total = range[3] === "*" ? null : Number(range[3]);
      if (range[1] !== undefined) {
        if (Number(range[1]) !== s.at || Number(range[2]) - Number(range[1]) + 1 !== body.length) {
          return error(400, `Chunk does not continue at byte ${s.at}`);
        }
        if (total === null && body.length % QUANTUM !== 0) {
          return error(400, "A chunk but the last must be a multiple of 256 KiB");
        }
        s.parts.push(body);
        s.at += body.length;
      }
      if (total === null) {
        return new Response(null, { status: 308, headers: { range: `bytes=0-${s.at - 1}` } });
      }
      if (total !== s.at) return error(400, `Declared ${total} bytes, received ${s.at}`);
      const bytes = new Uint8Array(s.at);
      let off = 0;
      for (const p of s.parts) {
        bytes.set(p, off);
        off += p.length;
      }
      objects.set(`${s.bucket}/${s.name}`, {
        bytes,
        generation: generation++,
        storageClass: s.storageClass,
      });
      sessions.delete(session[1]!);
      return json(meta(s.bucket, s.name));
    }
    const m = /^\/(upload\/|download\/)?storage\/v1\/b\/([^/]+)\/o(?:\/(.+))?$/.exec(url.pathname);
    if (!m) return error(404, "Not Found");
    const bucket = decodeURIComponent(m[2]!);
    if (!options.buckets.includes(bucket)) {
      return error(404, "The specified bucket does not exist.");
    }
    const name = m[3] === undefined ? null : decodeURIComponent(m[3]);
    if (
      m[1] === "upload/" && req.method === "POST" &&
      url.searchParams.get("uploadType") === "resumable"
    ) {
      const meta = await req.json().catch(() => ({})) as { storageClass?: string };
      const id = crypto.randomUUID();
      sessions.set(id, {
        bucket,
        name: url.searchParams.get("name") ?? "",
        storageClass: meta.storageClass ?? "STANDARD",
        parts: [],
        at: 0,
      });
      return new Response(null, {
        status: 200,
        headers: { location: `${url.origin}/upload/session/${id}` },
      });
    }
    if (name === null && req.method === "GET") {
      const prefix = url.searchParams.get("prefix") ?? "";
      const delimiter = url.searchParams.get("delimiter");
      const names = [...objects.keys()]
        .filter((k) => k.startsWith(`${bucket}/`))
        .map((k) => k.slice(bucket.length + 1))
        .filter((n) =>
          n.startsWith(prefix) && !(delimiter && n.slice(prefix.length).includes(delimiter))
        )
        .sort();
      // Two a page, so a client must follow nextPageToken.
      const start = Number(url.searchParams.get("pageToken") ?? 0);
      const page = names.slice(start, start + 2);
      return json({
        kind: "storage#objects",
        items: page.map((n) => meta(bucket, n)),
        ...(start + 2 < names.length ? { nextPageToken: String(start + 2) } : {}),
      });
    }
    const o = name === null ? undefined : objects.get(`${bucket}/${name}`);
    if (req.method === "DELETE") {
      if (!o) return error(404, "No such object");
      objects.delete(`${bucket}/${name}`);
      return new Response(null, { status: 204 });
    }
    if (!o) return error(404, `No such object: ${bucket}/${name}`);
    if (m[1] === "download/" || url.searchParams.get("alt") === "media") {
      const r = /^bytes=(\d+)-(\d+)$/.exec(req.headers.get("range") ?? "");
      if (!r) return new Response(o.bytes as Uint8Array<ArrayBuffer>, { status: 200 });
      const from = Number(r[1]);
      if (from >= o.bytes.length) {
        return new Response(null, {
          status: 416,
          headers: { "content-range": `bytes */${o.bytes.length}` },
        });
      }
      const to = Math.min(Number(r[2]), o.bytes.length - 1);
      return new Response(o.bytes.slice(from, to + 1) as Uint8Array<ArrayBuffer>, {
        status: 206,
        headers: { "content-range": `bytes ${from}-${to}/${o.bytes.length}` },
      });
    }
    return json(meta(bucket, name!));
  });

  function meta(bucket: string, name: string) {
    const o = objects.get(`${bucket}/${name}`)!;
    return {
      kind: "storage#object",
      bucket,
      name,
      size: String(o.bytes.length),
      generation: String(o.generation),
      etag: `e${o.generation}`,
      storageClass: o.storageClass,
    };
  }

  const url = `http://127.0.0.1:${server.addr.port}`;
  const keyFile = JSON.stringify({
    type: "service_account",
    client_email: email,
    private_key: await exportPKCS8(privateKey),
    token_uri: `${url}/token`,
  });
  return {
    url,
    keyFile,
    objects,
    sessions: () => sessions.size,
    requests: () => count,
    stop: () => {
      for (const release of stalled) release();
      stalled.clear();
      return server.shutdown();
    },
  };
}
