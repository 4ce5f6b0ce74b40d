/**
 * A worker that does not see the master's copy of a source in object storage reads
 * its byte-range window from the store (`_remote_window.ts`), against a real S3
 * server (`s3rver`): every window of a CSV and a JSON-lines file reads back the same
 * rows as from the whole file, every window of a Parquet file fetches only its row groups
 * and reads the same rows, a changed object is SOURCE_CHANGED, and a WorkerNode given
 * such a task (CSV or Parquet) reports the chunk a local read would have made.
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
import { duckParquet } from "../io/_test_utils.ts";
import { parquetRowGroupSpans } from "../io/parquet.ts";
import { WorkerNode } from "./worker.ts";

const server = await startS3rver("bkt");
const dir = await Deno.makeTempDir({ prefix: "permafrost-window-test-" });

/** A task for window `w` of a source that is only in the store. */
async function remoteTask(
  local: string,
  uri: string,
  format: "csv" | "jsonl" | "parquet",
  chunkRows: number,
) {
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

Deno.test("every window of a Parquet file in S3 reads its row groups only, and the rows of the whole file", async () => {
  const local = join(dir, "p.parquet");
  await duckParquet(
    local,
    `SELECT i, 'k' || (i % 37) AS s, CASE WHEN i % 11 = 0 THEN NULL ELSE i * 0.25 END AS f,
       (i * 7)::DECIMAL(18, 3) AS d FROM range(50000) t(i)`,
    8000,
  );
  const { windows, schema, spec } = await remoteTask(local, "s3://bkt/p.parquet", "parquet", 9000);
  assert.ok(windows.length >= 5);
  const firstGroupEnd = (await parquetRowGroupSpans(local))[0]!.end;
  for (let i = 0; i < windows.length; i++) {
    assert.ok(readableFromStore(spec(i)));
    const { path, dispose } = await fetchWindowFile(spec(i));
    try {
      const read = { format: "parquet" as const, schema, types: {}, window: windows[i]! };
      assert.deepEqual(
        await readTaskRows({ ...read, path }),
        await readTaskRows({ ...read, path: local }),
        `parquet window ${i}`,
      );
      if (windows[i]!.start >= 8000) {
        // The first row group was never fetched: its bytes are a hole of zeros.
        const bytes = await Deno.readFile(path);
        assert.ok(bytes.subarray(0, firstGroupEnd).every((b) => b === 0), `window ${i}`);
      }
    } finally {
      await dispose();
    }
  }
});

Deno.test("a WorkerNode that does not see the master's copy freezes its window from S3", async () => {
  const csv = join(dir, "b.csv");
  await writeCsv(csv, 9000, { nullEvery: 5 });
  const parquet = join(dir, "b.parquet");
  await duckParquet(parquet, `SELECT i, 'v' || (i % 7) AS s FROM range(9000) t(i)`, 2048);
  for (const [local, format] of [[csv, "csv"], [parquet, "parquet"]] as const) {
    const { windows, schema, spec } = await remoteTask(local, `s3://bkt/b.${format}`, format, 2500);
    const rows = await readTaskRows({
      path: local,
      format,
      schema,
      types: {},
      window: windows[2]!,
    });
    const plans = planColumns(rows);
    const task = { ...spec(2), plans };
    const expected = await encodeChunk(rows, { plans, codec: task.codec, encoder: INLINE_ENCODER });
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
      reportBatch: 1, // each result alone, as this master reads them
    });
    try {
      await node.register("http://w");
      node.accept(task);
      await node.idle();
      assert.equal(dones.length, 1, `${format}: one done-report, no rows fetched from the master`);
      const { chunk } = decodeChunkBody(dones[0]!);
      assert.deepEqual(chunk, expected, format);
    } finally {
      await node.stop();
    }
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
