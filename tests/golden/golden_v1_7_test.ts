/**
 * The 1.7 golden archive (`tiny_v1_7_float.pf`: a float32 and a float16 column with
 * NaN payloads, -0, infinities and subnormals, and two float64 columns quantized into
 * float32 and float16) must always open and thaw to the same bits, today's writer must
 * still produce its bytes exactly, an older preamble on its schema is CORRUPT, and the
 * reader from before 1.7 refuses it rather than misread it.
 */
import assert from "node:assert/strict";
import { assertReadRefused, historyHas, readerAt } from "../_history.ts";
import type { Batch } from "../../format/column.ts";
import { concatBatches } from "../../format/column.ts";
import { ArchiveReader } from "../../format/reader.ts";
import { assertColumnEqual, writeTestArchive } from "../../format/_test_utils.ts";
import { planColumns } from "../../format/plan.ts";
import {
  assertWriterReproduces,
  FLOAT16_BITS,
  FLOAT32_BITS,
  floatBatch,
  writeTinyFloat,
} from "./make_golden.ts";

const GOLDEN = new URL("./tiny_v1_7_float.pf", import.meta.url).pathname;
const GOLDEN_SHA256 = "3b9a9146c355856d4fdd817e2b9a8750cb5f428ba99324c3ad9ca89c43c8dace";
const TMP = ".tmp/golden";

/** Bits of a float64, as hex. */
function hex64(x: number): string {
  return new BigUint64Array(Float64Array.of(x).buffer)[0]!.toString(16);
}

Deno.test("golden tiny_v1_7_float.pf thaws to its bits, quantized columns to their rounded values", async () => {
  const reader = await ArchiveReader.open(GOLDEN);
  try {
    assert.equal(reader.index.version, "1.7");
    assert.deepEqual(reader.index.schema.map((f) => f.type), [
      "float32",
      "float16",
      "float64",
      "float64",
    ]);
    assert.deepEqual(reader.index.header.lossy_columns, ["medium", "low"]);
    assert.deepEqual(
      reader.index.footer.chunks.map((c) => c.blocks.map((b) => b?.predictor)),
      [
        ["float32_planes", "float16_planes", "float_quant_medium_f32", "float_quant_low_f16"],
        ["float32_planes", "float16_planes", "float_quant_medium_f32", "float_quant_low_f16"],
      ],
    );
    const parts: Batch[] = [];
    for await (const b of reader.read()) parts.push(b);
    const back = concatBatches(reader.index.schema, parts);
    const expected = floatBatch();
    assertColumnEqual(back.columns[0]!, expected.columns[0]!, "f32");
    assertColumnEqual(back.columns[1]!, expected.columns[1]!, "f16");
    const f32 = new Uint32Array((back.columns[0]!.values as Float32Array).slice().buffer);
    assert.deepEqual([...f32.slice(0, 3)], FLOAT32_BITS.slice(0, 3), "NaN payload kept");
    assert.deepEqual([...(back.columns[1]!.values as Uint16Array)], FLOAT16_BITS);
    // QUANT_MEDIUM: each value is its float32; QUANT_LOW: 11 significant bits.
    assert.deepEqual(
      [...(back.columns[2]!.values as Float64Array)].map(hex64),
      [Math.fround(Math.PI), Math.fround(-1e6 / 3), Math.fround(0.1), 2.5].map(hex64),
    );
    assert.deepEqual(
      [...(back.columns[3]!.values as Float64Array)].map(hex64),
      [1235, 0, 98.75, -0.0010004043579101562].map(hex64),
    );
    assert.deepEqual([...back.columns[3]!.validity!], [1, 0, 1, 1]);
    assert.equal((await reader.verify()).ok, true);
  } finally {
    reader.close();
  }
});

Deno.test("golden tiny_v1_7_float.pf bytes are pinned, and the writer still produces them", async () => {
  await assertWriterReproduces(GOLDEN, GOLDEN_SHA256, writeTinyFloat);
});

Deno.test("an older preamble on a float32/float16 schema is CORRUPT", async () => {
  const bytes = await Deno.readFile(GOLDEN);
  await Deno.mkdir(TMP, { recursive: true });
  for (const minor of [3, 4, 5, 6]) {
    const b = bytes.slice();
    b[9] = minor;
    b[b.length - 48 + 37] = minor;
    const path = `${TMP}/float_as_1_${minor}.pf`;
    await Deno.writeFile(path, b);
    await assert.rejects(ArchiveReader.open(path), (err: unknown) => {
      assert.ok(err instanceof Error && "code" in err);
      assert.equal(err.code, "CORRUPT");
      assert.match(err.message, /cannot hold float32 or float16 columns/);
      return true;
    });
  }
});

// The reader as it was before 1.7 existed, from the repository's history.
const BEFORE_1_7 = "0ee5dac";

const history = await historyHas(BEFORE_1_7);

Deno.test({
  name: "the reader of 1.6 refuses the 1.7 golden file and never misreads a 1.7 quantized block",
  ignore: !history, // a shallow clone has no history to take it from
  fn: async () => {
    const old = await readerAt(BEFORE_1_7, `${Deno.cwd()}/${TMP}/reader_before_1_7`);
    // Its schema: 1.6 knows no float32 type (it cannot say "newer version": it reads
    // every 1.x minor and meets a type it does not know).
    await assert.rejects(old.ArchiveReader.open(GOLDEN), (err: unknown) => {
      assert.ok(err instanceof Error && "code" in err, String(err));
      assert.equal(err.code, "CORRUPT");
      assert.match(err.message, /unsupported type/);
      return true;
    });
    // Only quantized float64 columns: the header is one 1.6 parses, the blocks name a
    // predictor it does not know: UNKNOWN_PREDICTOR, never other values.
    const batch = floatBatch();
    const quantized = { schema: batch.schema.slice(2), columns: batch.columns.slice(2), length: 4 };
    const path = `${TMP}/quantized_1_7.pf`;
    await writeTestArchive(path, quantized, {
      chunkRows: 2,
      plans: planColumns(quantized, { quantization: { medium: "QUANT_MEDIUM", low: "QUANT_LOW" } }),
    });
    await assertReadRefused(old, path, "UNKNOWN_PREDICTOR");
  },
});
