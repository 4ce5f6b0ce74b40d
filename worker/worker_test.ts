/**
 * `WorkerNode` and its app against a scripted master (a fetch function that
 * answers as the master would): registration with back-off, heartbeats, drops,
 * result retries, and the worker's HTTP answers.
 */
import { until } from "../internal/_test_utils.ts";
import assert from "node:assert/strict";
import { INLINE_ENCODER } from "../format/chunk.ts";
import type { Batch } from "../format/column.ts";
import { IoError } from "../io/errors.ts";
import type { TaskSpec } from "../client/types.ts";
import { JobError } from "../client/errors.ts";
import { fieldJson, layoutSource, readTaskRows, sourceSchema } from "../cluster/task_source.ts";
import {
  decodeChunkBodies,
  decodeChunkBody,
  encodeBatchBody,
  WIRE_CONTENT_TYPE,
} from "../cluster/wire.ts";
import { planColumns } from "../format/plan.ts";
import { memoryLogger, writeCsv } from "../master/_test_utils.ts";
import { createWorkerApp } from "./app.ts";
import { specSource, stuckRows, testSpec } from "./_test_utils.ts";
import { TaskThread } from "./task_thread.ts";
import { DEFAULT_REPORT_BATCH, DEFAULT_SLOTS, WorkerNode, type WorkerNodeDeps } from "./worker.ts";

interface Call {
  path: string;
  body: unknown;
  bytes?: Uint8Array;
}

/** A master that answers from a script; `down` makes every request fail like a closed port. */
function scriptedMaster(heartbeatS = 0.01) {
  const calls: Call[] = [];
  const state = {
    down: false,
    knownWorkers: new Set<string>(),
    drop: [] as string[],
    doneFailures: 0,
    /** What the master answers done-reports that ask for a next task (`?next=1`) with. */
    next: [] as unknown[],
    /** Query strings of the done-reports. */
    doneQueries: [] as string[],
    /** How many results each `POST /tasks/done` carried. */
    batches: [] as number[],
    /** An older master: no `POST /tasks/done` (404). */
    noBatches: false,
    /** What `GET /tasks/{id}/rows` answers with. */
    rows: null as Batch | null,
  };
  function answer(input: string | URL | Request, init?: RequestInit): Response {
    const url = new URL(String(input));
    if (state.down) throw new TypeError("connection refused");
    const raw = init?.body;
    let body: unknown = undefined;
    let bytes: Uint8Array | undefined;
    if (typeof raw === "string") body = JSON.parse(raw);
    else if (raw instanceof Uint8Array) bytes = raw;
    calls.push({ path: url.pathname, body, bytes });
    const json = (v: unknown, status = 200) => Response.json(v, { status });
    if (url.pathname === "/workers/register") {
      const id = (body as { worker_id: string }).worker_id;
      state.knownWorkers.add(id);
      return json({ worker_id: id, heartbeat_s: heartbeatS, url: "http://w", drop: [] });
    }
    const hb = /^\/workers\/([^/]+)\/heartbeat$/.exec(url.pathname);
    if (hb) {
      if (!state.knownWorkers.has(hb[1]!)) {
        return json({ error: { code: "WORKER_NOT_FOUND", message: "no such worker" } }, 404);
      }
      const drop = state.drop;
      state.drop = [];
      return json({ ok: true, drop });
    }
    if (url.pathname === "/tasks/done" && bytes && !state.noBatches) {
      // Several results: each is recorded as its own done-report would be.
      if (state.doneFailures > 0) {
        state.doneFailures--;
        return json({ error: { code: "UNAVAILABLE", message: "busy" } }, 503);
      }
      calls.pop();
      state.doneQueries.push(url.search);
      state.batches.push(decodeChunkBodies(bytes).length);
      const results = decodeChunkBodies(bytes).map((body) => {
        const taskId = decodeChunkBody(body).meta.task_id;
        calls.push({ path: `/tasks/${taskId}/done`, body: undefined, bytes: body });
        return { task_id: taskId, ok: true };
      });
      const wanted = Number(url.searchParams.get("next") ?? 0);
      const next = state.next.splice(0, wanted);
      return json({
        ok: true,
        results,
        ...(next.length > 0 ? { next: next[0] } : {}),
        ...(next.length > 1 ? { next_more: next.slice(1) } : {}),
      });
    }
    if (url.pathname === "/tasks/done") {
      return json({ error: { code: "NOT_FOUND", message: url.pathname } }, 404);
    }
    if (url.pathname.endsWith("/done")) {
      if (state.doneFailures > 0) {
        state.doneFailures--;
        return json({ error: { code: "UNAVAILABLE", message: "busy" } }, 503);
      }
      state.doneQueries.push(url.search);
      if (url.searchParams.get("next") === "1" && state.next.length > 0) {
        return json({ ok: true, next: state.next.shift() });
      }
      return json({ ok: true });
    }
    if (url.pathname.endsWith("/failed")) return json({ ok: true });
    if (url.pathname.endsWith("/rows") && state.rows) {
      return new Response(encodeBatchBody(state.rows) as Uint8Array<ArrayBuffer>, {
        headers: { "content-type": WIRE_CONTENT_TYPE },
      });
    }
    return json({ error: { code: "NOT_FOUND", message: url.pathname } }, 404);
  }
  const fetch = ((input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    try {
      return Promise.resolve(answer(input, init));
    } catch (err) {
      return Promise.reject(err);
    }
  }) as typeof globalThis.fetch;
  return { fetch, calls, state };
}

