/**
 * The context API's `storage` settings against two real S3 servers (`s3rver`): each
 * context's freeze, thaw, audit, register and query reach the server its settings
 * name, also when both run at once in one process, while code outside any context
 * keeps using the environment's.
 */
import assert from "node:assert/strict";
import { tableFromArrays } from "apache-arrow";
import { startS3rver } from "./tests/_s3rver.ts";
import { Permafrost } from "./context.ts";
import { storeFor, withStorageSettings } from "./storage/registry.ts";

const first = await startS3rver("lake");
// Started last, so the environment points at it.
const second = await startS3rver("lake");

Deno.test("contexts with their own storage settings reach their own servers, at once", async () => {
  const pfFirst = await Permafrost.open({ storage: first.env });
  const pfSecond = await Permafrost.open({ storage: second.env });
  try {
    const table = (n: number) =>
      tableFromArrays({ id: Float64Array.from({ length: n }, (_, i) => i) });
    await Promise.all([
      pfFirst.freeze(table(30), "s3://lake/t.pf", { threads: 0 }),
      pfSecond.freeze(table(70), "s3://lake/t.pf", { threads: 0 }),
    ]);
    assert.equal((await pfFirst.audit("s3://lake/t.pf")).rows, 30);
    assert.equal((await pfSecond.audit("s3://lake/t.pf")).rows, 70);
    assert.equal((await pfFirst.thaw("s3://lake/t.pf")).numRows, 30);
    await pfFirst.register("t", "s3://lake/t.pf");
    const answer = await pfFirst.query("SELECT count(*) AS n, max(id) AS m FROM t");
    assert.deepEqual(answer.toArray().map((r) => [Number(r.n), r.m]), [[30, 29]]);
    // Outside a context, the environment's server: the second.
    const size = (await storeFor("s3://lake/t.pf").stat("s3://lake/t.pf"))?.size;
    const secondSize = await withStorageSettings(
      second.env,
      async () => (await storeFor("s3://lake/t.pf").stat("s3://lake/t.pf"))?.size,
    );
    assert.equal(size, secondSize);
  } finally {
    pfFirst.close();
    pfSecond.close();
  }
});

Deno.test("context storage: teardown of the S3 servers", async () => {
  await first.stop();
  await second.stop();
});
