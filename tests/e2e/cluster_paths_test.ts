/**
 * Access control at the moment of use, on a real master and worker (processes) with
 * a JWT secret and data roots: a destination directory swapped for a link out of the
 * roots after the job was accepted writes nothing there; a source swapped for a link
 * to another namespace's file of the same size is never read; two jobs writing one
 * file through a linked directory, or a destination that is the source through a link
 * or a hard link, are refused when submitted. The races are made deterministic by
 * submitting to a master with no worker yet, swapping, and only then starting one.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { RBACManager } from "../../auth/rbac.ts";
import { openSqliteUserStore } from "../../auth/sqlite_store.ts";
import { ClusterClient } from "../../client/cluster_client.ts";
import { JobError } from "../../client/errors.ts";
import { type ServerProcess, spawnLocalMaster, spawnLocalWorker } from "../../cli/spawn.ts";
import { until } from "../../internal/_test_utils.ts";

const SECRET = "e2e paths secret, at least 32 bytes long!!";

function csv(rows: number, tag: string): string {
  return "id,who\n" + Array.from({ length: rows }, (_, i) => `${i},${tag}`).join("\n") + "\n";
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("cluster paths: checks hold when files are used, and same-file checks compare files, not text", async (t) => {
  await Deno.mkdir(".tmp", { recursive: true });
  const dir = await Deno.realPath(await Deno.makeTempDir({ dir: ".tmp", prefix: "e2e-paths-" }));
  const data = join(dir, "data");
  const outside = join(dir, "outside");
  for (const d of [join(data, "team-a", "sub"), join(data, "team-b"), outside]) {
    await Deno.mkdir(d, { recursive: true });
  }
  // Same size on purpose: only the rows differ.
  await Deno.writeTextFile(join(data, "team-a", "src.csv"), csv(2000, "a"));
  await Deno.writeTextFile(join(data, "team-b", "secret.csv"), csv(2000, "b"));
  const usersDb = join(dir, "users.db");
  const store = openSqliteUserStore(usersDb);
  let token: string;
  try {
    const rbac = new RBACManager({ secret: SECRET, store });
    await rbac.addUser({ name: "alice", can_freeze: true, namespace: "team-a" });
    token = await rbac.generateToken("alice");
  } finally {
    store.close();
  }
  const children: ServerProcess[] = [];
  const logs = () =>
    children.map((p) => `--- ${p.role}\n${p.lines.slice(-20).join("\n")}`).join("\n");
  try {
    const master = await spawnLocalMaster({
      dataDir: join(dir, "master"),
      args: ["--heartbeat-s", "0.2", "--max-retries", "1"],
      env: {
        PERMAFROST_JWT_SECRET: SECRET,
        PERMAFROST_USERS_DB: usersDb,
        PERMAFROST_DATA_ROOTS: data,
      },
    });
    children.push(master);
    const client = new ClusterClient(master.url, { token });
    const submit = (source: string, destination: string) =>
      client.submit({ source, destination, chunk_rows: 500 });

    await t.step("7: the same file through a linked directory is busy", async () => {
      await Deno.symlink(join(data, "team-a"), join(data, "team-a", "again"));
      const first = await submit("team-a/src.csv", "team-a/busy.pf");
      await assert.rejects(
        submit("team-a/src.csv", "team-a/again/busy.pf"),
        (e: unknown) => e instanceof JobError && e.code === "DESTINATION_BUSY",
      );
      await client.cancel(first.job_id);
    });

    await t.step("7: a destination that is the source, through a link or a hard link", async () => {
      await assert.rejects(
        submit("team-a/src.csv", "team-a/again/src.csv"),
        (e: unknown) =>
          e instanceof JobError && e.code === "INVALID_JOB" && /the source/.test(e.message),
      );
      await Deno.link(join(data, "team-a", "src.csv"), join(data, "team-a", "hard.pf"));
      await assert.rejects(
        submit("team-a/src.csv", "team-a/hard.pf"),
        (e: unknown) =>
          e instanceof JobError && e.code === "INVALID_JOB" &&
          /same file through another name/.test(e.message),
      );
      assert.equal(await Deno.readTextFile(join(data, "team-a", "src.csv")), csv(2000, "a"));
    });

    // Accepted while no worker runs; the files are swapped before any task is read.
    const escape = await submit("team-a/src.csv", "team-a/sub/victim.pf");
    await Deno.writeTextFile(join(data, "team-a", "swap.csv"), csv(2000, "a"));
    const swap = await submit("team-a/swap.csv", "team-a/swapped.pf");
    await until("both jobs laid out", async () => {
      // These two: the job cancelled above may have been laid out too.
      const jobs = await client.listJobs();
      const ours = [escape.job_id, swap.job_id];
      return jobs.filter((j) => ours.includes(j.job_id) && j.tasks_total !== null).length === 2;
    }, { timeoutMs: 30_000, intervalMs: 50 });
    await Deno.remove(join(data, "team-a", "sub"), { recursive: true });
    await Deno.symlink(outside, join(data, "team-a", "sub"));
    await Deno.remove(join(data, "team-a", "swap.csv"));
    await Deno.symlink(join(data, "team-b", "secret.csv"), join(data, "team-a", "swap.csv"));

    children.push(
      await spawnLocalWorker({
        master: master.url,
        id: "w1",
        env: { PERMAFROST_JWT_SECRET: SECRET },
      }),
    );

    await t.step("6: a destination directory swapped for a link out of the roots", async () => {
      const job = await client.wait(escape.job_id, { pollInterval: 50 });
      assert.equal(job.status, "FAILED", `${JSON.stringify(job)}\n${logs()}`);
      assert.match(job.error ?? "", /directory now resolves to .*outside/);
      assert.deepEqual([...Deno.readDirSync(outside)], [], "nothing was written outside the roots");
    });

    await t.step("6: a source swapped for a link to another namespace's file", async () => {
      const job = await client.wait(swap.job_id, { pollInterval: 50 });
      assert.equal(job.status, "FAILED", `${JSON.stringify(job)}\n${logs()}`);
      assert.match(job.error ?? "", /SOURCE_CHANGED|is now another file/);
      assert.equal(await exists(join(data, "team-a", "swapped.pf")), false);
    });

    await t.step("an untouched job still runs", async () => {
      const ok = await submit("team-a/src.csv", "team-a/fine.pf");
      const job = await client.wait(ok.job_id, { pollInterval: 50 });
      assert.equal(job.status, "DONE", `${job.error}\n${logs()}`);
      assert.equal(job.total_rows, 2000);
    });
  } finally {
    await Promise.allSettled(children.map((p) => p.stop("SIGKILL")));
    await Deno.remove(dir, { recursive: true });
  }
});