/** A worker node (id `w1`) on a scripted master, quiet unless given a logger. */
function nodeFor(master: { fetch: typeof fetch }, deps: Partial<WorkerNodeDeps> = {}): WorkerNode {
  return new WorkerNode({
    masterUrl: "http://m",
    workerId: "w1",
    fetch: master.fetch,
    logger: memoryLogger().logger,
    ...deps,
  });
}

const batch: Batch = {
  schema: [{ name: "a", type: "int64", nullable: false }],
  columns: [{ type: "int64", values: BigInt64Array.of(1n, 2n, 3n), validity: null }],
  length: 3,
};

/**
 * A CSV of `rows` rows in `dir` and its first task of `chunkRows` rows: the rows
 * read here, their plan, and a spec maker (by default for this CSV).
 */
async function csvTask(dir: string, rows: number, chunkRows: number) {
  const csv = `${dir}/a.csv`;
  await writeCsv(csv, rows, { nullEvery: 9 });
  const [window] = (await layoutSource(csv, { format: "csv", chunkRows })).windows;
  const { schema } = await sourceSchema(csv, { format: "csv", types: {}, batchRows: chunkRows });
  const batch = await readTaskRows({
    path: csv,
    format: "csv",
    schema,
    types: {},
    window: window!,
  });
  const plans = planColumns(batch);
  const task = (id: string, path = csv, format: "csv" | "parquet" = "csv"): TaskSpec => ({
    ...testSpec(id),
    source: specSource(path, format),
    window: window!,
    schema: schema.map(fieldJson),
    plans,
  });
  return { rows: batch, plans, task };
}

Deno.test("WorkerNode keeps retrying registration with back-off while the master is down, and logs it", async () => {
  const master = scriptedMaster();
  master.state.down = true;
  const { logger, lines } = memoryLogger();
  const node = nodeFor(master, {
    logger,
  });
  node.start("http://w1:1");
  try {
    // The node registers once its task thread has loaded: seconds on a loaded machine.
    await until(
      "a logged failure",
      () => lines.some((l) => l.msg === "cannot register with the master; retrying"),
      { timeoutMs: 60_000 },
    );
    assert.equal(node.state.status, "registering");
    master.state.down = false;
    await until("registration", () => node.state.status === "idle");
    assert.ok(lines.some((l) => l.msg === "reached the master again"));
    await until("a heartbeat", () => master.calls.some((c) => c.path === "/workers/w1/heartbeat"));
  } finally {
    await node.stop();
  }
});

Deno.test("WorkerNode.register() joins the master once and returns its answer", async () => {
  const master = scriptedMaster(0.5);
  const node = nodeFor(master);
  try {
    const answer = await node.register("http://w:7001");
    assert.deepEqual(answer, { worker_id: "w1", heartbeat_s: 0.5, url: "http://w", drop: [] });
    assert.equal(node.state.status, "idle");
    assert.deepEqual(master.calls.map((c) => [c.path, c.body]), [
      ["/workers/register", {
        worker_id: "w1",
        url: "http://w:7001",
        slots: DEFAULT_SLOTS,
        running: null,
        tasks: [],
      }],
    ]);
    master.state.down = true;
    await assert.rejects(node.register(), (e: unknown) => {
      assert.ok(e instanceof JobError);
      assert.equal(e.code, "UNREACHABLE");
      return true;
    });
  } finally {
    await node.stop();
  }
});

