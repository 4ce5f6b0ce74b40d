/**
 * `RBACManager`: users (who may freeze, who may thaw, in which namespace) and the
 * JWTs that carry those rights. Tokens are HS256 JWTs signed with the configured
 * secret (`jose`), with claims `sub`, `can_freeze`, `can_thaw`, `namespace`, `kind`,
 * `iss` (`permafrost`), `iat`, `exp` and a random `jti`; the default lifetime is 24 h.
 *
 * Validation accepts only HS256 (no `none`, no algorithm confusion), checks issuer and
 * expiry against the manager's clock, and checks every claim's type. When the manager
 * has a {@link UserStore}, a user token is also checked against it: a removed user's
 * tokens stop working at once, a re-added user's old tokens stay dead (`iat` before
 * `created_at`), and the rights come from the store, not from the token. Without a
 * store (the catalog in phase 1) validation is stateless and a token is good until
 * it expires.
 *
 * Service tokens (`kind: "service"`) are how the cluster's own processes prove they
 * hold the secret — a worker registering with the master, the master calling a
 * worker; they carry no user rights.
 *
 * Never logs or returns the secret.
 *
 * @module
 */
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { AuthError } from "./errors.ts";
import type { UserStore } from "./store.ts";
import { DEFAULT_TOKEN_TTL, MIN_SECRET_BYTES, parseLifetime } from "./lifetime.ts";

export { DEFAULT_TOKEN_TTL, MIN_SECRET_BYTES, parseLifetime };
import { ALL_NAMESPACES, type ClusterUser, type NewUser, type Principal } from "./types.ts";

/** Issuer of every token. */
export const TOKEN_ISSUER = "permafrost";

/** Longest token text accepted (a real one is ~300 bytes). */
const MAX_TOKEN_LENGTH = 8192;

/** User names: a letter or digit, then letters, digits, `.`, `_`, `-`, `@` (64 at most). */
export const USER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/** Namespaces: one directory name (a letter or digit, then letters, digits, `.`, `_`, `-`), or `*`. */
export const NAMESPACE_PATTERN = /^(\*|[A-Za-z0-9][A-Za-z0-9._-]{0,63})$/;

/** Options of {@link RBACManager}. */
export interface RBACOptions {
  /** The shared JWT secret (`--jwt-secret`, `PERMAFROST_JWT_SECRET`): at least 32 bytes. */
  secret: string | Uint8Array;
  /** Where users live (default: none — tokens are validated without a user lookup). */
  store?: UserStore;
  /** Default token lifetime: seconds, or `30s`, `15m`, `24h`, `7d` (default 24 h). */
  defaultExpiresIn?: number | string;
  /** Clock (default: now), for issuing and checking tokens. */
  now?: () => Date;
}

/** Options of {@link RBACManager.generateToken}. */
export interface TokenOptions {
  /** Lifetime: seconds, or `30s`, `15m`, `24h`, `7d` (default: the manager's). */
  expiresIn?: number | string;
}

/**
 * Users and their tokens.
 *
 * @example Add a user, issue a token, validate it
 * ```ts
 * import assert from "node:assert/strict";
 * import { RBACManager } from "./rbac.ts";
 * import { memoryUserStore } from "./store.ts";
 * const rbac = new RBACManager({ secret: "an example secret of at least 32 bytes!", store: memoryUserStore() });
 * const alice = await rbac.addUser({ name: "alice", can_freeze: true, namespace: "team-a" });
 * const token = await rbac.generateToken(alice, { expiresIn: "1h" });
 * const who = await rbac.validateToken(token);
 * assert.deepEqual([who.sub, who.can_freeze, who.can_thaw, who.namespace], ["alice", true, false, "team-a"]);
 * ```
 */
export class RBACManager {
  readonly #key: Uint8Array;
  readonly #store: UserStore | undefined;
  readonly #ttl: number;
  readonly #now: () => Date;

