/**
 * The servers' access log: one debug line per request (request id, method, path,
 * status, milliseconds). Installed only when the logger writes debug lines, so it
 * costs nothing otherwise. Put it after Hono's `requestId()` middleware.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import type { Logger } from "./log.ts";

/**
 * Returns the access-log middleware, or `null` when `logger` would drop debug lines.
 *
 * @param logger Where the lines go.
 * @returns The middleware, or null.
 */
export function accessLog(
  logger: Logger,
): MiddlewareHandler<{ Variables: { requestId: string } }> | null {
  if (!logger.enabled("debug")) return null;
  return async function accessLogMiddleware(c, next) {
    const started = performance.now();
    await next();
    logger.debug("request", {
      request_id: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 100) / 100,
    });
  };
}
