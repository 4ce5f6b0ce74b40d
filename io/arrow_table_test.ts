/**
 * Tests of `arrow_table.ts`: every Arrow type maps to a column type, and
 * tables round-trip bit for bit (sliced ones included).
 *
 * @module
 */
import assert from "node:assert/strict";
import * as arrow from "apache-arrow";
import { cellValue, concatBatches } from "../format/column.ts";
import { batchesToTable, batchFromArrow, columnToArrow, tableToBatches } from "./arrow_table.ts";
import { IoError } from "./errors.ts";
import { schemaFromArrow } from "./arrow_schema.ts";
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
      "f16:float16",
      "f32:float32",
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
  assert.equal(row0[8], 1.5); // float16 cells read as numbers
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
  assert.equal(b.columns[0]!.values[1], 0n, "null slots hold zero");
});

/** An Arrow data of `type` from raw buffers (vectorFromArray cannot build every type). */
function raw<T extends arrow.DataType>(
  type: T,
  length: number,
  data: ArrayBufferView,
  nullBitmap?: Uint8Array,
): arrow.Vector<T> {
  const nullCount = nullBitmap
    ? length - [...nullBitmap].reduce((n, b) => {
      let c = 0;
      for (let x = b; x; x >>= 1) c += x & 1;
      return n + c;
    }, 0)
    : 0;
  return arrow.makeVector(
    arrow.makeData({ type, length, nullCount, nullBitmap, data } as never),
  ) as arrow.Vector<T>;
}

Deno.test("tableToBatches() keeps Arrow decimals, times and durations exactly", () => {
  // decimal128(10,2) 1.23 and -0.05; decimal256(60,10) beyond 64 bits; words little-endian.
  const d128 = new Uint32Array(8);
  d128[0] = 123;
  d128.set([0xfffffffb, 0xffffffff, 0xffffffff, 0xffffffff], 4);
  const big = 10n ** 50n + 7n;
  const d256 = new Uint32Array(16);
  for (let w = 0; w < 8; w++) d256[w] = Number((big >> BigInt(32 * w)) & 0xffffffffn);
  const table = new arrow.Table({
    dec: raw(new arrow.Decimal(2, 10, 128), 2, d128),
    wide: raw(new arrow.Decimal(10, 60, 256), 2, d256, Uint8Array.of(1)),
    t64: raw(new arrow.TimeMicrosecond(), 2, BigInt64Array.of(3723456789n, 0n)),
    t32: raw(new arrow.TimeMillisecond(), 2, Int32Array.of(3723456, 86399999)),
    dur: raw(new arrow.DurationNanosecond(), 2, BigInt64Array.of(-1n, 2n ** 62n)),
  });
  const { schema, batches } = tableToBatches(table);
  assert.deepEqual(schema.map((f) => [f.name, f.type, f.unit, f.precision, f.scale]), [
    ["dec", "decimal", undefined, 10, 2],
    ["wide", "decimal", undefined, 60, 10],
    ["t64", "time", "us", undefined, undefined],
    ["t32", "time", "ms", undefined, undefined],
    ["dur", "duration", "ns", undefined, undefined],
  ]);
  const b = concatBatches(schema, batches);
  const col = (i: number) => [cellValue(b.columns[i]!, 0), cellValue(b.columns[i]!, 1)];
  assert.deepEqual(col(0), [123n, -5n]);
  assert.ok(b.columns[0]!.values instanceof BigInt64Array, "a 10-digit decimal is 64-bit");
  assert.deepEqual(col(1), [big, null]);
  assert.ok(Array.isArray(b.columns[1]!.values), "a 60-digit decimal is a bigint[]");
  assert.deepEqual(col(2), [3723456789n, 0n]);
  assert.deepEqual(col(3), [3723456n, 86399999n]);
  assert.deepEqual(col(4), [-1n, 2n ** 62n]);
  const back = batchesToTable(schema, batches);
  assert.deepEqual(back.schema.fields.map((f) => String(f.type)), [
    "Decimal[10e+2]",
    "Decimal[60e+10]",
    "Time64<MICROSECOND>",
    "Time32<MILLISECOND>",
    "Duration<NANOSECOND>",
  ]);
  const again = concatBatches(schema, tableToBatches(back).batches);
  for (let i = 0; i < 5; i++) {
    assert.deepEqual([cellValue(again.columns[i]!, 0), cellValue(again.columns[i]!, 1)], col(i));
  }
});

