/**
 * The operator against `tests/_kube_server.ts` (the Kubernetes API subset it uses) and
 * a real master and worker as processes: a PermafrostJob goes Pending → Running →
 * Completed with the local freeze's payload (driven by `operator/main.ts` as its own
 * process, reading a service-account directory, over HTTPS trusting the given CA); a bad spec and a job the master
 * refuses end Failed with the reason; a deleted Running object cancels its master job
 * and goes away; an unreachable master, a missing CRD and a 403 are logged and retried,
 * never a crash; the worker Deployment is scaled by queued tasks between min and max.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ClusterClient } from "../client/cluster_client.ts";
import { type ServerProcess, spawnLocalMaster, spawnLocalWorker } from "../cli/spawn.ts";
import { requireTool, until } from "../internal/_test_utils.ts";
import { memoryLogger, tempDir, writeCsv } from "../master/_test_utils.ts";
import { freeze } from "../ops/freeze.ts";
import { startKubeServer } from "../tests/_kube_server.ts";
import { FINALIZER, KubeClient } from "./kube.ts";
import { Operator } from "./operator.ts";

const waitFor = <T>(what: string, check: () => Promise<T | undefined | null | false>) =>
  until(what, check, { timeoutMs: 60_000, intervalMs: 50 });

function job(name: string, spec: Record<string, unknown>) {
  return { apiVersion: "permafrost.dev/v1alpha1", kind: "PermafrostJob", metadata: { name }, spec };
}

async function cluster(dir: string, workers: number) {
  const master = await spawnLocalMaster({
    dataDir: join(dir, "master"),
    port: 0,
    args: ["--heartbeat-s", "0.2"],
  });
  const ws: ServerProcess[] = [];
  for (let i = 0; i < workers; i++) {
    ws.push(await spawnLocalWorker({ master: master.url, id: `w${i}` }));
  }
  const client = new ClusterClient(master.url);
  return {
    master,
    client,
    stop: () => Promise.allSettled([...ws.map((w) => w.stop("SIGKILL")), master.stop("SIGKILL")]),
  };
}

/**
 * A cluster CA and the API server's certificate for localhost signed by it (as a real
 * cluster has), or null without openssl.
 */
async function clusterCerts(
  dir: string,
): Promise<{ ca: string; cert: string; key: string } | null> {
  const openssl = requireTool("openssl", "operator/operator_test.ts");
  if (openssl === null) return null;
  const run = async (...args: string[]) => {
    const out = await new Deno.Command(openssl, { args, cwd: dir, stdout: "null", stderr: "piped" })
      .output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  };
  await run(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=test-cluster-ca",
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
  );
  await run(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=localhost",
    "-keyout",
    "tls.key",
    "-out",
    "tls.csr",
  );
  await Deno.writeTextFile(
    join(dir, "ext.cnf"),
    "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
  );
  await run(
    "x509",
    "-req",
    "-in",
    "tls.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "1",
    "-extfile",
    "ext.cnf",
    "-out",
    "tls.crt",
  );
  const read = (name: string) => Deno.readTextFile(join(dir, name));
  return { ca: await read("ca.crt"), cert: await read("tls.crt"), key: await read("tls.key") };
}

