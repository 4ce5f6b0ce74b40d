/**
 * Tests of `arrow_table.ts`: every Arrow type maps to a column type, and
 * tables round-trip bit for bit (sliced ones included).
 *
 * @module
 */
import assert from "node:assert/strict";
import * as arrow from "apache-arrow";
import { cellValue, concatBatches } from "../format/column.ts";
import { batchesToTable, tableToBatches } from "./arrow_table.ts";
import { ALL_TYPES, assertSameValues, randomBatch, Rng } from "./_test_utils.ts";

function vec<T extends arrow.DataType>(type: T, values: unknown[]): arrow.Vector<T> {
  return arrow.vectorFromArray(values as never, type) as arrow.Vector<T>;
}

Deno.test("tableToBatches() maps every Arrow type", () => {
  const table = new arrow.Table({
    i8: vec(new arrow.Int8(), [-128, null]),
    i16: vec(new arrow.Int16(), [-32768, 1]),
    i32: vec(new arrow.Int32(), [-2147483648, 2]),
    i64: vec(new arrow.Int64(), [-(2n ** 63n), 3n]),
    u8: vec(new arrow.Uint8(), [255, 4]),
    u16: vec(new arrow.Uint16(), [65535, 5]),
    u32: vec(new arrow.Uint32(), [4294967295, 6]),
    u64: vec(new arrow.Uint64(), [2n ** 63n - 1n, 7n]),
    f16: vec(new arrow.Float16(), [1.5, -0.25]),
    f32: vec(new arrow.Float32(), [0.1, null]),
    f64: vec(new arrow.Float64(), [-0, 5e-324]),
    bool: vec(new arrow.Bool(), [true, null]),
    ts_s: vec(new arrow.Timestamp(arrow.TimeUnit.SECOND, "Europe/Paris"), [1000, 0]),
    ts_ns: vec(new arrow.Timestamp(arrow.TimeUnit.NANOSECOND), [1000, 2]),
    d32: vec(new arrow.DateDay(), [new Date(86400000), null]),
    d64: vec(new arrow.DateMillisecond(), [new Date(2 * 86400000), new Date(0)]),
    s: vec(new arrow.Utf8(), ["héllo", null]),
    ls: vec(new arrow.LargeUtf8(), ["big", ""]),
    dict: vec(new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()), ["x", "y"]),
    nul: vec(new arrow.Null(), [null, null]),
    list: vec(new arrow.List(new arrow.Field("item", new arrow.Int32())), [[1, 2], null]),
  });
  const { schema, batches } = tableToBatches(table);
  assert.deepEqual(
    schema.map((f) =>
      `${f.name}:${f.type}${f.unit ? `:${f.unit}` : ""}${f.timezone ? `:${f.timezone}` : ""}`
    ),
    [
      "i8:int64",
      "i16:int64",
      "i32:int64",
      "i64:int64",
      "u8:int64",
      "u16:int64",
      "u32:int64",
      "u64:int64",
      "f16:float64",
      "f32:float64",
      "f64:float64",
      "bool:bool",
      "ts_s:timestamp:s:Europe/Paris",
      "ts_ns:timestamp:ns",
      "d32:date",
      "d64:date",
      "s:string",
      "ls:string",
      "dict:string",
      "nul:string",
      "list:string",
    ],
  );
  const b = concatBatches(schema, batches);
  const row0 = b.columns.map((c) => cellValue(c, 0));
  const row1 = b.columns.map((c) => cellValue(c, 1));
  assert.deepEqual(row0.slice(0, 8), [
    -128n,
    -32768n,
    -2147483648n,
    -(2n ** 63n),
    255n,
    65535n,
    4294967295n,
    2n ** 63n - 1n,
  ]);
  assert.deepEqual(row1.slice(0, 8), [null, 1n, 2n, 3n, 4n, 5n, 6n, 7n]);
  assert.equal(row0[8], 1.5);
  assert.equal(row0[9], Math.fround(0.1));
  assert.equal(row1[9], null);
  assert.ok(Object.is(row0[10], -0));
  assert.equal(row1[10], 5e-324);
  assert.deepEqual([row0[11], row1[11]], [true, null]);
  // vectorFromArray reads numbers as epoch milliseconds.
  assert.deepEqual([row0[12], row0[13]], [1n, 1000000000n]);
  assert.deepEqual([row0[14], row1[14], row0[15], row1[15]], [1n, null, 2n, 0n]);
  assert.deepEqual([row0[16], row1[16], row0[17], row1[17]], ["héllo", null, "big", ""]);
  assert.deepEqual([row0[18], row1[18]], ["x", "y"]);
  assert.deepEqual([row0[19], row1[19]], [null, null]);
  assert.deepEqual([row0[20], row1[20]], ["[1,2]", null]);
  assert.equal(b.columns[0]!.values[1], 0n, "null slots hold zero");
});

Deno.test("tableToBatches() throws SCHEMA_MISMATCH for a Uint64 beyond int64", () => {
  const table = new arrow.Table({ u: vec(new arrow.Uint64(), [2n ** 64n - 1n]) });
  assert.throws(() => tableToBatches(table), {
    name: "IoError",
    code: "SCHEMA_MISMATCH",
    column: "u",
  });
});

Deno.test("batchesToTable() and tableToBatches() round-trip exactly", async (t) => {
  const rng = new Rng(11);
  const batches = [
    randomBatch(rng, ALL_TYPES, 300),
    randomBatch(rng, ALL_TYPES, 1),
    randomBatch(rng, ALL_TYPES, 200),
  ];
  const table = batchesToTable(ALL_TYPES, batches);
  await t.step("Arrow types are the exact ones", () => {
    const types = table.schema.fields.map((f) => String(f.type));
    assert.deepEqual(types, [
      "Int64",
      "Float64",
      "Bool",
      "Date32<DAY>",
      "Timestamp<MICROSECOND>",
      "Timestamp<NANOSECOND>",
      "Timestamp<MILLISECOND, UTC>",
      "Timestamp<SECOND>",
      "Utf8",
      "Utf8",
    ]);
    assert.ok(table.getChild("i")?.data[0]?.values instanceof BigInt64Array);
    assert.equal(table.numRows, 501);
  });
  await t.step("values come back bit for bit", () => {
    const back = tableToBatches(table);
    assert.deepEqual(back.schema, ALL_TYPES);
    assertSameValues(
      concatBatches(back.schema, back.batches),
      concatBatches(ALL_TYPES, batches),
      true,
    );
  });
  await t.step("a sliced table converts with its offsets", () => {
    const sliced = table.slice(123, 456);
    const back = tableToBatches(sliced);
    const want = concatBatches(ALL_TYPES, batches);
    const got = concatBatches(back.schema, back.batches);
    assert.equal(got.length, 333);
    for (let c = 0; c < ALL_TYPES.length; c++) {
      for (let r = 0; r < 333; r++) {
        const x = cellValue(got.columns[c]!, r);
        const y = cellValue(want.columns[c]!, r + 123);
        assert.ok(Object.is(x, y) || x === y, `${ALL_TYPES[c]?.name} row ${r}`);
      }
    }
  });
  await t.step("an empty table keeps its schema", () => {
    const empty = batchesToTable(ALL_TYPES, []);
    assert.equal(empty.numRows, 0);
    assert.deepEqual(tableToBatches(empty).schema, ALL_TYPES);
  });
});
