/**
 * Golden archives: every v1.x archive committed here must always open and thaw
 * to the same rows, and today's writer must still produce v1.3 bytes exactly.
 */
import assert from "node:assert/strict";
import { concatBatches } from "../../format/column.ts";
import type { Batch } from "../../format/column.ts";
import { ArchiveReader } from "../../format/reader.ts";
import { assertColumnEqual, writeTestArchive } from "../../format/_test_utils.ts";
import { assertWriterReproduces, tinyBatch } from "./make_golden.ts";

const GOLDEN = new URL("./tiny_v1_3.pf", import.meta.url).pathname;
const GOLDEN_SHA256 = "bddfa453bc0db60032b625736405d5d23cb373b5248401fdbaf171a8bce3dd32";

Deno.test("golden tiny_v1_3.pf thaws to its rows", async () => {
  const reader = await ArchiveReader.open(GOLDEN);
  try {
    assert.equal(reader.index.version, "1.3");
    assert.equal(reader.index.footer.chunks.length, 2);
    const parts: Batch[] = [];
    for await (const b of reader.read()) parts.push(b);
    const back = concatBatches(reader.index.schema, parts);
    const expected = tinyBatch();
    expected.schema.forEach((f, i) =>
      assertColumnEqual(back.columns[i]!, expected.columns[i]!, f.name)
    );
    assert.equal((await reader.verify()).ok, true);
  } finally {
    reader.close();
  }
});

Deno.test("golden tiny_v1_3.pf bytes are pinned, and the writer still produces them", async () => {
  await assertWriterReproduces(
    GOLDEN,
    GOLDEN_SHA256,
    (path) => writeTestArchive(path, tinyBatch(), { codec: "zstd", chunkRows: 2 }),
  );
});
