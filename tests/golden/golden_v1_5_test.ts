/**
 * The 1.5 golden archive (`tiny_v1_5_types.pf`: decimal inside and beyond 64 bits,
 * time, duration, json) must always open and thaw to the same rows, and today's
 * writer must still produce its bytes exactly.
 */
import assert from "node:assert/strict";
import type { Batch } from "../../format/column.ts";
import { concatBatches } from "../../format/column.ts";
import { ArchiveReader } from "../../format/reader.ts";
import { assertColumnEqual, writeTestArchive } from "../../format/_test_utils.ts";
import { assertWriterReproduces, typesBatch } from "./make_golden.ts";

const GOLDEN = new URL("./tiny_v1_5_types.pf", import.meta.url).pathname;
const GOLDEN_SHA256 = "bedae5c1bf86b8ead71d0ae840cb2528200d96fbfbfb1740b2a0737b7e241b23";

Deno.test("golden tiny_v1_5_types.pf thaws to its rows, with the predictors it was written with", async () => {
  const reader = await ArchiveReader.open(GOLDEN);
  try {
    assert.equal(reader.index.version, "1.5");
    const predictors = reader.index.footer.chunks.map((c) => c.blocks.map((b) => b!.predictor));
    assert.ok(predictors.every((p) => p[1] === "wide_zigzag"), "the wide decimal's own predictor");
    const parts: Batch[] = [];
    for await (const b of reader.read()) parts.push(b);
    const back = concatBatches(reader.index.schema, parts);
    const expected = typesBatch();
    assert.deepEqual(reader.index.schema, expected.schema);
    expected.schema.forEach((f, i) =>
      assertColumnEqual(back.columns[i]!, expected.columns[i]!, f.name)
    );
    assert.equal((await reader.verify()).ok, true);
  } finally {
    reader.close();
  }
});

Deno.test("golden tiny_v1_5_types.pf bytes are pinned, and the writer still produces them", async () => {
  await assertWriterReproduces(
    GOLDEN,
    GOLDEN_SHA256,
    (path) => writeTestArchive(path, typesBatch(), { codec: "zstd", chunkRows: 2 }),
  );
});

Deno.test("a 1.3 or 1.4 preamble on a schema with 1.5 types is CORRUPT, never misread", async () => {
  const bytes = await Deno.readFile(GOLDEN);
  for (const minor of [3, 4]) {
    const b = bytes.slice();
    b[9] = minor;
    b[b.length - 48 + 37] = minor;
    const path = `.tmp/golden/types_as_1_${minor}.pf`;
    await Deno.writeFile(path, b);
    await assert.rejects(ArchiveReader.open(path), (err: unknown) => {
      assert.ok(err instanceof Error && "code" in err);
      assert.equal(err.code, "CORRUPT");
      assert.match(err.message, /cannot hold decimal, time, duration or json columns/);
      return true;
    });
  }
});
