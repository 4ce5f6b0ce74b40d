/**
 * `jsonBody()`: a Hono middleware that lets `curl -d '{"path": ...}'` work. curl's
 * `-d` sends `Content-Type: application/x-www-form-urlencoded`, and
 * `@hono/zod-openapi` answers a JSON route given that type with 415. When a request
 * with a body has no content type, the form type or `text/plain` (what `fetch` gives a
 * string body), and its body is a JSON object
 * or array, this middleware relabels it `application/json` before routing. Any
 * other body is left untouched, so real form posts still reach form routes.
 *
 * Leaf module: imports nothing from the project.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";

/** Content types curl and `fetch` give a string body when none is set. */
const LENIENT_TYPES = new Set(["", "application/x-www-form-urlencoded", "text/plain"]);

/** Options of {@link jsonBody}. */
export interface JsonBodyOptions {
  /** Largest body (bytes) the middleware inspects; larger ones pass as they are (default 1 MiB). */
  maxBytes?: number;
}

/**
 * Creates the middleware.
 *
 * @param options `maxBytes` (default 1 MiB).
 * @returns The middleware.
 *
 * @example curl's default content type reaches a JSON route
 * ```ts
 * import assert from "node:assert/strict";
 * import { Hono } from "hono";
 * import { jsonBody } from "./json_body.ts";
 * const app = new Hono();
 * app.use(jsonBody());
 * app.post("/x", async (c) => c.json({ type: c.req.header("content-type"), body: await c.req.json() }));
 * const res = await app.request("/x", {
 *   method: "POST",
 *   headers: { "content-type": "application/x-www-form-urlencoded" },
 *   body: '{"a":1}',
 * });
 * assert.deepEqual(await res.json(), { type: "application/json", body: { a: 1 } });
 * ```
 */
export function jsonBody(options: JsonBodyOptions = {}): MiddlewareHandler {
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  return async function jsonBodyMiddleware(c, next) {
    const raw = c.req.raw;
    const type = (raw.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
    const length = Number(raw.headers.get("content-length") ?? "0");
    if (
      raw.body !== null &&
      LENIENT_TYPES.has(type ?? "") &&
      length <= maxBytes
    ) {
      const text = await raw.clone().text();
      if (text.length <= maxBytes && looksLikeJson(text)) {
        const headers = new Headers(raw.headers);
        headers.set("content-type", "application/json");
        c.req.raw = new Request(raw.url, {
          method: raw.method,
          headers,
          body: text,
        });
      }
    }
    await next();
  };
}

function looksLikeJson(text: string): boolean {
  const t = text.trim();
  if (!(t.startsWith("{") || t.startsWith("["))) return false;
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}