Deno.test("WorkerNode registers again when the master forgets it (a restart)", async () => {
  const master = scriptedMaster();
  const node = nodeFor(master);
  node.start("http://w1:1");
  try {
    await until("registration", () => node.state.status === "idle");
    master.state.knownWorkers.clear();
    const before = master.calls.filter((c) => c.path === "/workers/register").length;
    await until(
      "re-registration",
      () => master.calls.filter((c) => c.path === "/workers/register").length > before,
    );
  } finally {
    await node.stop();
  }
});

Deno.test("WorkerNode runs a task, retries the result until the master takes it, and says what it runs", async () => {
  const master = scriptedMaster();
  master.state.doneFailures = 2;
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const node = nodeFor(master, {
    encoder: () => INLINE_ENCODER,
    readRows: async () => {
      await gate;
      return batch;
    },
    slots: 1,
    reportBatch: 1,
  });
  node.start("http://w1:1");
  try {
    await until("registration", () => node.state.status === "idle");
    node.accept(testSpec("t1"));
    assert.throws(() => node.accept(testSpec("t2")), { code: "BUSY" });
    await until(
      "a heartbeat naming the task",
      () =>
        master.calls.some((c) =>
          c.path === "/workers/w1/heartbeat" &&
          (c.body as { running?: { task_id: string } }).running?.task_id === "t1"
        ),
    );
    release();
    await node.idle();
    const dones = master.calls.filter((c) => c.path === "/tasks/t1/done");
    assert.equal(dones.length, 3);
    const body = decodeChunkBody(dones[2]!.bytes!);
    assert.equal(body.meta.lease, "lease-t1");
    assert.equal(body.chunk.rows, 3);
    assert.equal(node.state.tasks_done, 1);
    assert.equal(node.state.status, "idle");
  } finally {
    await node.stop();
  }
});

Deno.test("WorkerNode holds as many tasks as its slots, computes one at a time, says all of them, and drops a waiting one", async () => {
  const master = scriptedMaster();
  const gates = new Map<string, () => void>();
  const started: string[] = [];
  const node = nodeFor(master, {
    encoder: () => INLINE_ENCODER,
    readRows: async (read) => {
      const id = `t${read.window.start}`;
      started.push(id);
      await new Promise<void>((r) => gates.set(id, r));
      return batch;
    },
    slots: 3,
  });
  const spec = (n: number) => {
    const s = testSpec(`t${n}`);
    return { ...s, window: { ...s.window, start: n, end: n + 1 } };
  };
  node.start("http://w1:1");
  try {
    await until("registration", () => node.state.status === "idle");
    node.accept(spec(1));
    node.accept(spec(2));
    node.accept(spec(3));
    assert.throws(() => node.accept(spec(4)), { code: "BUSY" });
    assert.equal(node.state.task_id, "t1");
    await until(
      "a heartbeat naming every task",
      () =>
        master.calls.some((c) => {
          const body = c.body as { running?: { task_id: string }; tasks?: { task_id: string }[] };
          return c.path === "/workers/w1/heartbeat" && body.running?.task_id === "t1" &&
            body.tasks?.map((t) => t.task_id).join() === "t1,t2,t3";
        }),
    );
    assert.deepEqual(started, ["t1"], "one task computed at a time");
    assert.equal(node.cancel("t2"), true, "a waiting task is dropped");
    gates.get("t1")!();
    await until("the third task started", () => started.length === 2);
    assert.deepEqual(started, ["t1", "t3"]);
    node.accept(spec(5)); // t1's slot is free once its result is sent
    gates.get("t3")!();
    await until("the fifth task started", () => started.length === 3);
    gates.get("t5")!();
    await node.idle();
    assert.deepEqual(
      master.calls.filter((c) => c.path.endsWith("/done")).map((c) => c.path),
      ["/tasks/t1/done", "/tasks/t3/done", "/tasks/t5/done"],
    );
    assert.equal(node.state.status, "idle");
  } finally {
    for (const open of gates.values()) open();
    await node.stop();
  }
});

