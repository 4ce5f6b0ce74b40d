/**
 * A worker that does not see the master's copy of a source in object storage reads
 * its byte-range window from the store (`_remote_window.ts`), against a real S3
 * server (`s3rver`): every window of a CSV and a JSON-lines file reads back the same
 * rows as from the whole file, a changed object is SOURCE_CHANGED, and a WorkerNode
 * given such a task reports the chunk a local read would have made.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startS3rver } from "../tests/_s3rver.ts";
import { JobError } from "../client/errors.ts";
import type { TaskSpec } from "../client/types.ts";
import { fieldJson, layoutSource, readTaskRows, sourceSchema } from "../cluster/task_source.ts";
import { decodeChunkBody } from "../cluster/wire.ts";
import { encodeChunk, INLINE_ENCODER } from "../format/chunk.ts";
import { planColumns } from "../format/plan.ts";
import { s3Store } from "../storage/s3.ts";
import { uploadFile } from "../storage/transfer.ts";
import { memoryLogger, writeCsv } from "../master/_test_utils.ts";
import { fetchWindowFile, readableFromStore } from "./_remote_window.ts";
import { testSpec } from "./_test_utils.ts";
import { WorkerNode } from "./worker.ts";

const server = await startS3rver("bkt");
const dir = await Deno.makeTempDir({ prefix: "permafrost-window-test-" });

/** A task for window `w` of a source that is only in the store. */
async function remoteTask(local: string, uri: string, format: "csv" | "jsonl", chunkRows: number) {
  await uploadFile(local, uri);
  const info = (await s3Store().stat(uri))!;
  const { windows } = await layoutSource(local, { format, chunkRows });
  const { schema } = await sourceSchema(local, { format, types: {}, batchRows: chunkRows });
  const spec = (i: number): TaskSpec => ({
    ...testSpec(`t${i}`),
    source: {
      path: join(dir, "not-here", "copy"), // the master's copy, on another machine
      format,
      bytes: info.size,
      dev: 0,
      ino: 0,
      mtime_ms: null,
      uri,
      etag: info.etag!,
    },
    window: windows[i]!,
    schema: schema.map(fieldJson),
  });
  return { windows, schema, spec };
}

Deno.test("every window of a CSV and a JSON-lines file in S3 reads the rows of the whole file", async () => {
  const csv = join(dir, "a.csv");
  await writeCsv(csv, 30_000, { nullEvery: 7 });
  const jsonl = join(dir, "a.jsonl");
  await Deno.writeTextFile(
    jsonl,
    Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ i, s: `x${i % 13}`, o: { k: i } }))
      .join("\n") +
      "\n",
  );
  for (const [local, format] of [[csv, "csv"], [jsonl, "jsonl"]] as const) {
    const { windows, schema, spec } = await remoteTask(
      local,
      `s3://bkt/src.${format}`,
      format,
      4000,
    );
    assert.ok(windows.length > 4);
    for (let i = 0; i < windows.length; i++) {
      assert.ok(readableFromStore(spec(i)));
      const { path, dispose } = await fetchWindowFile(spec(i));
      try {
        const read = { format, schema, types: {}, window: windows[i]! };
        assert.deepEqual(
          await readTaskRows({ ...read, path }),
          await readTaskRows({ ...read, path: local }),
          `${format} window ${i}`,
        );
      } finally {
        await dispose();
      }
    }
    // The object replaced after the job copied it: refused, nothing read.
    await uploadFile(jsonl === local ? csv : jsonl, `s3://bkt/src.${format}`);
    await assert.rejects(
      fetchWindowFile(spec(1)),
      (e: unknown) => e instanceof JobError && e.code === "SOURCE_CHANGED",
    );
  }
});

Deno.test("a WorkerNode that does not see the master's copy freezes its window from S3", async () => {
  const csv = join(dir, "b.csv");
  await writeCsv(csv, 9000, { nullEvery: 5 });
  const { windows, schema, spec } = await remoteTask(csv, "s3://bkt/b.csv", "csv", 2500);
  const local = await readTaskRows({
    path: csv,
    format: "csv",
    schema,
    types: {},
    window: windows[2]!,
  });
  const plans = planColumns(local);
  const task = { ...spec(2), plans };
  const expected = await encodeChunk(local, { plans, codec: task.codec, encoder: INLINE_ENCODER });
  const dones: Uint8Array[] = [];
  const fetch = ((input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    if (url.pathname === "/workers/register") {
      return Promise.resolve(
        Response.json({ worker_id: "w1", heartbeat_s: 5, url: "http://w", drop: [] }),
      );
    }
    if (url.pathname.endsWith("/done")) dones.push(init!.body as Uint8Array);
    if (url.pathname.endsWith("/rows")) {
      return Promise.resolve(
        Response.json({ error: { code: "X", message: "no" } }, { status: 500 }),
      );
    }
    return Promise.resolve(Response.json({ ok: true, drop: [] }));
  }) as typeof globalThis.fetch;
  const node = new WorkerNode({
    masterUrl: "http://m",
    workerId: "w1",
    fetch,
    logger: memoryLogger().logger,
    encoder: () => INLINE_ENCODER,
  });
  try {
    await node.register("http://w");
    node.accept(task);
    await node.idle();
    assert.equal(dones.length, 1, "one done-report, no rows fetched from the master");
    const { chunk } = decodeChunkBody(dones[0]!);
    assert.deepEqual(chunk, expected);
  } finally {
    await node.stop();
  }
});

Deno.test({
  name: "window tests clean up",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  },
});
