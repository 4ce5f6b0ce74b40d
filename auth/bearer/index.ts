/**
 * Bearer-token middleware for our Hono apps (master, workers, catalog), built the
 * hono way: factories whose options are checked once, returning named handlers.
 *
 * - {@link bearerAuth} reads `Authorization: Bearer <JWT>` (RFC 6750 §2.1; the scheme
 *   is case-insensitive, RFC 7235 §2.1), validates it with an {@link RBACManager} and
 *   sets the typed context variable `auth` to the {@link Principal}. No or a bad
 *   token is an `AuthError` (401, with `WWW-Authenticate: Bearer`, added by
 *   `internal/http_error.ts`). Public paths (health, docs) pass without a token.
 * - {@link requireClaim}, {@link requireService} and {@link requireUser} answer 403
 *   `FORBIDDEN` when the principal lacks a right or is the wrong kind; use them per
 *   route (`createRoute({middleware})`).
 *
 * With `rbac: null` auth is off: `auth` is null, every request passes, and the
 * factory logs one warning when it is built — at server start.
 *
 * Declare `AuthVariables` on each app's own `Env` (no global augmentation).
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import type { Logger } from "../../internal/log.ts";
import { AuthError } from "../errors.ts";
import type { RBACManager } from "../rbac.ts";
import { ALL_NAMESPACES, type Principal } from "../types.ts";

/** The context variable the middleware sets: the principal, or null when auth is off. */
export type AuthVariables = { auth: Principal | null };

/** An app `Env` that carries {@link AuthVariables}. */
export type AuthEnv = { Variables: AuthVariables };

/** Options of {@link bearerAuth}. */
export interface BearerAuthOptions {
  /** Validates tokens; `null` turns auth off (and logs a warning once, now). */
  rbac: RBACManager | null;
  /**
   * Paths served without a token: exact paths, or prefixes written `/docs/*`.
   * Default: `["/health"]`.
   */
  publicPaths?: readonly string[];
  /** Where the "auth is off" warning goes (default: nowhere). */
  logger?: Pick<Logger, "warn">;
  /** Name of the server, for the warning (default `server`). */
  component?: string;
}

/**
 * Creates the bearer-token middleware.
 *
 * @param options `rbac` (null: auth off), `publicPaths` (default `/health`), `logger`.
 * @returns The middleware; it sets `c.get("auth")`.
 * @throws {TypeError} when a public path is not `/…` or `/…/*`.
 *
 * @example Protect an app, leave /health open
 * ```ts
 * import assert from "node:assert/strict";
 * import { Hono } from "hono";
 * import { createErrorHandler } from "../../internal/http_error.ts";
 * import { RBACManager } from "../rbac.ts";
 * import { type AuthEnv, bearerAuth } from "./index.ts";
 * const rbac = new RBACManager({ secret: "an example secret of at least 32 bytes!" });
 * const app = new Hono<AuthEnv>();
 * app.onError(createErrorHandler());
 * app.use(bearerAuth({ rbac, publicPaths: ["/health"] }));
 * app.get("/health", (c) => c.json({ ok: true }));
 * app.get("/me", (c) => c.json({ sub: c.get("auth")?.sub }));
 * assert.equal((await app.request("/health")).status, 200);
 * assert.equal((await app.request("/me")).status, 401);
 * const token = await rbac.generateToken({ name: "bob", can_freeze: false, can_thaw: true, namespace: "ops", created_at: "" });
 * const res = await app.request("/me", { headers: { authorization: `Bearer ${token}` } });
 * assert.deepEqual(await res.json(), { sub: "bob" });
 * ```
 */
