/**
 * Tests of `_duckdb_image.ts` through the Parquet writer: rows laid out for DuckDB's
 * vectors (on this thread from batches, or handed in as images, as the thaw Workers
 * do) write the very Parquet bytes the per-value appends wrote before them, for
 * every column type, unit, width, null pattern and string length. The SHA-256 below
 * was taken from the per-value writer (commit 63038af) on the same rows.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { Batch, Column, Field, Schema } from "../format/column.ts";
import { DUCK_VECTOR_ROWS, duckImageOf, duckImageTransfer } from "./_duckdb_image.ts";
import { writeParquet, type WriteParquetOptions } from "./_write_parquet.ts";
import { IoError } from "./errors.ts";
import { codesOf, withCodes } from "../format/coded_strings.ts";

/** SHA-256 of the Parquet the per-value writer made of {@link fixture}'s rows. */
const PINNED_MANY_SHA256 = "662d565d868c5cdf59437e3fbc8b3183c92766a3af4a2d941da079e9c4eccd55";
const PINNED_SHA256 = "e9ddcd0122b0cfb29736b982d8efd922b2256be6f21e4a48cd2e0e7f2ec11cc1";

const SCHEMA: Schema = [
  { name: "i", type: "int64", nullable: true },
  { name: "f", type: "float64", nullable: true },
  { name: "f32", type: "float32", nullable: true },
  { name: "f16", type: "float16", nullable: true },
  { name: "b", type: "bool", nullable: true },
  { name: "d", type: "date", nullable: true },
  { name: "ts_s", type: "timestamp", nullable: true, unit: "s" },
  { name: "ts_ms", type: "timestamp", nullable: true, unit: "ms", timezone: "Europe/Paris" },
  { name: "ts_us", type: "timestamp", nullable: true, unit: "us", timezone: "UTC" },
  { name: "ts_ns", type: "timestamp", nullable: true, unit: "ns" },
  { name: "tm_s", type: "time", nullable: true, unit: "s" },
  { name: "tm_ms", type: "time", nullable: true, unit: "ms" },
  { name: "tm_us", type: "time", nullable: true, unit: "us" },
  { name: "tm_ns", type: "time", nullable: true, unit: "ns" },
  { name: "dur", type: "duration", nullable: true, unit: "ms" },
  { name: "dec4", type: "decimal", nullable: true, precision: 4, scale: 1 },
  { name: "dec9", type: "decimal", nullable: true, precision: 9, scale: 3 },
  { name: "dec18", type: "decimal", nullable: true, precision: 18, scale: 0 },
  { name: "dec38", type: "decimal", nullable: true, precision: 38, scale: 10 },
  { name: "s", type: "string", nullable: true },
  { name: "cat", type: "string", nullable: false },
  { name: "j", type: "json", nullable: true },
  { name: "full", type: "int64", nullable: false },
  // Nulls and long strings in the first vectors only: a later vector has neither.
  { name: "early_nulls", type: "int64", nullable: true },
  { name: "early_long", type: "string", nullable: true },
];

