/**
 * Tests of `arrow.ts`: IPC file and stream formats, batch slicing, row ranges,
 * forced types and failures.
 *
 * @module
 */
import assert from "node:assert/strict";
import * as arrow from "apache-arrow";
import { concatBatches, sliceBatch } from "../format/column.ts";
import { arrowBatchLayout, openArrow } from "./arrow.ts";
import { batchesToTable } from "./arrow_table.ts";
import {
  ALL_TYPES,
  assertSameValues,
  collect,
  makeTempDir,
  randomBatch,
  Rng,
} from "./_test_utils.ts";

const FLIGHTS = "/tmp/vega/package/data/flights-200k.arrow";

Deno.test("openArrow() reads IPC file and stream formats written by arrow-js", async (t) => {
  const dir = await makeTempDir();
  try {
    const rng = new Rng(5);
    const batches = [randomBatch(rng, ALL_TYPES, 400), randomBatch(rng, ALL_TYPES, 250)];
    const want = concatBatches(ALL_TYPES, batches);
    const table = batchesToTable(ALL_TYPES, batches);
    for (const format of ["file", "stream"] as const) {
      await t.step(format, async () => {
        const path = `${dir}/t.${format === "file" ? "arrow" : "arrows"}`;
        await Deno.writeFile(path, arrow.tableToIPC(table, format));
        const layout = await arrowBatchLayout(path);
        assert.deepEqual(layout, { rows: 650, batches: [400, 250] });
        const src = await openArrow(path, { batchRows: 300 });
        assert.deepEqual(src.schema, ALL_TYPES);
        const sizes: number[] = [];
        const parts = [];
        for await (const b of src.batches()) {
          sizes.push(b.length);
          parts.push(b);
        }
        assert.deepEqual(sizes, [300, 100, 250]);
        assertSameValues(concatBatches(src.schema, parts), want, true);
        const range = await openArrow(path, { rows: { start: 350, end: 420 } });
        assertSameValues(
          await collect(range.schema, range.batches()),
          sliceBatch(want, 350, 420),
          true,
        );
      });
    }
    await t.step("forced string types", async () => {
      const path = `${dir}/t.arrow`;
      const src = await openArrow(path, { types: { i: "string", t_us: "string" } });
      assert.equal(src.schema[0]?.type, "string");
      const b = await collect(src.schema, src.batches());
      const i = b.columns[0]!;
      const firstNonNull = want.columns[0]!.validity?.indexOf(1) ?? 0;
      assert.equal(i.values[firstNonNull], String(want.columns[0]!.values[firstNonNull]));
      await assert.rejects(openArrow(path, { types: { i: "bool" } }), { code: "INVALID_OPTION" });
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openArrow() fails with READ_FAILED or PARSE_FAILED", async () => {
  const dir = await makeTempDir();
  try {
    await assert.rejects(openArrow(`${dir}/missing.arrow`), { code: "READ_FAILED" });
    await Deno.writeTextFile(`${dir}/junk.arrow`, "this is not arrow");
    await assert.rejects(openArrow(`${dir}/junk.arrow`), { code: "PARSE_FAILED" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openArrow() reads the 200k-row flights file", { ignore: !exists(FLIGHTS) }, async () => {
  const src = await openArrow(FLIGHTS);
  assert.deepEqual(src.schema.map((f) => `${f.name}:${f.type}`), [
    "delay:int64",
    "distance:int64",
    "time:float64",
  ]);
  let rows = 0;
  for await (const b of src.batches()) {
    assert.ok(b.length <= 65536);
    rows += b.length;
  }
  assert.equal(rows, 200000);
});

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
