/**
 * The cluster's own credentials: how the master and each worker prove to each other
 * that they hold the shared JWT secret. Each process signs its own service token
 * (`RBACManager.generateServiceToken`, `kind: "service"`): a worker with its worker
 * id, the master with `master`. A token is re-signed before it expires, so a
 * process that runs for weeks keeps talking; nothing is sent over the wire to get
 * one, and the secret never leaves the process.
 *
 * Owns no HTTP: callers put `Authorization: Bearer <token>` on their requests.
 *
 * @module
 */
import type { RBACManager } from "../auth/rbac.ts";
import { USER_NAME_PATTERN } from "../auth/rbac.ts";

/** Lifetime of a service token, in seconds. */
export const SERVICE_TOKEN_TTL_S = 3600;

/** The service name of the master's token (`sub: service:master`). */
export const MASTER_SERVICE_NAME = "master";

/** Gives the current service token (signing a fresh one when the last is half spent). */
export type ServiceToken = () => Promise<string>;

/**
 * The service name a worker id signs with. Worker ids may hold `:` and run to 200
 * characters; token names may not, so other characters become `-` and the name is
 * cut to 64 (the token's `sub` is for logs, not for identity: the secret is).
 *
 * @param workerId The worker id.
 * @returns A valid token name.
 */
export function serviceNameOf(workerId: string): string {
  const name = workerId.replace(/[^A-Za-z0-9._@-]/g, "-").replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, 64);
  return USER_NAME_PATTERN.test(name) ? name : "worker";
}

/**
 * Creates a source of service tokens for one process.
 *
 * @param rbac A manager holding the shared secret.
 * @param name The process's name (`master`, or {@link serviceNameOf} a worker id).
 * @param now Clock in epoch milliseconds (default `Date.now`).
 * @returns A function giving the current token.
 *
 * @example Sign the master's token once and reuse it
 * ```ts
 * import assert from "node:assert/strict";
 * import { RBACManager } from "../auth/rbac.ts";
 * import { serviceToken } from "./service_token.ts";
 * const rbac = new RBACManager({ secret: "an example secret of at least 32 bytes!" });
 * const token = serviceToken(rbac, "master");
 * const first = await token();
 * assert.equal(await token(), first);
 * assert.equal((await rbac.validateToken(first)).sub, "service:master");
 * ```
 */
export function serviceToken(
  rbac: RBACManager,
  name: string,
  now: () => number = Date.now,
): ServiceToken {
  let current: { token: Promise<string>; renewAt: number } | null = null;
  return function currentServiceToken(): Promise<string> {
    const t = now();
    if (current === null || t >= current.renewAt) {
      const token = rbac.generateServiceToken(name, { expiresIn: SERVICE_TOKEN_TTL_S });
      current = { token, renewAt: t + (SERVICE_TOKEN_TTL_S * 1000) / 2 };
      // A failed signing (impossible with a checked name) is retried on the next call.
      token.catch(() => (current = null));
    }
    return current.token;
  };
}

/**
 * Adds `Authorization: Bearer <token>` to headers when there is a token source.
 *
 * @param headers The request's headers.
 * @param token The token source (undefined: auth off, nothing added).
 * @returns The same headers.
 */
export async function withServiceToken(
  headers: Record<string, string>,
  token: ServiceToken | undefined,
): Promise<Record<string, string>> {
  if (token) headers.authorization = `Bearer ${await token()}`;
  return headers;
}
