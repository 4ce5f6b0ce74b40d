import assert from "node:assert/strict";
import { Hono } from "hono";
import { requestId } from "hono/request-id";
import { accessLog } from "./access_log.ts";
import { createLogger } from "./log.ts";

function capture(level: "debug" | "info") {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ component: "t", level, sink: (l) => lines.push(JSON.parse(l)) });
  return { logger, lines };
}

Deno.test("accessLog() writes one debug line per request with its id, path and status", async () => {
  const { logger, lines } = capture("debug");
  const app = new Hono<{ Variables: { requestId: string } }>();
  app.use(requestId());
  app.use(accessLog(logger)!);
  app.get("/ok", (c) => c.text("ok"));
  await app.request("/ok");
  await app.request("/missing");
  assert.equal(lines.length, 2);
  assert.equal(lines[0]!.msg, "request");
  assert.equal(lines[0]!.method, "GET");
  assert.equal(lines[0]!.path, "/ok");
  assert.equal(lines[0]!.status, 200);
  assert.equal(typeof lines[0]!.request_id, "string");
  assert.equal(lines[1]!.status, 404);
});

Deno.test("accessLog() is null when the logger drops debug lines", () => {
  assert.equal(accessLog(capture("info").logger), null);
});
