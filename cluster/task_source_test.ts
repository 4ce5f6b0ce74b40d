/**
 * The cluster's chunks, read task by task through `layoutSource` + `readTaskRows`,
 * must encode to the local freeze's bytes for every format and chunk size,
 * including the subtle case of a validity bitmap inherited from a read batch that
 * straddles two chunks.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import * as arrow from "apache-arrow";
import { encodeChunk } from "../format/chunk.ts";
import type { Schema } from "../format/column.ts";
import { planColumns } from "../format/plan.ts";
import type { SourceFormat } from "../io/types.ts";
import { freeze } from "../ops/freeze.ts";
import { thaw } from "../ops/thaw.ts";
import { tempDir, writeCsv } from "../master/_test_utils.ts";
import { KeptSource, layoutSource, readTaskRows, sourceSchema } from "./task_source.ts";
import type { TaskWindow } from "../client/types.ts";
import { freezeBatchRows } from "../io/chunk_window.ts";
import { ParquetReaders } from "../io/parquet.ts";
import { openedIdentity } from "../internal/file_identity.ts";

/** The payload hash the cluster would produce, computed in one process. */
async function clusterPayload(
  path: string,
  format: SourceFormat,
  chunkRows: number,
  readers?: ParquetReaders,
) {
  const layout = await layoutSource(path, { format, chunkRows });
  const { schema } = await sourceSchema(path, {
    format,
    types: {},
    batchRows: freezeBatchRows(chunkRows),
  });
  const hash = createHash("sha256");
  let plans;
  let rows = 0;
  for (const window of layout.windows) {
    const batch = await readTaskRows(
      { path, format, schema: schema as Schema, types: {}, window },
      readers,
    );
    plans ??= planColumns(batch);
    const chunk = await encodeChunk(batch, { plans, codec: "zstd" });
    for (const b of chunk.blocks) hash.update(b.bytes);
    rows += batch.length;
  }
  return { payload: hash.digest("hex"), rows, tasks: layout.windows.length };
}

async function localPayload(path: string, dir: string, chunkRows: number): Promise<string> {
  const s = await freeze(path, join(dir, `local-${chunkRows}.pf`), { chunkRows, threads: 0 });
  return s.payload_sha256;
}

