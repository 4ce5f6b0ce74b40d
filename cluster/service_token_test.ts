import assert from "node:assert/strict";
import { RBACManager, USER_NAME_PATTERN } from "../auth/rbac.ts";
import {
  SERVICE_TOKEN_TTL_S,
  serviceNameOf,
  serviceToken,
  withServiceToken,
} from "./service_token.ts";

const SECRET = "service token test secret, 32 bytes or more";

Deno.test("serviceToken() signs a service token, reuses it, and re-signs it before it expires", async () => {
  let now = Date.parse("2026-01-01T00:00:00Z");
  const rbac = new RBACManager({ secret: SECRET, now: () => new Date(now) });
  const token = serviceToken(rbac, "w1", () => now);
  const first = await token();
  const who = await rbac.validateToken(first);
  assert.deepEqual([who.kind, who.sub, who.can_freeze, who.can_thaw], [
    "service",
    "service:w1",
    false,
    false,
  ]);
  assert.equal(who.exp, now / 1000 + SERVICE_TOKEN_TTL_S);
  now += 1000;
  assert.equal(await token(), first);
  now += (SERVICE_TOKEN_TTL_S * 1000) / 2;
  const second = await token();
  assert.notEqual(second, first);
  // Past the first token's expiry, the current one is still good.
  now += (SERVICE_TOKEN_TTL_S * 1000) / 2;
  await assert.rejects(rbac.validateToken(first), { code: "TOKEN_EXPIRED" });
  assert.equal((await rbac.validateToken(await token())).sub, "service:w1");
});

Deno.test("serviceNameOf() turns any worker id into a valid token name", () => {
  const cases: [string, string][] = [
    ["w1", "w1"],
    ["worker-3f2a", "worker-3f2a"],
    ["host:8801", "host-8801"],
    ["::1", "1"],
    [":::", "worker"],
    ["x".repeat(200), "x".repeat(64)],
  ];
  for (const [id, name] of cases) {
    assert.equal(serviceNameOf(id), name, id);
    assert.match(serviceNameOf(id), USER_NAME_PATTERN);
  }
});

Deno.test("withServiceToken() adds a bearer header only with a token source", async () => {
  assert.deepEqual(await withServiceToken({ a: "1" }, undefined), { a: "1" });
  assert.deepEqual(await withServiceToken({}, () => Promise.resolve("t")), {
    authorization: "Bearer t",
  });
});
