import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { RBACManager } from "../auth/rbac.ts";
import { cli } from "./_test_utils.ts";

const TMP = resolve(".tmp/cli_users");
await Deno.mkdir(TMP, { recursive: true });

Deno.test("cluster add-user, list-users, token, service-token and remove-user on one store", async () => {
  const db = join(TMP, `users-${crypto.randomUUID()}.db`);
  const secret = "a CLI test secret of at least 32 bytes";
  const env = { PERMAFROST_USERS_DB: db, PERMAFROST_JWT_SECRET: secret };
  const rbac = new RBACManager({ secret });

  const added = await cli(
    ["cluster", "add-user", "alice", "--can-freeze", "--namespace", "team-a"],
    {
      env,
    },
  );
  assert.equal(added.code, 0, added.err);
  const who = await rbac.validateToken(added.out);
  assert.deepEqual([who.sub, who.can_freeze, who.can_thaw, who.namespace], [
    "alice",
    true,
    false,
    "team-a",
  ]);
  assert.match(added.err, /added user alice \(namespace team-a, can_freeze\)/);
  const bob = await cli(
    ["cluster", "add-user", "bob", "--can-thaw", "--namespace", "*", "--expires-in", "1h"],
    { env },
  );
  assert.equal(bob.code, 0, bob.err);
  const listed = await cli(["cluster", "list-users"], { env });
  assert.deepEqual(JSON.parse(listed.out).map((u: { name: string }) => u.name), ["alice", "bob"]);
  assert.equal(
    (await rbac.validateToken((await cli(["cluster", "token", "bob"], { env })).out)).sub,
    "bob",
  );
  const service = await cli(["cluster", "service-token", "--name", "worker-7"], { env });
  assert.equal((await rbac.validateToken(service.out)).kind, "service");
  assert.equal((await cli(["cluster", "remove-user", "alice"], { env })).code, 0);

  const again = await cli(["cluster", "remove-user", "alice"], { env });
  assert.equal(again.code, 1);
  assert.match(again.err, /^error: No user named 'alice' \[USER_NOT_FOUND\]$/);
  const twice = await cli(["cluster", "add-user", "bob", "--namespace", "x"], { env });
  assert.equal(twice.code, 1);
  assert.match(twice.err, /\[USER_EXISTS\]/);

  const usage: [string[], Record<string, string>, RegExp][] = [
    [["add-user", "carol"], env, /needs --namespace NS/],
    [
      ["add-user", "carol", "--namespace", "x"],
      { PERMAFROST_USERS_DB: db },
      /PERMAFROST_JWT_SECRET/,
    ],
    [["token"], env, /'cluster token' takes <name>, got nothing/],
    [["list-users"], {}, /--users-db or set PERMAFROST_USERS_DB/],
    [["add-usr", "carol"], env, /did you mean 'cluster add-user'\?/],
  ];
  for (const [args, envHere, pattern] of usage) {
    const r = await cli(["cluster", ...args], { env: envHere });
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.err}`);
    assert.match(r.err, pattern, args.join(" "));
  }
  for (const suffix of ["", "-wal", "-shm"]) await Deno.remove(db + suffix).catch(() => {});
});