/** A small deterministic generator (xorshift32). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

const STRINGS = [
  "",
  "a",
  "LAS",
  "twelve bytes",
  "thirteen byte",
  "é",
  "ünïcödé ok",
  "日本語の文字列です",
  "😀 emoji",
  "a string long enough to live in DuckDB's heap, not inline",
  " spaces ",
  'quote " and comma ,',
  "line\nbreak",
  "x".repeat(300),
];

const JSONS = ['{"a":1}', "[1,2,3]", '"text"', "null", "1e400", '{"nested":{"k":[true,false]}}'];

/** Rows of every type: nulls (whole vectors of them too), edge values, many lengths. */
function fixture(rows: number, seed: number): Batch {
  const next = rng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const columns: Column[] = SCHEMA.map((f, c) => {
    const validity = new Uint8Array(rows).fill(1);
    const nulls = f.nullable;
    const isNull = (i: number) =>
      f.name.startsWith("early")
        ? i < 2048 && i % 5 === 0
        : nulls && (next() < 0.15 || (c % 3 === 0 && i >= 2048 && i < 4096));
    for (let i = 0; i < rows; i++) if (isNull(i)) validity[i] = 0;
    const v = nulls ? validity : null;
    const present = (i: number) => v === null || v[i] === 1;
    switch (f.type) {
      case "int64":
      case "duration": {
        const values = new BigInt64Array(rows);
        const edges = [0n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 42n];
        for (let i = 0; i < rows; i++) {
          if (!present(i)) continue;
          values[i] = i % 97 === 0
            ? edges[i % edges.length]!
            : BigInt(int(-1e6, 1e6)) * BigInt(int(1, 1e6));
        }
        return { type: f.type, values, validity: v };
      }
      case "float64": {
        const values = new Float64Array(rows);
        const edges = [0, -0, Infinity, -Infinity, Number.MIN_VALUE, Number.MAX_VALUE, 0.1];
        for (let i = 0; i < rows; i++) {
          if (present(i)) {
            values[i] = i % 89 === 0 ? edges[i % edges.length]! : (next() - 0.5) * 1e6;
          }
        }
        return { type: "float64", values, validity: v };
      }
      case "float32": {
        const values = new Float32Array(rows);
        for (let i = 0; i < rows; i++) if (present(i)) values[i] = (next() - 0.5) * 1e3;
        return { type: "float32", values, validity: v };
      }
      case "float16": {
        const values = new Uint16Array(rows);
        // Finite halves only (no NaN: DuckDB's dictionary keeps one per column).
        for (let i = 0; i < rows; i++) {
          if (present(i)) values[i] = int(0, 0x7bff) | (int(0, 1) << 15);
        }
        return { type: "float16", values, validity: v };
      }
      case "bool": {
        const values = new Uint8Array(rows);
        for (let i = 0; i < rows; i++) if (present(i)) values[i] = int(0, 1);
        return { type: "bool", values, validity: v };
      }
      case "date":
      case "timestamp":
      case "time": {
        const values = new BigInt64Array(rows);
        const perDay: Record<string, number> = { s: 86400, ms: 86400e3, us: 86400e6, ns: 86400e9 };
        for (let i = 0; i < rows; i++) {
          if (!present(i)) continue;
          if (f.type === "date") values[i] = BigInt(int(-800000, 2900000));
          else if (f.type === "time") values[i] = BigInt(int(0, perDay[f.unit!]! - 1));
          else {
            // Sorted-ish, as flights' dates are, with repeats.
            values[i] = BigInt(Math.floor(i / 3) * 61 + 978307200) *
              ({ s: 1n, ms: 1000n, us: 1000000n, ns: 1000000000n }[f.unit!]!);
          }
        }
        return { type: f.type, values, validity: v };
      }
      case "decimal": {
        const p = f.precision!;
        if (p > 18) {
          const values: bigint[] = new Array(rows).fill(0n);
          for (let i = 0; i < rows; i++) {
            if (present(i)) {
              values[i] = (BigInt(int(0, 1e9)) * 10n ** 28n + BigInt(int(0, 1e9))) *
                (next() < 0.5 ? -1n : 1n);
            }
          }
          values[1] = 10n ** 38n - 1n;
          return { type: "decimal", values, validity: v };
        }
        const values = new BigInt64Array(rows);
        const max = 10 ** Math.min(p, 15) - 1;
        for (let i = 0; i < rows; i++) if (present(i)) values[i] = BigInt(int(-max, max));
        if (p === 18) values[0] = 10n ** 18n - 1n;
        return { type: "decimal", values, validity: v };
      }
      case "string":
      case "json": {
        const values: string[] = new Array(rows).fill("");
        const pool = f.type === "json" ? JSONS : STRINGS;
        for (let i = 0; i < rows; i++) {
          if (!present(i)) continue;
          values[i] = f.name === "cat"
            ? ["LAS", "ATL", "SFO"][i % 3]!
            : f.name === "early_long"
            ? (i < 2048 ? `a long string number ${i}` : "ab")
            : pool[int(0, pool.length - 1)]!;
        }
        return { type: f.type, values, validity: v };
      }
    }
  });
  return { schema: SCHEMA, columns, length: rows };
}

