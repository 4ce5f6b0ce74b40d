import assert from "node:assert/strict";
import { Hono } from "hono";
import { limitBody } from "./body_limit.ts";

function app(maxBytes: number) {
  const a = new Hono();
  a.use(limitBody({ maxBytes }));
  a.post("/x", async (c) => c.json({ got: (await c.req.text()).length }));
  return a;
}

Deno.test("limitBody() answers 413 in the JSON error shape, with or without Content-Length", async (t) => {
  const a = app(100);
  await t.step("under the limit passes", async () => {
    const res = await a.request("/x", { method: "POST", body: "x".repeat(100) });
    assert.deepEqual(await res.json(), { got: 100 });
  });
  await t.step("over the limit, declared", async () => {
    const res = await a.request("/x", { method: "POST", body: "x".repeat(101) });
    assert.equal(res.status, 413);
    assert.deepEqual(await res.json(), {
      error: { code: "PAYLOAD_TOO_LARGE", message: "Request body is over 100 bytes" },
    });
  });
  await t.step("over the limit, streamed without Content-Length", async () => {
    const chunks = ["x".repeat(60), "y".repeat(60)];
    const body = new ReadableStream<Uint8Array>({
      pull(ctl) {
        const next = chunks.shift();
        if (next === undefined) ctl.close();
        else ctl.enqueue(new TextEncoder().encode(next));
      },
    });
    const res = await a.request("/x", { method: "POST", body, duplex: "half" } as RequestInit);
    assert.equal(res.status, 413);
    assert.equal((await res.json()).error.code, "PAYLOAD_TOO_LARGE");
  });
  await t.step("a bad limit fails at build time", () => {
    assert.throws(() => limitBody({ maxBytes: 0 }), RangeError);
  });
});