  /**
   * Creates a manager.
   *
   * @param options Secret, store, default lifetime, clock.
   * @throws {AuthError} BAD_SECRET when the secret is shorter than 32 bytes; INVALID_USER
   * for a bad default lifetime.
   */
  constructor(options: RBACOptions) {
    const key = typeof options.secret === "string"
      ? new TextEncoder().encode(options.secret)
      : options.secret.slice();
    if (key.length < MIN_SECRET_BYTES) {
      throw new AuthError(
        "BAD_SECRET",
        `The JWT secret is ${key.length} bytes; use at least ${MIN_SECRET_BYTES} (e.g. openssl rand -base64 48)`,
      );
    }
    this.#key = key;
    this.#store = options.store;
    this.#ttl = parseLifetime(options.defaultExpiresIn ?? DEFAULT_TOKEN_TTL);
    this.#now = options.now ?? (() => new Date());
  }

  /** The user store, when the manager has one. */
  get store(): UserStore | undefined {
    return this.#store;
  }

  /**
   * Adds a user.
   *
   * @param user Name, rights (default none), namespace.
   * @returns The stored user.
   * @throws {AuthError} INVALID_USER, USER_EXISTS, STORE_FAILED; AUTH_DISABLED without a store.
   */
  async addUser(user: NewUser): Promise<ClusterUser> {
    const store = this.#requireStore();
    const stored: ClusterUser = {
      name: checkName(user.name),
      can_freeze: user.can_freeze === true,
      can_thaw: user.can_thaw === true,
      namespace: checkNamespace(user.namespace),
      created_at: this.#now().toISOString(),
    };
    await store.insert(stored);
    return stored;
  }

  /**
   * Lists users by name.
   *
   * @returns The users.
   */
  async listUsers(): Promise<ClusterUser[]> {
    return await this.#requireStore().list();
  }

  /**
   * One user.
   *
   * @param name The user name.
   * @returns The user.
   * @throws {AuthError} USER_NOT_FOUND.
   */
  async getUser(name: string): Promise<ClusterUser> {
    const user = await this.#requireStore().get(name);
    if (!user) throw new AuthError("USER_NOT_FOUND", `No user named '${name}'`);
    return user;
  }

