/**
 * Columns crossing between threads (`packColumns`, `unpackColumns`): the same rows
 * come out, a string column with dictionary codes travels as its codes when every row
 * is its code's entry, and as packed text otherwise; a decode that takes codes
 * (`decodeChunkJob`'s `codes`) gives the same rows, as codes where a dictionary
 * predictor decoded them and no other block reads them as rows.
 */
import assert from "node:assert/strict";
import { codecById } from "../codecs/registry.ts";
import { encodeBlock } from "./block_encode.ts";
import {
  type ChunkDecodeJob,
  type DecodeBlockJob,
  decodeChunkJob,
  packColumns,
  unpackColumns,
} from "./chunk_decode.ts";
import { codedColumn, codesOf, withCodes } from "./coded_strings.ts";
import type { Column, Field } from "./column.ts";
import { FormatError } from "./errors.ts";

function coded(dictionary: string[], codes: number[]): string[] {
  return withCodes(
    codes.map((c) => dictionary[c]!),
    Uint32Array.from(codes),
    dictionary,
  );
}

Deno.test("packColumns() posts a coded string column as its codes, and unpackColumns() gives its rows and codes back", () => {
  const dictionary = ["SFO", "LAX", "a, b", ""];
  const codes = [0, 1, 1, 2, 3, 0, 2];
  const values = coded(dictionary, codes);
  const validity = Uint8Array.from([1, 1, 1, 1, 1, 1, 0]);
  const ints: Column = { type: "int64", values: BigInt64Array.from([1n, -2n, 3n]), validity: null };
  const expected = { validity: validity.slice(), ints: structuredClone(ints) };
  const { columns, transfer } = packColumns([{ type: "string", values, validity }, ints]);
  assert.ok("coded" in columns[0]!);
  assert.ok(!("packed" in columns[0]!));
  assert.ok(transfer.length >= 2);
  const cloned = structuredClone(columns, { transfer });
  const [strings, back] = unpackColumns(cloned);
  assert.deepEqual(strings!.values, values);
  assert.deepEqual(strings!.validity, expected.validity);
  const again = codesOf(strings!.values as string[]);
  assert.deepEqual([...again!.codes], codes);
  assert.deepEqual(again!.dictionary, dictionary);
  assert.deepEqual(back, expected.ints);
});

Deno.test("packColumns() packs the text of a coded column whose rows no longer match their codes", () => {
  const values = coded(["x", "y"], [0, 1, 0]);
  values[2] = "changed";
  const { columns } = packColumns([{ type: "string", values, validity: null }]);
  assert.ok("packed" in columns[0]!);
  assert.deepEqual(unpackColumns(columns)[0]!.values, ["x", "y", "changed"]);
});

Deno.test("packColumns() packs the text of a string column without codes, json columns included", () => {
  const text: Column = { type: "string", values: ["a", "\u{1F600}", ""], validity: null };
  const json: Column = { type: "json", values: ['{"a":1}', "[]", "null"], validity: null };
  const { columns } = packColumns([text, json]);
  assert.ok(columns.every((c) => "packed" in c));
  assert.deepEqual(unpackColumns(columns), [text, json]);
});

