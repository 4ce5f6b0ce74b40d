/**
 * The one HTTP error shape, `{"error": {"code", "message"}}`, and the three Hono
 * handlers every server installs so that no path answers in any other shape:
 *
 * - {@link createErrorHandler} for `app.onError`: an `HTTPException` keeps its
 *   status; a `PermafrostError` maps by its code through a table the app may extend
 *   ({@link DEFAULT_STATUS_BY_CODE}; a 401 also gets `WWW-Authenticate: Bearer`);
 *   anything else is a 500 `INTERNAL`, logged with its stack and never echoed to
 *   the client.
 * - {@link notFoundHandler} for `app.notFound`: a 404 naming method and path.
 * - {@link validationHook} as `@hono/zod-openapi`'s `defaultHook`: a 400
 *   `INVALID_REQUEST` listing each invalid field (`fields: [{in, path, message}]`).
 *
 * Leaf module: imports nothing from the project but `errors.ts` (and the logger type).
 *
 * @module
 */
import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { PermafrostError } from "./errors.ts";
import type { Logger } from "./log.ts";

/** One invalid request field, as {@link validationHook} lists it. */
export interface FieldError {
  /** Where the field was: `json`, `query`, `param`, `header`, `form`, `cookie`. */
  in: string;
  /** Dotted path of the field (`path`, `items.0.name`), empty for the whole value. */
  path: string;
  /** What is wrong with it. */
  message: string;
}

/** The body of every error answer. */
export interface ErrorBody {
  error: {
    /** Stable SCREAMING_SNAKE code. */
    code: string;
    /** Sentence saying what went wrong and what to fix. */
    message: string;
    /** The invalid fields, on a 400 `INVALID_REQUEST`. */
    fields?: FieldError[];
    /** The column a data error is about (a task's rows that do not fit their column). */
    column?: string;
  };
}

/**
 * Statuses of the `PermafrostError` codes every app shares. An app passes its own
 * entries to {@link createErrorHandler}; they win over these.
 */
export const DEFAULT_STATUS_BY_CODE: Readonly<Record<string, ContentfulStatusCode>> = Object
  .freeze({
    BAD_REQUEST: 400,
    INVALID_REQUEST: 400,
    INVALID_ARGUMENT: 400,
    BAD_ARGUMENT: 400,
    BAD_CONFIG: 400,
    UNAUTHORIZED: 401,
    INVALID_TOKEN: 401,
    TOKEN_EXPIRED: 401,
    FORBIDDEN: 403,
    PATH_OUTSIDE_ROOT: 403,
    PATH_INVALID: 400,
    INVALID_USER: 400,
    AUTH_DISABLED: 400,
    USER_NOT_FOUND: 404,
    USER_EXISTS: 409,
    NOT_FOUND: 404,
    CONFLICT: 409,
    ALREADY_EXISTS: 409,
    PAYLOAD_TOO_LARGE: 413,
    UNSUPPORTED_MEDIA_TYPE: 415,
    TOO_MANY_REQUESTS: 429,
    UNAVAILABLE: 503,
    TIMEOUT: 504,
  });

const CODE_BY_STATUS: Readonly<Record<number, string>> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  405: "METHOD_NOT_ALLOWED",
  408: "REQUEST_TIMEOUT",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  422: "UNPROCESSABLE",
  429: "TOO_MANY_REQUESTS",
  500: "INTERNAL",
  501: "NOT_IMPLEMENTED",
  503: "UNAVAILABLE",
  504: "TIMEOUT",
};

/**
 * Builds an error answer in the shared shape.
 *
 * @param status HTTP status.
 * @param code Stable code.
 * @param message What went wrong.
 * @param extra Additional members of `error` (e.g. `fields`).
 * @returns The JSON response.
 */
export function errorResponse(
  status: ContentfulStatusCode,
  code: string,
  message: string,
  extra: Omit<ErrorBody["error"], "code" | "message"> = {},
): Response {
  const body: ErrorBody = { error: { code, message, ...extra } };
  return Response.json(body, { status });
}

/** Options of {@link createErrorHandler}. */
export interface ErrorHandlerOptions {
  /** Extra or overriding code → status entries (merged over {@link DEFAULT_STATUS_BY_CODE}). */
  statusByCode?: Readonly<Record<string, ContentfulStatusCode>>;
  /** Where unexpected errors are logged (default: nowhere). */
  logger?: Pick<Logger, "error" | "warn">;
}

