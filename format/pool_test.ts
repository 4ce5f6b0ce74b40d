/**
 * `BlockPool`: more chunks than Workers can hold at once all come back, each equal
 * to the inline encoder's bytes and to its own job; a failing job rejects with its
 * typed error and leaves the pool working; `close()` and `shutdown()` reject what is
 * still queued; `run()` needs a script with its own handler.
 */
import assert from "node:assert/strict";
import { CodecError } from "../codecs/errors.ts";
import type { Schema } from "./column.ts";
import { INLINE_ENCODER } from "./chunk.ts";
import { planColumns } from "./plan.ts";
import { FormatError } from "./errors.ts";
import { BlockPool, JOBS_PER_WORKER, packJob, serializeError, unpackJob } from "./pool.ts";
import { randomBatch } from "./_test_utils.ts";
import { DETACH_PROTECTOR_BROKEN, evalTracingDetach } from "../internal/_test_utils.ts";

const SCHEMA: Schema = [
  { name: "id", type: "int64", nullable: false },
  { name: "x", type: "float64", nullable: true },
  { name: "label", type: "string", nullable: true },
  { name: "ok", type: "bool", nullable: true },
];

Deno.test("BlockPool encodes many more chunks than it holds, each as the inline encoder does", async () => {
  const batches = Array.from({ length: 13 }, (_, i) => randomBatch(SCHEMA, 500 + i * 37, i + 1));
  const plans = planColumns(batches[0]!, {});
  const pool = new BlockPool(2);
  try {
    assert.equal(pool.capacity, 2 * (JOBS_PER_WORKER + 1));
    const pooled = await Promise.all(
      batches.map((batch) => pool.encode({ batch, plans, codec: "zstd" })),
    );
    for (const [i, batch] of batches.entries()) {
      const inline = await INLINE_ENCODER.encode({ batch, plans, codec: "zstd" });
      assert.equal(pooled[i]!.chunk.rows, batch.length, `chunk ${i}`);
      assert.deepEqual(pooled[i]!.chunk.blocks, inline.chunk.blocks, `chunk ${i}`);
    }
  } finally {
    pool.close();
  }
});

Deno.test("BlockPool rejects a failing job with its typed error and keeps serving", async () => {
  const batch = randomBatch(SCHEMA, 200, 7);
  const plans = planColumns(batch, {});
  const pool = new BlockPool(1);
  try {
    const [bad, good] = await Promise.allSettled([
      pool.encode({ batch, plans, codec: "no-such-codec" }),
      pool.encode({ batch, plans, codec: "zstd" }),
    ]);
    assert.equal(bad.status, "rejected");
    assert.ok(bad.reason instanceof CodecError, String(bad.reason));
    assert.equal(good.status, "fulfilled");
    assert.equal(good.value.chunk.rows, 200);
  } finally {
    pool.close();
  }
});

Deno.test("BlockPool.run() on a given Worker runs every such job there, in order, others on any", async () => {
  // The default script only encodes chunks: a job for the handler fails, naming nothing
  // else, which is enough to see where jobs went and that each is answered.
  const batch = randomBatch(SCHEMA, 300, 12);
  const plans = planColumns(batch, {});
  const pool = new BlockPool(2);
  try {
    const bound = Array.from({ length: 5 }, (_, i) => pool.run({ i }, [], i % 2));
    const free = Array.from({ length: 3 }, () => pool.encode({ batch, plans, codec: "zstd" }));
    const settled = await Promise.allSettled(bound);
    assert.ok(
      settled.every((s) => s.status === "rejected" && /only encodes/.test(String(s.reason))),
    );
    for (const r of await Promise.all(free)) assert.equal(r.chunk.rows, 300);
    await assert.rejects(pool.run({}, [], 2), (e: FormatError) => e.code === "BAD_ARGUMENT");
  } finally {
    pool.close();
  }
});

