/**
 * Tests of `_arrow_ipc.ts` through `_write_arrow.ts`: for schemas of the types it
 * frames (int64, timestamp, float64, string), its file and stream bytes are
 * apache-arrow's writer's (`_write_arrow_js.ts`), from batches and from Worker parts,
 * and apache-arrow's reader reads them back to the same values; other schemas still
 * go to apache-arrow.
 *
 * @module
 */
import assert from "node:assert/strict";
import * as arrow from "apache-arrow";
import type { Batch, Column, Field, Schema } from "../format/column.ts";
import { withCodes } from "../format/coded_strings.ts";
import type { ByteWriter } from "./_file.ts";
import { type ArrowParts, batchFromArrow, batchToArrowParts } from "./arrow_table.ts";
import { schemaToArrow } from "./arrow_schema.ts";
import { plainArrowParts } from "./_arrow_parts.ts";
import { writeArrow } from "./_write_arrow.ts";
import { writeArrowJs } from "./_write_arrow_js.ts";
import { ArrowIpcWriter, FlatBuilder, ipcHandles } from "./_arrow_ipc.ts";
import { randomBatch, Rng } from "./_test_utils.ts";

/** A ByteWriter into memory. */
class Sink implements ByteWriter {
  chunks: Uint8Array[] = [];
  write(p: Uint8Array): Promise<number> {
    this.chunks.push(p.slice());
    return Promise.resolve(p.byteLength);
  }
  bytes(): Uint8Array {
    const out = new Uint8Array(this.chunks.reduce((n, c) => n + c.byteLength, 0));
    let at = 0;
    for (const c of this.chunks) (out.set(c, at), at += c.byteLength);
    return out;
  }
}

type Input = Batch | ArrowParts;

async function ours(schema: Schema, input: () => Input[], stream: boolean) {
  const sink = new Sink();
  const rows = await writeArrow(sink, schema, input(), stream);
  return { rows, bytes: sink.bytes() };
}

async function theirs(schema: Schema, input: () => Input[], stream: boolean) {
  const sink = new Sink();
  const rows = await writeArrowJs(sink, schema, input(), stream);
  return { rows, bytes: sink.bytes() };
}

const TYPES: Field[] = [
  { name: "i", type: "int64", nullable: true },
  { name: "f", type: "float64", nullable: true },
  { name: "s", type: "string", nullable: true },
  { name: "t", type: "timestamp", nullable: true, unit: "us" },
  { name: "ts", type: "timestamp", nullable: false, unit: "s" },
  { name: "tms", type: "timestamp", nullable: true, unit: "ms", timezone: "Europe/Madrid" },
  { name: "tns", type: "timestamp", nullable: true, unit: "ns", timezone: "UTC" },
  { name: "n", type: "int64", nullable: false },
];

/** Random schemas of the framed types: names odd, empty and non-ASCII, types repeated. */
function randomSchema(rng: Rng): Schema {
  const names = ["a", "", "vuelo ✈", "日付", "x".repeat(70), "🧊", "origin", "0"];
  const n = 1 + rng.int(7);
  const used = new Set<string>();
  const schema: Field[] = [];
  for (let i = 0; i < n; i++) {
    let name = rng.pick(names);
    if (used.has(name)) name = `${name}_${i}`;
    used.add(name);
    schema.push({ ...rng.pick(TYPES), name });
  }
  return schema;
}

/** The batch with nulls only where its fields allow them. */
function fitNullable(batch: Batch): Batch {
  const columns = batch.columns.map((c, i) =>
    batch.schema[i]!.nullable ? c : { ...c, validity: null } as Column
  );
  return { ...batch, columns };
}