const TMP = await Deno.makeTempDir({ prefix: "permafrost-duckimage-" });

async function sha256(path: string): Promise<string> {
  return createHash("sha256").update(await Deno.readFile(path)).digest("hex");
}

/** Writes the fixture's rows in batches (cut at `cuts`), each as a batch or as an image. */
async function write(
  name: string,
  asImages: boolean,
  cuts = [0, 2100, 2100, 5000],
  options: WriteParquetOptions = {},
): Promise<string> {
  const rows = cuts[cuts.length - 1]!;
  const whole = fixture(rows, 7);
  const batches: Batch[] = [];
  for (let k = 0; k + 1 < cuts.length; k++) batches.push(slice(whole, cuts[k]!, cuts[k + 1]!));
  const path = `${TMP}/${name}.parquet`;
  await Deno.writeFile(path, new Uint8Array());
  const input = asImages
    ? batches.map((b) => {
      // Through structured clone with its buffers moved, as a Worker hands it over.
      const image = duckImageOf(SCHEMA, b);
      return structuredClone(image, { transfer: duckImageTransfer(image) });
    })
    : batches;
  assert.equal(await writeParquet(path, SCHEMA, input, options), rows);
  return path;
}

function slice(b: Batch, from: number, to: number): Batch {
  const columns = b.columns.map((c) => {
    const values = Array.isArray(c.values) ? c.values.slice(from, to) : c.values.slice(from, to);
    return { ...c, values, validity: c.validity?.slice(from, to) ?? null } as Column;
  });
  return { schema: b.schema, columns, length: to - from };
}

Deno.test("Parquet from DuckDB vector images is byte for byte the per-value writer's", async () => {
  const fromBatches = await write("batches", false);
  const fromImages = await write("images", true);
  const oneInFlight = await write("one-in-flight", true, undefined, { inFlightBytes: 1 });
  const a = await sha256(fromBatches);
  assert.equal(await sha256(fromImages), a);
  assert.equal(await sha256(oneInFlight), a);
  assert.equal(a, PINNED_SHA256);
});

Deno.test("Parquet from images of rows past two row groups is the per-value writer's too", async () => {
  // One full commit of the appender (204,800 rows), then a last one under a row group,
  // which the on-disk staging table kept in a row group of its own.
  const cuts = [0, 50_000, 100_000, 150_000, 200_000, 250_000, 300_000];
  // Laid out here or by a Worker; its default bytes in flight, then at most one image.
  const ways: [string, boolean, WriteParquetOptions][] = [
    ["worker", true, {}],
    ["worker-one-in-flight", true, { inFlightBytes: 1 }],
    ["batches-one-in-flight", false, { inFlightBytes: 1 }],
  ];
  for (const [name, asImages, options] of ways) {
    const path = await write(`many-${name}`, asImages, cuts, options);
    assert.equal(await sha256(path), PINNED_MANY_SHA256, name);
  }
});

Deno.test("Parquet fed to the COPY has the row groups, hence the bytes, of the on-disk staging", async () => {
  // SHA-256s of the on-disk staging table's Parquet (commit 0b08c9c) for: exactly one
  // full commit; a full one then a last one of more than a row group; images cut off
  // the 2048-row grid, the full commit ending inside the third, a tail under a row group.
  const pinned: [number[], string][] = [
    [[0, 204_800], "249a1978e5d9742de760d0c2302f8d5fe1b1d3b92eba7bf9f46256a89425bf42"],
    [
      [0, 100_000, 340_000],
      "befc03eeec47baccb4720ef929f4f29d7637caab8cb1477afb025d798f48773c",
    ],
    [
      [0, 70_001, 140_003, 250_000],
      "ef09fffc51986c2e2d824c4e9d834325277c87906103f2752a351317fb20b74e",
    ],
  ];
  for (const [cuts, want] of pinned) {
    // Whatever the images waiting for the COPY: its default bytes in flight, or one.
    for (const inFlightBytes of [undefined, 1]) {
      const options = inFlightBytes === undefined ? {} : { inFlightBytes };
      const path = await write(`layout-${cuts.length}-${inFlightBytes}`, true, cuts, options);
      const way = `${JSON.stringify(cuts)}, up to ${inFlightBytes ?? "default"} bytes in flight`;
      assert.equal(await sha256(path), want, way);
    }
  }
});