Deno.test("tableToBatches() refuses a decimal value with more digits than its precision", () => {
  const words = Uint32Array.of(12345, 0, 0, 0);
  const table = new arrow.Table({ d: raw(new arrow.Decimal(0, 4, 128), 1, words) });
  assert.throws(() => tableToBatches(table), { name: "IoError", code: "SCHEMA_MISMATCH" });
});

Deno.test("tableToBatches() refuses nested and binary columns by name, unless forced", () => {
  const list = vec(new arrow.List(new arrow.Field("item", new arrow.Int64())), [[1n, 2n], null]);
  const struct = vec(
    new arrow.Struct([
      new arrow.Field("a", new arrow.Int32()),
      new arrow.Field("b", new arrow.Utf8()),
    ]),
    [{ a: 1, b: "x" }, { a: 2, b: null }],
  );
  const bin = vec(new arrow.Binary(), [Uint8Array.of(0, 255), null]);
  for (
    const [name, column, type] of [["l", list, "List<Int64>"], ["st", struct, "Struct<"], [
      "bin",
      bin,
      "Binary",
    ]] as const
  ) {
    const table = new arrow.Table({ [name]: column });
    assert.throws(() => tableToBatches(table), (err: unknown) => {
      assert.ok(err instanceof Error && "code" in err);
      assert.equal(err.code, "UNSUPPORTED_TYPE");
      assert.match(err.message, new RegExp(`column '${name}'.*${type.replace("<", "<")}`));
      return true;
    });
  }
  const forced = schemaFromArrow(new arrow.Table({ l: list, st: struct, bin }).schema, {
    l: "json",
    st: "json",
    bin: "string",
  });
  assert.deepEqual(forced.map((f) => f.type), ["json", "json", "string"]);
  const b = batchFromArrow(new arrow.Table({ l: list, st: struct, bin }).batches[0]!, forced);
  assert.deepEqual(b.columns.map((c) => [cellValue(c, 0), cellValue(c, 1)]), [
    ["[1,2]", null],
    ['{"a":1,"b":"x"}', '{"a":2,"b":null}'],
    ["00ff", null],
  ]);
});

