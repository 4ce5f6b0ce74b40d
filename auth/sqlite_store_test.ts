import assert from "node:assert/strict";
import { AuthError } from "./errors.ts";
import { RBACManager } from "./rbac.ts";
import { openSqliteUserStore } from "./sqlite_store.ts";

const TMP = ".tmp/auth";
await Deno.mkdir(TMP, { recursive: true });

Deno.test("openSqliteUserStore() keeps users across reopening, refuses duplicates", async () => {
  const path = `${TMP}/users-${crypto.randomUUID()}.db`;
  const first = openSqliteUserStore(path);
  const rbac = new RBACManager({
    secret: "a test secret that is at least 32 bytes long",
    store: first,
  });
  await rbac.addUser({ name: "alice", can_freeze: true, can_thaw: false, namespace: "team-a" });
  await rbac.addUser({ name: "bob", can_thaw: true, namespace: "*" });
  await assert.rejects(
    rbac.addUser({ name: "alice", namespace: "x" }),
    (e: unknown) => e instanceof AuthError && e.code === "USER_EXISTS",
  );
  first.close();
  const again = openSqliteUserStore(path);
  try {
    assert.deepEqual(
      (await again.list()).map((u) => [u.name, u.can_freeze, u.can_thaw, u.namespace]),
      [["alice", true, false, "team-a"], ["bob", false, true, "*"]],
    );
    assert.equal(await again.remove("alice"), true);
    assert.equal(await again.remove("alice"), false);
    assert.equal(await again.get("alice"), null);
  } finally {
    again.close();
  }
  await assert.rejects(
    again.list(),
    (e: unknown) => e instanceof AuthError && e.code === "STORE_FAILED",
  );
  for (const suffix of ["", "-wal", "-shm"]) await Deno.remove(path + suffix).catch(() => {});
});

Deno.test("openSqliteUserStore() refuses a file that is not a database", async () => {
  const path = `${TMP}/not-a-db.txt`;
  await Deno.writeTextFile(path, "hello, this is not SQLite at all ".repeat(100));
  assert.throws(
    () => openSqliteUserStore(path),
    (e: unknown) => e instanceof AuthError && e.code === "STORE_FAILED",
  );
});