Deno.test("writeParquet() refuses a decimal past 38 digits before reading any row", async () => {
  const path = `${TMP}/wide.parquet`;
  await Deno.writeFile(path, new Uint8Array());
  const schema: Schema = [{ name: "d", type: "decimal", nullable: false, precision: 40, scale: 0 }];
  const unread = {
    [Symbol.iterator](): Iterator<Batch> {
      throw new Error("rows read");
    },
  };
  await assert.rejects(writeParquet(path, schema, unread), (err: unknown) => {
    assert.ok(err instanceof IoError);
    assert.equal(err.code, "WRITE_FAILED");
    assert.match(err.message, /decimal of 40 digits/);
    return true;
  });
});

Deno.test("duckImageOf() lays out values, validity words and long strings as DuckDB reads them", () => {
  const schema: Schema = [
    { name: "s", type: "string", nullable: true },
    { name: "d", type: "date", nullable: true },
  ];
  const n = DUCK_VECTOR_ROWS + 3;
  const strings = Array.from({ length: n }, (_, i) => i === 1 ? "é".repeat(7) : i % 2 ? "ab" : "");
  const validity = new Uint8Array(n).fill(1);
  validity[2] = 0;
  validity[n - 1] = 0;
  const image = duckImageOf(schema, {
    schema,
    columns: [
      { type: "string", values: strings, validity },
      { type: "date", values: new BigInt64Array(n).fill(-1n), validity: null },
    ],
    length: n,
  });
  const s = image.columns[0]!;
  assert.equal(s.width, 16);
  // "ab" inline: length 2, the bytes, zero padding.
  assert.deepEqual([...s.data.subarray(48, 64)], [
    2,
    0,
    0,
    0,
    97,
    98,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
  ]);
  // The 14-byte string is listed apart, its slot left zero.
  assert.deepEqual([...s.long!.rows], [1]);
  assert.equal(new TextDecoder().decode(s.long!.bytes), "é".repeat(7));
  assert.ok(s.data.subarray(16, 32).every((x) => x === 0));
  // One bit a row, words of 64, padding set.
  assert.equal(s.validity!.length, 8 * Math.ceil(n / 64));
  assert.equal(s.validity![0], 0b11111011);
  assert.equal(s.validity![(n - 1) >> 3]! & (1 << ((n - 1) & 7)), 0);
  assert.equal(s.validity![s.validity!.length - 1], 0xff);
  const d = image.columns[1]!;
  assert.equal(d.validity, null);
  assert.equal(new Int32Array(d.data.buffer)[5], -1);
});

Deno.test("duckImageOf() refuses values DuckDB's types cannot hold, naming the column", () => {
  const cases: [Field, Column, RegExp][] = [
    [
      { name: "lone", type: "string", nullable: false },
      { type: "string", values: ["ok", "\ud800"], validity: null },
      /lone surrogate/,
    ],
    [
      { name: "day", type: "date", nullable: false },
      { type: "date", values: new BigInt64Array([0n, 2n ** 40n]), validity: null },
      /out of range/,
    ],
    [
      { name: "when", type: "timestamp", nullable: false, unit: "s" },
      { type: "timestamp", values: new BigInt64Array([0n, 2n ** 62n]), validity: null },
      /out of range in microseconds/,
    ],
  ];
  for (const [field, column, message] of cases) {
    assert.throws(
      () => duckImageOf([field], { schema: [field], columns: [column], length: 2 }),
      (err) => {
        assert.ok(err instanceof IoError);
        assert.equal(err.code, "WRITE_FAILED");
        assert.equal(err.column, field.name);
        assert.match(err.message, message);
        return true;
      },
    );
  }
  // A null slot's value is never looked at.
  const field: Field = { name: "day", type: "date", nullable: true };
  const column: Column = {
    type: "date",
    values: new BigInt64Array([2n ** 40n]),
    validity: new Uint8Array([0]),
  };
  assert.equal(duckImageOf([field], { schema: [field], columns: [column], length: 1 }).length, 1);
});