/** Strings with a dictionary's codes (as a thaw's decoder leaves them), else as they are. */
function coded(batch: Batch, rng: Rng): Batch {
  const dictionary = ["LAX", "", "a,b", "ü", "🧊", "SFO"];
  const columns = batch.columns.map((c): Column => {
    if (c.type !== "string" || rng.int(2) === 0) return c;
    const codes = Uint32Array.from({ length: batch.length }, () => rng.int(dictionary.length));
    return {
      type: "string",
      values: withCodes(Array.from(codes, (k) => dictionary[k]!), codes, dictionary),
      validity: c.validity,
    };
  });
  return { ...batch, columns };
}

function asciiOnly(batch: Batch): Batch {
  const columns = batch.columns.map((c): Column =>
    c.type === "string"
      ? { ...c, values: (c.values as string[]).map((s) => s.replace(/[^ -~]/g, "?")) }
      : c
  );
  return { ...batch, columns };
}

function assertReadsBack(bytes: Uint8Array, schema: Schema, batches: readonly Batch[]) {
  // The reader may leave out a batch of no rows: compare the others, in order.
  const read = arrow.tableFromIPC(bytes).batches.filter((rb) => rb.numRows > 0);
  const wanted = batches.filter((b) => b.length > 0);
  assert.equal(read.length, wanted.length);
  read.forEach((rb, b) => {
    const got = batchFromArrow(rb, schema);
    const want = wanted[b]!;
    assert.equal(got.length, want.length);
    got.columns.forEach((col, c) => {
      const w = want.columns[c]!;
      for (let r = 0; r < want.length; r++) {
        const valid = w.validity === null || w.validity[r] === 1;
        assert.equal(col.validity === null || col.validity[r] === 1, valid);
        if (valid) assert.deepEqual(col.values[r], w.values[r], `batch ${b} column ${c} row ${r}`);
      }
    });
  });
}

Deno.test("writeArrow() frames batches as apache-arrow does, file and stream, byte for byte", async () => {
  const rng = new Rng(6);
  for (let trial = 0; trial < 60; trial++) {
    const schema = randomSchema(rng);
    const lengths = Array.from({ length: rng.int(4) }, () => rng.pick([0, 1, 7, 8, 9, 100, 333]));
    const batches = lengths.map((n) => coded(fitNullable(randomBatch(rng, schema, n)), rng));
    for (const stream of [false, true]) {
      const want = await theirs(schema, () => batches, stream);
      const got = await ours(schema, () => batches, stream);
      assert.equal(got.rows, want.rows);
      assert.deepEqual(got.bytes, want.bytes, `trial ${trial}, stream ${stream}`);
      if (!stream) assertReadsBack(got.bytes, schema, batches);
    }
  }
});

Deno.test("writeArrow() frames Worker parts (plain and apache-arrow's) byte for byte", async () => {
  const rng = new Rng(60);
  for (let trial = 0; trial < 40; trial++) {
    const schema = randomSchema(rng);
    const lengths = Array.from({ length: 1 + rng.int(3) }, () => rng.pick([0, 1, 9, 64, 250]));
    const batches = lengths.map((n) =>
      coded(asciiOnly(fitNullable(randomBatch(rng, schema, n))), rng)
    );
    const plain = () => batches.map((b) => plainArrowParts(b)!.parts);
    const viaArrow = () => batches.map((b) => batchToArrowParts(b, schemaToArrow(schema)).parts);
    for (const stream of [false, true]) {
      const want = await theirs(schema, () => batches, stream);
      assert.deepEqual((await ours(schema, plain, stream)).bytes, want.bytes);
      assert.deepEqual((await ours(schema, viaArrow, stream)).bytes, want.bytes);
      assert.deepEqual((await theirs(schema, plain, stream)).bytes, want.bytes);
    }
  }
});

