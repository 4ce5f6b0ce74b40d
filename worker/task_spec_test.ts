/**
 * `TaskSpecChecker`: tasks of one job after the first are checked by their own part
 * only, and still refused when that part is wrong; another job's part is checked in full.
 *
 * @module
 */
import assert from "node:assert/strict";
import { TaskSpecChecker, TaskSpecSchema } from "./task_spec.ts";
import { testSpec } from "./_test_utils.ts";

Deno.test("TaskSpecChecker checks a job's part in full once, each task's own part always", () => {
  const checker = new TaskSpecChecker();
  const first = testSpec("t1");
  const checked = checker.check(first);
  assert.ok("spec" in checked);
  assert.deepEqual(checked.spec, TaskSpecSchema.parse(first));
  const second = { ...testSpec("t2"), index: 1, lease: "lease-2" };
  const again = checker.check(JSON.parse(JSON.stringify(second)));
  assert.ok("spec" in again);
  assert.deepEqual(again.spec, TaskSpecSchema.parse(second));
  // The same job part, a bad task part: refused.
  const badWindow = { ...second, window: { ...second.window, skip: 5 } };
  assert.ok("error" in checker.check(badWindow));
  assert.ok("error" in checker.check({ ...second, lease: "" }));
  // Another job part, malformed: checked in full, refused.
  assert.ok("error" in checker.check({ ...second, plans: {} }));
  assert.ok("error" in checker.check({ ...second, codec: 7 }));
  assert.ok("error" in checker.check(null));
  // Unknown keys are dropped as the schema drops them.
  const extra = checker.check({ ...second, extra: 1 });
  assert.ok("spec" in extra);
  assert.equal("extra" in extra.spec, false);
});

Deno.test("TaskSpecChecker takes and refuses a task's own part as TaskSpecSchema does", () => {
  const base = testSpec("t1");
  const variants: Record<string, unknown>[] = [
    {},
    { task_id: "" },
    { task_id: "x".repeat(200) },
    { task_id: "x".repeat(201) },
    { lease: 7 },
    { worker_id: undefined },
    { index: -1 },
    { index: 1.5 },
    { index: 2 ** 53 },
    { index: Number.NaN },
    { index: "3" },
    { window: null },
    { window: [] },
    { window: { ...base.window, unit: "lines" } },
    { window: { ...base.window, rows: 0 } },
    { window: { ...base.window, batch_rows: 0 } },
    { window: { ...base.window, end: base.window.start - 1 } },
    { window: { ...base.window, skip: base.window.span_rows } },
    { window: { ...base.window, start: -0 } },
    { window: { ...base.window, extra: 1 } },
    { window: { ...base.window, span_rows: Infinity } },
  ];
  for (const v of variants) {
    const checker = new TaskSpecChecker();
    assert.ok("spec" in checker.check(base));
    const task = { ...base, task_id: "t2", index: 1, ...v };
    const got = checker.check(task);
    const want = TaskSpecSchema.safeParse(task);
    assert.equal("spec" in got, want.success, JSON.stringify(v));
    if ("spec" in got && want.success) assert.deepEqual(got.spec, want.data, JSON.stringify(v));
  }
});
