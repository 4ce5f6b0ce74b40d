import assert from "node:assert/strict";
import { join } from "node:path";
import { readArchiveIndex } from "../format/reader.ts";
import { simulateHeartbeats, simulateJob } from "./simulation.ts";
import { tempDir } from "./_test_utils.ts";

Deno.test("simulateJob() with 200 fake workers does every task exactly once, in one archive in index order", async () => {
  const dir = await tempDir("sim-");
  try {
    const run = await simulateJob({ workers: 200, tasks: 1000, dir: join(dir, "job") });
    assert.equal(run.job.status, "DONE", run.job.error ?? "");
    assert.equal(run.accepted.size, 1000);
    assert.ok([...run.accepted.values()].every((n) => n === 1), "a task was reported twice");
    assert.ok(run.job.tasks.every((t) => t.status === "DONE" && t.attempts === 1));
    // Each worker's first task came by POST /tasks, every later one in a done answer.
    assert.equal(run.dispatched, 200);
    const workers = new Set(run.job.tasks.map((t) => t.worker_id));
    assert.equal(workers.size, 200, "every worker got work");
    const index = await readArchiveIndex(run.archive);
    assert.deepEqual(
      index.footer.chunks.map((c) => c.row_start),
      Array.from({ length: 1000 }, (_, i) => i * 100),
    );
    assert.equal(index.footer.payload_sha256, run.job.payload_sha256);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("simulateJob() with 50 fake workers that hold 4 tasks and send results 2 at a time does every task exactly once", async () => {
  const dir = await tempDir("sim-batch-");
  try {
    const run = await simulateJob({ workers: 50, tasks: 1000, dir: join(dir, "job"), batch: 2 });
    assert.equal(run.job.status, "DONE", run.job.error ?? "");
    assert.equal(run.accepted.size, 1000);
    assert.ok([...run.accepted.values()].every((n) => n === 1), "a task was reported twice");
    assert.ok(run.job.tasks.every((t) => t.status === "DONE" && t.attempts === 1));
    // Each worker's first 4 tasks came by POST /tasks, every later one in an answer.
    assert.equal(run.dispatched, 200);
    const index = await readArchiveIndex(run.archive);
    assert.equal(index.footer.chunks.length, 1000);
    assert.equal(index.footer.payload_sha256, run.job.payload_sha256);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("simulateHeartbeats() answers every heartbeat of workers that hold a task without a drop", async () => {
  const dir = await tempDir("sim-hb-");
  try {
    const hb = await simulateHeartbeats({ workers: 50, rounds: 3, dir: join(dir, "hb") });
    assert.equal(hb.heartbeats, 150);
    assert.equal(hb.heartbeat_s, 5);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
