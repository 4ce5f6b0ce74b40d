/**
 * The wire types of `auth/`: users as the store keeps them and claims as tokens
 * carry them. Keys are snake_case, as `DESIGN.md` fixes the claims (`sub`,
 * `can_freeze`, `can_thaw`, `namespace`, `exp`).
 *
 * @module
 */

/** A user of the cluster and the catalog. */
export interface ClusterUser {
  /** Unique name (the token's `sub`): letters, digits, `.`, `_`, `-`, `@`; 64 at most. */
  name: string;
  /** May submit freeze jobs, register and remove datasets. */
  can_freeze: boolean;
  /** May thaw and run SQL over the catalog. */
  can_thaw: boolean;
  /**
   * The namespace the user works in: the first directory under a data root
   * (`team-a` sees `<root>/team-a/...`), or `*` for every namespace (operators).
   */
  namespace: string;
  /** When the user was added (ISO 8601); tokens issued before it are refused. */
  created_at: string;
}

/** What a user is added with (`created_at` is set by the manager). */
export interface NewUser {
  /** Unique name. */
  name: string;
  /** Default false. */
  can_freeze?: boolean;
  /** Default false. */
  can_thaw?: boolean;
  /** A namespace, or `*` for all. */
  namespace: string;
}

/** Who made a request, as a validated token says. */
export interface Principal {
  /** `user` for people and their scripts; `service` for the cluster's own processes. */
  kind: "user" | "service";
  /** User name, or `service:<name>` for a service token. */
  sub: string;
  /** May submit freeze jobs, register and remove datasets (false for services). */
  can_freeze: boolean;
  /** May thaw and run SQL (false for services). */
  can_thaw: boolean;
  /** Namespace, `*` for all. */
  namespace: string;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

/** The namespace that sees every namespace. */
export const ALL_NAMESPACES = "*";
