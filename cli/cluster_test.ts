/**
 * The cluster client commands through the router: exit codes, usage errors, and their
 * output against an in-process master (through `io.fetch`), with auth off and on.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { RBACManager } from "../auth/rbac.ts";
import { memoryUserStore } from "../auth/store.ts";
import { resolveDataRoots } from "../internal/paths.ts";
import { tempDir, testCluster, writeCsv } from "../master/_test_utils.ts";
import { cli } from "./_test_utils.ts";

Deno.test("cluster: usage errors exit 2 naming what to fix", async (t) => {
  const cases: [string, string[], RegExp][] = [
    ["no command", [], /Usage: permafrost cluster <command>/],
    ["unknown command", ["frobnicate"], /'cluster' has no command 'frobnicate'/],
    ["a typo", ["sbumit"], /did you mean 'cluster submit'\?/],
    ["submit without a destination", ["submit", "a.csv"], /takes <source> <destination>/],
    [
      "bad codec",
      ["submit", "a.csv", "b.pf", "--codec", "gzip"],
      /--codec \/ PERMAFROST_CODEC: expected one of zstd, lzma2, zpaq, zpaqwasm, auto/,
    ],
    [
      "bad chunk rows",
      ["submit", "a.csv", "b.pf", "--chunk-rows", "-4"],
      /--chunk-rows \/ PERMAFROST_DEFAULT_CHUNK/,
    ],
    [
      "chunk rows past the one maximum",
      ["submit", "a.csv", "b.pf", "--chunk-rows", "10000001"],
      /integer 1\.\.10000000/,
    ],
    [
      "bad format",
      ["submit", "a.csv", "b.pf", "--format", "tsv"],
      /--format must be one of csv, jsonl, parquet, arrow/,
    ],
    [
      "flag of another command",
      ["jobs", "--codec", "zstd"],
      /'cluster jobs' has no flag '--codec'/,
    ],
    ["bad master URL", ["health", "--master", "ftp://x"], /--master \/ PERMAFROST_MASTER_URL/],
    ["status without an id", ["status"], /takes <job_id>, got nothing/],
  ];
  for (const [name, argv, pattern] of cases) {
    await t.step(name, async () => {
      const r = await cli(["cluster", ...argv]);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, pattern);
    });
  }
});

Deno.test("cluster submit, wait, status, jobs, workers, health and cancel through the master", async (t) => {
  const dir = await tempDir("cli-cluster-");
  const source = join(dir, "a.csv");
  await writeCsv(source, 900);
  const cluster = await testCluster({ workers: 2 });
  const fetch = (input: string, init?: RequestInit) => cluster.masterApp.request(input, init);
  const run = (argv: string[]) => cli(["cluster", ...argv, "--master", "http://master"], { fetch });
  try {
    let jobId = "";
    await t.step("submit --wait: 0, summary on stderr, record on stdout with --json", async () => {
      const r = await run([
        "submit",
        source,
        join(dir, "a.pf"),
        "--chunk-rows",
        "300",
        "--wait",
        "--json",
        "--poll-ms",
        "10",
      ]);
      assert.equal(r.code, 0, r.err);
      const job = JSON.parse(r.out);
      jobId = job.job_id;
      assert.equal(job.status, "DONE");
      assert.match(r.err, new RegExp(`job ${jobId} DONE: 900 rows in 3 tasks`));
    });
    await t.step("status prints the job as JSON", async () => {
      const r = await run(["status", jobId]);
      assert.equal(r.code, 0, r.err);
      assert.equal(JSON.parse(r.out).tasks.length, 3);
    });
    await t.step("jobs and workers print tables", async () => {
      const jobs = await run(["jobs"]);
      assert.equal(jobs.code, 0, jobs.err);
      assert.match(jobs.out, /^job_id\s+status\s+progress/);
      assert.match(jobs.out, new RegExp(`${jobId}\\s+DONE\\s+100%\\s+3/3\\s+900`));
      const workers = await run(["workers"]);
      assert.equal(workers.code, 0, workers.err);
      assert.match(workers.out, /w0\s+idle/);
    });
    await t.step("health prints JSON", async () => {
      const r = await run(["health"]);
      assert.equal(r.code, 0, r.err);
      assert.equal(JSON.parse(r.out).workers, 2);
    });
    await t.step(
      "submit without --wait prints the id; cancel cancels it; wait then exits 1",
      async () => {
        const submitted = await run(["submit", source, join(dir, "b.pf")]);
        assert.equal(submitted.code, 0, submitted.err);
        const id = submitted.out;
        const cancelled = await run(["cancel", id]);
        assert.equal(cancelled.code, 0, cancelled.err);
        assert.match(cancelled.err, /CANCELLED/);
        const waited = await run(["wait", id, "--poll-ms", "10"]);
        assert.equal(waited.code, 1);
        assert.match(waited.err, new RegExp(`job ${id} CANCELLED`));
      },
    );
    await t.step("an unknown job exits 1 with the error code, no class name", async () => {
      const r = await run(["status", "nope"]);
      assert.equal(r.code, 1);
      assert.match(r.err, /^error: .*nope.* \[JOB_NOT_FOUND\]$/);
      assert.doesNotMatch(r.err, /JobError/);
    });
  } finally {
    await cluster.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cluster commands with auth on: sends PERMAFROST_TOKEN or --token; 401 and 403 exit 1 saying why", async (t) => {
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
  const run = (argv: string[], env: Record<string, string> = {}) =>
    cli(["cluster", ...argv, "--master", "http://master"], {
      env,
      fetch: (input: string, init?: RequestInit) => cluster.masterApp.request(input, init),
    });
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

Deno.test("cluster commands name the master's URL and what to do when it cannot be reached", async () => {
  const r = await cli(["cluster", "health", "--master", "http://127.0.0.1:9"], {
    fetch: () => Promise.reject(new TypeError("error sending request: Connection refused")),
  });
  assert.equal(r.code, 1);
  assert.match(
    r.err,
    /^error: Cannot reach the master at http:\/\/127\.0\.0\.1:9: .*\[UNREACHABLE\]/,
  );
  assert.match(r.err, /'permafrost master'.*'permafrost start'.*PERMAFROST_MASTER_URL/);
});
