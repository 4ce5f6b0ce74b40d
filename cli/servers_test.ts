/**
 * The server commands through the router: a bad setting exits 2 naming the flag and
 * the variable; `master` and `catalog serve` serve on port 0 until their signal aborts;
 * a catalog whose database another server holds exits 1 saying so.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { until } from "../internal/_test_utils.ts";
import { tempDir } from "../master/_test_utils.ts";
import { captureIo } from "./io.ts";
import { run } from "./run.ts";
import { cli } from "./_test_utils.ts";

Deno.test("master, worker and catalog serve refuse bad settings with exit 2, naming flag and variable", async (t) => {
  const cases: [string, string[], Record<string, string>, RegExp][] = [
    [
      "a port that is not a number",
      ["master", "--port", "abc"],
      {},
      /--port \/ PERMAFROST_MASTER_PORT/,
    ],
    [
      "an env var out of range",
      ["master"],
      { PERMAFROST_MAX_RETRIES: "0" },
      /from PERMAFROST_MAX_RETRIES for --max-retries \/ PERMAFROST_MAX_RETRIES/,
    ],
    [
      "a heartbeat that is not a number",
      ["master"],
      { PERMAFROST_HEARTBEAT_S: "fast" },
      /PERMAFROST_HEARTBEAT_S/,
    ],
    [
      "a chunk size of zero",
      ["master", "--default-chunk=0"],
      {},
      /--default-chunk \/ PERMAFROST_DEFAULT_CHUNK/,
    ],
    [
      "an unknown flag",
      ["master", "--prot", "1"],
      {},
      /'master' has no flag '--prot'; did you mean --port\?/,
    ],
    [
      "a worker master URL that is not a URL",
      ["worker", "--master", "nope"],
      {},
      /--master \/ PERMAFROST_MASTER_URL/,
    ],
    [
      "a worker id with spaces",
      ["worker"],
      { PERMAFROST_WORKER_ID: "a b" },
      /PERMAFROST_WORKER_ID/,
    ],
    [
      "a worker port out of range",
      ["worker"],
      { PERMAFROST_WORKER_PORT: "70000" },
      /PERMAFROST_WORKER_PORT/,
    ],
    [
      "a catalog without a database",
      ["catalog", "serve", "--port", "1"],
      {},
      /--db or set PERMAFROST_CATALOG_DB/,
    ],
    [
      "a short JWT secret, never echoed",
      ["catalog", "serve", "--db", "x.db"],
      { PERMAFROST_JWT_SECRET: "too short" },
      /--jwt-secret \/ PERMAFROST_JWT_SECRET(?![^]*too short)/,
    ],
  ];
  for (const [name, args, env, pattern] of cases) {
    await t.step(name, async () => {
      const r = await cli(args, { env });
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, pattern);
    });
  }
  await t.step("a flag wins over its env var", async () => {
    // The env value is bad, the flag is good: the flag is used, so the failure is elsewhere.
    const r = await cli(["master", "--max-retries", "2", "--port", "x"], {
      env: { PERMAFROST_MAX_RETRIES: "zero" },
    });
    assert.equal(r.code, 2);
    const first = r.err.split("\n")[0]!;
    assert.match(first, /--port/);
    assert.doesNotMatch(first, /MAX_RETRIES/);
  });
});

Deno.test("master serves on port 0 until its signal aborts", async () => {
  const dir = await tempDir("cli-master-");
  const stop = new AbortController();
  const io = captureIo({ env: {}, signal: stop.signal });
  const running = run(["master", "--port", "0", "--host", "127.0.0.1", "--data-dir", dir], io);
  try {
    await until(
      "the master to say it is serving",
      () => io.stderr.some((l) => l.startsWith("Master serving at")),
    );
    const url = /serving at (\S+)/.exec(io.stderr.join("\n"))![1]!;
    const res = await fetch(`${url}/health`);
    assert.equal((await res.json()).status, "ok");
  } finally {
    stop.abort();
    assert.equal(await running, 0, io.stderr.join("\n"));
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("catalog serve runs until its signal aborts; a second one on the same file exits 1", async () => {
  const dir = await tempDir("cli-catalog-");
  const db = join(dir, "c.db");
  const stop = new AbortController();
  const io = captureIo({ env: {}, signal: stop.signal });
  const running = run(["catalog", "serve", "--db", db, "--port", "0", "--log-level", "error"], io);
  try {
    await until(
      "the catalog to say it is serving",
      () => io.stderr.some((l) => l.startsWith("Catalog serving at")),
    );
    const second = await cli(["catalog", "serve", "--db", db, "--port", "0"]);
    assert.equal(second.code, 1);
    assert.match(second.err, /already open/);
  } finally {
    stop.abort();
    assert.equal(await running, 0, io.stderr.join("\n"));
    await Deno.remove(dir, { recursive: true });
  }
});