Deno.test("readTaskRows() gives the local freeze's chunks for CSV, with chunks over the 65,536-row read batch", async (t) => {
  const dir = await tempDir("task-csv-");
  try {
    const path = join(dir, "big.csv");
    // Nulls only at rows 68,000 and 140,500: with 70,000-row chunks the read batch
    // [65,536, 131,072) carries a bitmap into chunk 1, which has no null of its own.
    const lines = ["id,reading,label"];
    for (let i = 0; i < 150_000; i++) {
      const reading = i === 68_000 || i === 140_500 ? "" : String((i * 37) % 1000);
      lines.push(`${i},${reading},l${i % 7}`);
    }
    await Deno.writeTextFile(path, lines.join("\n") + "\n");
    for (const chunkRows of [70_000, 65_536, 50_000]) {
      await t.step(`chunk_rows ${chunkRows}`, async () => {
        const cluster = await clusterPayload(path, "csv", chunkRows);
        assert.equal(cluster.rows, 150_000);
        assert.equal(cluster.tasks, Math.ceil(150_000 / chunkRows));
        assert.equal(cluster.payload, await localPayload(path, dir, chunkRows));
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readTaskRows() gives the local freeze's chunks for CSV with quoted newlines", async () => {
  const dir = await tempDir("task-quoted-");
  try {
    const path = join(dir, "q.csv");
    const lines = ["id,note"];
    for (let i = 0; i < 1000; i++) lines.push(`${i},"line one\nline, two ${i}"`);
    await Deno.writeTextFile(path, lines.join("\r\n") + "\r\n");
    const cluster = await clusterPayload(path, "csv", 77);
    assert.equal(cluster.rows, 1000);
    assert.equal(cluster.payload, await localPayload(path, dir, 77));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readTaskRows() gives the local freeze's chunks for CR-only and mixed line ends", async (t) => {
  const dir = await tempDir("task-cr-");
  try {
    const csv = ["id,note"];
    const jsonl: string[] = [];
    for (let i = 0; i < 1000; i++) {
      csv.push(i % 10 === 0 ? `${i},"quoted\rcr ${i}"` : `${i},n${i}`);
      jsonl.push(JSON.stringify({ id: i, note: `n\r${i}` }));
    }
    const ends = ["\r", "\n", "\r\n"];
    const files: [string, SourceFormat, string][] = [
      ["cr.csv", "csv", csv.join("\r") + "\r"],
      ["mixed.csv", "csv", csv.map((l, i) => l + ends[i % 3]).join("")],
      ["cr.jsonl", "jsonl", jsonl.join("\r")],
      ["mixed.jsonl", "jsonl", jsonl.map((l, i) => l + ends[i % 3]).join("")],
    ];
    for (const [name, format, text] of files) {
      await t.step(name, async () => {
        const path = join(dir, name);
        await Deno.writeTextFile(path, text);
        const cluster = await clusterPayload(path, format, 77);
        assert.equal(cluster.rows, 1000);
        assert.equal(cluster.tasks, 13);
        assert.equal(cluster.payload, await localPayload(path, dir, 77));
        const local = await freeze(path, join(dir, `${name}.pf`), { chunkRows: 77, threads: 0 });
        assert.equal(local.rows, 1000);
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readTaskRows() gives the local freeze's chunks for JSON lines", async () => {
  const dir = await tempDir("task-jsonl-");
  try {
    const path = join(dir, "a.jsonl");
    const lines = [];
    for (let i = 0; i < 2500; i++) {
      lines.push(JSON.stringify({ id: i, v: i % 97 === 3 ? null : i * 1.5, tag: `t${i % 4}` }));
      if (i % 500 === 0) lines.push("");
    }
    await Deno.writeTextFile(path, lines.join("\n"));
    const cluster = await clusterPayload(path, "jsonl", 333);
    assert.equal(cluster.rows, 2500);
    assert.equal(cluster.payload, await localPayload(path, dir, 333));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readTaskRows() gives the local freeze's chunks for Arrow IPC with record batches that straddle chunks", async () => {
  const dir = await tempDir("task-arrow-");
  try {
    const path = join(dir, "a.arrow");
    const n = 3750;
    const full = arrow.tableFromArrays({
      id: Float64Array.from({ length: n }, (_, i) => i * 3),
      label: Array.from({ length: n }, (_, i) => (i === 1100 ? null : `l${i % 5}`)),
    });
    // Record batches of 1000, 1000, 450 and 1300 rows; one null, at row 1100. With
    // 700-row chunks the local freeze reads [1000, 1700) in one piece, so chunk 2
    // (rows 1400..2099) inherits that piece's bitmap without a null of its own.
    const batches = [[0, 1000], [1000, 2000], [2000, 2450], [2450, n]].flatMap(([a, b]) =>
      full.slice(a, b).batches
    );
    const table = new arrow.Table(batches);
    assert.deepEqual(table.batches.map((b) => b.numRows), [1000, 1000, 450, 1300]);
    await Deno.writeFile(path, arrow.tableToIPC(table, "file"));
    for (const chunkRows of [700, 1000, 5000]) {
      const cluster = await clusterPayload(path, "arrow", chunkRows);
      assert.equal(cluster.rows, 3750);
      assert.equal(
        cluster.payload,
        await localPayload(path, dir, chunkRows),
        `chunk_rows ${chunkRows}`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readTaskRows() gives the local freeze's chunks for Parquet", async () => {
  const dir = await tempDir("task-parquet-");
  try {
    const csv = join(dir, "a.csv");
    await writeCsv(csv, 5000, { nullEvery: 41 });
    await freeze(csv, join(dir, "a.pf"), { threads: 0 });
    const path = join(dir, "a.parquet");
    await thaw(join(dir, "a.pf"), path);
    const cluster = await clusterPayload(path, "parquet", 1200);
    assert.equal(cluster.rows, 5000);
    const local = await localPayload(path, dir, 1200);
    assert.equal(cluster.payload, local);
    // The same through readers kept open across tasks (as a worker reads), twice.
    const readers = new ParquetReaders();
    try {
      assert.equal((await clusterPayload(path, "parquet", 1200, readers)).payload, local);
      assert.equal((await clusterPayload(path, "parquet", 1200, readers)).payload, local);
      // A rewritten file is reopened: its new rows are read, not the old ones.
      await writeCsv(csv, 3000, { nullEvery: 13 });
      await freeze(csv, join(dir, "c.pf"), { threads: 0 });
      await thaw(join(dir, "c.pf"), path);
      const again = await clusterPayload(path, "parquet", 1200, readers);
      assert.equal(again.rows, 3000);
      assert.equal(again.payload, await localPayload(path, dir, 1200));
    } finally {
      await readers.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readTaskRows() refuses a window the source no longer holds", async () => {
  const dir = await tempDir("task-changed-");
  try {
    const path = join(dir, "a.csv");
    await writeCsv(path, 100);
    const layout = await layoutSource(path, { format: "csv", chunkRows: 40 });
    const { schema } = await sourceSchema(path, { format: "csv", types: {}, batchRows: 40 });
    const window = { ...layout.windows[0]!, span_rows: 41 };
    await assert.rejects(
      readTaskRows({ path, format: "csv", schema, types: {}, window }),
      { name: "JobError", code: "SOURCE_CHANGED" },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readTaskRows() reads a CSV window with the delimiter the task carries", async () => {
  const dir = await tempDir("task-delimiter-");
  try {
    const path = join(dir, "semi.csv");
    const lines = ["id;name"];
    for (let i = 0; i < 50; i++) lines.push(`${i};n${i}`);
    await Deno.writeTextFile(path, lines.join("\n") + "\n");
    const layout = await layoutSource(path, { format: "csv", chunkRows: 20 });
    const { schema } = await sourceSchema(path, { format: "csv", types: {}, batchRows: 20 });
    const read = { path, format: "csv" as const, schema, types: {}, window: layout.windows[1]! };
    const told = await readTaskRows(read);
    assert.deepEqual(await readTaskRows({ ...read, delimiter: ";" }), told);
    // Another delimiter than the file's: the rows split otherwise, so it was used.
    await assert.rejects(readTaskRows({ ...read, delimiter: "," }), { name: "IoError" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readTaskRows() refuses a CSV source replaced or changed since the job was laid out", async (t) => {
  const dir = await tempDir("task-identity-");
  try {
    const path = join(dir, "a.csv");
    // 30,000 rows: the second layout's windows are over the size read synchronously.
    await writeCsv(path, 30_000);
    const identity = await openedIdentity(path);
    assert.ok(identity);
    const { schema } = await sourceSchema(path, { format: "csv", types: {}, batchRows: 100 });
    for (const chunkRows of [100, 20_000]) {
      const layout = await layoutSource(path, { format: "csv", chunkRows });
      const window = layout.windows[0]!;
      const read = { path, format: "csv" as const, schema, types: {}, window, identity };
      await t.step(`windows of ${window.end - window.start} bytes`, async () => {
        assert.equal((await readTaskRows(read)).length, window.rows);
        const copy = join(dir, "copy.csv");
        await Deno.copyFile(path, copy);
        await Deno.rename(copy, join(dir, "b.csv"));
        await assert.rejects(readTaskRows({ ...read, path: join(dir, "b.csv") }), {
          name: "JobError",
          code: "SOURCE_CHANGED",
        });
        await assert.rejects(readTaskRows({ ...read, path: join(dir, "gone.csv") }), {
          name: "JobError",
          code: "SOURCE_CHANGED",
        });
        await assert.rejects(readTaskRows({ ...read, identity: { ...identity, size: 1 } }), {
          name: "JobError",
          code: "SOURCE_CHANGED",
        });
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readTaskRows() with a KeptSource reads the same rows from one open handle, and refuses a file changed in place", async () => {
  const dir = await tempDir("task-kept-");
  const kept = new KeptSource();
  try {
    const path = join(dir, "a.csv");
    await writeCsv(path, 1_000);
    const identity = await openedIdentity(path);
    assert.ok(identity);
    const { schema } = await sourceSchema(path, { format: "csv", types: {}, batchRows: 100 });
    const layout = await layoutSource(path, { format: "csv", chunkRows: 100 });
    const read = (window: TaskWindow) => ({
      path,
      format: "csv" as const,
      schema,
      types: {},
      window,
      identity,
    });
    for (const window of layout.windows) {
      assert.deepEqual(
        await readTaskRows(read(window), undefined, kept),
        await readTaskRows(read(window)),
      );
    }
    // Changed in place (size and mtime): the kept handle sees it, and lets it go.
    await Deno.writeTextFile(path, "a,b\n1,2\n", { append: true });
    await assert.rejects(readTaskRows(read(layout.windows[0]!), undefined, kept), {
      name: "JobError",
      code: "SOURCE_CHANGED",
    });
    const now = await openedIdentity(path);
    assert.ok(now);
    const again = await readTaskRows(
      { ...read(layout.windows[0]!), identity: now },
      undefined,
      kept,
    );
    assert.equal(again.length, 100);
  } finally {
    kept.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readTaskRows() with a KeptSource refuses a file changed in place between two reads of one identity, and again after", async () => {
  const dir = await tempDir("task-kept-between-");
  const kept = new KeptSource();
  try {
    const path = join(dir, "a.csv");
    await writeCsv(path, 300);
    const identity = await openedIdentity(path);
    assert.ok(identity);
    const { schema } = await sourceSchema(path, { format: "csv", types: {}, batchRows: 100 });
    const layout = await layoutSource(path, { format: "csv", chunkRows: 100 });
    const read = (i: number) => ({
      path,
      format: "csv" as const,
      schema,
      types: {},
      window: layout.windows[i]!,
      identity,
    });
    assert.equal((await readTaskRows(read(0), undefined, kept)).length, 100);
    assert.ok(kept.checkedAs(identity));
    // Same size, another modification time: only the identity check can see it.
    const file = await Deno.open(path, { write: true });
    await file.utime(new Date(2001, 0, 1), new Date(2001, 0, 1));
    file.close();
    for (const i of [1, 2]) {
      await assert.rejects(readTaskRows(read(i), undefined, kept), {
        name: "JobError",
        code: "SOURCE_CHANGED",
      });
      assert.equal(kept.checkedAs(identity), false);
    }
  } finally {
    kept.close();
    await Deno.remove(dir, { recursive: true });
  }
});
