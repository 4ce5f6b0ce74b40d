import assert from "node:assert/strict";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { HTTPException } from "hono/http-exception";
import { PermafrostError } from "./errors.ts";
import { createErrorHandler, notFoundHandler, validationHook } from "./http_error.ts";
import { createLogger } from "./log.ts";

function makeApp() {
  const logged: Record<string, unknown>[] = [];
  const logger = createLogger({ component: "t", sink: (l) => logged.push(JSON.parse(l)) });
  const app = new OpenAPIHono({ defaultHook: validationHook });
  app.onError(createErrorHandler({ logger, statusByCode: { DATASET_MISSING: 404 } }));
  app.notFound(notFoundHandler);
  app.get("/http/:status", (c) => {
    throw new HTTPException(Number(c.req.param("status")) as 401, {
      message: "Nope",
      res: new Response(null, { headers: { "www-authenticate": "Bearer" } }),
    });
  });
  app.get("/typed/:code", (c) => {
    throw new PermafrostError(c.req.param("code"), `Typed ${c.req.param("code")}`);
  });
  app.get("/crash", () => {
    throw new Error("secret path /etc/shadow");
  });
  app.openapi(
    createRoute({
      method: "post",
      path: "/items",
      request: {
        body: {
          required: true,
          content: {
            "application/json": {
              schema: z.object({ name: z.string().min(1), size: z.number().int() }),
            },
          },
        },
      },
      responses: { 201: { description: "created" } },
    }),
    (c) => c.json(c.req.valid("json"), 201),
  );
  return { app, logged };
}

async function body(res: Response) {
  assert.equal(res.headers.get("content-type"), "application/json");
  return await res.json();
}

Deno.test("createErrorHandler() keeps an HTTPException's status and headers", async () => {
  const { app } = makeApp();
  const res = await app.request("/http/401");
  assert.equal(res.status, 401);
  assert.equal(res.headers.get("www-authenticate"), "Bearer");
  assert.deepEqual(await body(res), { error: { code: "UNAUTHORIZED", message: "Nope" } });
  const teapot = await app.request("/http/418");
  assert.equal(teapot.status, 418);
  assert.equal((await body(teapot)).error.code, "HTTP_418");
});

Deno.test("createErrorHandler() maps a PermafrostError by its code", async (t) => {
  const { app, logged } = makeApp();
  for (
    const [code, status] of [
      ["NOT_FOUND", 404],
      ["BAD_REQUEST", 400],
      ["CONFLICT", 409],
      ["FORBIDDEN", 403],
      ["DATASET_MISSING", 404],
    ] as const
  ) {
    await t.step(`${code} → ${status}`, async () => {
      const res = await app.request(`/typed/${code}`);
      assert.equal(res.status, status);
      assert.deepEqual(await body(res), { error: { code, message: `Typed ${code}` } });
    });
  }
  await t.step("an unmapped code is a logged 500 keeping its code", async () => {
    const res = await app.request("/typed/WEIRD");
    assert.equal(res.status, 500);
    assert.deepEqual(await body(res), { error: { code: "WEIRD", message: "Typed WEIRD" } });
    assert.equal(logged.at(-1)?.level, "error");
  });
});

Deno.test("createErrorHandler() answers an unexpected error 500 INTERNAL without echoing it", async () => {
  const { app, logged } = makeApp();
  const res = await app.request("/crash");
  assert.equal(res.status, 500);
  const json = await body(res);
  assert.deepEqual(json, { error: { code: "INTERNAL", message: "Internal server error" } });
  assert.ok(!JSON.stringify(json).includes("shadow"));
  assert.equal(logged.length, 1);
  assert.equal(logged[0]?.msg, "unexpected error");
  assert.deepEqual(logged[0]?.err, { name: "Error", message: "secret path /etc/shadow" });
});

Deno.test("notFoundHandler() answers 404 JSON naming method and path", async () => {
  const { app } = makeApp();
  const res = await app.request("/nowhere?x=1", { method: "DELETE" });
  assert.equal(res.status, 404);
  assert.deepEqual(await body(res), {
    error: { code: "NOT_FOUND", message: "No route for DELETE /nowhere" },
  });
});

Deno.test("validationHook() answers 400 listing each invalid field", async (t) => {
  const { app } = makeApp();
  await t.step("valid input passes", async () => {
    const res = await app.request("/items", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "a", size: 1 }),
    });
    assert.equal(res.status, 201);
  });
  await t.step("invalid fields are listed", async () => {
    const res = await app.request("/items", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "", size: 1.5 }),
    });
    assert.equal(res.status, 400);
    const json = await body(res);
    assert.equal(json.error.code, "INVALID_REQUEST");
    assert.match(json.error.message, /^Invalid request body: name: .*; size: /);
    assert.deepEqual(json.error.fields.map((f: { path: string }) => f.path), ["name", "size"]);
    assert.equal(json.error.fields[0].in, "json");
  });
  await t.step("malformed JSON is a 400 in the same shape", async () => {
    const res = await app.request("/items", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{nope",
    });
    assert.equal(res.status, 400);
    assert.equal((await body(res)).error.code, "BAD_REQUEST");
  });
});
