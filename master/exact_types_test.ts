/**
 * The cluster freezes every exact column type as a local freeze does: JSON lines
 * with nested, mixed and huge values (json columns), a late value that does not fit
 * its column (widened to json for JSON lines, to string for CSV), and Parquet
 * decimals — the archive's payload equals the local freeze's, byte for byte, whether
 * the workers read the source themselves or get their rows from the master.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { freeze } from "../ops/freeze.ts";
import { openLockedDuckDB, sqlString } from "../io/_duckdb.ts";
import { tempDir, testCluster } from "./_test_utils.ts";

async function sameAsLocal(
  source: string,
  chunkRows: number,
  dir: string,
  widened: string[] = [],
): Promise<void> {
  const local = await freeze(source, join(dir, "local.pf"), { chunkRows, threads: 1 });
  // Workers that read the source themselves, then workers that get every row from the
  // master: the rows, and the source's errors, cross the wire too.
  for (const read of ["auto", "master"] as const) {
    const c = await testCluster({ workers: 2, worker: () => ({ read }) });
    try {
      const id = await c.client.freeze(source, join(dir, `cluster-${read}.pf`), { chunkRows });
      const job = await c.client.wait(id, { pollInterval: 5 });
      assert.equal(job.status, "DONE", `${read}: ${job.error}`);
      assert.deepEqual(local.widened_columns, widened);
      assert.deepEqual(job.widened_columns, widened, read);
      assert.equal(job.payload_sha256, local.payload_sha256, read);
    } finally {
      await c.close();
    }
  }
}

Deno.test("cluster: JSON lines with nested, mixed and huge values freeze as locally", async () => {
  const dir = await tempDir("cluster-json-");
  try {
    const lines: string[] = [];
    for (let i = 0; i < 300; i++) {
      lines.push(
        JSON.stringify({ id: i, obj: { a: i, b: [1, "x", null] }, mixed: i % 3 === 0 ? "s" : i }),
      );
    }
    // Past the type sample of the first chunk: a value the sample did not foresee.
    lines.push('{"id": 300, "obj": {"a": 1}, "mixed": 1, "late": 123456789012345678901234567890}');
    lines.push('{"id": "text", "obj": [], "mixed": true, "late": 1e400}');
    const source = join(dir, "a.jsonl");
    await Deno.writeTextFile(source, lines.join("\n") + "\n");
    await sameAsLocal(source, 100, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cluster: a value past the type sample widens its column as locally (json for JSON lines, string for CSV)", async () => {
  const dir = await tempDir("cluster-widen-");
  try {
    const n = 12_000;
    const jsonl: string[] = [];
    const csv: string[] = ["id,v"];
    for (let i = 0; i < n; i++) {
      // Row 11,000 is past the 10,000-row sample: a number column meets text.
      const v = i === 11_000 ? '"eleven thousand"' : String(i * 3);
      jsonl.push(`{"id": ${i}, "v": ${v}}`);
      csv.push(`${i},${i === 11_000 ? "eleven thousand" : i * 3}`);
    }
    const jsonlSource = join(dir, "w.jsonl");
    await Deno.writeTextFile(jsonlSource, jsonl.join("\n") + "\n");
    await sameAsLocal(jsonlSource, 3000, dir, ["v"]);
    const csvSource = join(dir, "w.csv");
    await Deno.writeTextFile(csvSource, csv.join("\n") + "\n");
    await sameAsLocal(csvSource, 3000, dir, ["v"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cluster: Parquet decimals freeze as locally", async () => {
  const dir = await tempDir("cluster-dec-");
  try {
    const source = join(dir, "d.parquet");
    const db = await openLockedDuckDB([source]);
    try {
      await db.connection.run(
        `COPY (SELECT i::DECIMAL(18,2) / 7 AS a, (i * 1000000000000)::DECIMAL(38,10) AS b
               FROM range(5000) t(i)) TO ${sqlString(source)} (FORMAT parquet)`,
      );
    } finally {
      db.close();
    }
    await sameAsLocal(source, 1000, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
