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
