import assert from "node:assert/strict";
import { tableFromArrays } from "apache-arrow";
import type { Batch, Schema } from "../format/column.ts";
import { OpsError } from "./errors.ts";
import { freezeFile, freezeStream } from "./stream.ts";
import { thawTable } from "./thaw.ts";
import { isPartitionedDir } from "./partition_read.ts";

const TMP = ".tmp/ops_stream";
await Deno.remove(TMP, { recursive: true }).catch(() => {});
await Deno.mkdir(TMP, { recursive: true });

Deno.test("freezeStream() freezes an async iterable of Arrow record batches chunk by chunk", async () => {
  let produced = 0;
  async function* produce() {
    for (let i = 0; i < 25; i++) {
      produced++;
      const base = i * 100;
      yield* tableFromArrays({
        n: Float64Array.from({ length: 100 }, (_, k) => base + k),
        s: Array.from({ length: 100 }, (_, k) => `r${base + k}`),
      }).batches;
    }
  }
  const s = await freezeStream(produce(), `${TMP}/arrow.pf`, { chunkRows: 1000, threads: 0 });
  assert.equal(produced, 25);
  assert.equal(s.rows, 2500);
  assert.equal(s.chunks, 3);
  const back = await thawTable(`${TMP}/arrow.pf`, { rows: { start: 2498, end: 2500 } });
  assert.deepEqual([...back.getChild("s")!.toArray()], ["r2498", "r2499"]);
});

Deno.test("freezeStream() takes our own batches, and needs a schema only for an empty stream", async () => {
  const schema: Schema = [{ name: "k", type: "int64", nullable: false }];
  const batch: Batch = {
    schema,
    columns: [{ type: "int64", values: BigInt64Array.of(1n, 2n), validity: null }],
    length: 2,
  };
  assert.equal((await freezeStream([batch, batch], `${TMP}/own.pf`, { threads: 0 })).rows, 4);
  await assert.rejects(
    freezeStream([], `${TMP}/empty.pf`),
    (e) => e instanceof OpsError && e.code === "BAD_OPTION" && /options\.schema/.test(e.message),
  );
  assert.equal((await freezeStream([], `${TMP}/empty.pf`, { schema, threads: 0 })).rows, 0);
});

Deno.test("freezeFile() freezes a file, or a partitioned directory with partitionBy", async () => {
  await Deno.writeTextFile(`${TMP}/f.csv`, "g,v\na,1\nb,2\na,3\n");
  assert.equal((await freezeFile(`${TMP}/f.csv`, `${TMP}/f.pf`, { threads: 0 })).rows, 3);
  const s = await freezeFile(`${TMP}/f.csv`, `${TMP}/by_g`, { partitionBy: ["g"], threads: 0 });
  assert.equal(s.rows, 3);
  assert.equal(await isPartitionedDir(`${TMP}/by_g`), true);
  const a = await thawTable(`${TMP}/by_g`, { where: "g = a" });
  assert.deepEqual([...a.getChild("v")!.toArray()], [1n, 3n]);
});
