/**
 * Cluster jobs with sources and destinations in object storage, against a real S3
 * server (`s3rver`): an `s3://` CSV frozen to an `s3://` archive, a local source to
 * `s3://` and back, with workers that read the master's copy themselves and workers
 * that get their rows from the master — the payload equals a local freeze's — and
 * the copies gone once the job ends. A master with data roots refuses URIs.
 */
import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { startS3rver } from "../tests/_s3rver.ts";
import { freeze } from "../ops/freeze.ts";
import { readIndexAt } from "../ops/_remote.ts";
import { uploadFile } from "../storage/transfer.ts";
import { tempDir, testCluster, writeCsv } from "./_test_utils.ts";
import { JobAccess } from "./_access.ts";
import { PathError, resolveDataRoots } from "../internal/paths.ts";

const server = await startS3rver("bkt");

Deno.test("cluster jobs read from and write to s3:// URIs, with the local freeze's payload", async () => {
  const dir = await tempDir("cluster-s3-");
  try {
    const csv = join(dir, "readings.csv");
    await writeCsv(csv, 5000);
    await uploadFile(csv, "s3://bkt/in/readings.csv");
    const local = await freeze(csv, join(dir, "local.pf"), { chunkRows: 700, threads: 0 });
    for (const read of ["auto", "master"] as const) {
      const c = await testCluster({ workers: 2, worker: () => ({ read }) });
      try {
        const cases: [string, string][] = [
          ["s3://bkt/in/readings.csv", `s3://bkt/out/${read}-a.pf`],
          [csv, `s3://bkt/out/${read}-b.pf`],
          ["s3://bkt/in/readings.csv", join(dir, `${read}-c.pf`)],
        ];
        for (const [source, destination] of cases) {
          const id = await c.client.freeze(source, destination, { chunkRows: 700 });
          const job = await c.client.wait(id, { pollInterval: 5 });
          assert.equal(job.status, "DONE", `${read} ${source} -> ${destination}: ${job.error}`);
          assert.equal(job.payload_sha256, local.payload_sha256, destination);
          assert.equal(
            job.destination,
            destination.startsWith("s3://") ? destination : resolve(destination),
          );
          assert.equal(
            (await readIndexAt(destination)).footer.payload_sha256,
            local.payload_sha256,
          );
        }
        // The master's copies of the sources and archives to upload are gone.
        for (const sub of ["sources", "out"]) {
          const left = await Array.fromAsync(Deno.readDir(join(c.dataDir, sub))).catch(() => []);
          assert.deepEqual(left, [], `${sub} left behind`);
        }
      } finally {
        await c.close();
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a cluster job with a missing object or a bad URI is refused as it is submitted", async () => {
  const c = await testCluster({ workers: 0 });
  try {
    await assert.rejects(
      c.client.freeze("s3://bkt/none.csv", "s3://bkt/x.pf"),
      (e: unknown) => (e as { code?: string }).code === "SOURCE_NOT_FOUND",
    );
    await assert.rejects(
      c.client.freeze("s3://bkt/a/../b.csv", "s3://bkt/x.pf"),
      (e: unknown) => (e as { code?: string; message?: string }).code === "INVALID_JOB",
    );
  } finally {
    await c.close();
  }
});

Deno.test("a master's data roots may be object-storage prefixes: URIs are confined to them", async () => {
  const c = await testCluster({ workers: 0 });
  try {
    const roots = await resolveDataRoots([c.dataDir, "s3://bkt/in"]);
    const access = new JobAccess(c.master, roots);
    await assert.rejects(
      access.submit(null, { source: "s3://bkt/elsewhere/readings.csv", destination: "out.pf" }),
      (e: unknown) => e instanceof PathError && e.code === "PATH_OUTSIDE_ROOT",
    );
    const job = await access.submit(null, {
      source: "s3://bkt/in/readings.csv",
      destination: "out.pf",
    });
    assert.equal(job.source, "s3://bkt/in/readings.csv");
    c.master.cancel(job.job_id);
  } finally {
    await c.close();
  }
});

Deno.test({
  name: "cluster s3 tests stop s3rver",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: () => server.stop(),
});
