/**
 * Where users live: the small {@link UserStore} interface and an in-memory
 * implementation for tests and for processes that only validate tokens. The
 * durable one, on `node:sqlite`, is `sqlite_store.ts`; the cluster master owns its
 * file.
 *
 * @module
 */
import { AuthError } from "./errors.ts";
import type { ClusterUser } from "./types.ts";

/** A durable set of users keyed by name. Every method may throw `AuthError` `STORE_FAILED`. */
export interface UserStore {
  /** The user of that name, or null. */
  get(name: string): Promise<ClusterUser | null>;
  /** Every user, by name. */
  list(): Promise<ClusterUser[]>;
  /**
   * Adds a user.
   *
   * @throws {AuthError} USER_EXISTS when the name is taken.
   */
  insert(user: ClusterUser): Promise<void>;
  /** Removes a user; false when there was none. */
  remove(name: string): Promise<boolean>;
  /** Releases the store. */
  close(): void;
}

/**
 * A store in memory (lost on exit).
 *
 * @returns The store.
 *
 * @example Add and read back a user
 * ```ts
 * import assert from "node:assert/strict";
 * import { memoryUserStore } from "./store.ts";
 * const store = memoryUserStore();
 * await store.insert({ name: "alice", can_freeze: true, can_thaw: false, namespace: "team-a", created_at: "2024-01-01T00:00:00.000Z" });
 * assert.equal((await store.get("alice"))?.namespace, "team-a");
 * ```
 */
export function memoryUserStore(): UserStore {
  const users = new Map<string, ClusterUser>();
  return {
    get: (name) => Promise.resolve(users.has(name) ? { ...users.get(name)! } : null),
    list: () =>
      Promise.resolve(
        [...users.values()].map((u) => ({ ...u })).sort((a, b) => a.name < b.name ? -1 : 1),
      ),
    insert(user) {
      if (users.has(user.name)) {
        return Promise.reject(new AuthError("USER_EXISTS", `User '${user.name}' already exists`));
      }
      users.set(user.name, { ...user });
      return Promise.resolve();
    },
    remove: (name) => Promise.resolve(users.delete(name)),
    close() {},
  };
}
