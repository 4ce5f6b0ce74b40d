/**
 * The durable {@link UserStore}: one `node:sqlite` file (WAL, `synchronous=FULL`),
 * so an added or removed user survives a crash. Several processes may open the same
 * file (the master, and the CLI's `cluster add-user` on the same machine); SQLite
 * serializes the writes and `busy_timeout` waits for a lock instead of failing.
 *
 * Permissions: `--allow-read` and `--allow-write` on the file and its directory.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { AuthError } from "./errors.ts";
import type { UserStore } from "./store.ts";
import type { ClusterUser } from "./types.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS users (
  name TEXT PRIMARY KEY,
  can_freeze INTEGER NOT NULL,
  can_thaw INTEGER NOT NULL,
  namespace TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT`;

interface Row {
  name: string;
  can_freeze: number;
  can_thaw: number;
  namespace: string;
  created_at: string;
}

/**
 * Opens (creating if missing) a user store file.
 *
 * @param path The SQLite file.
 * @returns The store; `close()` it when done.
 * @throws {AuthError} STORE_FAILED when the file cannot be opened or is not a user store.
 *
 * @example Open a store, add a user, close it
 * ```ts ignore
 * import { openSqliteUserStore } from "./sqlite_store.ts";
 * const store = openSqliteUserStore("users.db");
 * await store.insert({ name: "alice", can_freeze: true, can_thaw: true, namespace: "team-a", created_at: new Date().toISOString() });
 * store.close();
 * ```
 */
export function openSqliteUserStore(path: string): UserStore {
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path);
    db.exec("PRAGMA busy_timeout = 5000");
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = FULL");
    db.exec(SCHEMA);
  } catch (cause) {
    throw failed(`Cannot open user store '${path}'`, cause);
  }
  const get = db.prepare("SELECT * FROM users WHERE name = ?");
  const list = db.prepare("SELECT * FROM users ORDER BY name");
  const insert = db.prepare(
    "INSERT INTO users (name, can_freeze, can_thaw, namespace, created_at) VALUES (?, ?, ?, ?, ?)",
  );
  const remove = db.prepare("DELETE FROM users WHERE name = ?");
  let closed = false;
  function run<T>(what: string, fn: () => T): Promise<T> {
    if (closed) return Promise.reject(failed(`Cannot ${what}: the user store is closed`));
    try {
      return Promise.resolve(fn());
    } catch (cause) {
      if (cause instanceof AuthError) return Promise.reject(cause);
      return Promise.reject(failed(`Cannot ${what} in '${path}'`, cause));
    }
  }
  return {
    get: (name) =>
      run("read a user", () => {
        const row = get.get(name) as Row | undefined;
        return row ? fromRow(row) : null;
      }),
    list: () => run("list users", () => (list.all() as unknown as Row[]).map(fromRow)),
    insert: (user) =>
      run("add a user", () => {
        try {
          insert.run(
            user.name,
            user.can_freeze ? 1 : 0,
            user.can_thaw ? 1 : 0,
            user.namespace,
            user.created_at,
          );
        } catch (cause) {
          if ((cause as { errcode?: number }).errcode === 1555) {
            throw new AuthError("USER_EXISTS", `User '${user.name}' already exists`, { cause });
          }
          throw cause;
        }
      }),
    remove: (name) => run("remove a user", () => Number(remove.run(name).changes) > 0),
    close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

function fromRow(r: Row): ClusterUser {
  return {
    name: r.name,
    can_freeze: r.can_freeze === 1,
    can_thaw: r.can_thaw === 1,
    namespace: r.namespace,
    created_at: r.created_at,
  };
}

function failed(message: string, cause?: unknown): AuthError {
  const why = cause instanceof Error ? `: ${cause.message}` : "";
  return new AuthError("STORE_FAILED", message + why, cause === undefined ? {} : { cause });
}
