/**
 * `limitBody()`: request bodies over a size limit are refused with 413 and the one
 * error shape, `{"error": {"code": "PAYLOAD_TOO_LARGE", "message"}}`. It wraps Hono's
 * `bodyLimit`, which checks `Content-Length` first and, for a body sent without one
 * (`Transfer-Encoding: chunked`, RFC 9112 §6.1), counts the bytes as they stream in
 * and stops at the limit, so a liar cannot make the server buffer more.
 *
 * Every server mounts it before anything reads a body.
 *
 * Leaf module: imports nothing from the project.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";

/** Default limit: 1 MiB, plenty for every JSON request of our APIs. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Options of {@link limitBody}. */
export interface LimitBodyOptions {
  /** Largest body in bytes (default {@link DEFAULT_MAX_BODY_BYTES}). */
  maxBytes?: number;
}

/**
 * Creates the body-size middleware.
 *
 * @param options `maxBytes` (default 1 MiB).
 * @returns The middleware.
 * @throws {RangeError} when `maxBytes` is not a positive integer.
 *
 * @example A body over the limit is a 413 in the JSON error shape
 * ```ts
 * import assert from "node:assert/strict";
 * import { Hono } from "hono";
 * import { limitBody } from "./body_limit.ts";
 * const app = new Hono();
 * app.use(limitBody({ maxBytes: 8 }));
 * app.post("/x", async (c) => c.text(await c.req.text()));
 * const res = await app.request("/x", { method: "POST", body: "0123456789" });
 * assert.equal(res.status, 413);
 * assert.equal((await res.json()).error.code, "PAYLOAD_TOO_LARGE");
 * ```
 */
export function limitBody(options: LimitBodyOptions = {}): MiddlewareHandler {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw new RangeError(`limitBody: maxBytes must be a positive integer, got ${maxBytes}`);
  }
  const message = `Request body is over ${maxBytes} bytes`;
  return bodyLimit({
    maxSize: maxBytes,
    onError: (c) => c.json({ error: { code: "PAYLOAD_TOO_LARGE", message } }, 413),
  });
}
