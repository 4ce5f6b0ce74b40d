/**
 * The 1.6 golden archive (`tiny_v1_6_mixed.pf`: the rows of `tiny_v1_3.pf`, `id` in
 * lzma2 at level 2, `name` in zstd, header codec `mixed`) must always open and thaw to
 * the same rows, today's writer must still produce its bytes exactly, and a preamble
 * of an older minor on a mixed header is CORRUPT, never decoded with the wrong codec.
 */
import assert from "node:assert/strict";
import type { Batch } from "../../format/column.ts";
import { concatBatches } from "../../format/column.ts";
import { ArchiveReader } from "../../format/reader.ts";
import { assertColumnEqual } from "../../format/_test_utils.ts";
import { assertWriterReproduces, tinyBatch, writeTinyMixed } from "./make_golden.ts";

const GOLDEN = new URL("./tiny_v1_6_mixed.pf", import.meta.url).pathname;
const GOLDEN_SHA256 = "55c86cab07a8623f539aee5db391d83e5ecf847e62daf29d2f34bc8a8d3ec738";

Deno.test("golden tiny_v1_6_mixed.pf thaws to its rows, each column with its own codec", async () => {
  const reader = await ArchiveReader.open(GOLDEN);
  try {
    assert.equal(reader.index.version, "1.6");
    assert.equal(reader.index.header.codec, "mixed");
    assert.deepEqual(
      Object.fromEntries(
        Object.entries(reader.index.header.columns).map(([k, p]) => [k, [p.codec, p.level]]),
      ),
      { id: ["lzma2", 2], name: ["zstd", undefined] },
    );
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

Deno.test("golden tiny_v1_6_mixed.pf bytes are pinned, and the writer still produces them", async () => {
  await assertWriterReproduces(GOLDEN, GOLDEN_SHA256, writeTinyMixed);
});

Deno.test("an older preamble on a mixed-codec header is CORRUPT, never decoded with one codec", async () => {
  const bytes = await Deno.readFile(GOLDEN);
  for (const minor of [3, 4, 5]) {
    const b = bytes.slice();
    b[9] = minor;
    b[b.length - 48 + 37] = minor;
    const path = `.tmp/golden/mixed_as_1_${minor}.pf`;
    await Deno.writeFile(path, b);
    await assert.rejects(ArchiveReader.open(path), (err: unknown) => {
      assert.ok(err instanceof Error && "code" in err);
      assert.equal(err.code, "CORRUPT");
      assert.match(err.message, /cannot have a codec per column/);
      return true;
    });
  }
});