  /**
   * Removes a user; their tokens stop working at once (with a store).
   *
   * @param name The user name.
   * @throws {AuthError} USER_NOT_FOUND.
   */
  async removeUser(name: string): Promise<void> {
    if (!(await this.#requireStore().remove(name))) {
      throw new AuthError("USER_NOT_FOUND", `No user named '${name}'`);
    }
  }

  /**
   * Issues a token for a user.
   *
   * @param user The user, or a name looked up in the store.
   * @param options `expiresIn` (default 24 h).
   * @returns The JWT.
   * @throws {AuthError} USER_NOT_FOUND, INVALID_USER.
   */
  async generateToken(user: ClusterUser | string, options: TokenOptions = {}): Promise<string> {
    const u = typeof user === "string" ? await this.getUser(user) : user;
    checkName(u.name);
    checkNamespace(u.namespace);
    return await this.#sign(u.name, {
      kind: "user",
      can_freeze: u.can_freeze === true,
      can_thaw: u.can_thaw === true,
      namespace: u.namespace,
    }, options);
  }

  /**
   * Issues a service token: what a worker shows the master and the master a worker.
   *
   * @param name The process (e.g. a worker id); the token's `sub` is `service:<name>`.
   * @param options `expiresIn` (default: the manager's).
   * @returns The JWT.
   * @throws {AuthError} INVALID_USER for a bad name.
   */
  generateServiceToken(name: string, options: TokenOptions = {}): Promise<string> {
    return this.#sign(`service:${checkName(name)}`, {
      kind: "service",
      can_freeze: false,
      can_thaw: false,
      namespace: ALL_NAMESPACES,
    }, options);
  }

  /**
   * Validates a token.
   *
   * @param token The JWT (without `Bearer `).
   * @returns Who it speaks for, with the rights from the store when there is one.
   * @throws {AuthError} TOKEN_EXPIRED; INVALID_TOKEN for anything else wrong.
   */
  async validateToken(token: string): Promise<Principal> {
    if (typeof token !== "string" || token.length === 0 || token.length > MAX_TOKEN_LENGTH) {
      throw new AuthError("INVALID_TOKEN", "The bearer token is empty or too long");
    }
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.#key, {
        algorithms: ["HS256"],
        issuer: TOKEN_ISSUER,
        currentDate: this.#now(),
        requiredClaims: ["sub", "exp", "iat"],
      }));
    } catch (cause) {
      if (cause instanceof joseErrors.JWTExpired) {
        throw new AuthError("TOKEN_EXPIRED", "The bearer token has expired: ask for a new one", {
          cause,
        });
      }
      throw new AuthError("INVALID_TOKEN", `The bearer token is not valid: ${reason(cause)}`, {
        cause,
      });
    }
    const { sub, kind, can_freeze, can_thaw, namespace, exp, iat } = payload;
    if (
      typeof sub !== "string" || (kind !== "user" && kind !== "service") ||
      typeof can_freeze !== "boolean" || typeof can_thaw !== "boolean" ||
      typeof namespace !== "string" || !NAMESPACE_PATTERN.test(namespace) ||
      typeof exp !== "number" || typeof iat !== "number"
    ) {
      throw new AuthError("INVALID_TOKEN", "The bearer token lacks the Permafrost claims");
    }
    const principal: Principal = { kind, sub, can_freeze, can_thaw, namespace, exp };
    if (kind === "service" || !this.#store) return principal;
    const user = await this.#store.get(sub);
    if (!user || Date.parse(user.created_at) > iat * 1000 + 999) {
      throw new AuthError("INVALID_TOKEN", `The bearer token's user '${sub}' no longer exists`);
    }
    return { ...principal, ...rights(user) };
  }

  async #sign(
    sub: string,
    claims: Pick<Principal, "kind" | "can_freeze" | "can_thaw" | "namespace">,
    options: TokenOptions,
  ): Promise<string> {
    const ttl = options.expiresIn === undefined ? this.#ttl : parseLifetime(options.expiresIn);
    const iat = Math.floor(this.#now().getTime() / 1000);
    return await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuer(TOKEN_ISSUER)
      .setSubject(sub)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttl)
      .setJti(crypto.randomUUID())
      .sign(this.#key);
  }

  #requireStore(): UserStore {
    if (!this.#store) {
      throw new AuthError("AUTH_DISABLED", "This process has no user store (the master owns it)");
    }
    return this.#store;
  }
}

function rights(u: ClusterUser): Pick<Principal, "can_freeze" | "can_thaw" | "namespace"> {
  return { can_freeze: u.can_freeze, can_thaw: u.can_thaw, namespace: u.namespace };
}

function checkName(name: string): string {
  if (typeof name !== "string" || !USER_NAME_PATTERN.test(name)) {
    throw new AuthError(
      "INVALID_USER",
      `Invalid user name '${name}': use letters, digits, '.', '_', '-' or '@' (starting with a letter or digit, 64 at most)`,
    );
  }
  return name;
}

function checkNamespace(namespace: string): string {
  if (typeof namespace !== "string" || !NAMESPACE_PATTERN.test(namespace)) {
    throw new AuthError(
      "INVALID_USER",
      `Invalid namespace '${namespace}': use one directory name (letters, digits, '.', '_', '-') or '*' for all`,
    );
  }
  return namespace;
}

function reason(cause: unknown): string {
  if (cause instanceof joseErrors.JWSSignatureVerificationFailed) return "bad signature";
  if (cause instanceof joseErrors.JOSEAlgNotAllowed) return "algorithm not allowed";
  if (cause instanceof joseErrors.JWTClaimValidationFailed) {
    return `claim ${cause.claim} ${cause.reason}`;
  }
  if (cause instanceof joseErrors.JOSEError) return "malformed token";
  return "malformed token";
}