/**
 * Creates the `app.onError` handler.
 *
 * A `PermafrostError` whose code is in neither table is a 500 that keeps its code
 * and message (it is a typed, deliberate message), and is logged. Any other error
 * is a 500 `INTERNAL` with a generic message: its text may hold paths or
 * internals, so it is logged, not echoed.
 *
 * @param options Extra status table and logger.
 * @returns The handler.
 *
 * @example Map a typed error to its status
 * ```ts
 * import assert from "node:assert/strict";
 * import { Hono } from "hono";
 * import { PermafrostError } from "./errors.ts";
 * import { createErrorHandler } from "./http_error.ts";
 * const app = new Hono();
 * app.onError(createErrorHandler({ statusByCode: { GONE_AWAY: 410 } }));
 * app.get("/x", () => { throw new PermafrostError("GONE_AWAY", "Dataset 'x' is gone"); });
 * const res = await app.request("/x");
 * assert.equal(res.status, 410);
 * assert.deepEqual(await res.json(), { error: { code: "GONE_AWAY", message: "Dataset 'x' is gone" } });
 * ```
 */
export function createErrorHandler(options: ErrorHandlerOptions = {}): ErrorHandler {
  const table: Readonly<Record<string, ContentfulStatusCode>> = {
    ...DEFAULT_STATUS_BY_CODE,
    ...options.statusByCode,
  };
  const logger = options.logger;
  return function permafrostErrorHandler(err: Error, c: Context): Response {
    if (err instanceof HTTPException) {
      const status = err.status;
      const res = errorResponse(
        status,
        CODE_BY_STATUS[status] ?? `HTTP_${status}`,
        err.message || defaultMessage(status),
      );
      // Keep headers a middleware set on its own response (e.g. WWW-Authenticate).
      err.res?.headers.forEach((v, k) => {
        if (k.toLowerCase() !== "content-type" && k.toLowerCase() !== "content-length") {
          res.headers.set(k, v);
        }
      });
      return res;
    }
    if (err instanceof PermafrostError) {
      const status = table[err.code];
      if (status === 401) return withChallenge(errorResponse(status, err.code, err.message));
      if (status !== undefined) return errorResponse(status, err.code, err.message);
      logger?.error("request failed", { method: c.req.method, path: c.req.path, err });
      return errorResponse(500, err.code, err.message);
    }
    logger?.error("unexpected error", {
      method: c.req.method,
      path: c.req.path,
      err,
      stack: err instanceof Error ? err.stack : undefined,
    });
    return errorResponse(500, "INTERNAL", "Internal server error");
  };
}

/**
 * RFC 6750 §3: a 401 names the scheme it wants. No `error` parameter, so the
 * challenge is the same whether a token was missing or bad; the body says which.
 */
function withChallenge(res: Response): Response {
  res.headers.set("www-authenticate", 'Bearer realm="permafrost"');
  return res;
}

function defaultMessage(status: number): string {
  return `Request failed with status ${status}`;
}

/**
 * The `app.notFound` handler: a 404 `NOT_FOUND` naming method and path.
 *
 * @param c The request context.
 * @returns The JSON response.
 */
export const notFoundHandler: NotFoundHandler = function notFoundHandler(c: Context): Response {
  return errorResponse(404, "NOT_FOUND", `No route for ${c.req.method} ${c.req.path}`);
};

/** The part of zod's error {@link validationHook} reads (zod 4 `ZodError`). */
interface IssueList {
  issues: readonly { path: readonly PropertyKey[]; message: string }[];
}

/** What `@hono/zod-openapi` passes to a hook. */
export type ValidationResult =
  & { target: string }
  & ({ success: true; data: unknown } | { success: false; error: IssueList });

/**
 * `@hono/zod-openapi`'s `defaultHook`: lets valid input through and answers invalid
 * input with a 400 `INVALID_REQUEST` listing every invalid field.
 *
 * @param result The validation result.
 * @param _c The request context (unused).
 * @returns A 400 response, or nothing when the input is valid.
 *
 * @example Use as the default hook
 * ```ts
 * import assert from "node:assert/strict";
 * import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
 * import { validationHook } from "./http_error.ts";
 * const app = new OpenAPIHono({ defaultHook: validationHook });
 * const route = createRoute({
 *   method: "get", path: "/n", request: { query: z.object({ n: z.coerce.number().int() }) },
 *   responses: { 200: { description: "ok" } },
 * });
 * app.openapi(route, (c) => c.json({ n: c.req.valid("query").n }, 200));
 * const res = await app.request("/n?n=abc");
 * assert.equal(res.status, 400);
 * assert.equal((await res.json()).error.fields[0].path, "n");
 * ```
 */
export function validationHook(result: ValidationResult, _c: Context): Response | undefined {
  if (result.success) return undefined;
  const where = result.target;
  const fields: FieldError[] = result.error.issues.map((issue) => ({
    in: where,
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
  const summary = fields
    .map((f) => (f.path === "" ? f.message : `${f.path}: ${f.message}`))
    .join("; ");
  return errorResponse(400, "INVALID_REQUEST", `Invalid ${targetName(where)}: ${summary}`, {
    fields,
  });
}

function targetName(target: string): string {
  switch (target) {
    case "json":
    case "form":
      return "request body";
    case "query":
      return "query parameters";
    case "param":
      return "path parameters";
    default:
      return target;
  }
}
