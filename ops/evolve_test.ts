/**
 * Thawing in another schema (`evolve.ts`, `thaw --schema`): columns added come back
 * null, removed ones are dropped and never read, compatible types are cast exactly
 * (int64 → wide decimal, decimal → wider decimal, date → timestamp, a finer unit,
 * anything → string as CSV writes it), and a change that would alter or invent a
 * value is SCHEMA_INCOMPATIBLE naming the column, before any output exists.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Batch, Field, Schema } from "../format/column.ts";
import { writeTestArchive } from "../format/_test_utils.ts";
import { thaw, thawTable } from "./thaw.ts";
import { OpsError } from "./errors.ts";
import { parseSchemaJson } from "./evolve.ts";

const dir = await Deno.makeTempDir({ prefix: "permafrost-evolve-" });
const archive = join(dir, "old.pf");

const STORED: Schema = [
  { name: "id", type: "int64", nullable: false },
  { name: "day", type: "date", nullable: true },
  { name: "price", type: "decimal", nullable: true, precision: 10, scale: 2 },
  { name: "at", type: "timestamp", nullable: true, unit: "ms" },
  { name: "x", type: "float64", nullable: true },
  { name: "name", type: "string", nullable: true },
];

function stored(): Batch {
  return {
    schema: STORED,
    columns: [
      { type: "int64", values: BigInt64Array.of(1n, -9007199254740993n, 42n), validity: null },
      { type: "date", values: BigInt64Array.of(0n, 19000n, 0n), validity: Uint8Array.of(1, 1, 0) },
      {
        type: "decimal",
        values: BigInt64Array.of(1999n, -5n, 0n),
        validity: Uint8Array.of(1, 1, 0),
      },
      { type: "timestamp", values: BigInt64Array.of(1500n, -1n, 0n), validity: null },
      { type: "float64", values: Float64Array.of(0.1, 1e21, -0), validity: null },
      { type: "string", values: ["a", "", "🧊"], validity: Uint8Array.of(1, 0, 1) },
    ],
    length: 3,
  };
}

await writeTestArchive(archive, stored(), { chunkRows: 2 });

const TARGET: Field[] = [
  { name: "name", type: "string", nullable: true },
  { name: "id", type: "decimal", nullable: false, precision: 21, scale: 2 },
  { name: "day", type: "timestamp", nullable: true, unit: "us" },
  { name: "price", type: "decimal", nullable: true, precision: 12, scale: 2 },
  { name: "at", type: "timestamp", nullable: true, unit: "ns" },
  { name: "x", type: "string", nullable: true },
  { name: "note", type: "string", nullable: true },
];

Deno.test("thaw in a compatible schema: added null, dropped gone, every cast exact", async () => {
  const table = await thawTable(archive, { schema: TARGET });
  assert.deepEqual(table.schema.fields.map((f) => f.name), TARGET.map((f) => f.name));
  const csv = join(dir, "new.csv");
  await thaw(archive, csv, { schema: TARGET });
  assert.equal(
    await Deno.readTextFile(csv),
    [
      "name,id,day,price,at,x,note",
      "a,1.00,1970-01-01 00:00:00,19.99,1970-01-01 00:00:01.500000000,0.1,",
      ",-9007199254740993.00,2022-01-08 00:00:00,-0.05,1969-12-31 23:59:59.999000000,1e+21,",
      "🧊,42.00,,,1970-01-01 00:00:00,-0.0,",
    ].join("\n") + "\n",
  );
});

Deno.test("thaw --schema with columns picks among the target's columns, reading only those", async () => {
  const t = await thawTable(archive, { schema: TARGET, columns: ["note", "id"] });
  assert.deepEqual(t.schema.fields.map((f) => f.name), ["note", "id"]);
  assert.deepEqual(t.toArray().map((r) => r.note), [null, null, null]);
  const onlyNew = await thawTable(archive, {
    schema: [{ name: "z", type: "int64", nullable: true }],
  });
  assert.equal(onlyNew.numRows, 3, "rows still count when no stored column is asked for");
});

Deno.test("a change that would alter or invent a value is SCHEMA_INCOMPATIBLE, before any output", async () => {
  const cases: [Field[], RegExp][] = [
    [
      [{ name: "id", type: "float64", nullable: false }],
      /column 'id' type changed \(int64 → float64\): integers past 2\^53/,
    ],
    [[{ name: "id", type: "int64", nullable: false }, {
      name: "must",
      type: "int64",
      nullable: false,
    }], /column 'must' added.*not-null/],
    [
      [{ name: "day", type: "date", nullable: false }],
      /column 'day' nullability changed.*old rows may hold nulls/,
    ],
    [
      [{ name: "price", type: "decimal", nullable: true, precision: 10, scale: 1 }],
      /column 'price' type changed/,
    ],
    [[{ name: "at", type: "timestamp", nullable: true, unit: "s" }], /a coarser unit would round/],
  ];
  for (const [schema, message] of cases) {
    const out = join(dir, "refused.csv");
    await assert.rejects(thaw(archive, out, { schema }), (err: unknown) => {
      assert.ok(err instanceof OpsError, String(err));
      assert.equal(err.code, "SCHEMA_INCOMPATIBLE");
      assert.match(err.message, message);
      return true;
    });
    await assert.rejects(Deno.stat(out), Deno.errors.NotFound);
  }
});

Deno.test("a target schema is read from a field list or audit's stored_schema, and bad ones are named", () => {
  const fields = parseSchemaJson(
    '[{"name":"a","type":"timestamp","timezone":"UTC"},{"name":"d","type":"decimal","precision":20,"scale":3,"nullable":false}]',
    "s.json",
  );
  assert.deepEqual(fields, [
    { name: "a", type: "timestamp", nullable: true, unit: "us", timezone: "UTC" },
    { name: "d", type: "decimal", nullable: false, precision: 20, scale: 3 },
  ]);
  const arrow = parseSchemaJson(
    JSON.stringify({
      fields: [{ name: "n", nullable: true, type: { name: "utf8" }, children: [] }],
    }),
    "stored.json",
  );
  assert.deepEqual(arrow, [{ name: "n", type: "string", nullable: true }]);
  assert.throws(() => parseSchemaJson("{", "x.json"), /not JSON/);
  assert.throws(() => parseSchemaJson('[{"name":"a","type":"int32"}]', "x.json"), /type "int32"/);
  assert.throws(() => parseSchemaJson('[{"name":"d","type":"decimal"}]', "x.json"), /precision/);
});

Deno.test("float16 and float32 columns widen bit for bit, NaN payloads too; narrowing is refused", async () => {
  const path = join(dir, "floats.pf");
  const single = Uint32Array.of(0x3f800000, 0x7fc01234, 0xffa00001, 0x80000000, 0x00000001);
  const half = Uint16Array.of(0x3c00, 0x7e01, 0xfc01, 0x8000, 0x0001);
  const schema: Schema = [
    { name: "s", type: "float32", nullable: true },
    { name: "h", type: "float16", nullable: true },
  ];
  await writeTestArchive(path, {
    schema,
    columns: [
      { type: "float32", values: new Float32Array(single.buffer), validity: null },
      { type: "float16", values: half, validity: Uint8Array.of(1, 1, 1, 1, 0) },
    ],
    length: 5,
  });
  const wide = await thawTable(path, {
    schema: [
      { name: "s", type: "float64", nullable: true },
      { name: "h", type: "float32", nullable: true },
    ],
  });
  const bits64 = (i: number) => {
    const v = new Float64Array([0]);
    v[0] = wide.getChild("s")!.get(i) as number;
    return new BigUint64Array(v.buffer)[0]!;
  };
  // The Arrow column's own buffer: reading a NaN through a JS number may canonicalize it.
  const s64 = new BigUint64Array(
    wide.getChild("s")!.data[0]!.values.buffer,
    wide.getChild("s")!.data[0]!.values.byteOffset,
    5,
  );
  assert.deepEqual([...s64], [
    0x3ff0000000000000n,
    0x7ff8024680000000n, // quiet NaN, payload 0x401234 at the top of 52 bits
    0xfff4000020000000n, // negative signalling NaN, payload kept
    0x8000000000000000n, // -0
    0x36a0000000000000n, // the smallest float32 subnormal
  ]);
  assert.equal(bits64(0), 0x3ff0000000000000n);
  const h32 = new Uint32Array(
    wide.getChild("h")!.data[0]!.values.buffer,
    wide.getChild("h")!.data[0]!.values.byteOffset,
    5,
  );
  assert.deepEqual([...h32].slice(0, 4), [0x3f800000, 0x7fc02000, 0xff802000, 0x80000000]);
  assert.equal(wide.getChild("h")!.get(4), null);
  await assert.rejects(
    thaw(path, join(dir, "narrow.csv"), {
      schema: [{ name: "s", type: "float16", nullable: true }],
    }),
    /column 's' type changed \(float32 → float16\): a float16 would round float32 values/,
  );
});

Deno.test("evolve: teardown", async () => {
  await Deno.remove(dir, { recursive: true });
});
