import assert from "node:assert/strict";
import { SignJWT, UnsecuredJWT } from "jose";
import { AuthError, type AuthErrorCode } from "./errors.ts";
import { parseLifetime, RBACManager } from "./rbac.ts";
import { memoryUserStore } from "./store.ts";

const SECRET = "a test secret that is at least 32 bytes long";
const isCode = (code: AuthErrorCode) => (e: unknown) => e instanceof AuthError && e.code === code;

function clock(start = Date.parse("2024-05-01T12:00:00Z")) {
  let t = start;
  return { now: () => new Date(t), advance: (seconds: number) => (t += seconds * 1000) };
}

Deno.test("RBACManager adds, lists and removes users", async (t) => {
  const rbac = new RBACManager({ secret: SECRET, store: memoryUserStore() });
  await t.step("add with defaults and rights", async () => {
    const bob = await rbac.addUser({ name: "bob", namespace: "team-b" });
    assert.deepEqual([bob.can_freeze, bob.can_thaw], [false, false]);
    await rbac.addUser({ name: "alice", can_freeze: true, can_thaw: true, namespace: "team-a" });
    assert.deepEqual((await rbac.listUsers()).map((u) => u.name), ["alice", "bob"]);
    assert.equal((await rbac.getUser("alice")).namespace, "team-a");
  });
  await t.step("refuses a taken name, bad names and bad namespaces", async () => {
    await assert.rejects(rbac.addUser({ name: "bob", namespace: "x" }), isCode("USER_EXISTS"));
    for (const name of ["", "-x", "a b", "a/b", "x".repeat(65)]) {
      await assert.rejects(rbac.addUser({ name, namespace: "x" }), isCode("INVALID_USER"));
    }
    for (const namespace of ["", "..", "a/b", "**", ".hidden"]) {
      await assert.rejects(rbac.addUser({ name: "carol", namespace }), isCode("INVALID_USER"));
    }
  });
  await t.step("remove", async () => {
    await rbac.removeUser("bob");
    await assert.rejects(rbac.removeUser("bob"), isCode("USER_NOT_FOUND"));
    await assert.rejects(rbac.getUser("bob"), isCode("USER_NOT_FOUND"));
  });
});

Deno.test("RBACManager.generateToken() issues HS256 tokens that validateToken() accepts", async () => {
  const c = clock();
  const rbac = new RBACManager({ secret: SECRET, store: memoryUserStore(), now: c.now });
  await rbac.addUser({ name: "alice", can_freeze: true, namespace: "team-a" });
  const token = await rbac.generateToken("alice");
  const [header] = token.split(".");
  assert.deepEqual(JSON.parse(atob(header!)), { alg: "HS256", typ: "JWT" });
  const who = await rbac.validateToken(token);
  assert.deepEqual(who, {
    kind: "user",
    sub: "alice",
    can_freeze: true,
    can_thaw: false,
    namespace: "team-a",
    exp: Math.floor(c.now().getTime() / 1000) + 24 * 3600,
  });
});

Deno.test("RBACManager.validateToken() refuses expired tokens with TOKEN_EXPIRED", async () => {
  const c = clock();
  const rbac = new RBACManager({ secret: SECRET, now: c.now });
  const user = {
    name: "alice",
    can_freeze: true,
    can_thaw: true,
    namespace: "a",
    created_at: c.now().toISOString(),
  };
  const short = await rbac.generateToken(user, { expiresIn: "1m" });
  const day = await rbac.generateToken(user);
  c.advance(59);
  assert.equal((await rbac.validateToken(short)).sub, "alice");
  c.advance(2);
  await assert.rejects(rbac.validateToken(short), isCode("TOKEN_EXPIRED"));
  assert.equal((await rbac.validateToken(day)).sub, "alice");
  c.advance(24 * 3600);
  await assert.rejects(rbac.validateToken(day), isCode("TOKEN_EXPIRED"));
});

