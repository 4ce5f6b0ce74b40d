/**
 * The cluster with auth on, as users run it: a master and a worker as real
 * processes (`cli/spawn.ts`) sharing `PERMAFROST_JWT_SECRET`, the master
 * reading the user store the user commands write and confining jobs to a data
 * root, and `main.ts cluster submit ... --wait` with and without
 * `PERMAFROST_TOKEN`. A worker holding another secret is refused. Every child is
 * killed in `finally`; nothing asserts a duration.
 */
import assert from "node:assert/strict";
import { until } from "../../internal/_test_utils.ts";
import { join } from "node:path";
import { RBACManager } from "../../auth/rbac.ts";
import { openSqliteUserStore } from "../../auth/sqlite_store.ts";
import { ClusterClient } from "../../client/cluster_client.ts";
import { type ServerProcess, spawnLocalMaster, spawnLocalWorker } from "../../cli/spawn.ts";
import { readArchiveIndex } from "../../format/reader.ts";

/** `until()` with the patience real processes on a busy machine need. */
const waitFor = <T>(what: string, check: () => Promise<T | undefined | null | false>) =>
  until(what, check, { timeoutMs: 20000, intervalMs: 50 });

const SECRET = "e2e cluster secret, at least 32 bytes long!";

/** `main.ts cluster ...` as the `cli` task runs it. */
async function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--allow-read",
      "--allow-write",
      "--allow-env=PERMAFROST_*",
      "--allow-ffi",
      "--allow-net",
      "--allow-run=zpaq",
      "main.ts",
      "cluster",
      ...args,
    ],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

Deno.test("cluster e2e with auth: a token submits through main.ts, no token is a 401, a worker with another secret is refused", async () => {
  await Deno.mkdir(".tmp", { recursive: true });
  const dir = await Deno.realPath(await Deno.makeTempDir({ dir: ".tmp", prefix: "e2e-auth-" }));
  const data = join(dir, "data");
  await Deno.mkdir(join(data, "team-a"), { recursive: true });
  const rows = 3000;
  await Deno.writeTextFile(
    join(data, "src.csv"),
    "id,v\n" + Array.from({ length: rows }, (_, i) => `${i},${(i * 31) % 97}`).join("\n") + "\n",
  );
  // The user store, as `cluster add-user alice --can-freeze --namespace team-a` writes it.
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
    children.map((p) => `--- ${p.role}\n${p.lines.slice(-30).join("\n")}`).join("\n");
  try {
    const master = await spawnLocalMaster({
      dataDir: join(dir, "master"),
      args: ["--heartbeat-s", "0.2"],
      env: {
        PERMAFROST_JWT_SECRET: SECRET,
        PERMAFROST_USERS_DB: usersDb,
        PERMAFROST_DATA_ROOTS: data,
      },
    });
    children.push(master);
    const worker = await spawnLocalWorker({
      master: master.url,
      id: "w1",
      env: { PERMAFROST_JWT_SECRET: SECRET },
    });
    children.push(worker);
    const impostor = await spawnLocalWorker({
      master: master.url,
      id: "impostor",
      env: { PERMAFROST_JWT_SECRET: "not the cluster's secret, but 32+ bytes" },
    });
    children.push(impostor);

    const client = new ClusterClient(master.url, { token });
    await waitFor("w1 to register", async () => {
      const workers = await client.listWorkers();
      return workers.some((w) => w.worker_id === "w1" && w.status === "idle");
    });
    await waitFor(
      "the impostor to be refused",
      () => Promise.resolve(impostor.lines.some((l) => l.includes("refused this worker's token"))),
    );
    assert.deepEqual((await client.listWorkers()).map((w) => w.worker_id), ["w1"]);
    for (const p of [master, worker]) {
      assert.ok(!p.lines.some((l) => l.includes("auth is off")), logs());
    }

    const master_ = ["--master", master.url];
    const denied = await cli(["submit", "src.csv", "team-a/out.pf", "--wait", ...master_], {});
    assert.equal(denied.code, 1, denied.stderr);
    assert.match(denied.stderr, /401 Unauthorized/);
    assert.match(denied.stderr, /PERMAFROST_TOKEN/);

    const ok = await cli(
      ["submit", "src.csv", "team-a/out.pf", "--chunk-rows", "1000", "--wait", ...master_],
      { PERMAFROST_TOKEN: token },
    );
    assert.equal(ok.code, 0, `${ok.stderr}\n${logs()}`);
    assert.match(ok.stderr, new RegExp(`DONE: 3,000 rows in 3 tasks -> ${join(data, "team-a")}`));
    const index = await readArchiveIndex(join(data, "team-a", "out.pf"));
    assert.deepEqual([index.footer.rows, index.footer.chunks.length], [rows, 3]);
    const [job] = await client.listJobs();
    assert.deepEqual([job?.status, job?.namespace, job?.submitted_by], ["DONE", "team-a", "alice"]);
  } finally {
    await Promise.allSettled(children.map((p) => p.stop("SIGKILL")));
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cluster e2e without a secret: auth is off, and the master and each worker warn once at start", async () => {
  await Deno.mkdir(".tmp", { recursive: true });
  const dir = await Deno.makeTempDir({ dir: ".tmp", prefix: "e2e-noauth-" });
  const children: ServerProcess[] = [];
  try {
    const master = await spawnLocalMaster({
      dataDir: join(dir, "master"),
      args: ["--heartbeat-s", "0.2"],
    });
    children.push(master);
    const worker = await spawnLocalWorker({ master: master.url, id: "w1" });
    children.push(worker);
    const client = new ClusterClient(master.url);
    await waitFor("w1 to register", async () => {
      return (await client.listWorkers()).some((w) => w.worker_id === "w1");
    });
    for (const p of [master, worker]) {
      const warnings = p.lines.filter((l) => l.includes("auth is off"));
      assert.equal(warnings.length, 1, `${p.role}:\n${p.lines.join("\n")}`);
      assert.equal(JSON.parse(warnings[0]!).level, "warn");
    }
  } finally {
    await Promise.allSettled(children.map((p) => p.stop("SIGKILL")));
    await Deno.remove(dir, { recursive: true });
  }
});
