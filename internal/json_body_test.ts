import assert from "node:assert/strict";
import { Hono } from "hono";
import { jsonBody } from "./json_body.ts";

function makeApp() {
  const app = new Hono();
  app.use(jsonBody({ maxBytes: 64 }));
  app.post(
    "/echo",
    async (c) => c.json({ type: c.req.header("content-type") ?? null, text: await c.req.text() }),
  );
  return app;
}

Deno.test("jsonBody() relabels a JSON body sent as a form or without a type", async (t) => {
  const app = makeApp();
  for (const type of ["application/x-www-form-urlencoded", null]) {
    await t.step(`content type ${type}`, async () => {
      const headers: Record<string, string> = type ? { "content-type": type } : {};
      const res = await app.request("/echo", { method: "POST", headers, body: ' {"a": [1]} ' });
      assert.deepEqual(await res.json(), { type: "application/json", text: ' {"a": [1]} ' });
    });
  }
});

Deno.test("jsonBody() leaves other bodies alone", async (t) => {
  const app = makeApp();
  await t.step("a real form", async () => {
    const res = await app.request("/echo", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "a=1&b=2",
    });
    assert.deepEqual(await res.json(), {
      type: "application/x-www-form-urlencoded",
      text: "a=1&b=2",
    });
  });
  await t.step("text/csv", async () => {
    const res = await app.request("/echo", {
      method: "POST",
      headers: { "content-type": "text/csv" },
      body: "{}",
    });
    assert.equal((await res.json()).type, "text/csv");
  });
  await t.step("a body over the limit", async () => {
    const big = JSON.stringify({ a: "x".repeat(100) });
    const res = await app.request("/echo", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: big,
    });
    assert.deepEqual(await res.json(), { type: "application/x-www-form-urlencoded", text: big });
  });
});
