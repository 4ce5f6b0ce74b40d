/**
 * The golden archive of the predictors added within the format after 1.8
 * (`tiny_v1_3_places.pf`: airports' names as `text_lines`, cities as `text_within`
 * their name, latitudes as `decimal_dms`) must always thaw to the same rows,
 * today's writer must still produce its bytes exactly, and a reader that predates
 * those predictors refuses its blocks with `UNKNOWN_PREDICTOR`, never other values.
 *
 * @module
 */
import assert from "node:assert/strict";
import { assertReadRefused, historyHas, readerAt } from "../_history.ts";
import { type Batch, concatBatches } from "../../format/column.ts";
import { ArchiveReader } from "../../format/reader.ts";
import { assertColumnEqual } from "../../format/_test_utils.ts";
import { assertWriterReproduces, placesBatch, writeTinyPlaces } from "./make_golden.ts";

const GOLDEN = new URL("./tiny_v1_3_places.pf", import.meta.url).pathname;
const GOLDEN_SHA256 = "83d154cd87e1012fd1211011fc3df1cf4b2d917752230a493f6c9247d06f71b9";
const TMP = ".tmp/golden";

Deno.test("golden tiny_v1_3_places.pf thaws to its rows through text_within and decimal_dms", async () => {
  const reader = await ArchiveReader.open(GOLDEN);
  try {
    assert.equal(reader.index.version, "1.3");
    assert.deepEqual(reader.index.header.columns.city!.deps, ["name"]);
    const predictors = reader.index.footer.chunks[0]!.blocks.map((b) => b?.predictor);
    assert.deepEqual(predictors, ["text_lines", "text_within", "decimal_dms"]);
    const parts: Batch[] = [];
    for await (const b of reader.read()) parts.push(b);
    const back = concatBatches(reader.index.schema, parts);
    const expected = placesBatch();
    expected.schema.forEach((f, i) =>
      assertColumnEqual(back.columns[i]!, expected.columns[i]!, f.name)
    );
    assert.equal((await reader.verify()).ok, true);
  } finally {
    reader.close();
  }
});

Deno.test("golden tiny_v1_3_places.pf bytes are pinned, and the writer still produces them", async () => {
  await assertWriterReproduces(
    GOLDEN,
    GOLDEN_SHA256,
    writeTinyPlaces,
    "a predictor's layout or the trial moved; add a golden file",
  );
});

// The reader as it was before these predictors existed, from the repository's history.
const BEFORE_PREDICTORS = "63038af";
const history = await historyHas(BEFORE_PREDICTORS);

Deno.test({
  name: "the reader from before text_within and decimal_dms refuses their blocks by name",
  ignore: !history, // a shallow clone has no history to take it from
  fn: async () => {
    const old = await readerAt(BEFORE_PREDICTORS, `${Deno.cwd()}/${TMP}/reader_before_places`);
    await assertReadRefused(
      old,
      GOLDEN,
      "UNKNOWN_PREDICTOR",
      /'text_lines'|'text_within'|'decimal_dms'/,
    );
  },
});