for (const reportBatch of [1, DEFAULT_REPORT_BATCH]) {
  Deno.test(`WorkerNode runs the next task the master sends in its answer to a done-report (results sent ${reportBatch} at most)`, async () => {
    const master = scriptedMaster();
    const second = { ...testSpec("t2"), index: 1 };
    master.state.next = [second, { task_id: "malformed" }];
    const { logger, lines } = memoryLogger();
    const node = nodeFor(master, {
      logger,
      encoder: () => INLINE_ENCODER,
      readRows: () => Promise.resolve(batch),
      reportBatch,
    });
    node.start("http://w1:1");
    try {
      await until("registration", () => node.state.status === "idle");
      node.accept(testSpec("t1"));
      await until("both tasks", () => node.state.tasks_done === 2);
      await node.idle();
      assert.deepEqual(
        master.calls.filter((c) => c.path.endsWith("/done")).map((c) => c.path),
        ["/tasks/t1/done", "/tasks/t2/done"],
      );
      // Alone: one next task asked for; together: as many as it has free slots.
      const query = reportBatch === 1 ? "?next=1" : `?next=${DEFAULT_SLOTS}`;
      assert.deepEqual(master.state.doneQueries, [query, query]);
      const body = decodeChunkBody(master.calls.find((c) => c.path === "/tasks/t2/done")!.bytes!);
      assert.equal(body.meta.lease, "lease-t2");
      assert.ok(lines.some((l) => l.msg === "the master sent a malformed next task"));
      assert.equal(node.state.status, "idle");
    } finally {
      await node.stop();
    }
  });
}

Deno.test("WorkerNode sends the results of small tasks together, and retries them until the master takes them", async () => {
  const master = scriptedMaster();
  master.state.doneFailures = 1;
  const gates: (() => void)[] = [];
  const node = nodeFor(master, {
    encoder: () => INLINE_ENCODER,
    readRows: () => new Promise<Batch>((r) => gates.push(() => r(batch))),
    reportBatch: 2,
  });
  node.start("http://w1:1");
  try {
    await until("registration", () => node.state.status === "idle");
    for (const id of ["t1", "t2", "t3"]) node.accept(testSpec(id));
    await until("t1 read", () => gates.length === 1);
    gates[0]!();
    await until("t2 read", () => gates.length === 2);
    // t1's result waits for t2's: nothing sent yet.
    assert.equal(master.calls.filter((c) => c.path.endsWith("/done")).length, 0);
    gates[1]!();
    await until("t3 read", () => gates.length === 3);
    gates[2]!(); // nothing after t3: its result goes alone
    await node.idle();
    assert.deepEqual(master.state.batches, [2, 1], "t1 and t2 together (after one 503), then t3");
    assert.deepEqual(
      master.calls.filter((c) => c.path.endsWith("/done")).map((c) => c.path),
      ["/tasks/done", "/tasks/t1/done", "/tasks/t2/done", "/tasks/t3/done"],
    );
    assert.equal(node.state.tasks_done, 3);
  } finally {
    for (const open of gates) open();
    await node.stop();
  }
});

Deno.test("WorkerNode sends each result alone to a master without POST /tasks/done (an older one)", async () => {
  const master = scriptedMaster();
  master.state.noBatches = true;
  const node = nodeFor(master, {
    encoder: () => INLINE_ENCODER,
    readRows: () => Promise.resolve(batch),
  });
  node.start("http://w1:1");
  try {
    await until("registration", () => node.state.status === "idle");
    for (const id of ["t1", "t2", "t3"]) node.accept(testSpec(id));
    await node.idle();
    node.accept(testSpec("t4"));
    await node.idle();
    const dones = master.calls.filter((c) => c.path.endsWith("/done")).map((c) => c.path);
    assert.equal(dones.filter((p) => p === "/tasks/done").length, 1, "asked once, then alone");
    assert.deepEqual(dones.filter((p) => p !== "/tasks/done").sort(), [
      "/tasks/t1/done",
      "/tasks/t2/done",
      "/tasks/t3/done",
      "/tasks/t4/done",
    ]);
    assert.equal(node.state.tasks_done, 4);
  } finally {
    await node.stop();
  }
});

Deno.test("WorkerNode encodes a tiny chunk on its own thread and a large one through its encoder", async () => {
  const master = scriptedMaster();
  let made = 0;
  let encoded = 0;
  const big: Batch = {
    schema: batch.schema,
    columns: [{
      type: "int64",
      values: BigInt64Array.from({ length: 5000 }, (_, i) => BigInt(i)),
      validity: null,
    }],
    length: 5000,
  };
  let next: Batch = batch;
  const node = nodeFor(master, {
    encoder: () => {
      made++;
      return {
        encode(job) {
          encoded++;
          return INLINE_ENCODER.encode(job);
        },
        close() {},
      };
    },
    readRows: () => Promise.resolve(next),
  });
  node.start("http://w1:1");
  try {
    await until("registration", () => node.state.status === "idle");
    node.accept(testSpec("small"));
    await until("the small task", () => node.state.tasks_done === 1);
    assert.equal(encoded, 0, "3 cells are encoded inline");
    next = big;
    node.accept({
      ...testSpec("big"),
      window: { ...testSpec("big").window, rows: 5000, span_rows: 5000 },
    });
    await until("the big task", () => node.state.tasks_done === 2);
    assert.equal([made, encoded].join(","), "1,1", "5,000 cells go to the encoder");
  } finally {
    await node.stop();
  }
});