Deno.test("duckImageOf() lays out a dictionary-coded string column as the same strings uncoded", () => {
  const field: Field = { name: "s", type: "string", nullable: true };
  const dictionary = ["LAS", "a string longer than twelve", "héllo", "", "unused entry"];
  const codes = new Uint8Array(DUCK_VECTOR_ROWS + 5).map((_, i) => (i * 7) % 4);
  const values = Array.from(codes, (c) => dictionary[c]!);
  values[9] = "changed after decoding, longer than twelve"; // no longer its code's entry
  values[10] = "ATL";
  const validity = new Uint8Array(codes.length).fill(1);
  validity[3] = 0;
  validity[4] = 0;
  const plain: Column = { type: "string", values: [...values], validity };
  const coded: Column = { type: "string", values: withCodes(values, codes, dictionary), validity };
  const image = (column: Column) =>
    duckImageOf([field], { schema: [field], columns: [column], length: codes.length });
  assert.ok(codesOf(coded.values as string[]) !== undefined);
  assert.deepEqual(image(coded), image(plain));
  const lone: Column = {
    type: "string",
    values: withCodes(["a", "\ud800", "a"], new Uint8Array([0, 1, 0]), ["a", "\ud800"]),
    validity: null,
  };
  assert.throws(
    () => duckImageOf([field], { schema: [field], columns: [lone], length: 3 }),
    (err) => err instanceof IoError && /lone surrogate/.test(err.message),
  );
});

Deno.test("writeParquet() refuses an image laid out for another schema", async () => {
  const schema: Schema = [{ name: "a", type: "int64", nullable: false }];
  const other: Schema = [{ name: "a", type: "string", nullable: false }];
  const image = duckImageOf(other, {
    schema: other,
    columns: [{ type: "string", values: ["x"], validity: null }],
    length: 1,
  });
  const path = `${TMP}/mismatch.parquet`;
  await Deno.writeFile(path, new Uint8Array());
  await assert.rejects(writeParquet(path, schema, [image]), (err) => {
    assert.ok(err instanceof IoError);
    assert.equal(err.code, "SCHEMA_MISMATCH");
    return true;
  });
});

Deno.test("writeParquet() passes on its rows' error, the Worker's COPY stopped, its spill gone", async () => {
  const path = `${TMP}/stopped.parquet`;
  await Deno.writeFile(path, new Uint8Array());
  const failure = new Error("the source broke");
  const whole = fixture(5000, 3);
  async function* rows(): AsyncGenerator<Batch> {
    yield slice(whole, 0, 2500);
    throw failure;
  }
  for (const options of [{}, { inFlightBytes: 1 }]) {
    await assert.rejects(writeParquet(path, SCHEMA, rows(), options), (err) => err === failure);
    await assert.rejects(Deno.stat(`${path}.duckdb.tmp`), Deno.errors.NotFound);
  }
});

Deno.test("writeParquet() reports DuckDB's failure in its Worker", async () => {
  const path = `${TMP}/no-such-dir/out.parquet`;
  const whole = fixture(3000, 5);
  await assert.rejects(
    writeParquet(path, SCHEMA, [slice(whole, 0, 1000), slice(whole, 1000, 3000)]),
    (err) => err instanceof Error && /no-such-dir/.test(err.message),
  );
});

Deno.test("writeParquet() stops reading rows once its Worker's COPY has failed", async () => {
  const path = `${TMP}/no-such-dir/endless.parquet`;
  const batch = slice(fixture(100, 9), 0, 100);
  let read = 0;
  const most = 5000; // at least 10 s of rows, far past the Worker's failure
  async function* endless(): AsyncGenerator<Batch> {
    while (read < most) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      read++;
      yield batch;
    }
  }
  await assert.rejects(
    writeParquet(path, SCHEMA, endless()),
    (err) => err instanceof Error && /no-such-dir/.test(err.message),
  );
  assert.ok(read > 0 && read < most, `${read} batches read`);
});

globalThis.addEventListener("unload", () => {
  Deno.removeSync(TMP, { recursive: true });
});
