/**
 * The master's scheduling, retry, heartbeat, cancel and restart logic, driven by
 * hand: a fake clock, a fake transport that records what is handed out, and fake
 * workers that answer through the master's methods. No sleeps, no sockets.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { JobError } from "../client/errors.ts";
import { readArchiveIndex } from "../format/reader.ts";
import { Master } from "./master.ts";
import { SMALL_TASK_CELLS } from "../cluster/task_source.ts";
import { JobStore } from "./store.ts";
import {
  fakeChunk,
  FakeClock,
  fakePrepare,
  FakeTransport,
  memoryLogger,
  tempDir,
} from "./_test_utils.ts";

async function fixture(
  options: {
    tasks?: number;
    rows?: number;
    maxRetries?: number;
    taskTimeoutS?: number;
    dbPath?: string;
    dir?: string;
    clock?: FakeClock;
  } = {},
) {
  const clock = options.clock ?? new FakeClock();
  const transport = new FakeTransport();
  const { prepare, calls } = fakePrepare(options.tasks ?? 4, options.rows);
  const dir = options.dir ?? await tempDir("master-");
  const source = join(dir, "src.csv");
  await Deno.writeTextFile(source, "a\n1\n");
  const store = await JobStore.open(options.dbPath ?? ":memory:");
  const { logger, lines } = memoryLogger();
  const master = Master.open({
    store,
    dataDir: join(dir, "data"),
    transport,
    prepare,
    now: clock.now,
    heartbeatS: 1,
    maxRetries: options.maxRetries ?? 3,
    taskTimeoutS: options.taskTimeoutS ?? 60,
    logger,
  });
  const register = (id: string) => master.register({ worker_id: id, url: `http://${id}` });
  const submit = async (name: string) => {
    const job = await master.submit({ source, destination: join(dir, `${name}.pf`) });
    await master.settled();
    return job.job_id;
  };
  const done = async (workerId: string) => {
    const spec = transport.lastFor(workerId);
    await master.taskDone(spec.task_id, fakeChunk(spec));
    await master.settled();
    return spec;
  };
  return {
    clock,
    transport,
    master,
    store,
    dir,
    source,
    lines,
    calls,
    register,
    submit,
    done,
    async close(remove = true) {
      await master.close();
      store.close();
      if (remove) await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("Master hands tasks round-robin across jobs and workers, one task per worker", async () => {
  const f = await fixture({ tasks: 3 });
  try {
    const a = await f.submit("a");
    const b = await f.submit("b");
    f.register("w0");
    f.register("w1");
    await f.master.settled();
    assert.deepEqual(
      f.transport.assigned.map((s) => [s.job_id, s.worker_id]),
      [[a, "w0"], [b, "w1"]],
    );
    // Each worker runs one task at a time: nothing more until one finishes.
    f.master.schedule();
    assert.equal(f.transport.assigned.length, 2);
    await f.done("w0");
    await f.done("w1");
    assert.deepEqual(
      f.transport.assigned.slice(2).map((s) => s.job_id),
      [a, b],
    );
    assert.equal(f.master.job(a).status, "RUNNING");
  } finally {
    await f.close();
  }
});

Deno.test("Master gives a worker with several slots small tasks up to its slots, and re-queues all it held when it goes offline", async (t) => {
  const f = await fixture({ tasks: 5 });
  const given = () => f.transport.assigned.map((s) => [s.index, s.worker_id]);
  const held = (workerId: string) =>
    f.transport.assigned.filter((s) =>
      s.worker_id === workerId && f.master.job(s.job_id).tasks[s.index]!.status === "RUNNING"
    ).map((s) => ({ task_id: s.task_id, lease: s.lease }));
  try {
    const id = await f.submit("job");
    f.master.register({ worker_id: "w0", url: "http://w0", slots: 2 });
    f.register("w1");
    await f.master.settled();
    await t.step("a worker with 2 slots gets 2 tasks, one with 1 slot gets 1", () => {
      assert.deepEqual(given(), [[0, "w0"], [1, "w0"], [2, "w1"]]);
      assert.equal(f.master.workers().find((w) => w.worker_id === "w0")!.task_id, `${id}-t0`);
    });
    await t.step("a heartbeat naming both keeps both", () => {
      f.clock.advance(1000);
      assert.deepEqual(f.master.heartbeat("w0", { tasks: held("w0") }).drop, []);
      f.master.heartbeat("w1", { running: held("w1")[0] });
      assert.deepEqual(f.master.job(id).tasks.map((t) => t.status), [
        "RUNNING",
        "RUNNING",
        "RUNNING",
        "QUEUED",
        "QUEUED",
      ]);
    });
    await t.step("a result frees one slot: the next task comes in its answer", async () => {
      const first = f.transport.assigned[0]!;
      const { next } = await f.master.taskDone(first.task_id, fakeChunk(first), {
        acceptNext: true,
      });
      assert.equal(next?.index, 3);
      assert.equal(next?.worker_id, "w0");
      f.transport.assigned.push(next!); // as the worker holds it
    });
    await t.step("silent: offline, every task it held re-queued without counting", () => {
      f.clock.advance(2000);
      f.master.heartbeat("w1", { running: held("w1")[0] });
      f.clock.advance(1001);
      f.master.heartbeat("w1", { running: held("w1")[0] });
      f.master.tick();
      assert.equal(f.master.workers().find((w) => w.worker_id === "w0")!.status, "offline");
      const tasks = f.master.job(id).tasks;
      assert.deepEqual([tasks[1]!.status, tasks[3]!.status], ["QUEUED", "QUEUED"]);
      assert.deepEqual([tasks[1]!.attempts, tasks[3]!.attempts], [0, 0]);
    });
    await t.step("the job finishes on the worker left, each task once", async () => {
      for (let i = 0; i < 4; i++) await f.done("w1");
      const job = f.master.job(id);
      assert.equal(job.status, "DONE");
      assert.deepEqual(job.tasks.map((t) => [t.status, t.attempts]), Array(5).fill(["DONE", 1]));
    });
  } finally {
    await f.close();
  }
});

Deno.test("Master.tasksDone() takes several results of one worker, each with its own outcome, and answers with as many next tasks as it freed", async () => {
  const f = await fixture({ tasks: 6 });
  try {
    const id = await f.submit("job");
    f.master.register({ worker_id: "w0", url: "http://w0", slots: 3 });
    await f.master.settled();
    const [a, b, c] = f.transport.assigned;
    assert.ok(a && b && c);
    const stale = { ...b, lease: "old" };
    const { results, next } = f.master.tasksDone(
      [fakeChunk(a), fakeChunk(stale), fakeChunk(c), fakeChunk(c)],
      3,
    );
    assert.deepEqual(results.map((r) => r.ok ? "ok" : r.error.code), [
      "ok",
      "STALE_RESULT",
      "ok",
      "STALE_RESULT",
    ]);
    assert.deepEqual(next.map((s) => s.index), [3, 4], "two slots freed: two next tasks");
    assert.equal(f.transport.assigned.length, 3, "no POST /tasks for them");
    const tasks = f.master.job(id).tasks;
    assert.deepEqual(tasks.map((t) => t.status), [
      "DONE",
      "RUNNING",
      "DONE",
      "RUNNING",
      "RUNNING",
      "QUEUED",
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("Master gives a spare slot no large task, and re-queues a task a worker's heartbeat leaves out once it is no longer young", async () => {
  const f = await fixture({ tasks: 3, rows: SMALL_TASK_CELLS + 1 });
  try {
    const id = await f.submit("job");
    f.master.register({ worker_id: "w0", url: "http://w0", slots: 4 });
    await f.master.settled();
    assert.deepEqual(f.transport.assigned.map((s) => s.index), [0], "large: one at a time");
    const spec = f.transport.assigned[0]!;
    f.master.heartbeat("w0", { tasks: [] });
    assert.equal(f.master.job(id).tasks[0]!.status, "RUNNING", "young: on its way");
    f.clock.advance(2000);
    f.master.heartbeat("w0", { tasks: [] });
    const task = f.master.job(id).tasks[0]!;
    assert.equal(task.attempts, 1, "re-queued without counting, then given again");
    assert.notEqual(f.transport.lastFor("w0").lease, spec.lease);
    assert.equal(f.transport.assigned.length, 2);
  } finally {
    await f.close();
  }
});

Deno.test("Master finishes a job: staged chunks become an archive in index order", async () => {
  const f = await fixture({ tasks: 3 });
  try {
    const id = await f.submit("out");
    f.register("w0");
    await f.master.settled();
    for (let i = 0; i < 3; i++) await f.done("w0");
    const job = f.master.job(id);
    assert.equal(job.status, "DONE");
    assert.equal(job.progress, 1);
    assert.equal(job.total_rows, 30);
    assert.deepEqual(job.tasks.map((t) => [t.status, t.attempts]), [
      ["DONE", 1],
      ["DONE", 1],
      ["DONE", 1],
    ]);
    const index = await readArchiveIndex(join(f.dir, "out.pf"));
    assert.deepEqual(index.footer.chunks.map((c) => c.row_start), [0, 10, 20]);
    assert.equal(index.footer.payload_sha256, job.payload_sha256);
    // Staging is cleaned up.
    await assert.rejects(Deno.stat(join(f.dir, "data", "staging", id)));
    // Three tasks of one job: jobs_done counts the job once, tasks_done each task.
    assert.equal(f.master.workers()[0]!.jobs_done, 1);
    assert.equal(f.master.workers()[0]!.tasks_done, 3);
    assert.equal(f.master.health().version, JSON.parse(Deno.readTextFileSync("deno.json")).version);
  } finally {
    await f.close();
  }
});

Deno.test("Master answers a done-report that accepts it with the worker's next task, not a POST", async () => {
  const f = await fixture({ tasks: 3 });
  try {
    const id = await f.submit("out");
    f.register("w0");
    await f.master.settled();
    assert.equal(f.transport.assigned.length, 1);
    let spec = f.transport.lastFor("w0");
    for (const expected of [1, 2]) {
      const { next } = await f.master.taskDone(spec.task_id, fakeChunk(spec), {
        acceptNext: true,
      });
      assert.ok(next, `task ${expected} comes in the answer`);
      assert.equal(next.index, expected);
      assert.equal(next.worker_id, "w0");
      assert.equal(f.transport.assigned.length, 1, "no POST /tasks for an inline task");
      assert.equal(f.master.job(id).tasks[expected]!.status, "RUNNING");
      spec = next;
    }
    const last = await f.master.taskDone(spec.task_id, fakeChunk(spec), { acceptNext: true });
    assert.equal(last.next, undefined, "nothing left to hand out");
    await f.master.settled();
    assert.equal(f.master.job(id).status, "DONE");
    // A late duplicate of an inline task's result is refused like any other.
    await assert.rejects(
      f.master.taskDone(spec.task_id, fakeChunk(spec), { acceptNext: true }),
      (e) => e instanceof JobError && e.code === "STALE_RESULT",
    );
  } finally {
    await f.close();
  }
});

Deno.test("Master retries a failed task on another idle worker, and fails the job after exactly 3 attempts", async (t) => {
  const f = await fixture({ tasks: 2 });
  try {
    const bad = await f.submit("bad");
    f.register("w0");
    f.register("w1");
    await f.master.settled();
    const first = f.transport.lastFor("w0");
    assert.equal(first.index, 0);

    await t.step("a failure is retried on the other worker, not the one it failed on", async () => {
      // w1 finishes its task first, so both are idle when the retry is scheduled.
      await f.done("w1");
      const before = f.transport.assigned.length;
      f.master.taskFailed(first.task_id, {
        lease: first.lease,
        worker_id: "w0",
        error: { code: "PARSE_FAILED", message: "row 3 has 4 fields" },
      });
      await f.master.settled();
      const retry = f.transport.assigned.slice(before).find((s) => s.task_id === first.task_id);
      assert.equal(retry?.worker_id, "w1");
      assert.notEqual(retry?.lease, first.lease);
    });

    await t.step("a second job goes on while the first fails", async () => {
      const good = await f.submit("good");
      // Attempt 2 fails on w1; attempt 3 goes to w0 (w1 failed it too; w0 first).
      const second = f.transport.lastFor("w1");
      f.master.taskFailed(second.task_id, {
        lease: second.lease,
        worker_id: "w1",
        error: "row 3 has 4 fields",
      });
      await f.master.settled();
      const job = f.master.job(bad);
      // Retried at once: the third attempt is running.
      assert.equal(job.status, "RUNNING");
      assert.deepEqual([job.tasks[0]!.status, job.tasks[0]!.attempts], ["RUNNING", 3]);
      const third = f.transport.assigned.findLast((s) => s.task_id === first.task_id)!;
      assert.notEqual(third.lease, second.lease);
      f.master.taskFailed(third.task_id, {
        lease: third.lease,
        worker_id: third.worker_id,
        error: { code: "PARSE_FAILED", message: "row 3 has 4 fields" },
      });
      await f.master.settled();
      const failed = f.master.job(bad);
      assert.equal(failed.status, "FAILED");
      assert.equal(failed.tasks[0]!.attempts, 3);
      assert.equal(failed.tasks[0]!.status, "FAILED");
      assert.match(failed.error!, /after 3 attempts: PARSE_FAILED: row 3 has 4 fields/);
      // The other job runs to the end.
      for (let i = 0; i < 4 && f.master.job(good).status !== "DONE"; i++) {
        for (const w of ["w0", "w1"]) {
          const spec = f.transport.lastFor(w);
          if (spec.job_id === good && f.master.job(good).tasks[spec.index]!.status === "RUNNING") {
            await f.master.taskDone(spec.task_id, fakeChunk(spec));
            await f.master.settled();
          }
        }
      }
      assert.equal(f.master.job(good).status, "DONE");
      await assert.rejects(Deno.stat(join(f.dir, "bad.pf")));
    });
  } finally {
    await f.close();
  }
});

Deno.test("Master marks a worker offline after 3 missed heartbeats and re-queues its task without counting it", async (t) => {
  const f = await fixture({ tasks: 2 });
  try {
    const id = await f.submit("job");
    f.register("w0");
    f.register("w1");
    await f.master.settled();
    const lost = f.transport.lastFor("w1");
    await t.step("not offline at 3 intervals, offline just after", () => {
      f.clock.advance(1000);
      f.master.heartbeat("w0", {
        running: {
          task_id: f.transport.lastFor("w0").task_id,
          lease: f.transport.lastFor("w0").lease,
        },
      });
      f.clock.advance(2000);
      f.master.tick();
      assert.equal(f.master.workers().find((w) => w.worker_id === "w1")!.status, "busy");
      f.master.heartbeat("w0", {
        running: {
          task_id: f.transport.lastFor("w0").task_id,
          lease: f.transport.lastFor("w0").lease,
        },
      });
      f.clock.advance(1);
      f.master.tick();
      assert.equal(f.master.workers().find((w) => w.worker_id === "w1")!.status, "offline");
      const task = f.master.job(id).tasks[lost.index]!;
      assert.equal(task.status, "QUEUED");
      assert.equal(task.attempts, 0);
    });
    await t.step("the re-queued task goes to the live worker", async () => {
      await f.done("w0");
      const again = f.transport.lastFor("w0");
      assert.equal(again.task_id, lost.task_id);
      assert.equal(f.master.job(id).tasks[lost.index]!.attempts, 1);
    });
    await t.step(
      "a late result from the offline worker is refused and changes nothing",
      async () => {
        await assert.rejects(
          f.master.taskDone(lost.task_id, fakeChunk(lost)),
          (e: unknown) => e instanceof JobError && e.code === "STALE_RESULT",
        );
        assert.equal(f.master.job(id).tasks[lost.index]!.status, "RUNNING");
        await f.done("w0");
        assert.equal(f.master.job(id).status, "DONE");
      },
    );
    await t.step("a duplicate result is refused too", async () => {
      const spec = f.transport.lastFor("w0");
      await assert.rejects(
        f.master.taskDone(spec.task_id, fakeChunk(spec)),
        (e: unknown) => e instanceof JobError && e.code === "STALE_RESULT",
      );
      assert.equal(f.master.job(id).status, "DONE");
    });
    await t.step("an offline worker that heartbeats again is back", () => {
      const answer = f.master.heartbeat("w1", {
        running: { task_id: lost.task_id, lease: lost.lease },
      });
      assert.deepEqual(answer.drop, [lost.task_id]);
      assert.equal(f.master.workers().find((w) => w.worker_id === "w1")!.status, "idle");
    });
  } finally {
    await f.close();
  }
});

Deno.test("Master counts a task over its timeout as a failed attempt and tells the worker to drop it", async () => {
  const f = await fixture({ tasks: 1, taskTimeoutS: 10 });
  try {
    const id = await f.submit("slow");
    f.register("w0");
    await f.master.settled();
    const spec = f.transport.lastFor("w0");
    for (let i = 0; i < 11; i++) {
      f.clock.advance(1000);
      f.master.heartbeat("w0", { running: { task_id: spec.task_id, lease: spec.lease } });
      f.master.tick();
    }
    await f.master.settled();
    assert.deepEqual(f.transport.cancelled, [{ url: "http://w0", taskId: spec.task_id }]);
    const task = f.master.job(id).tasks[0]!;
    assert.match(task.error!, /^TIMEOUT/);
    // Retried at once (on the same worker: it is the only one), as attempt 2.
    assert.deepEqual([task.status, task.attempts], ["RUNNING", 2]);
    const retry = f.transport.lastFor("w0");
    assert.notEqual(retry.lease, spec.lease);
  } finally {
    await f.close();
  }
});

Deno.test("Master.cancel() drops running tasks, removes staged chunks and writes no archive", async () => {
  const f = await fixture({ tasks: 3 });
  try {
    const id = await f.submit("cancelled");
    f.register("w0");
    f.register("w1");
    await f.master.settled();
    await f.done("w0");
    const staged = join(f.dir, "data", "staging", id);
    assert.equal((await Deno.stat(staged)).isDirectory, true);
    const running = f.transport.lastFor("w1");
    const job = f.master.cancel(id);
    assert.equal(job.status, "CANCELLED");
    await f.master.settled();
    assert.ok(f.transport.cancelled.some((c) => c.taskId === running.task_id));
    await assert.rejects(Deno.stat(staged));
    await assert.rejects(Deno.stat(join(f.dir, "cancelled.pf")));
    await assert.rejects(
      f.master.taskDone(running.task_id, fakeChunk(running)),
      (e: unknown) => e instanceof JobError && e.code === "STALE_RESULT",
    );
    assert.ok(f.master.workers().every((w) => w.status === "idle"));
    assert.equal(f.master.cancel(id).status, "CANCELLED");
  } finally {
    await f.close();
  }
});

Deno.test("Master.cancel() refuses a finished job and an unknown one", async () => {
  const f = await fixture({ tasks: 1 });
  try {
    const id = await f.submit("x");
    f.register("w0");
    await f.master.settled();
    await f.done("w0");
    assert.throws(() => f.master.cancel(id), { code: "JOB_FINISHED" });
    assert.throws(() => f.master.cancel("nope"), { code: "JOB_NOT_FOUND" });
  } finally {
    await f.close();
  }
});

Deno.test("Master widens a column on SCHEMA_MISMATCH and starts the job over without counting a failure", async () => {
  const f = await fixture({ tasks: 3 });
  try {
    const id = await f.submit("wide");
    f.register("w0");
    f.register("w1");
    await f.master.settled();
    await f.done("w0");
    const spec = f.transport.lastFor("w1");
    f.master.taskFailed(spec.task_id, {
      lease: spec.lease,
      worker_id: "w1",
      error: { code: "SCHEMA_MISMATCH", message: "value 'oops' is not int64", column: "a" },
    });
    await f.master.settled();
    assert.equal(f.calls.length, 2);
    assert.deepEqual(f.calls[1]!.types, { a: "string" });
    const job = f.master.job(id);
    assert.deepEqual(job.widened_columns, ["a"]);
    assert.equal(job.status, "RUNNING");
    // Every task starts over, the finished one included; attempts are not counted.
    const assignedAfter = f.transport.assigned.slice(-2);
    assert.deepEqual(assignedAfter.map((s) => s.types), [{ a: "string" }, { a: "string" }]);
    assert.ok(job.tasks.every((t) => t.status !== "DONE" && t.attempts <= 1));
    // A second mismatch on a column already text is an ordinary failure.
    const again = f.transport.lastFor("w0");
    f.master.taskFailed(again.task_id, {
      lease: again.lease,
      worker_id: "w0",
      error: { code: "SCHEMA_MISMATCH", message: "still bad", column: "a" },
    });
    await f.master.settled();
    assert.equal(f.calls.length, 2);
    assert.equal(f.master.job(id).tasks[again.index]!.attempts, 1);
    assert.match(f.master.job(id).tasks[again.index]!.error!, /SCHEMA_MISMATCH/);
  } finally {
    await f.close();
  }
});

Deno.test("Master re-queues a task whose worker cannot be reached, without counting it", async () => {
  const f = await fixture({ tasks: 1 });
  try {
    f.transport.failing.set("http://w0", "unreachable");
    const id = await f.submit("x");
    f.register("w0");
    await f.master.settled();
    assert.equal(f.master.workers()[0]!.status, "offline");
    assert.deepEqual(f.master.job(id).tasks.map((t) => [t.status, t.attempts]), [["QUEUED", 0]]);
    f.transport.failing.delete("http://w0");
    f.master.heartbeat("w0", {});
    await f.master.settled();
    assert.equal(f.master.job(id).tasks[0]!.status, "RUNNING");
  } finally {
    await f.close();
  }
});

Deno.test("Master resumes after a crash: DONE chunks stay done, a running task is re-adopted or re-queued", async (t) => {
  const dir = await tempDir("master-restart-");
  const dbPath = join(dir, "jobs.db");
  const clock = new FakeClock();
  const first = await fixture({ tasks: 4, dir, dbPath, clock });
  const id = await first.submit("resumed");
  first.register("w0");
  first.register("w1");
  await first.master.settled();
  await first.done("w0");
  const w0Running = first.transport.lastFor("w0");
  const w1Running = first.transport.lastFor("w1");
  // The crash: no close(), the store just goes away.
  first.store.close();

  clock.advance(5000);
  const second = await fixture({ tasks: 4, dir, dbPath, clock });
  try {
    await t.step("the job and its finished task are back", () => {
      const job = second.master.job(id);
      assert.equal(job.status, "RUNNING");
      assert.deepEqual(job.tasks.map((x) => x.status), ["DONE", "RUNNING", "RUNNING", "QUEUED"]);
      assert.equal(second.calls.length, 0, "a prepared job is not prepared again");
    });
    await t.step(
      "a worker that re-registers with its task keeps it; its result is taken",
      async () => {
        second.master.register({
          worker_id: "w0",
          url: "http://w0",
          running: { task_id: w0Running.task_id, lease: w0Running.lease },
        });
        await second.master.settled();
        assert.equal(second.transport.assigned.length, 0);
        await second.master.taskDone(w0Running.task_id, fakeChunk(w0Running));
        await second.master.settled();
        assert.equal(second.master.job(id).tasks[w0Running.index]!.status, "DONE");
      },
    );
    await t.step(
      "a task whose worker never comes back is re-queued after 3 heartbeats",
      async () => {
        second.clock.advance(3001);
        const w0Now = second.transport.lastFor("w0");
        second.master.heartbeat("w0", { running: { task_id: w0Now.task_id, lease: w0Now.lease } });
        second.master.tick();
        await second.master.settled();
        const task = second.master.job(id).tasks[w1Running.index]!;
        assert.deepEqual([task.status, task.attempts], ["QUEUED", 0]);
        await second.done("w0");
        assert.equal(second.transport.lastFor("w0").task_id, w1Running.task_id);
      },
    );
    await t.step("the job completes, and no finished chunk was handed out again", async () => {
      for (let i = 0; i < 3 && second.master.job(id).status !== "DONE"; i++) {
        await second.done("w0");
      }
      const job = second.master.job(id);
      assert.equal(job.status, "DONE");
      const again = second.transport.assigned.map((s) => s.index);
      assert.ok(!again.includes(0) && !again.includes(w0Running.index));
      assert.equal((await readArchiveIndex(join(dir, "resumed.pf"))).footer.chunks.length, 4);
    });
  } finally {
    await second.close();
  }
});

Deno.test("Master.submit() refuses bad jobs with typed errors", async (t) => {
  const f = await fixture();
  try {
    const cases: [string, Parameters<Master["submit"]>[0], string][] = [
      [
        "missing source",
        { source: join(f.dir, "nope.csv"), destination: join(f.dir, "a.pf") },
        "SOURCE_NOT_FOUND",
      ],
      ["unknown codec", {
        source: f.source,
        destination: join(f.dir, "a.pf"),
        codec: "gzip" as "zstd",
      }, "INVALID_JOB"],
      [
        "chunk_rows 0",
        { source: f.source, destination: join(f.dir, "a.pf"), chunk_rows: 0 },
        "INVALID_JOB",
      ],
      [
        "chunk_rows huge",
        { source: f.source, destination: join(f.dir, "a.pf"), chunk_rows: 1e12 },
        "INVALID_JOB",
      ],
      [
        "unknown extension",
        { source: join(f.dir, "data"), destination: join(f.dir, "a.pf") },
        "INVALID_JOB",
      ],
      ["destination = source", { source: f.source, destination: f.source }, "INVALID_JOB"],
      [
        "destination dir missing",
        { source: f.source, destination: join(f.dir, "no", "a.pf") },
        "INVALID_JOB",
      ],
    ];
    for (const [name, req, code] of cases) {
      await t.step(name, async () => {
        await assert.rejects(
          f.master.submit(req),
          (e: unknown) => e instanceof JobError && e.code === code,
        );
      });
    }
    await t.step("a second active job on the same destination", async () => {
      await f.master.submit({ source: f.source, destination: join(f.dir, "same.pf") });
      await assert.rejects(
        f.master.submit({ source: f.source, destination: join(f.dir, "same.pf") }),
        { code: "DESTINATION_BUSY" },
      );
    });
  } finally {
    await f.close();
  }
});

Deno.test("Master fails a job whose preparation fails, and goes on with others", async () => {
  const clock = new FakeClock();
  const dir = await tempDir("master-prep-");
  const store = await JobStore.open(":memory:");
  const { prepare } = fakePrepare(1);
  const master = Master.open({
    store,
    dataDir: join(dir, "data"),
    transport: new FakeTransport(),
    now: clock.now,
    logger: memoryLogger().logger,
    prepare: (input) =>
      input.path.endsWith("bad.csv") ? Promise.reject(new Error("no header")) : prepare(input),
  });
  try {
    await Deno.writeTextFile(join(dir, "bad.csv"), "");
    await Deno.writeTextFile(join(dir, "good.csv"), "a\n1\n");
    const bad = await master.submit({
      source: join(dir, "bad.csv"),
      destination: join(dir, "b.pf"),
    });
    const good = await master.submit({
      source: join(dir, "good.csv"),
      destination: join(dir, "g.pf"),
    });
    await master.settled();
    assert.equal(master.job(bad.job_id).status, "FAILED");
    assert.match(master.job(bad.job_id).error!, /no header/);
    assert.equal(master.job(good.job_id).phase, "freezing");
  } finally {
    await master.close();
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Master reports a job's rows/s, MB/s, elapsed, time left and ratio from its clock", async () => {
  const f = await fixture({ tasks: 4 });
  try {
    const id = await f.submit("out");
    let job = f.master.job(id);
    assert.equal(job.elapsed_s, null, "not started yet");
    assert.equal(job.rows_per_s, null);
    f.register("w0");
    await f.master.settled();
    f.clock.advance(2000);
    await f.done("w0");
    job = f.master.job(id);
    assert.equal(job.status, "RUNNING");
    assert.equal(job.rows_done, 10);
    assert.equal(job.elapsed_s, 2);
    assert.equal(job.rows_per_s, 5);
    assert.equal(job.eta_s, 6, "a quarter done in 2 s: 6 s left");
    assert.equal(job.source_bytes, 1);
    assert.equal(job.mb_per_s, 0.25 / 1e6 / 2);
    assert.ok(job.ratio !== null && job.ratio > 0, "estimated from the staged chunk");
    for (let i = 0; i < 3; i++) {
      f.clock.advance(1000);
      await f.done("w0");
    }
    job = f.master.job(id);
    assert.equal(job.status, "DONE");
    assert.equal(job.rows_done, 40);
    assert.equal(job.elapsed_s, 5);
    assert.equal(job.rows_per_s, 8);
    assert.equal(job.eta_s, null);
    assert.equal(job.ratio, 1 / job.archive_bytes!);
  } finally {
    await f.close();
  }
});