Deno.test("writeArrow() with no batch writes apache-arrow's empty file and stream", async () => {
  const schema: Schema = [
    { name: "vuelo ✈", type: "string", nullable: true },
    { name: "", type: "timestamp", nullable: false, unit: "ns", timezone: "+01:00" },
  ];
  for (const stream of [false, true]) {
    const want = await theirs(schema, () => [], stream);
    const got = await ours(schema, () => [], stream);
    assert.equal(got.rows, 0);
    assert.deepEqual(got.bytes, want.bytes);
  }
  const table = arrow.tableFromIPC((await ours(schema, () => [], false)).bytes);
  assert.equal(table.schema.fields[0]!.name, "vuelo ✈");
  assert.equal(table.numRows, 0);
});

Deno.test("writeArrow() of an empty schema and of all-null columns matches apache-arrow", async () => {
  const empty: Schema = [];
  const none: Batch = { schema: empty, columns: [], length: 5 };
  for (const stream of [false, true]) {
    assert.deepEqual(
      (await ours(empty, () => [none], stream)).bytes,
      (await theirs(empty, () => [none], stream)).bytes,
    );
  }
  const schema: Schema = [
    { name: "i", type: "int64", nullable: true },
    { name: "s", type: "string", nullable: true },
  ];
  const batch: Batch = {
    schema,
    length: 3,
    columns: [
      { type: "int64", values: new BigInt64Array(3), validity: new Uint8Array(3) },
      { type: "string", values: ["", "", ""], validity: new Uint8Array(3) },
    ],
  };
  const want = await theirs(schema, () => [batch, batch], false);
  assert.deepEqual((await ours(schema, () => [batch, batch], false)).bytes, want.bytes);
  assertReadsBack(want.bytes, schema, [batch, batch]);
});

Deno.test("other column types keep apache-arrow's writer", async () => {
  for (const type of ["bool", "date", "float32", "json", "decimal", "time"] as const) {
    const schema: Schema = [{ name: "i", type: "int64", nullable: true }, {
      name: "x",
      type,
      nullable: true,
    }];
    assert.equal(ipcHandles(schema), false);
    assert.throws(() => new ArrowIpcWriter(schema, false), { name: "IoError" });
    const batch = randomBatch(new Rng(1), schema, 20);
    assert.deepEqual(
      (await ours(schema, () => [batch], false)).bytes,
      (await theirs(schema, () => [batch], false)).bytes,
    );
  }
});

Deno.test("parts of the wrong width are refused", async () => {
  const schema: Schema = [{ name: "i", type: "int64", nullable: true }];
  const parts: ArrowParts = { arrowParts: true, length: 0, columns: [] };
  await assert.rejects(ours(schema, () => [parts], false), { name: "IoError" });
});

Deno.test("FlatBuilder shares an identical vtable, as flatbuffers does", () => {
  const b = new FlatBuilder();
  const table = () => {
    b.startObject(2);
    b.fieldInt32(0, 7, 0);
    return b.endObject();
  };
  table();
  table(); // 2 bytes of alignment inside the object: a vtable of its own
  const before = b.offset();
  table();
  // The third is the second's shape: padding, int32 and vtable offset, no vtable.
  assert.equal(b.offset() - before, 10);
});

Deno.test("parts whose offsets do not start at 0, or with longer buffers, match apache-arrow", async () => {
  const schema: Schema = [
    { name: "s", type: "string", nullable: true },
    { name: "f", type: "float64", nullable: true },
  ];
  const parts: ArrowParts = {
    arrowParts: true,
    length: 2,
    columns: [
      {
        length: 2,
        nullCount: 1,
        nullBitmap: Uint8Array.of(0b01, 0xff, 0xff),
        valueOffsets: Int32Array.of(3, 5, 8, 9),
        values: new TextEncoder().encode("xyzabcdefgh"),
      },
      {
        length: 2,
        nullCount: 0,
        nullBitmap: null,
        valueOffsets: null,
        values: Float64Array.of(1.5, -0, 7),
      },
    ],
  };
  for (const stream of [false, true]) {
    const want = await theirs(schema, () => [parts], stream);
    assert.deepEqual((await ours(schema, () => [parts], stream)).bytes, want.bytes);
  }
});
