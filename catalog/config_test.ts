import assert from "node:assert/strict";
import { ConfigError, configMarkdown, loadConfig } from "../internal/config.ts";
import { CATALOG_CONFIG, pricesParser } from "./config.ts";
import { DEFAULT_PRICES } from "./cost.ts";

Deno.test("pricesParser() reads class=price pairs and refuses others", () => {
  assert.deepEqual(pricesParser().parse("standard=0.023, cold = 0.004"), {
    standard: 0.023,
    cold: 0.004,
  });
  for (const bad of ["", "standard", "standard=-1", "standard=x", "a b=1", "a=1=2"]) {
    assert.throws(() => pricesParser().parse(bad), Error, bad);
  }
});

Deno.test("CATALOG_CONFIG loads with defaults, env and flags", () => {
  const config = loadConfig(CATALOG_CONFIG, {
    args: ["--db", "c.db", "--port=0"],
    env: {
      PERMAFROST_CATALOG_PRICES: "standard=0.02",
      PERMAFROST_LOG_LEVEL: "debug",
      PERMAFROST_CATALOG_PORT: "9",
    },
  });
  assert.equal(config.db, "c.db");
  assert.equal(config.port, 0);
  assert.equal(config.host, "127.0.0.1");
  assert.equal(config.logLevel, "debug");
  assert.deepEqual(config.prices, { standard: 0.02 });
  assert.equal(config.sqlMaxRows, 10_000);
  assert.deepEqual(loadConfig(CATALOG_CONFIG, { args: ["--db", "x"] }).prices, DEFAULT_PRICES);
  assert.throws(
    () => loadConfig(CATALOG_CONFIG, { args: ["--db", "x", "--memory-limit", "lots"] }),
    (err: unknown) =>
      err instanceof ConfigError && err.message.includes("PERMAFROST_CATALOG_MEMORY_LIMIT"),
  );
  assert.ok(configMarkdown(CATALOG_CONFIG).includes("`PERMAFROST_CATALOG_DB` | (required)"));
});

Deno.test("CATALOG_CONFIG reads the JWT secret, data roots and body limit", () => {
  const config = loadConfig(CATALOG_CONFIG, {
    args: ["--db", "c.db", "--data-roots", "/data/a, /data/b"],
    env: { PERMAFROST_JWT_SECRET: "s".repeat(32), PERMAFROST_CATALOG_MAX_BODY_BYTES: "2048" },
  });
  assert.equal(config.jwtSecret, "s".repeat(32));
  assert.deepEqual(config.dataRoots, ["/data/a", "/data/b"]);
  assert.equal(config.maxBodyBytes, 2048);
  const defaults = loadConfig(CATALOG_CONFIG, { args: ["--db", "c.db"] });
  assert.deepEqual([defaults.jwtSecret, defaults.dataRoots, defaults.maxBodyBytes], [
    "",
    [],
    1024 * 1024,
  ]);
  assert.throws(
    () =>
      loadConfig(CATALOG_CONFIG, { args: ["--db", "x"], env: { PERMAFROST_JWT_SECRET: "short" } }),
    (err: unknown) =>
      err instanceof ConfigError && err.message.includes("--jwt-secret / PERMAFROST_JWT_SECRET") &&
      !err.message.includes("short"),
  );
});