export function bearerAuth(options: BearerAuthOptions): MiddlewareHandler<AuthEnv> {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const p of options.publicPaths ?? ["/health"]) {
    if (!p.startsWith("/")) throw new TypeError(`Public path '${p}' must start with '/'`);
    if (p.endsWith("/*")) prefixes.push(p.slice(0, -1));
    else exact.add(p);
  }
  const isPublic = (path: string) => exact.has(path) || prefixes.some((p) => path.startsWith(p));
  const rbac = options.rbac;
  if (!rbac) {
    options.logger?.warn(
      "auth is off: no JWT secret configured (--jwt-secret / PERMAFROST_JWT_SECRET); every request is allowed",
      { component: options.component ?? "server" },
    );
    return async function bearerAuthOff(c, next) {
      c.set("auth", null);
      await next();
    };
  }
  return async function bearerAuthMiddleware(c, next) {
    if (isPublic(c.req.path)) {
      c.set("auth", null);
      return await next();
    }
    const header = c.req.header("authorization");
    if (header === undefined || header.trim() === "") {
      throw new AuthError(
        "UNAUTHORIZED",
        `${c.req.method} ${c.req.path} needs a token: send Authorization: Bearer <JWT>`,
      );
    }
    // RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token.
    const m = /^Bearer +([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header);
    if (!m) {
      throw new AuthError(
        "INVALID_TOKEN",
        "The Authorization header is not 'Bearer <JWT>'",
      );
    }
    c.set("auth", await rbac.validateToken(m[1]!));
    await next();
  };
}

/** A right a route may need. */
export type Claim = "can_freeze" | "can_thaw";

/**
 * Creates a middleware that lets only principals with a right through (403 otherwise).
 * Passes everything when auth is off.
 *
 * @param claim `can_freeze` or `can_thaw`.
 * @returns The middleware.
 *
 * @example Only freezers may register
 * ```ts ignore
 * app.post("/datasets/register", requireClaim("can_freeze"), handler);
 * ```
 */
export function requireClaim(claim: Claim): MiddlewareHandler<AuthEnv> {
  return async function requireClaimMiddleware(c, next) {
    const who = principalOf(c.get("auth"));
    if (who && !who[claim]) {
      throw new AuthError(
        "FORBIDDEN",
        `${c.req.method} ${c.req.path} needs ${claim}: the token of '${who.sub}' does not carry it`,
      );
    }
    await next();
  };
}

/**
 * Creates a middleware that lets only service tokens through (the cluster's own
 * processes: worker registration, heartbeats, task results). Passes everything
 * when auth is off.
 *
 * @returns The middleware.
 */
export function requireService(): MiddlewareHandler<AuthEnv> {
  return async function requireServiceMiddleware(c, next) {
    const who = principalOf(c.get("auth"));
    if (who && who.kind !== "service") {
      throw new AuthError(
        "FORBIDDEN",
        `${c.req.method} ${c.req.path} is for the cluster's own processes: '${who.sub}' holds a user token`,
      );
    }
    await next();
  };
}

/**
 * Creates a middleware that lets only user tokens through: what people and their
 * scripts read (jobs, workers), which the cluster's own processes have no business
 * with. Passes everything when auth is off.
 *
 * @returns The middleware.
 *
 * @example Only users may list jobs
 * ```ts ignore
 * app.get("/jobs", requireUser(), handler);
 * ```
 */
export function requireUser(): MiddlewareHandler<AuthEnv> {
  return async function requireUserMiddleware(c, next) {
    const who = principalOf(c.get("auth"));
    if (who && who.kind !== "user") {
      throw new AuthError(
        "FORBIDDEN",
        `${c.req.method} ${c.req.path} is for users: '${who.sub}' holds a service token`,
      );
    }
    await next();
  };
}

/**
 * Tells whether a principal may see a namespace (always, when auth is off).
 *
 * @param who The principal (null: auth off).
 * @param namespace A namespace (`""` for data directly under a root).
 * @returns True when it may.
 */
export function seesNamespace(who: Principal | null, namespace: string | null): boolean {
  if (who === null || who.namespace === ALL_NAMESPACES) return true;
  return namespace !== null && namespace !== "" && who.namespace === namespace;
}

function principalOf(auth: Principal | null | undefined): Principal | null {
  if (auth === undefined) {
    throw new Error(
      "requireClaim/requireService/requireUser run before bearerAuth: mount bearerAuth first",
    );
  }
  return auth;
}