Deno.test("operator/main.ts runs a PermafrostJob to Completed with the local freeze's payload", async () => {
  const dir = await tempDir("operator-main-");
  // The API over HTTPS with its own CA, as in a cluster: the operator trusts ca.crt only.
  const certs = await clusterCerts(dir);
  const kube = startKubeServer("jobs", certs ?? undefined);
  const c = await cluster(dir, 1);
  const sa = join(dir, "sa");
  await Deno.mkdir(sa);
  await Deno.writeTextFile(join(sa, "token"), kube.token);
  await Deno.writeTextFile(join(sa, "namespace"), "jobs");
  if (certs) await Deno.writeTextFile(join(sa, "ca.crt"), certs.ca);
  let child: Deno.ChildProcess | undefined;
  try {
    const csv = join(dir, "in.csv");
    await writeCsv(csv, 30_000, { nullEvery: 5 });
    const local = await freeze(csv, join(dir, "local.pf"), { chunkRows: 3000, threads: 0 });
    kube.create(
      job("readings", { source: csv, destination: join(dir, "out.pf"), chunk_rows: 3000 }),
    );
    child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-q",
        `--allow-read=${sa}`,
        "--allow-net",
        "--allow-env=PERMAFROST_*,KUBERNETES_SERVICE_HOST,KUBERNETES_SERVICE_PORT",
        "operator/main.ts",
        "--api-url",
        kube.url,
        "--service-account-dir",
        sa,
        "--master-url",
        c.master.url,
        "--poll-s",
        "1",
      ],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const done = await waitFor("the PermafrostJob to complete", () => {
      const o = kube.get("readings");
      return Promise.resolve(["Completed", "Failed"].includes(o?.status?.phase) && o);
    });
    assert.equal(done.status.phase, "Completed", done.status.message);
    assert.equal(done.status.progress, 1);
    assert.match(done.status.message, /30000 rows frozen to/);
    const record = await c.client.job(done.status.job_id);
    assert.equal(record.payload_sha256, local.payload_sha256);
    assert.equal(done.status.observedGeneration, 1);
    // Finished: the finalizer is gone, so a deletion is immediate.
    await waitFor(
      "the finalizer to go",
      () => Promise.resolve(!(kube.get("readings")!.metadata.finalizers ?? []).includes(FINALIZER)),
    );
    kube.delete("readings");
    assert.equal(kube.get("readings"), undefined);
  } finally {
    child?.kill("SIGTERM");
    const log = child ? new TextDecoder().decode((await child.output()).stderr) : "";
    assert.match(log, /operator running/);
    await c.stop();
    await kube.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bad specs and refused jobs fail with the reason; a deleted running job is cancelled", async () => {
  const dir = await tempDir("operator-fail-");
  const kube = startKubeServer();
  const c = await cluster(dir, 0); // no workers: a job stays running
  const api = new KubeClient({ apiUrl: kube.url, token: () => Promise.resolve(kube.token) });
  const { logger } = memoryLogger();
  const op = new Operator({ kube: api, master: c.client, namespace: "default", logger });
  try {
    const csv = join(dir, "in.csv");
    await writeCsv(csv, 5000);
    kube.create(job("no-source", { destination: join(dir, "a.pf") }));
    kube.create(job("bad-codec", { source: csv, destination: join(dir, "b.pf"), codec: "rar" }));
    kube.create(job("missing", { source: join(dir, "nope.csv"), destination: join(dir, "c.pf") }));
    kube.create(job("long", { source: csv, destination: join(dir, "d.pf"), chunk_rows: 500 }));
    await op.reconcile();
    assert.equal(kube.get("no-source")!.status.phase, "Failed");
    assert.match(kube.get("no-source")!.status.message, /spec\.source must be/);
    assert.match(kube.get("bad-codec")!.status.message, /spec\.codec must be one of zstd/);
    const missing = kube.get("missing")!;
    assert.equal(missing.status.phase, "Failed");
    assert.match(missing.status.message, /nope\.csv/);
    assert.deepEqual(missing.metadata.finalizers, [], "a refused job holds no finalizer");
    const long = kube.get("long")!;
    assert.equal(long.status.phase, "Running");
    assert.deepEqual(long.metadata.finalizers, [FINALIZER]);
    // Deleted while running: the finalizer holds it until the master's job is cancelled.
    kube.delete("long");
    assert.ok(kube.get("long")!.metadata.deletionTimestamp);
    await op.reconcile();
    assert.equal(kube.get("long"), undefined);
    assert.equal((await c.client.job(long.status.job_id)).status, "CANCELLED");
  } finally {
    api.close();
    await c.stop();
    await kube.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a missing CRD, a 403 and an unreachable master are logged and retried, never a crash", async () => {
  const dir = await tempDir("operator-faults-");
  const kube = startKubeServer();
  const api = new KubeClient({ apiUrl: kube.url, token: () => Promise.resolve(kube.token) });
  const { logger, lines } = memoryLogger();
  // Nothing listens here yet: the master is down.
  const listener = Deno.listen({ port: 0, hostname: "127.0.0.1" });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const master = new ClusterClient(`http://127.0.0.1:${port}`);
  const op = new Operator({ kube: api, master, namespace: "default", logger });
  let c: Awaited<ReturnType<typeof cluster>> | undefined;
  try {
    kube.crdInstalled = false;
    assert.equal(await op.reconcile(), null);
    assert.equal(await op.reconcile(), null);
    const crd = lines.filter((l) => /is the PermafrostJob CRD installed/.test(String(l.msg)));
    assert.equal(crd.length, 1, "said once, not at every look");
    kube.crdInstalled = true;
    kube.forbid.add("list");
    assert.equal(await op.reconcile(), null);
    assert.ok(lines.some((l) => /Role lacks this right/.test(String(l.msg))));
    kube.forbid.clear();

    const csv = join(dir, "in.csv");
    await writeCsv(csv, 2000);
    kube.create(job("later", { source: csv, destination: join(dir, "out.pf") }));
    assert.equal(await op.reconcile(), 1);
    assert.equal(kube.get("later")!.status.phase, "Pending");
    assert.match(
      kube.get("later")!.status.message,
      /waiting for the master: Cannot reach the master/,
    );
    // A master comes up: an operator pointed at it takes the job on.
    c = await cluster(dir, 1);
    const op2 = new Operator({ kube: api, master: c.client, namespace: "default", logger });
    await op2.reconcile();
    assert.equal(kube.get("later")!.status.phase, "Running");
    await waitFor("Completed", async () => {
      await op2.reconcile();
      return kube.get("later")!.status.phase === "Completed";
    });
  } finally {
    api.close();
    await c?.stop();
    await kube.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the worker Deployment is scaled by queued tasks, between min and max", async () => {
  const dir = await tempDir("operator-scale-");
  const kube = startKubeServer();
  kube.deployment("workers", 1);
  const c = await cluster(dir, 0);
  const api = new KubeClient({ apiUrl: kube.url, token: () => Promise.resolve(kube.token) });
  const { logger } = memoryLogger();
  const op = new Operator({
    kube: api,
    master: c.client,
    namespace: "default",
    workers: "workers",
    minWorkers: 1,
    maxWorkers: 5,
    tasksPerWorker: 2,
    logger,
  });
  try {
    const csv = join(dir, "in.csv");
    await writeCsv(csv, 3000);
    kube.create(job("small", { source: csv, destination: join(dir, "s.pf"), chunk_rows: 1000 }));
    await op.reconcile(); // submitted: 3 tasks queued, no worker
    await waitFor("the job's tasks to be laid out", async () => {
      const jobs = await c.client.listJobs();
      return jobs[0]?.tasks_total === 3;
    });
    await op.reconcile();
    assert.equal(kube.replicas("workers"), 2, "ceil(3 / 2)");
    kube.create(job("big", { source: csv, destination: join(dir, "b.pf"), chunk_rows: 100 }));
    await op.reconcile();
    await waitFor("30 more tasks", async () => {
      const jobs = await c.client.listJobs();
      return jobs.reduce((n, j) => n + (j.tasks_total ?? 0), 0) === 33;
    });
    await op.reconcile();
    assert.equal(kube.replicas("workers"), 5, "capped at max");
    for (const j of await c.client.listJobs()) await c.client.cancel(j.job_id);
    await op.reconcile();
    assert.equal(kube.replicas("workers"), 1, "back to min");
    kube.forbid.add("scale");
    await op.reconcile(); // logged, not thrown
  } finally {
    api.close();
    await c.stop();
    await kube.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
