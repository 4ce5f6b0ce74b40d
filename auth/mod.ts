/**
 * RBAC for Permafrost's servers: users ({@link ClusterUser}) with `can_freeze`,
 * `can_thaw` and a namespace, kept in a {@link UserStore} (durable on `node:sqlite`);
 * HS256 JWTs issued and checked by {@link RBACManager}; and Hono middleware that
 * puts the caller's {@link Principal} into the request context (`bearerAuth`) and
 * refuses what it may not do (`requireClaim`, `requireService`).
 *
 * Leaf layer: imports only `internal/` and `jose`.
 *
 * @module
 */
export { AuthError } from "./errors.ts";
export type { AuthErrorCode } from "./errors.ts";
export {
  DEFAULT_TOKEN_TTL,
  MIN_SECRET_BYTES,
  NAMESPACE_PATTERN,
  parseLifetime,
  RBACManager,
  TOKEN_ISSUER,
  USER_NAME_PATTERN,
} from "./rbac.ts";
export type { RBACOptions, TokenOptions } from "./rbac.ts";
export { memoryUserStore } from "./store.ts";
export type { UserStore } from "./store.ts";
export { openSqliteUserStore } from "./sqlite_store.ts";
export { ALL_NAMESPACES } from "./types.ts";
export type { ClusterUser, NewUser, Principal } from "./types.ts";
export {
  DATA_ROOTS_SETTING,
  dataRootsParser,
  JWT_SECRET_SETTING,
  jwtSecretParser,
  TOKEN_TTL_SETTING,
} from "./settings.ts";
export {
  bearerAuth,
  requireClaim,
  requireService,
  requireUser,
  seesNamespace,
} from "./bearer/index.ts";
export type { AuthEnv, AuthVariables, BearerAuthOptions, Claim } from "./bearer/index.ts";
