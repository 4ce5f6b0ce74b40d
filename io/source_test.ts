/**
 * Tests of `source.ts`: format detection and dispatch, and the errors for unknown
 * formats and missing files.
 *
 * @module
 */
import assert from "node:assert/strict";
import { IoError } from "./errors.ts";
import { openSource, type SourceFormat, sourceFormatOf } from "./source.ts";
import { writeOutput } from "./output.ts";
import { ALL_TYPES, collect, makeTempDir, randomBatch, Rng } from "./_test_utils.ts";

Deno.test("sourceFormatOf() maps extensions and rejects unknown ones", () => {
  const cases: [string, SourceFormat][] = [
    ["data.csv", "csv"],
    ["DATA.CSV", "csv"],
    ["logs.jsonl", "jsonl"],
    ["logs.ndjson", "jsonl"],
    ["t.parquet", "parquet"],
    ["t.arrow", "arrow"],
    ["t.arrows", "arrow"],
  ];
  for (const [path, format] of cases) assert.equal(sourceFormatOf(path), format);
  for (const path of ["t.xlsx", "t", "t.csv.gz"]) {
    assert.throws(() => sourceFormatOf(path), (err) => {
      assert.ok(err instanceof IoError);
      assert.equal(err.code, "UNKNOWN_FORMAT");
      assert.equal(err.path, path);
      assert.match(
        err.message,
        /\.csv, \.tsv, \.tab, \.psv, \.jsonl, \.ndjson, \.parquet, \.arrow, \.arrows/,
      );
      return true;
    });
  }
});

Deno.test("openSource() picks the reader by extension or format", async (t) => {
  const dir = await makeTempDir();
  try {
    const batch = randomBatch(new Rng(21), ALL_TYPES, 30);
    for (const ext of ["csv", "jsonl", "parquet", "arrow"] as const) {
      await t.step(ext, async () => {
        const path = `${dir}/data.${ext}`;
        await writeOutput(path, ALL_TYPES, [batch]);
        const src = await openSource(path);
        try {
          assert.equal(src.format, ext);
          assert.equal(src.bytes, (await Deno.stat(path)).size);
          assert.equal((await collect(src.schema, src.batches())).length, 30);
          assert.equal(
            (await collect(src.schema, src.batches())).length,
            30,
            "batches() starts over",
          );
        } finally {
          await src.close();
        }
        const renamed = `${dir}/data-${ext}.bin`;
        await Deno.rename(path, renamed);
        const forced = await openSource(renamed, { format: ext });
        assert.equal(forced.format, ext);
        await forced.close();
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openSource() fails with READ_FAILED naming a missing file", async () => {
  for (const ext of ["csv", "jsonl", "parquet", "arrow"]) {
    const path = `/nonexistent/dir/missing.${ext}`;
    await assert.rejects(openSource(path), (err) => {
      assert.ok(err instanceof IoError, String(err));
      assert.equal(err.code, "READ_FAILED");
      assert.equal(err.path, path);
      assert.match(err.message, /missing/);
      return true;
    });
  }
  await assert.rejects(openSource("x.txt"), { code: "UNKNOWN_FORMAT" });
  await assert.rejects(openSource("x.csv", { batchRows: 0 }), { code: "INVALID_OPTION" });
});
