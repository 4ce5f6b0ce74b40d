/**
 * The deployment as a user runs it, on a real Docker engine (`_docker.ts` starts
 * `dockerd` when none runs; it never skips): the Dockerfile's master, worker and catalog
 * images are built (on local base images when no registry is reachable), started with
 * `compose up -d --scale worker=3` (compose.yaml + compose.dev.yaml), and timed until the
 * master's `/health` shows 3 workers (printed: `ready in N.N s`). A freeze job goes
 * through the compose network; one worker container is killed mid-job (SIGKILL) and the
 * job is still DONE with the local freeze's payload, and thaws as the local archive does.
 * The images (the operator's too) start with no network (dependencies cached at build
 * time), run as a non-root user and report healthy; their sizes are printed. Everything
 * is torn down.
 *
 * Run by `deno task test:deploy` (and `.ci/run`), not by `deno task test`: it builds
 * images, which takes minutes.
 */
import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { ClusterClient } from "../../client/cluster_client.ts";
import { freeze, thaw } from "../../mod.ts";
import { writeCsv } from "../../master/_test_utils.ts";
import { until } from "../../internal/_test_utils.ts";
import { dockerEngine, localBaseImages, must, sh } from "./_docker.ts";

const TARGETS = ["master", "worker", "catalog", "operator"] as const;

/** A figure the README reports, on its own line in the test's output. */
function say(line: string): void {
  Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
}

