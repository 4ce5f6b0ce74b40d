/**
 * float32 and float16 through the library, end to end: an Arrow table of Float32 and
 * Float16 freezes to 1.7 and thaws to the same bits, with and without the Worker pool,
 * and quantized float64 columns thaw to the values the quantizer's contract gives.
 *
 * @module
 */
import assert from "node:assert/strict";
import * as arrow from "apache-arrow";
import { randomBatch } from "../format/_test_utils.ts";
import type { Schema } from "../format/column.ts";
import { quantizedWords } from "../format/predictors/float_quant.ts";
import { audit, freeze, thawTable } from "../mod.ts";

const TMP = ".tmp/ops_freeze_float";
await Deno.mkdir(TMP, { recursive: true });

const SCHEMA: Schema = [
  { name: "f32", type: "float32", nullable: true },
  { name: "f16", type: "float16", nullable: true },
];

function bytesOf(v: arrow.Vector): number[] {
  const out: number[] = [];
  for (const d of v.data) {
    const values = d.values as Float32Array | Uint16Array;
    const bits = values instanceof Float32Array
      ? new Uint32Array(values.buffer, values.byteOffset, d.length)
      : values.subarray(0, d.length);
    for (let i = 0; i < d.length; i++) out.push(d.getValid(i) ? bits[i]! : -1);
  }
  return out;
}

Deno.test("freeze() keeps Arrow Float32 and Float16 bit for bit, thawTable() gives them back", async () => {
  const batch = randomBatch(SCHEMA, 3000, 21);
  const source = { schema: SCHEMA, batches: [batch] };
  const inline = await freeze(source, `${TMP}/inline.pf`, { chunkRows: 1000, threads: 0 });
  const pooled = await freeze(source, `${TMP}/pooled.pf`, { chunkRows: 1000, threads: 2 });
  assert.equal(pooled.payload_sha256, inline.payload_sha256, "the pool writes the same bytes");
  const report = await audit(`${TMP}/pooled.pf`);
  assert.equal(report.format_version, "1.7");
  assert.deepEqual(report.columns.map((c) => c.type), ["float32", "float16"]);
  const table = await thawTable(`${TMP}/pooled.pf`);
  assert.deepEqual(table.schema.fields.map((f) => String(f.type)), ["Float32", "Float16"]);
  const want = await thawTable(`${TMP}/inline.pf`);
  const f32 = bytesOf(table.getChild("f32")!);
  const validity = batch.columns[0]!.validity;
  const source32 = new Uint32Array((batch.columns[0]!.values as Float32Array).slice().buffer);
  f32.forEach((b, i) => assert.equal(b, validity?.[i] === 0 ? -1 : source32[i], `f32 row ${i}`));
  assert.deepEqual(bytesOf(want.getChild("f16")!), bytesOf(table.getChild("f16")!));
});

Deno.test("freeze() at QUANT_MEDIUM/QUANT_LOW thaws to exactly the quantizer's rounded float64 values", async () => {
  const values = Float64Array.from({ length: 5000 }, (_, i) => 1000 + Math.sin(i / 10) * 300);
  values[7] = NaN;
  values[8] = -0;
  values[9] = 1e300; // beyond float32 and float16: stored on the side
  const table = arrow.tableFromArrays({ m: values, l: values.slice() });
  await freeze(table, `${TMP}/quant.pf`, {
    threads: 0,
    quantization: { m: "QUANT_MEDIUM", l: "QUANT_LOW" },
  });
  const report = await audit(`${TMP}/quant.pf`);
  assert.equal(report.format_version, "1.7");
  // Each block is stored narrow or wide, whichever the trial finds smaller.
  const allowed = [
    ["float_quant_medium_f32", "float_quant_medium"],
    ["float_quant_low_f16", "float_quant_low"],
  ];
  report.columns.forEach((c, i) => {
    for (const id of Object.keys(c.predictors)) assert.ok(allowed[i]!.includes(id), id);
  });
  const back = await thawTable(`${TMP}/quant.pf`);
  for (const [name, level] of [["m", "QUANT_MEDIUM"], ["l", "QUANT_LOW"]] as const) {
    const got = back.getChild(name)!.toArray() as Float64Array;
    assert.deepEqual(
      [...new Uint32Array(got.slice().buffer)],
      [...quantizedWords(values, level)],
      `${name} thaws to the ${level} values, bit for bit`,
    );
  }
});