Deno.test("WorkerNode reads a visible source on its task thread, and fetches from the master what it cannot read there", async () => {
  const dir = await Deno.makeTempDir({ dir: ".tmp", prefix: "worker-thread-" });
  const master = scriptedMaster();
  const { logger, lines } = memoryLogger();
  const node = nodeFor(master, {
    logger,
  });
  node.start("http://w1:1");
  try {
    const { rows, plans, task } = await csvTask(dir, 5000, 2500);
    const expected = (await INLINE_ENCODER.encode({ batch: rows, plans, codec: "zstd" })).chunk;
    await until("registration", () => node.state.status === "idle");
    node.accept(task("t1"));
    await node.idle();
    // A file of the right size that is not Parquet: READ_FAILED on the thread, so the
    // worker asks the master for the rows and the thread encodes those.
    const fake = `${dir}/fake.parquet`;
    await Deno.writeTextFile(fake, "not parquet");
    master.state.rows = rows;
    node.accept(task("t2", fake, "parquet"));
    await node.idle();
    for (const id of ["t1", "t2"]) {
      const done = master.calls.find((c) => c.path === `/tasks/${id}/done`);
      assert.ok(done, `${id} reported`);
      const { chunk } = decodeChunkBody(done.bytes!);
      assert.deepEqual(
        chunk.blocks.map((b) => [...b.bytes]),
        expected.blocks.map((b) => [...b.bytes]),
      );
    }
    assert.deepEqual(master.calls.filter((c) => c.path.endsWith("/rows")).map((c) => c.path), [
      "/tasks/t2/rows",
    ]);
    assert.ok(
      lines.some((l) => l.msg === "cannot read the source here; fetching rows from the master"),
    );
  } finally {
    await node.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("WorkerNode reports a failed read with its code and column", async () => {
  const master = scriptedMaster();
  const node = nodeFor(master, {
    encoder: () => INLINE_ENCODER,
    readRows: () =>
      Promise.reject(new IoError("SCHEMA_MISMATCH", "value 'x' is not int64", { column: "a" })),
  });
  node.start("http://w1:1");
  try {
    await until("registration", () => node.state.status === "idle");
    node.accept(testSpec("t1"));
    await node.idle();
    const failed = master.calls.find((c) => c.path === "/tasks/t1/failed");
    assert.deepEqual(failed?.body, {
      lease: "lease-t1",
      worker_id: "w1",
      error: { code: "SCHEMA_MISMATCH", message: "value 'x' is not int64", column: "a" },
    });
  } finally {
    await node.stop();
  }
});

Deno.test("WorkerNode drops a task the master's heartbeat answer names, and sends no result", async () => {
  const master = scriptedMaster();
  const node = nodeFor(master, {
    encoder: () => INLINE_ENCODER,
    readRows: stuckRows,
  });
  node.start("http://w1:1");
  try {
    await until("registration", () => node.state.status === "idle");
    node.accept(testSpec("t1"));
    master.state.drop = ["t1"];
    await until("the drop", () => node.state.status === "idle");
    assert.ok(!master.calls.some((c) => c.path.startsWith("/tasks/t1/")));
  } finally {
    await node.stop();
  }
});

Deno.test("WorkerNode retires a dropped task's thread gracefully and runs the next task on a fresh one", async () => {
  const dir = await Deno.makeTempDir({ dir: ".tmp", prefix: "worker-retire-" });
  const master = scriptedMaster();
  const threads: { shutdowns: number; closes: number }[] = [];
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const node = nodeFor(master, {
    encoder: () => {
      const thread = new TaskThread();
      const seen = { shutdowns: 0, closes: 0 };
      threads.push(seen);
      const first = threads.length === 1;
      return {
        encode: (job) => thread.encode(job),
        // The first thread holds its task until the test lets it go.
        readAndEncode: async (read, plans, codec) => {
          if (first) await gate;
          return await thread.readAndEncode(read, plans, codec);
        },
        close: () => {
          seen.closes++;
          thread.close();
        },
        shutdown: () => {
          seen.shutdowns++;
          return thread.shutdown();
        },
      };
    },
  });
  node.start("http://w1:1");
  try {
    const { task } = await csvTask(dir, 3000, 3000);
    await until("registration", () => node.state.status === "idle");
    node.accept(task("t1"));
    assert.equal(node.cancel("t1"), true);
    release();
    node.accept(task("t2"));
    await node.idle();
    assert.deepEqual(master.calls.filter((c) => c.path.endsWith("/done")).map((c) => c.path), [
      "/tasks/t2/done",
    ]);
    assert.equal(threads.length, 2, "a fresh thread for the next task");
    assert.deepEqual(threads[0], { shutdowns: 1, closes: 0 }, "the old one shut down, not killed");
  } finally {
    release();
    await node.stop();
    await Deno.remove(dir, { recursive: true });
  }
  assert.deepEqual(threads[1], { shutdowns: 1, closes: 0 });
});

Deno.test("createWorkerApp() takes a task, refuses a second one, cancels, and answers bad input with 4xx JSON", async (t) => {
  const master = scriptedMaster();
  const node = nodeFor(master, {
    encoder: () => INLINE_ENCODER,
    readRows: stuckRows,
  });
  const app = createWorkerApp({ node, logger: memoryLogger().logger });
  const post = (path: string, body: unknown) =>
    app.request(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  try {
    await t.step("health", async () => {
      const res = await app.request("/health");
      assert.deepEqual(await res.json(), {
        status: "ok",
        version: JSON.parse(Deno.readTextFileSync("deno.json")).version,
        worker_id: "w1",
        state: "registering",
        task_id: null,
        master: "http://m",
        tasks_done: 0,
      });
    });
    await t.step("a task is accepted with 202", async () => {
      const res = await post("/tasks", testSpec("t1"));
      assert.equal(res.status, 202);
      assert.deepEqual(await res.json(), { accepted: true, task_id: "t1" });
    });
    await t.step("a task past its slots is a 409 BUSY", async () => {
      for (let i = 2; i <= DEFAULT_SLOTS; i++) {
        const res = await post("/tasks", testSpec(`s${i}`));
        assert.equal(res.status, 202, `slot ${i}`);
      }
      const past = await post("/tasks", testSpec("past"));
      assert.equal(past.status, 409);
      assert.equal((await past.json()).error.code, "BUSY");
    });
    await t.step("one slot: a second task while busy is a 409 BUSY", async () => {
      const one = nodeFor(master, { encoder: () => INLINE_ENCODER, readRows: stuckRows, slots: 1 });
      const oneApp = createWorkerApp({ node: one, logger: memoryLogger().logger });
      const task = (id: string) =>
        oneApp.request("/tasks", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(testSpec(id)),
        });
      assert.equal((await task("u1")).status, 202);
      const res = await task("u2");
      await one.stop();
      assert.equal(res.status, 409);
      assert.equal((await res.json()).error.code, "BUSY");
    });
    await t.step("cancel drops it", async () => {
      const res = await post("/tasks/t1/cancel", {});
      assert.deepEqual(await res.json(), { ok: true, dropped: true });
      const again = await app.request("/tasks/t1", { method: "DELETE" });
      assert.deepEqual(await again.json(), { ok: true, dropped: false });
    });
    const bad: [string, unknown, string][] = [
      ["malformed JSON", "{", "BAD_REQUEST"],
      ["a task without a window", { ...testSpec("t3"), window: undefined }, "INVALID_REQUEST"],
      ["a plan missing a column", { ...testSpec("t3"), plans: {} }, "INVALID_REQUEST"],
      ["a window that skips past its rows", {
        ...testSpec("t3"),
        window: { ...testSpec("t3").window, skip: 5 },
      }, "INVALID_REQUEST"],
    ];
    for (const [name, body, code] of bad) {
      await t.step(`${name}: 400 ${code}`, async () => {
        const res = await post("/tasks", body);
        assert.equal(res.status, 400);
        assert.equal((await res.json()).error.code, code);
      });
    }
    await t.step("unknown path: 404 JSON", async () => {
      const res = await app.request("/nope");
      assert.equal(res.status, 404);
      assert.equal((await res.json()).error.code, "NOT_FOUND");
    });
  } finally {
    await node.stop();
  }
});