Deno.test({
  name: "compose: 3 workers ready, a job survives a killed worker container, images start offline",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const engine = await dockerEngine();
    const env = engine.env;
    const project = `pftest${crypto.randomUUID().slice(0, 8)}`;
    const data = await Deno.makeTempDir({ prefix: "permafrost-compose-data-" });
    await Deno.chmod(data, 0o777); // the containers' user (uid 10001) writes the archive here
    const composeEnv = {
      ...env,
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      PERMAFROST_DATA: data,
      PERMAFROST_MASTER_PUBLISH: "127.0.0.1:",
      PERMAFROST_CATALOG_PUBLISH: "127.0.0.1:",
    };
    const composeCmd = [
      ...engine.compose,
      ...["-p", project, "-f", "compose.yaml", "-f", "compose.dev.yaml"],
    ];
    const compose = (...args: string[]) => must([...composeCmd, ...args], { env: composeEnv });
    try {
      const { base, deno } = await localBaseImages(engine);
      for (const target of TARGETS) {
        await must([
          "docker",
          "build",
          "-q",
          "--network",
          "host",
          "--build-arg",
          `BASE_IMAGE=${base}`,
          "--build-arg",
          `DENO_IMAGE=${deno}`,
          "--target",
          target,
          "-t",
          `permafrost-${target}:dev`,
          ".",
        ], { env });
      }
      const sizes = await Promise.all(TARGETS.map(async (t) => {
        const bytes = Number(
          (await must(["docker", "image", "inspect", "-f", "{{.Size}}", `permafrost-${t}:dev`], {
            env,
          }))
            .trim(),
        );
        return `${t} ${(bytes / 1e6).toFixed(0)} MB`;
      }));
      say(`image sizes: ${sizes.join(", ")} (base ${base})`);

      // Offline: the master image starts and answers with no network at all.
      const offline = (await must([
        "docker",
        "run",
        "-d",
        "--network",
        "none",
        "permafrost-master:dev",
      ], { env })).trim();
      try {
        await until("the master to answer with no network", async () => {
          const r = await sh([
            "docker",
            "exec",
            offline,
            "deno",
            "run",
            "-q",
            "--allow-net=127.0.0.1",
            "--allow-env=PERMAFROST_MASTER_PORT",
            "/app/internal/healthcheck.ts",
            "PERMAFROST_MASTER_PORT",
            "8700",
          ], { env });
          return r.code === 0;
        }, { timeoutMs: 30_000, intervalMs: 250 });
        const user = await must(["docker", "exec", offline, "id", "-u"], { env });
        assert.equal(user.trim(), "10001", "runs as the permafrost user, not root");
      } finally {
        await sh(["docker", "rm", "-f", offline], { env });
      }

      // The operator's image starts offline too, and keeps trying an API it cannot reach.
      const operator = (await must([
        "docker",
        "run",
        "-d",
        "--network",
        "none",
        "-e",
        "PERMAFROST_OPERATOR_API_URL=http://127.0.0.1:9",
        "-e",
        "PERMAFROST_OPERATOR_POLL_S=1",
        "permafrost-operator:dev",
      ], { env })).trim();
      try {
        const logs = await until("the operator to retry the API", async () => {
          const r = await sh(["docker", "logs", operator], { env });
          return /operator running/.test(r.stderr) && /cannot list PermafrostJobs/.test(r.stderr) &&
            r.stderr;
        }, { timeoutMs: 30_000, intervalMs: 250 });
        assert.match(logs, /Cannot reach the Kubernetes API at http:\/\/127\.0\.0\.1:9/);
        const running = await must(["docker", "inspect", "-f", "{{.State.Running}}", operator], {
          env,
        });
        assert.equal(running.trim(), "true", "still running: a failure is retried, not fatal");
      } finally {
        await sh(["docker", "rm", "-f", operator], { env });
      }

      const started = performance.now();
      await compose("up", "-d", "--no-build", "--scale", "worker=3");
      const master = await until("the master's published port", async () => {
        const r = await sh([...composeCmd, "port", "master", "8700"], { env: composeEnv });
        return r.code === 0 && r.stdout.trim() !== "" && `http://${r.stdout.trim()}`;
      }, { timeoutMs: 60_000, intervalMs: 100 });
      await until("3 workers on the master's /health", async () => {
        const health = await fetch(`${master}/health`).then((r) => r.json()).catch(() => null);
        return health?.workers === 3;
      }, { timeoutMs: 120_000, intervalMs: 100 });
      const ready = (performance.now() - started) / 1000;
      say(
        `ready in ${ready.toFixed(1)} s (compose up -d --scale worker=3 to 3 workers on /health)`,
      );

      const catalogPort = (await compose("port", "catalog", "8800")).trim();
      await until("the catalog's /health", async () => {
        const r = await fetch(`http://${catalogPort}/health`).catch(() => null);
        await r?.body?.cancel();
        return r?.ok === true;
      }, { timeoutMs: 60_000, intervalMs: 200 });
      await until("the master's container to report healthy", async () => {
        const id = (await compose("ps", "-q", "master")).trim();
        const state = await must(["docker", "inspect", "-f", "{{.State.Health.Status}}", id], {
          env,
        });
        return state.trim() === "healthy";
      }, { timeoutMs: 60_000, intervalMs: 500 });

      // A job through the compose network; a worker container killed in the middle.
      const csv = join(data, "readings.csv");
      await writeCsv(csv, 400_000, { nullEvery: 9 });
      const local = await freeze(csv, join(data, "local.pf"), { chunkRows: 4000, threads: 0 });
      const client = new ClusterClient(master);
      const id = await client.freeze("/data/readings.csv", "/data/out.pf", { chunkRows: 4000 });
      await until("some tasks done", async () => {
        const job = await client.job(id);
        return job.tasks.filter((t) => t.status === "DONE").length >= 3;
      }, { timeoutMs: 120_000, intervalMs: 50 });
      const workers = (await compose("ps", "-q", "worker")).trim().split("\n");
      assert.equal(workers.length, 3);
      await must(["docker", "kill", "--signal", "SIGKILL", workers[0]!], { env });
      const job = await until("the job to end", async () => {
        const j = await client.job(id);
        return ["DONE", "FAILED", "CANCELLED"].includes(j.status) && j;
      }, { timeoutMs: 300_000, intervalMs: 200 });
      assert.equal(job.status, "DONE", job.error ?? "");
      assert.equal(job.payload_sha256, local.payload_sha256);
      // Thawed, the cluster's archive gives what the local one gives (numbers in their
      // shortest form: 15.530 in the source comes back as 15.53 from both).
      await thaw(join(data, "out.pf"), join(data, "back.csv"));
      await thaw(join(data, "local.pf"), join(data, "local.csv"));
      const back = await Deno.readTextFile(join(data, "back.csv"));
      assert.equal(back, await Deno.readTextFile(join(data, "local.csv")));
      assert.equal(back.split("\n").length, 400_002);
    } finally {
      await sh([...composeCmd, "down", "-v"], { env: composeEnv });
      // The containers' files belong to uid 10001: removed through a container as well.
      await sh([
        "docker",
        "run",
        "--rm",
        "-v",
        `${resolve(data)}:/d`,
        "--user",
        "0",
        "--entrypoint",
        "sh",
        "permafrost-master:dev",
        "-c",
        "rm -rf /d/*",
      ], { env });
      await Deno.remove(data, { recursive: true }).catch(() => {});
      await engine.stop();
    }
  },
});