Deno.test("tableToBatches() reads a Utf8 column with the arrow.json extension as json", () => {
  const field = new arrow.Field(
    "j",
    new arrow.Utf8(),
    true,
    new Map([["ARROW:extension:name", "arrow.json"]]),
  );
  const data = vec(new arrow.Utf8(), ['{"a": [1, 2]}', "1e400"]).data[0]!;
  const table = new arrow.Table(new arrow.Schema([field]), [
    new arrow.RecordBatch(
      new arrow.Schema([field]),
      arrow.makeData({ type: new arrow.Struct([field]), length: 2, children: [data] }),
    ),
  ]);
  const { schema, batches } = tableToBatches(table);
  assert.equal(schema[0]!.type, "json");
  assert.deepEqual(batches[0]!.columns[0]!.values, ['{"a": [1, 2]}', "1e400"]);
  const back = batchesToTable(schema, batches);
  assert.equal(back.schema.fields[0]!.metadata.get("ARROW:extension:name"), "arrow.json");
  const bad = vec(new arrow.Utf8(), ["{nope"]).data[0]!;
  const badTable = new arrow.Table(new arrow.Schema([field]), [
    new arrow.RecordBatch(
      new arrow.Schema([field]),
      arrow.makeData({ type: new arrow.Struct([field]), length: 1, children: [bad] }),
    ),
  ]);
  assert.throws(() => tableToBatches(badTable), { code: "SCHEMA_MISMATCH" });
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

Deno.test("columnToArrow() encodes text of every width exactly, and refuses a lone surrogate", () => {
  const values = ["", "SEA", "é", "日本", "😀 and 𝄞", "a\u0000b", "x".repeat(1000)];
  const field = { name: "t", type: "string", nullable: true } as const;
  const validity = Uint8Array.from(values.map((_, i) => (i === 1 ? 0 : 1)));
  const data = columnToArrow({ type: "string", values, validity }, field);
  const vector = arrow.makeVector(data);
  assert.deepEqual(
    vector.toArray(),
    values.map((v, i) => (i === 1 ? null : v)),
  );
  const utf8 = new TextEncoder();
  assert.equal(data.valueOffsets.at(-1), values.reduce((n, v) => n + utf8.encode(v).length, 0));
  for (const bad of ["ab\uD83D", "\uDE00x", "a\uD83Db"]) {
    assert.throws(
      () => columnToArrow({ type: "string", values: ["ok", bad], validity: null }, field),
      (e: unknown) => e instanceof IoError && e.code === "WRITE_FAILED" && /row 1/.test(e.message),
    );
  }
});

Deno.test("columnToArrow() writes ASCII text in one pass, growing its buffer, and falls back at the first other string", () => {
  const field = { name: "t", type: "string", nullable: false } as const;
  const utf8 = new TextEncoder();
  const cases = [
    ["SEA", "LAX", ""], // short ASCII
    Array.from({ length: 50 }, (_, i) => "y".repeat(i * 7)), // past the first buffer's guess
    ["ab", "x".repeat(300), "cd", "é", "ef"], // ASCII first, then not
    ["ASCII", "日本", "abc".repeat(40)],
  ];
  for (const values of cases) {
    const data = columnToArrow({ type: "string", values, validity: null }, field);
    assert.deepEqual(arrow.makeVector(data).toArray(), values);
    const bytes = values.map((v) => utf8.encode(v));
    assert.deepEqual(
      [...data.valueOffsets],
      [0, ...bytes.map((_, i) => bytes.slice(0, i + 1).reduce((n, b) => n + b.length, 0))],
    );
    assert.equal(data.values.length, data.valueOffsets.at(-1));
  }
});

Deno.test("tableToBatches() keeps Float32 and Float16 bit for bit, and widens them when forced", async (t) => {
  const schema = [
    { name: "f32", type: "float32", nullable: true },
    { name: "f16", type: "float16", nullable: true },
  ] as const;
  const rng = new Rng(5);
  const batches = [randomBatch(rng, schema, 400), randomBatch(rng, schema, 77)];
  const want = concatBatches(schema, batches);
  const table = batchesToTable(schema, batches);
  await t.step("Arrow types are Float32 and Float16", () => {
    assert.deepEqual(table.schema.fields.map((f) => String(f.type)), ["Float32", "Float16"]);
  });
  await t.step("bits come back, signalling NaNs and payloads included", () => {
    const back = tableToBatches(table);
    assert.deepEqual(back.schema, schema);
    assertSameValues(concatBatches(back.schema, back.batches), want, true);
    const sliced = tableToBatches(table.slice(100, 450));
    const got = concatBatches(sliced.schema, sliced.batches);
    const f32 = new Uint32Array((got.columns[0]!.values as Float32Array).slice().buffer);
    const all = new Uint32Array((want.columns[0]!.values as Float32Array).slice().buffer);
    for (let r = 0; r < 350; r++) {
      if (got.columns[0]!.validity?.[r] === 0) continue;
      assert.equal(f32[r], all[r + 100], `row ${r}`);
    }
  });
  await t.step("forced to float64, values are the exact doubles", () => {
    const back = tableToBatches(table, { f32: "float64", f16: "float64" });
    const got = concatBatches(back.schema, back.batches);
    assert.deepEqual(back.schema.map((f) => f.type), ["float64", "float64"]);
    for (let r = 0; r < got.length; r++) {
      for (let c = 0; c < 2; c++) {
        const x = cellValue(got.columns[c]!, r);
        const y = cellValue(want.columns[c]!, r);
        assert.ok(Object.is(x, y) || (Number.isNaN(x) && Number.isNaN(y)), `col ${c} row ${r}`);
      }
    }
  });
});