Deno.test("BlockPool.close() rejects jobs still queued", async () => {
  const batch = randomBatch(SCHEMA, 2000, 9);
  const plans = planColumns(batch, {});
  const pool = new BlockPool(1);
  const jobs = Array.from({ length: 5 }, () => pool.encode({ batch, plans, codec: "zstd" }));
  pool.close();
  const settled = await Promise.allSettled(jobs);
  assert.ok(settled.every((s) => s.status === "rejected"));
  await assert.rejects(pool.encode({ batch, plans, codec: "zstd" }), /closed/);
});

Deno.test("packJob() and unpackJob() carry string columns exactly, lone surrogates and empties included", () => {
  const values = ["", "a", "\ud800", "é\u0000x", "😀", "", "\udfff\ud800", "long ".repeat(40)];
  const validity = new Uint8Array(values.map((v) => (v === "" ? 0 : 1)));
  const batch = {
    schema: [{ name: "s", type: "string" as const, nullable: true }],
    columns: [{ type: "string" as const, values, validity }],
    length: values.length,
  };
  const posted = packJob({ batch, plans: {}, codec: "zstd" });
  assert.ok("packed" in posted.batch.columns[0]!);
  const back = unpackJob(structuredClone(posted));
  assert.deepEqual(back.batch, batch);
});

Deno.test("BlockPool.run() rejects on the default script, which only encodes chunks", async () => {
  const pool = new BlockPool(1);
  try {
    await assert.rejects(pool.run({ kind: "anything" }), /only encodes chunks/);
    const batch = randomBatch(SCHEMA, 50, 3);
    const done = await pool.encode({ batch, plans: planColumns(batch, {}), codec: "zstd" });
    assert.equal(done.chunk.rows, 50);
  } finally {
    pool.close();
  }
});

Deno.test("BlockPool.shutdown() lets every Worker finish, rejects what is queued, and refuses more", async () => {
  const batch = randomBatch(SCHEMA, 2000, 5);
  const plans = planColumns(batch, {});
  const pool = new BlockPool(2);
  const jobs = Array.from({ length: 8 }, () => pool.encode({ batch, plans, codec: "zstd" }));
  const settled = Promise.allSettled(jobs);
  await pool.shutdown();
  assert.ok((await settled).every((s) => s.status === "rejected"));
  await assert.rejects(pool.encode({ batch, plans, codec: "zstd" }), /closed/);
  await pool.shutdown(); // idempotent
  pool.close();
});

Deno.test("serializeError() keeps the class name, code and details a revived error needs", () => {
  const err = new FormatError("TRUNCATED", "Cannot read", { offset: 12, chunk: 3, column: "c" });
  const e = serializeError(err);
  assert.deepEqual(e, {
    name: "FormatError",
    code: "TRUNCATED",
    message: "Cannot read",
    details: { offset: 12, chunk: 3, column: "c" },
  });
  assert.deepEqual(serializeError("boom"), {
    name: "Error",
    code: null,
    message: "boom",
    details: {},
  });
});

Deno.test("a pool Worker's answers keep V8's ArrayBufferDetaching protector whole", async () => {
  // V8 reports each isolate's first detach of a buffer with more than one view with this
  // flag (see answer() in pool.ts): encoding chunks and moving their blocks makes none.
  const script = `
    import { BlockPool } from ${JSON.stringify(new URL("./pool.ts", import.meta.url).href)};
    import { planColumns } from ${JSON.stringify(new URL("./plan.ts", import.meta.url).href)};
    import { randomBatch } from ${
    JSON.stringify(new URL("./_test_utils.ts", import.meta.url).href)
  };
    const schema = ${JSON.stringify(SCHEMA)};
    const pool = new BlockPool(1);
    for (let seed = 1; seed <= 3; seed++) {
      const batch = randomBatch(schema, 3000, seed);
      const done = await pool.encode({ batch, plans: planColumns(batch, {}), codec: "zstd" });
      console.log("rows " + done.chunk.rows);
    }
    pool.close();
  `;
  const text = await evalTracingDetach(script);
  assert.equal(text.match(/rows 3000/g)?.length, 3, text);
  assert.doesNotMatch(text, DETACH_PROTECTOR_BROKEN);
});
