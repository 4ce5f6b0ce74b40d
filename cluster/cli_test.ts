/**
 * The cluster commands as `main.ts` calls them: exit codes, messages naming the
 * flag and the environment variable of a bad setting, and the client commands'
 * output against an in-process master (through `io.fetch`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { RBACManager } from "../auth/rbac.ts";
import { memoryUserStore } from "../auth/store.ts";
import { resolveDataRoots } from "../internal/paths.ts";
import { tempDir, testCluster, writeCsv } from "../master/_test_utils.ts";
import { runCluster, runMaster, runStart, runWorker } from "./cli.ts";

function capture() {
  const err: string[] = [];
  const out: string[] = [];
  return {
    err,
    out,
    io: {
      print: (l: string) => err.push(l),
      out: (l: string) => out.push(l),
      env: {},
      progress: { write: () => {}, isTerminal: false },
    },
  };
}

Deno.test("runMaster() and runWorker() refuse bad settings with exit 2, naming flag and variable", async (t) => {
  const cases: [string, (io: ReturnType<typeof capture>["io"]) => Promise<number>, RegExp][] = [
    [
      "a port that is not a number",
      (io) => runMaster(["--port", "abc"], io),
      /--port \/ PERMAFROST_MASTER_PORT/,
    ],
    [
      "an env var out of range",
      (io) => runMaster([], { ...io, env: { PERMAFROST_MAX_RETRIES: "0" } }),
      /from PERMAFROST_MAX_RETRIES for --max-retries \/ PERMAFROST_MAX_RETRIES/,
    ],
    [
      "a heartbeat that is not a number",
      (io) => runMaster([], { ...io, env: { PERMAFROST_HEARTBEAT_S: "fast" } }),
      /PERMAFROST_HEARTBEAT_S/,
    ],
    [
      "a chunk size of zero",
      (io) => runMaster(["--default-chunk=0"], io),
      /--default-chunk \/ PERMAFROST_DEFAULT_CHUNK/,
    ],
    ["an unknown flag", (io) => runMaster(["--prot", "1"], io), /Unknown flag '--prot'/],
    [
      "a worker master URL that is not a URL",
      (io) => runWorker(["--master", "nope"], io),
      /--master \/ PERMAFROST_MASTER_URL/,
    ],
    [
      "a worker id with spaces",
      (io) => runWorker([], { ...io, env: { PERMAFROST_WORKER_ID: "a b" } }),
      /PERMAFROST_WORKER_ID/,
    ],
    [
      "a worker port out of range",
      (io) => runWorker([], { ...io, env: { PERMAFROST_WORKER_PORT: "70000" } }),
      /PERMAFROST_WORKER_PORT/,
    ],
  ];
  for (const [name, run, pattern] of cases) {
    await t.step(name, async () => {
      const c = capture();
      assert.equal(await run(c.io), 2);
      assert.match(c.err.join("\n"), pattern);
    });
  }
  await t.step("a flag wins over its env var", async () => {
    const c = capture();
    // The env value is bad, the flag is good: the flag is used, so the failure is elsewhere.
    const code = await runMaster(["--max-retries", "2", "--port", "x"], {
      ...c.io,
      env: { PERMAFROST_MAX_RETRIES: "zero" },
    });
    assert.equal(code, 2);
    const first = c.err.join("\n").split("\n")[0]!;
    assert.match(first, /--port/);
    assert.doesNotMatch(first, /MAX_RETRIES/);
  });
});

Deno.test("runMaster() serves on port 0 until its signal aborts", async () => {
  const dir = await tempDir("cli-master-");
  const c = capture();
  const controller = new AbortController();
  const running = runMaster(["--port", "0", "--host", "127.0.0.1", "--data-dir", dir], {
    ...c.io,
    signal: controller.signal,
  });
  try {
    for (let i = 0; i < 400 && !c.err.some((l) => l.startsWith("Master serving at")); i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    const url = /serving at (\S+)/.exec(c.err.join("\n"))![1]!;
    const res = await fetch(`${url}/health`);
    assert.equal((await res.json()).status, "ok");
  } finally {
    controller.abort();
    assert.equal(await running, 0);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runCluster() usage errors exit 2", async (t) => {
  const cases: [string, string[], RegExp][] = [
    ["no command", [], /Usage: cluster/],
    ["unknown command", ["frobnicate"], /Unknown cluster command 'frobnicate'/],
    ["submit without a destination", ["submit", "a.csv"], /expects <source> <destination>/],
    ["bad codec", ["submit", "a.csv", "b.pf", "--codec", "gzip"], /--codec must be/],
    ["bad chunk rows", ["submit", "a.csv", "b.pf", "--chunk-rows", "-4"], /--chunk-rows must be/],
    ["flag of another command", ["jobs", "--codec", "zstd"], /--codec does not apply/],
    ["bad master URL", ["health", "--master", "ftp://x"], /--master \/ PERMAFROST_MASTER_URL/],
    ["status without an id", ["status"], /expects <job_id>/],
  ];
  for (const [name, argv, pattern] of cases) {
    await t.step(name, async () => {
      const c = capture();
      assert.equal(await runCluster(argv, c.io), 2);
      assert.match(c.err.join("\n"), pattern);
    });
  }
});

Deno.test("runCluster() submits, waits, lists and cancels through the master", async (t) => {
  const dir = await tempDir("cli-cluster-");
  const source = join(dir, "a.csv");
  await writeCsv(source, 900);
  const cluster = await testCluster({ workers: 2 });
  const base = (c: ReturnType<typeof capture>) => ({
    ...c.io,
    fetch: (input: string, init?: RequestInit) => cluster.masterApp.request(input, init),
  });
  const m = ["--master", "http://master"];
  try {
    let jobId = "";
    await t.step("submit --wait: 0, summary on stderr, record on stdout with --json", async () => {
      const c = capture();
      const code = await runCluster(
        [
          "submit",
          source,
          join(dir, "a.pf"),
          "--chunk-rows",
          "300",
          "--wait",
          "--json",
          "--poll-ms",
          "10",
          ...m,
        ],
        base(c),
      );
      assert.equal(code, 0, c.err.join("\n"));
      const job = JSON.parse(c.out.join("\n"));
      jobId = job.job_id;
      assert.equal(job.status, "DONE");
      assert.match(c.err.join("\n"), new RegExp(`job ${jobId} DONE: 900 rows in 3 tasks`));
    });
    await t.step("status prints the job as JSON", async () => {
      const c = capture();
      assert.equal(await runCluster(["status", jobId, ...m], base(c)), 0);
      assert.equal(JSON.parse(c.out.join("\n")).tasks.length, 3);
    });
    await t.step("jobs and workers print tables", async () => {
      const c = capture();
      assert.equal(await runCluster(["jobs", ...m], base(c)), 0);
      assert.match(c.out[0]!, /^job_id\s+status\s+progress/);
      assert.match(c.out[0]!, new RegExp(`${jobId}\\s+DONE\\s+100%\\s+3/3\\s+900`));
      const w = capture();
      assert.equal(await runCluster(["workers", ...m], base(w)), 0);
      assert.match(w.out[0]!, /w0\s+idle/);
    });
    await t.step("health prints JSON", async () => {
      const c = capture();
      assert.equal(await runCluster(["health", ...m], base(c)), 0);
      assert.equal(JSON.parse(c.out.join("\n")).workers, 2);
    });
    await t.step(
      "submit without --wait prints the id; cancel cancels it; wait then exits 1",
      async () => {
        const c = capture();
        assert.equal(await runCluster(["submit", source, join(dir, "b.pf"), ...m], base(c)), 0);
        const id = c.out[0]!;
        const x = capture();
        assert.equal(await runCluster(["cancel", id, ...m], base(x)), 0);
        assert.match(x.err.join("\n"), /CANCELLED/);
        const w = capture();
        assert.equal(await runCluster(["wait", id, "--poll-ms", "10", ...m], base(w)), 1);
        assert.match(w.err.join("\n"), new RegExp(`job ${id} CANCELLED`));
      },
    );
    await t.step("an unknown job exits 1 with the error code", async () => {
      const c = capture();
      assert.equal(await runCluster(["status", "nope", ...m], base(c)), 1);
      assert.match(c.err.join("\n"), /JobError JOB_NOT_FOUND/);
    });
  } finally {
    await cluster.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runCluster() with auth on: sends PERMAFROST_TOKEN or --token; 401 and 403 exit 1 saying why", async (t) => {
  const dir = await Deno.realPath(await tempDir("cli-auth-"));
  const data = join(dir, "data");
  await Deno.mkdir(join(data, "team-a"), { recursive: true });
  await writeCsv(join(data, "src.csv"), 300);
  const rbac = new RBACManager({
    secret: "cli test secret, at least 32 bytes long",
    store: memoryUserStore(),
  });
  await rbac.addUser({ name: "alice", can_freeze: true, namespace: "team-a" });
  await rbac.addUser({ name: "reader", namespace: "team-a" });
  const alice = await rbac.generateToken("alice");
  const reader = await rbac.generateToken("reader");
  const cluster = await testCluster({
    workers: 1,
    auth: { rbac, dataRoots: await resolveDataRoots([data]) },
  });
  const run = async (argv: string[], env: Record<string, string> = {}) => {
    const c = capture();
    const code = await runCluster([...argv, "--master", "http://master"], {
      ...c.io,
      env,
      fetch: (input: string, init?: RequestInit) => cluster.masterApp.request(input, init),
    });
    return { code, err: c.err.join("\n"), out: c.out.join("\n") };
  };
  try {
    await t.step("no token: exit 1 naming 401 and PERMAFROST_TOKEN", async () => {
      const r = await run(["wait", "x"]);
      assert.equal(r.code, 1);
      assert.match(r.err, /^error: 401 Unauthorized: .*needs a token/);
      assert.match(r.err, /set PERMAFROST_TOKEN/);
    });
    await t.step("a bad token: exit 1, 401, the token was refused", async () => {
      const r = await run(["wait", "x"], { PERMAFROST_TOKEN: alice.slice(0, -4) + "AAAA" });
      assert.equal(r.code, 1);
      assert.match(r.err, /^error: 401 Unauthorized: .*not valid/);
      assert.match(r.err, /the token was refused/);
    });
    await t.step("a token without can_freeze: exit 1, 403", async () => {
      const r = await run(["submit", "src.csv", "team-a/r.pf"], { PERMAFROST_TOKEN: reader });
      assert.equal(r.code, 1);
      assert.match(r.err, /^error: 403 Forbidden: .*can_freeze/);
    });
    await t.step("another namespace: exit 1, 403 naming the rule", async () => {
      const r = await run(["submit", "src.csv", "elsewhere.pf", "--token", alice]);
      assert.equal(r.code, 1);
      assert.match(r.err, /^error: 403 Forbidden: .*may write only under <data root>\/team-a\//);
    });
    await t.step(
      "PERMAFROST_TOKEN: the issue's example runs, relative to the data root",
      async () => {
        const r = await run([
          "submit",
          "src.csv",
          "team-a/out.pf",
          "--wait",
          "--json",
          "--poll-ms",
          "10",
        ], {
          PERMAFROST_TOKEN: alice,
        });
        assert.equal(r.code, 0, r.err);
        const job = JSON.parse(r.out);
        assert.deepEqual([job.status, job.total_rows, job.destination, job.submitted_by], [
          "DONE",
          300,
          join(data, "team-a", "out.pf"),
          "alice",
        ]);
        assert.ok((await Deno.stat(join(data, "team-a", "out.pf"))).size > 0);
      },
    );
    await t.step("--token wins over PERMAFROST_TOKEN", async () => {
      const r = await run(["jobs", "--json", "--token", alice], { PERMAFROST_TOKEN: "bogus" });
      assert.equal(r.code, 0, r.err);
      assert.equal(JSON.parse(r.out).length, 1);
    });
  } finally {
    await cluster.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runStart() refuses bad flags with exit 2", async () => {
  const c = capture();
  assert.equal(await runStart(["--workers", "-1"], c.io), 2);
  assert.match(c.err.join("\n"), /--workers must be an integer/);
});