Deno.test("RBACManager.validateToken() refuses forged, foreign and malformed tokens", async (t) => {
  const rbac = new RBACManager({ secret: SECRET });
  const user = { name: "eve", can_freeze: false, can_thaw: false, namespace: "e", created_at: "" };
  const good = await rbac.generateToken(user);
  const key = new TextEncoder().encode(SECRET);
  const cases: [string, () => Promise<string>][] = [
    ["another secret", () => new RBACManager({ secret: "x".repeat(40) }).generateToken(user)],
    [
      "a flipped signature",
      () => Promise.resolve(good.slice(0, -2) + (good.endsWith("AA") ? "BB" : "AA")),
    ],
    ["rights raised in the payload", () => {
      const [h, p, s] = good.split(".");
      const claims = JSON.parse(atob(p!.replace(/-/g, "+").replace(/_/g, "/")));
      claims.can_freeze = true;
      const raised = btoa(JSON.stringify(claims)).replace(/=+$/, "").replace(/\+/g, "-")
        .replace(/\//g, "_");
      return Promise.resolve(`${h}.${raised}.${s}`);
    }],
    ["alg none", () =>
      Promise.resolve(
        new UnsecuredJWT({ kind: "user", can_freeze: true, can_thaw: true, namespace: "*" })
          .setIssuer("permafrost").setSubject("eve").setIssuedAt().setExpirationTime("1h").encode(),
      )],
    ["HS512", () =>
      new SignJWT({ kind: "user", can_freeze: true, can_thaw: true, namespace: "*" })
        .setProtectedHeader({ alg: "HS512" }).setIssuer("permafrost").setSubject("eve")
        .setIssuedAt().setExpirationTime("1h").sign(new Uint8Array(64).fill(1))],
    [
      "another issuer",
      () =>
        new SignJWT({ kind: "user", can_freeze: true, can_thaw: true, namespace: "*" })
          .setProtectedHeader({ alg: "HS256" }).setIssuer("someone-else").setSubject("eve")
          .setIssuedAt().setExpirationTime("1h").sign(key),
    ],
    [
      "no Permafrost claims",
      () =>
        new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setIssuer("permafrost")
          .setSubject("eve").setIssuedAt().setExpirationTime("1h").sign(key),
    ],
    [
      "no expiry",
      () =>
        new SignJWT({ kind: "user", can_freeze: true, can_thaw: true, namespace: "*" })
          .setProtectedHeader({ alg: "HS256" }).setIssuer("permafrost").setSubject("eve")
          .setIssuedAt().sign(key),
    ],
    ["garbage", () => Promise.resolve("not.a.jwt")],
    ["empty", () => Promise.resolve("")],
  ];
  for (const [name, make] of cases) {
    await t.step(name, async () => {
      await assert.rejects(rbac.validateToken(await make()), isCode("INVALID_TOKEN"));
    });
  }
});

Deno.test("RBACManager with a store: removal revokes, re-adding does not revive, rights come from the store", async () => {
  const c = clock();
  const store = memoryUserStore();
  const rbac = new RBACManager({ secret: SECRET, store, now: c.now });
  const alice = await rbac.addUser({ name: "alice", can_freeze: true, namespace: "a" });
  const token = await rbac.generateToken(alice);
  await rbac.removeUser("alice");
  await assert.rejects(rbac.validateToken(token), isCode("INVALID_TOKEN"));
  c.advance(5);
  await rbac.addUser({ name: "alice", can_thaw: true, namespace: "b" });
  await assert.rejects(rbac.validateToken(token), isCode("INVALID_TOKEN"));
  const fresh = await rbac.validateToken(await rbac.generateToken("alice"));
  assert.deepEqual([fresh.can_freeze, fresh.can_thaw, fresh.namespace], [false, true, "b"]);
});

Deno.test("RBACManager.generateServiceToken() issues tokens without user rights", async () => {
  const rbac = new RBACManager({ secret: SECRET, store: memoryUserStore() });
  const who = await rbac.validateToken(await rbac.generateServiceToken("worker-1"));
  assert.deepEqual([who.kind, who.sub, who.can_freeze, who.can_thaw], [
    "service",
    "service:worker-1",
    false,
    false,
  ]);
});

Deno.test("RBACManager refuses a secret under 32 bytes and users without a store", async () => {
  assert.throws(() => new RBACManager({ secret: "short" }), isCode("BAD_SECRET"));
  const rbac = new RBACManager({ secret: SECRET });
  await assert.rejects(rbac.listUsers(), isCode("AUTH_DISABLED"));
  await assert.rejects(rbac.generateToken("alice"), isCode("AUTH_DISABLED"));
});

Deno.test("parseLifetime() reads seconds and s/m/h/d, refuses the rest", () => {
  assert.equal(parseLifetime(90), 90);
  assert.equal(parseLifetime("15m"), 900);
  assert.equal(parseLifetime("24h"), 86400);
  assert.equal(parseLifetime("7d"), 7 * 86400);
  assert.equal(parseLifetime("45"), 45);
  for (const bad of [0, -1, 1.5, "", "1w", "h", "9999d"]) {
    assert.throws(() => parseLifetime(bad), isCode("INVALID_USER"), String(bad));
  }
});
