/**
 * A worker's warm-up (`_warm_up.ts`): the built-in task goes through the small-task
 * path, and a worker runs it once, before it registers, when it has its own task
 * thread (or is asked to).
 *
 * @module
 */
import assert from "node:assert/strict";
import { INLINE_ENCODER } from "../format/chunk.ts";
import { until } from "../internal/_test_utils.ts";
import { memoryLogger } from "../master/_test_utils.ts";
import { warmUpSmallTasks } from "./_warm_up.ts";
import type { TaskEncoder } from "./task_thread.ts";
import { WorkerNode, type WorkerNodeDeps } from "./worker.ts";

Deno.test("warmUpSmallTasks takes the built-in task through the small-task path", async () => {
  await warmUpSmallTasks();
  await warmUpSmallTasks(); // and again: nothing it holds is left in a bad state
});

Deno.test("a worker warms up once before it registers, by default only with its own task thread", async () => {
  const given = (): TaskEncoder => ({ encode: (job) => INLINE_ENCODER.encode(job), close() {} });
  const cases: [string, Partial<WorkerNodeDeps>, number][] = [
    ["own task thread", {}, 1],
    ["encoder given", { encoder: given }, 0],
    ["encoder given, asked to", { encoder: given, warmUp: true }, 1],
    ["encoder given, asked not to", { encoder: given, warmUp: false }, 0],
  ];
  for (const [name, deps, want] of cases) {
    const { logger, lines } = memoryLogger();
    let warmedAtRegister = -1;
    const warmed = () => lines.filter((l) => l.msg === "warmed up").length;
    const fetch = (input: string | URL | Request): Promise<Response> => {
      const path = new URL(String(input)).pathname;
      if (path === "/workers/register") {
        warmedAtRegister = warmed();
        return Promise.resolve(
          Response.json({ worker_id: "w1", heartbeat_s: 60, url: "http://w", drop: [] }),
        );
      }
      return Promise.resolve(Response.json({ ok: true, drop: [] }));
    };
    const node = new WorkerNode({ masterUrl: "http://m", workerId: "w1", fetch, logger, ...deps });
    node.start("http://w");
    try {
      // A real task thread loads DuckDB and the codecs first: slow on a loaded machine.
      await until(`${name}: registered`, () => warmedAtRegister >= 0, { timeoutMs: 120_000 });
    } finally {
      await node.stop();
    }
    assert.equal(warmedAtRegister, want, name);
    assert.equal(warmed(), want, name);
  }
});
