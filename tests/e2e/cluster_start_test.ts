/**
 * `start` as a user runs it: a master, workers and a catalog come up as real
 * processes, the printed master takes a job, and SIGTERM stops everything.
 */
import assert from "node:assert/strict";
import { until } from "../../internal/_test_utils.ts";
import { join } from "node:path";
import { ClusterClient } from "../../client/cluster_client.ts";

Deno.test("cluster e2e: start runs a master, 2 workers and a catalog, and stops on SIGTERM", async () => {
  await Deno.mkdir(".tmp", { recursive: true });
  const dataDir = await Deno.makeTempDir({ dir: ".tmp", prefix: "e2e-start-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--allow-read",
      "--allow-write",
      "--allow-env=PERMAFROST_*",
      "--allow-ffi",
      "--allow-net",
      "--allow-run",
      "main.ts",
      "start",
      "--data-dir",
      dataDir,
      "--master-port",
      "0",
      "--worker-port",
      "0",
      "--catalog-port",
      "0",
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    let buffered = "";
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      buffered += text;
      const parts = buffered.split("\n");
      buffered = parts.pop()!;
      lines.push(...parts);
    }
  };
  const output = Promise.all([pump(child.stdout), pump(child.stderr)]);
  let stopped = false;
  try {
    const listing = await until("start to say it is running", () => {
      const at = lines.indexOf("Permafrost is running on this machine:");
      return at >= 0 && lines.includes("Ctrl-C stops everything.") && lines.slice(at);
    }, { timeoutMs: 120_000, intervalMs: 100 }).catch((err) => {
      throw new Error(`${err.message}:\n${lines.join("\n")}`);
    });
    const url = (name: string) =>
      listing.map((l) => new RegExp(`^  ${name}\\s+(http://\\S+)`).exec(l)?.[1]).find(Boolean);
    const master = url("master");
    assert.ok(master && url("worker 1") && url("worker 2") && url("catalog"), listing.join("\n"));
    const client = new ClusterClient(master);
    const health = await client.health();
    assert.equal(health.workers, 2);
    const sample = join(dataDir, "samples", "readings.csv");
    const jobId = await client.freeze(sample, join(dataDir, "archives", "readings.pf"));
    const job = await client.wait(jobId, { pollInterval: 100 });
    assert.equal(job.status, "DONE", job.error ?? "");
    assert.equal(job.total_rows, 200_000);
    const catalog = await fetch(`${url("catalog")}/datasets/sensors`);
    assert.equal(catalog.status, 200);
    await catalog.body?.cancel();
    child.kill("SIGTERM");
    stopped = true;
    const status = await child.status;
    assert.equal(status.code, 0, lines.join("\n"));
  } finally {
    if (!stopped) child.kill("SIGKILL");
    await child.status;
    await output;
    await Deno.remove(dataDir, { recursive: true });
  }
});
