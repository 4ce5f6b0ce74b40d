import assert from "node:assert/strict";
import { createLogger, isSecretField, parseLogLevel } from "./log.ts";

function capture(level?: "debug" | "info" | "warn" | "error") {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    component: "test",
    level,
    sink: (l) => lines.push(JSON.parse(l)),
    now: () => Date.UTC(2024, 0, 2, 3, 4, 5),
  });
  return { log, lines };
}

Deno.test("createLogger() writes one JSON object per line with ts, level, component, msg", () => {
  const { log, lines } = capture("debug");
  log.debug("a", { job_id: "j1" });
  log.info("b");
  log.warn("c");
  log.error("d", { n: 1n, f: NaN, when: new Date(0) });
  assert.equal(lines.length, 4);
  assert.deepEqual(lines[0], {
    ts: "2024-01-02T03:04:05.000Z",
    level: "debug",
    component: "test",
    msg: "a",
    job_id: "j1",
  });
  assert.deepEqual(lines.map((l) => l.level), ["debug", "info", "warn", "error"]);
  assert.deepEqual(lines[3], {
    ts: "2024-01-02T03:04:05.000Z",
    level: "error",
    component: "test",
    msg: "d",
    n: "1",
    f: "NaN",
    when: "1970-01-01T00:00:00.000Z",
  });
});

Deno.test("createLogger() drops lines below its level", () => {
  const { log, lines } = capture("warn");
  log.debug("x");
  log.info("x");
  log.warn("y");
  log.error("z");
  assert.deepEqual(lines.map((l) => l.msg), ["y", "z"]);
  assert.equal(log.enabled("info"), false);
  assert.equal(log.enabled("error"), true);
  assert.equal(capture().log.level, "info");
});

Deno.test("createLogger() never writes tokens or keys", () => {
  const { log, lines } = capture();
  log.info("auth", {
    token: "eyJ.secret",
    Authorization: "Bearer abc",
    header: "Bearer xyz",
    api_key: "k",
    refresh_token: "r",
    nested: { password: "p", ok: 1 },
    primary_key: "id",
  });
  const line = JSON.stringify(lines[0]);
  for (const secret of ["eyJ.secret", "abc", "xyz", '"k"', '"r"', '"p"']) {
    assert.ok(!line.includes(secret), `${line} leaks ${secret}`);
  }
  assert.equal(lines[0]?.primary_key, "id");
  assert.deepEqual(lines[0]?.nested, { password: "[redacted]", ok: 1 });
});

Deno.test("createLogger() writes errors as name, code, message and keeps child fields", () => {
  const { log, lines } = capture();
  const err = Object.assign(new Error("boom"), { code: "X" });
  log.child({ request_id: "r1" }).error("failed", { err, msg: "ignored" });
  assert.deepEqual(lines[0], {
    ts: "2024-01-02T03:04:05.000Z",
    level: "error",
    component: "test",
    msg: "failed",
    request_id: "r1",
    err: { name: "Error", message: "boom", code: "X" },
  });
});

Deno.test("createLogger() survives a throwing sink", () => {
  const log = createLogger({
    component: "x",
    sink: () => {
      throw new Error("closed");
    },
  });
  log.info("still fine");
});

Deno.test("parseLogLevel() accepts the four levels only", () => {
  assert.equal(parseLogLevel("WARN"), "warn");
  assert.throws(() => parseLogLevel("trace"), RangeError);
  assert.equal(isSecretField("session_token"), true);
  assert.equal(isSecretField("primary_key"), false);
});