/** A chunk job of columns that condition on each other, each block by the predictor named. */
async function conditionedJob(withNulls: boolean): Promise<ChunkDecodeJob> {
  const n = 600;
  let seed = 0x2545f491;
  const next = (m: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % m;
  };
  const airports = Array.from({ length: 20 }, (_, i) => `A${String.fromCharCode(65 + i)}X`);
  const origin = Array.from({ length: n }, () => airports[next(20)]!);
  const destination = origin.map((o) => `${o}-${airports[next(4)]}`);
  const distance = BigInt64Array.from(destination, (d) => BigInt(d.charCodeAt(1) * 37 - 2000));
  const city = Array.from({ length: n }, () => `city ${next(300)}`);
  const label = origin.map((o) => `Port ${o} Field`);
  const nulls = withNulls ? Uint8Array.from({ length: n }, (_, i) => (i % 7 === 3 ? 0 : 1)) : null;
  const specs: { field: Field; column: Column; predictor: string; deps: number[] }[] = [
    {
      field: { name: "origin", type: "string", nullable: withNulls },
      column: { type: "string", values: origin, validity: nulls },
      predictor: "category_u8",
      deps: [],
    },
    {
      field: { name: "destination", type: "string", nullable: false },
      column: { type: "string", values: destination, validity: null },
      predictor: "keyed_freq",
      deps: [0],
    },
    {
      field: { name: "distance", type: "int64", nullable: false },
      column: { type: "int64", values: distance, validity: null },
      predictor: "keyed_rank",
      deps: [0, 1],
    },
    {
      field: { name: "city", type: "string", nullable: false },
      column: { type: "string", values: city, validity: null },
      predictor: "freq_rank",
      deps: [],
    },
    {
      field: { name: "label", type: "string", nullable: false },
      column: { type: "string", values: label, validity: null },
      predictor: "category_u8",
      deps: [],
    },
    {
      field: { name: "code", type: "string", nullable: false },
      column: { type: "string", values: origin, validity: null },
      predictor: "text_within",
      deps: [4],
    },
  ];
  const blocks: DecodeBlockJob[] = [];
  for (const [i, spec] of specs.entries()) {
    const encoded = await encodeBlock(spec.column, {
      field: spec.field,
      plan: {
        deps: spec.deps.map((d) => specs[d]!.field.name),
        quantization: "QUANT_NONE",
        predictor: spec.predictor,
      },
      deps: spec.deps.map((d) => specs[d]!.column),
      codec: codecById("zstd"),
    });
    assert.equal(encoded.predictor, spec.predictor, `column ${i} takes its predictor`);
    blocks.push({
      field: spec.field,
      bytes: encoded.bytes,
      rawLength: encoded.raw_length,
      predictor: encoded.predictor,
      codec: "zstd",
      deps: spec.deps,
      offset: 0,
    });
  }
  return { chunk: 0, rows: n, blocks, wanted: [0, 1, 2, 3, 4, 5] };
}

for (const withNulls of [false, true]) {
  Deno.test(
    `decodeChunkJob() with codes gives dictionary-decoded string columns as their codes, the same rows${
      withNulls ? " (a dependency with nulls)" : ""
    }`,
    async () => {
      const job = await conditionedJob(withNulls);
      const rows = await decodeChunkJob(job);
      const decoded = await decodeChunkJob(job, { codes: true });
      // origin and destination feed keyed predictors (codedDeps), city is freq_rank;
      // label feeds text_within, which reads rows; distance and code are not coded.
      assert.deepEqual(decoded.map((c) => "coded" in c), [true, true, false, true, false, false]);
      for (const [i, column] of decoded.entries()) {
        const built = "coded" in column ? codedColumn(column) : column;
        assert.deepEqual(built.values, rows[i]!.values, `column ${i}`);
        assert.deepEqual(built.validity, rows[i]!.validity, `column ${i} validity`);
      }
      // Posted on and rebuilt, as a thaw's decoding Worker hands them to the renderer.
      const { columns, transfer } = packColumns(decoded);
      const back = unpackColumns(structuredClone(columns, { transfer }));
      assert.deepEqual(back.map((c) => c.values), rows.map((c) => c.values));
      // A prefix decode takes no codes: a slice's rows come whole.
      const prefix = await decodeChunkJob(job, { codes: true, prefix: 10 });
      assert.ok(prefix.every((c) => !("coded" in c)));
    },
  );
}

Deno.test("decodeChunkJob() with codes refuses a category_u8 code past its dictionary, as a plain decode does", async () => {
  const job = await conditionedJob(false);
  const origin = job.blocks[0]!;
  const raw = await codecById("zstd").decode(origin.bytes!, origin.rawLength);
  raw[raw.length - 5] = 250; // a code (the codes are the block's last bytes)
  const bytes = await codecById("zstd").encode(raw);
  const damaged: ChunkDecodeJob = {
    ...job,
    blocks: [{ ...origin, bytes }, ...job.blocks.slice(1)],
    wanted: [0],
  };
  for (const options of [{}, { codes: true }]) {
    await assert.rejects(decodeChunkJob(damaged, options), (err) => {
      assert.ok(err instanceof FormatError);
      assert.equal(err.code, "CORRUPT");
      assert.match(err.message, /expected codes below 20, found 250 at row 595/);
      return true;
    });
  }
});
