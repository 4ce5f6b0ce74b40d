import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { type JobRow, JobStore, type TaskRow } from "./store.ts";
import { tempDir } from "./_test_utils.ts";

const job: JobRow = {
  job_id: "j1",
  seq: 1,
  status: "RUNNING",
  phase: "freezing",
  source: "/data/a.csv",
  destination: "/data/a.pf",
  format: "csv",
  codec: "auto",
  chunk_rows: 100,
  types: { n: "string" },
  widened: ["n"],
  prepared: {
    format: "csv",
    source_bytes: 123,
    schema: [{ name: "n", type: "string", nullable: true }],
    plans: { n: { deps: [], quantization: "QUANT_NONE" } },
    codec: "lzma2",
    auto_reason: "lzma2: smaller",
  },
  total_rows: 250,
  tasks_total: 3,
  generation: 1,
  error: null,
  payload_sha256: null,
  archive_bytes: null,
  created_at: 1000,
  started_at: 2000,
  finished_at: null,
  updated_at: 3000,
  namespace: "team-a",
  submitted_by: "alice",
  source_id: { dev: 1, ino: 2, size: 3, mtime_ms: 4 },
};

const task: TaskRow = {
  task_id: "j1-t0",
  job_id: "j1",
  index: 0,
  status: "DONE",
  attempts: 2,
  worker_id: "w1",
  lease: null,
  window: { unit: "bytes", start: 5, end: 99, span_rows: 100, skip: 0, rows: 100, batch_rows: 100 },
  rows: 100,
  failed_on: ["w2"],
  error: "PARSE_FAILED: x",
  started_at: 2500,
  finished_at: 2600,
  staged_path: "/m/staging/j1/g0.chunks",
  staged_offset: 4096,
  staged_bytes: 77,
  staged_sha256: "ab",
};

Deno.test("JobStore keeps jobs and tasks across a reopen", async () => {
  const dir = await tempDir("store-");
  const path = join(dir, "nested", "jobs.db");
  try {
    const store = await JobStore.open(path);
    store.transaction(() => {
      store.putJob(job);
      store.putTask(task);
    });
    store.putJob({ ...job, status: "DONE", payload_sha256: "ff", archive_bytes: 9 });
    store.close();
    const again = await JobStore.open(path);
    try {
      assert.deepEqual(again.jobs(), [{
        ...job,
        status: "DONE",
        payload_sha256: "ff",
        archive_bytes: 9,
      }]);
      assert.deepEqual(again.tasks(), [task]);
    } finally {
      again.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("JobStore.deferTask() commits rows on its timer, with the next immediate write, or on close", async () => {
  const dir = await tempDir("store-defer-");
  const path = join(dir, "jobs.db");
  try {
    const store = await JobStore.open(path, { flushMs: 5 });
    const row: TaskRow = { ...task, status: "RUNNING" };
    store.deferTask(row);
    row.status = "DONE"; // written as it is when committed
    store.deferTask(row);
    assert.equal(store.pending, 1);
    for (let i = 0; i < 200 && store.pending > 0; i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(store.pending, 0, "the timer committed it");
    store.deferTask({ ...task, task_id: "j1-t1", status: "QUEUED" });
    store.deferJob(job);
    assert.equal(store.pending, 2);
    store.putTask({ ...task, task_id: "j1-t2", status: "QUEUED" });
    assert.equal(store.pending, 0, "an immediate write takes the deferred ones along");
    store.deferTask({ ...task, task_id: "j1-t3", status: "RUNNING" });
    store.close();
    const again = await JobStore.open(path);
    try {
      assert.deepEqual(again.jobs(), [job]);
      assert.deepEqual(
        again.tasks().map((t) => `${t.task_id}:${t.status}`),
        ["j1-t0:DONE", "j1-t1:QUEUED", "j1-t2:QUEUED", "j1-t3:RUNNING"],
      );
    } finally {
      again.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("JobStore.open() refuses a store another master holds", async () => {
  const dir = await tempDir("store-lock-");
  const path = join(dir, "jobs.db");
  const first = await JobStore.open(path);
  try {
    await assert.rejects(JobStore.open(path), (e: unknown) => {
      assert.match((e as Error).message, /another master is using it/);
      return true;
    });
  } finally {
    first.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("JobStore.transaction() writes nothing when the function throws", async () => {
  const store = await JobStore.open(":memory:");
  try {
    assert.throws(() =>
      store.transaction(() => {
        store.putJob(job);
        throw new Error("boom");
      }), /boom/);
    assert.deepEqual(store.jobs(), []);
  } finally {
    store.close();
  }
});

Deno.test("JobStore.open() brings a version 1 store up to date: old jobs have no owner", async () => {
  const dir = await tempDir("store-v1-");
  const path = join(dir, "jobs.db");
  try {
    const store = await JobStore.open(path);
    store.putJob(job);
    store.close();
    // Rewind the file to what a master before auth wrote.
    const db = new DatabaseSync(path);
    db.exec("ALTER TABLE jobs DROP COLUMN namespace");
    db.exec("ALTER TABLE jobs DROP COLUMN submitted_by");
    db.exec("ALTER TABLE jobs DROP COLUMN source_id");
    db.exec("UPDATE meta SET value = '1' WHERE key = 'schema_version'");
    db.close();
    const again = await JobStore.open(path);
    try {
      assert.deepEqual(again.jobs(), [{
        ...job,
        namespace: null,
        submitted_by: null,
        source_id: null,
      }]);
      again.putJob({ ...job, job_id: "j2", seq: 2 });
      assert.deepEqual(again.jobs().map((j) => j.namespace), [null, "team-a"]);
    } finally {
      again.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
