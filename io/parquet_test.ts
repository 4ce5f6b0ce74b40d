/**
 * Tests of `parquet.ts` and `_duckdb.ts`: type mapping, row groups and row ranges,
 * awkward paths, and that the DuckDB lockdown holds.
 *
 * @module
 */
import assert from "node:assert/strict";
import { cellValue, sliceBatch } from "../format/column.ts";
import { openLockedDuckDB, sqlString } from "./_duckdb.ts";
import { IoError } from "./errors.ts";
import { openParquet, openParquetRanges, parquetRowGroups } from "./parquet.ts";
import { assertSameValues, collect, duckParquet, makeTempDir } from "./_test_utils.ts";

const FLIGHTS = "/tmp/vega/package/data/flights-3m.parquet";

Deno.test("openParquet() maps DuckDB types to column types", async () => {
  const dir = await makeTempDir();
  try {
    const path = `${dir}/types.parquet`;
    await duckParquet(
      path,
      `SELECT 1::TINYINT AS ti, -2::SMALLINT AS si, 3::INTEGER AS i, 4::UINTEGER AS ui,
        5::UBIGINT AS ub, 9223372036854775807::BIGINT AS bi, 12.34::DECIMAL(10,2) AS dec,
        1.5::FLOAT AS fl, -0.0::DOUBLE AS db, true AS bo, DATE '2024-01-31' AS da,
        TIMESTAMP '2024-01-31 10:20:30.123456' AS ts, TIMESTAMP_NS '2024-01-31 10:20:30.123456789' AS tns,
        TIMESTAMP_MS '2024-01-31 10:20:30.123' AS tms, TIMESTAMPTZ '2024-01-31 10:20:30+00' AS ttz,
        'héllo' AS s, TIME '01:02:03.456789' AS tm, '{"a": [1, 2]}'::JSON AS js,
        NULL::VARCHAR AS nu`,
    );
    const src = await openParquet(path);
    try {
      assert.deepEqual(
        src.schema.map((f) =>
          `${f.name}:${f.type}${f.unit ? `:${f.unit}` : ""}${f.timezone ? `:${f.timezone}` : ""}${
            f.precision ? `:${f.precision},${f.scale}` : ""
          }`
        ),
        [
          "ti:int64",
          "si:int64",
          "i:int64",
          "ui:int64",
          "ub:int64",
          "bi:int64",
          "dec:decimal:10,2",
          "fl:float32",
          "db:float64",
          "bo:bool",
          "da:date",
          "ts:timestamp:us",
          "tns:timestamp:ns",
          "tms:timestamp:us",
          "ttz:timestamp:us:UTC",
          "s:string",
          "tm:time:us",
          "js:json",
          "nu:string",
        ],
      );
      const b = await collect(src.schema, src.batches());
      const row = b.columns.map((c) => cellValue(c, 0));
      assert.deepEqual(row.slice(0, 6), [1n, -2n, 3n, 4n, 5n, 2n ** 63n - 1n]);
      assert.equal(row[6], 1234n, "the unscaled decimal, exact");
      assert.equal(row[7], 1.5);
      assert.ok(Object.is(row[8], -0));
      assert.equal(row[9], true);
      assert.equal(row[10], 19753n);
      assert.equal(row[11], 1706696430123456n);
      assert.equal(row[12], 1706696430123456789n);
      assert.equal(row[13], 1706696430123000n);
      assert.equal(row[14], 1706696430000000n);
      assert.equal(row[15], "héllo");
      assert.equal(row[16], 3723456789n);
      assert.equal(row[17], '{"a": [1, 2]}');
      assert.equal(row[18], null);
    } finally {
      await src.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openParquet() reads DECIMAL exactly at every width (the float64 rounding is gone)", async () => {
  const dir = await makeTempDir();
  try {
    const path = `${dir}/dec.parquet`;
    await duckParquet(
      path,
      `SELECT * FROM (VALUES
         (1234567890123456.78::DECIMAL(18,2), 99999999999999.9999::DECIMAL(18,4),
          1234567890123456789012345678.1234567891::DECIMAL(38,10), -0.01::DECIMAL(4,2)),
         (NULL, -99999999999999.9999::DECIMAL(18,4), -0.0000000001::DECIMAL(38,10), 99.99::DECIMAL(4,2))
       ) t(a, b, c, d)`,
    );
    const src = await openParquet(path);
    try {
      assert.deepEqual(src.schema.map((f) => [f.type, f.precision, f.scale]), [
        ["decimal", 18, 2],
        ["decimal", 18, 4],
        ["decimal", 38, 10],
        ["decimal", 4, 2],
      ]);
      const b = await collect(src.schema, src.batches());
      assert.deepEqual(b.columns.map((c) => [cellValue(c, 0), cellValue(c, 1)]), [
        [123456789012345678n, null],
        [999999999999999999n, -999999999999999999n],
        [12345678901234567890123456781234567891n, -1n],
        [-1n, 9999n],
      ]);
      assert.ok(Array.isArray(b.columns[2]!.values), "DECIMAL(38,10) is held as bigint[]");
    } finally {
      await src.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openParquet() refuses types it cannot keep exactly, by name, unless forced", async () => {
  const dir = await makeTempDir();
  try {
    const path = `${dir}/nested.parquet`;
    await duckParquet(
      path,
      `SELECT 1 AS id, [1, 2] AS li, {'a': 1, 'b': 'x'} AS st, INTERVAL 1 DAY AS iv,
        '\\xAB'::BLOB AS bl, uuid() AS u`,
    );
    for (
      const [column, type] of [["li", "INTEGER[]"], ["st", "STRUCT"], ["iv", "INTERVAL"]] as const
    ) {
      const others = Object.fromEntries(
        ["li", "st", "iv", "bl", "u"].filter((c) => c !== column).map((c) => [c, "string"]),
      ) as Record<string, "string">;
      await assert.rejects(openParquet(path, { types: others }), (err) => {
        assert.ok(err instanceof IoError);
        assert.equal(err.code, "UNSUPPORTED_TYPE");
        assert.equal(err.column, column);
        assert.ok(err.message.includes(type), err.message);
        return true;
      });
    }
    const src = await openParquet(path, {
      types: { li: "json", st: "json", iv: "string", bl: "string", u: "string" },
    });
    try {
      assert.deepEqual(src.schema.map((f) => f.type), [
        "int64",
        "json",
        "json",
        "string",
        "string",
        "string",
      ]);
      const b = await collect(src.schema, src.batches());
      assert.deepEqual(b.columns.slice(1, 4).map((c) => cellValue(c, 0)), [
        "[1,2]",
        '{"a":1,"b":"x"}',
        "1 day",
      ]);
    } finally {
      await src.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openParquet() throws SCHEMA_MISMATCH for a UBIGINT beyond int64, and types recovers", async () => {
  const dir = await makeTempDir();
  try {
    const path = `${dir}/ubig.parquet`;
    await duckParquet(
      path,
      "SELECT * FROM (VALUES (1::UBIGINT), (18446744073709551615::UBIGINT)) t(u)",
    );
    const src = await openParquet(path);
    await assert.rejects(collect(src.schema, src.batches()), (err) => {
      assert.ok(err instanceof IoError);
      assert.equal(err.code, "SCHEMA_MISMATCH");
      assert.equal(err.column, "u");
      return true;
    });
    await src.close();
    const again = await openParquet(path, { types: { u: "string" } });
    const b = await collect(again.schema, again.batches());
    await again.close();
    assert.equal(cellValue(b.columns[0]!, 1), "18446744073709551615");
    await assert.rejects(openParquet(path, { types: { u: "bool" } }), { code: "INVALID_OPTION" });
    await assert.rejects(openParquet(path, { types: { nope: "string" } }), {
      code: "INVALID_OPTION",
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("parquetRowGroups() and the rows option split a file exactly", async () => {
  const dir = await makeTempDir();
  try {
    const path = `${dir}/groups.parquet`;
    await duckParquet(path, "SELECT range AS n, range::VARCHAR AS s FROM range(10000)");
    const groups = await parquetRowGroups(path);
    assert.equal(groups.rows, 10000);
    assert.ok(groups.rowGroups.length > 1, `${groups.rowGroups.length} row groups`);
    assert.equal(groups.rowGroups.reduce((a, b) => a + b, 0), 10000);
    const whole = await openParquet(path, { batchRows: 1000 });
    const all = await collect(whole.schema, whole.batches());
    await whole.close();
    let start = 0;
    for (const n of groups.rowGroups) {
      const part = await openParquet(path, { rows: { start, end: start + n } });
      const got = await collect(part.schema, part.batches());
      await part.close();
      assertSameValues(got, sliceBatch(all, start, start + n), true);
      start += n;
    }
    const odd = await openParquet(path, { rows: { start: 123, end: 4567 }, batchRows: 500 });
    const sizes: number[] = [];
    for await (const b of odd.batches()) sizes.push(b.length);
    await odd.close();
    assert.equal(sizes.reduce((a, b) => a + b, 0), 4444);
    assert.ok(sizes.every((s) => s <= 500));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openParquet() takes awkward paths and fails with READ_FAILED", async (t) => {
  const dir = await makeTempDir();
  try {
    await t.step("a path with quotes and spaces", async () => {
      const path = `${dir}/it's a "test".parquet`;
      await duckParquet(path, "SELECT 42 AS n");
      const src = await openParquet(path);
      const b = await collect(src.schema, src.batches());
      await src.close();
      assert.equal(cellValue(b.columns[0]!, 0), 42n);
      assert.equal((await parquetRowGroups(path)).rows, 1);
    });
    await t.step("a missing file", async () => {
      await assert.rejects(openParquet(`${dir}/missing.parquet`), { code: "READ_FAILED" });
    });
    await t.step("a file that is not Parquet", async () => {
      const path = `${dir}/fake.parquet`;
      await Deno.writeTextFile(path, "not parquet at all");
      await assert.rejects(openParquet(path), { code: "READ_FAILED", path });
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openLockedDuckDB() allows only the named files", async () => {
  const dir = await makeTempDir();
  try {
    const allowed = `${dir}/allowed.csv`;
    const other = `${dir}/other.csv`;
    await Deno.writeTextFile(allowed, "a\n1\n");
    await Deno.writeTextFile(other, "a\n2\n");
    for (const database of [":memory:", `${dir}/staging.duckdb`]) {
      const db = await openLockedDuckDB([allowed], database);
      try {
        const r = await db.connection.runAndReadAll(
          `SELECT count(*) FROM read_csv(${sqlString(allowed)})`,
        );
        assert.equal(r.getRows()[0]?.[0], 1n);
        await assert.rejects(
          db.connection.run(`SELECT * FROM read_csv(${sqlString(other)})`),
          database,
        );
        await assert.rejects(db.connection.run(`COPY (SELECT 1) TO ${sqlString(other)}`), database);
        await assert.rejects(db.connection.run("SET enable_external_access = true"));
        await assert.rejects(db.connection.run("SET allowed_paths = ['/']"));
        await assert.rejects(db.connection.run("SET temp_directory = '/'"));
        await assert.rejects(db.connection.run("INSTALL httpfs"));
        await assert.rejects(db.connection.run("LOAD httpfs"));
        await assert.rejects(db.connection.run(`ATTACH ${sqlString(`${dir}/x.duckdb`)}`));
      } finally {
        db.close();
      }
    }
    assert.equal(await Deno.readTextFile(other), "a\n2\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openParquet() reads the 3M-row flights file", { ignore: !exists(FLIGHTS) }, async () => {
  const groups = await parquetRowGroups(FLIGHTS);
  assert.equal(groups.rows, 3000000);
  const src = await openParquet(FLIGHTS);
  try {
    assert.deepEqual(src.schema.map((f) => `${f.name}:${f.type}`), [
      "date:timestamp",
      "delay:int64",
      "distance:int64",
      "origin:string",
      "destination:string",
    ]);
    let rows = 0;
    for await (const b of src.batches()) {
      assert.ok(b.length <= 65536);
      rows += b.length;
    }
    assert.equal(rows, 3000000);
  } finally {
    await src.close();
  }
});

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("openParquet() reads short, inline and long strings exactly through its string cache", async () => {
  const dir = await makeTempDir();
  const path = `${dir}/strings.parquet`;
  const words = [
    "",
    "a",
    "LAS",
    "abcd",
    "abcde",
    "été",
    "日本",
    "🧊x",
    "twelve bytes",
    "thirteen byte",
    "a much longer string",
  ];
  // Every word many times (so the cache is hit), nulls between them, and words that
  // share a prefix but differ in length or later bytes.
  const values = Array.from(
    { length: 5000 },
    (_, i) => (i % 7 === 3 ? null : words[i % words.length]!),
  );
  const list = values.map((v) => (v === null ? "NULL" : sqlString(v))).join(", ");
  await duckParquet(path, `SELECT unnest([${list}]::VARCHAR[]) AS s`);
  const source = await openParquet(path);
  try {
    const batch = await collect(source.schema, source.batches());
    assert.equal(batch.length, values.length);
    for (let i = 0; i < values.length; i++) {
      assert.equal(cellValue(batch.columns[0]!, i), values[i], `row ${i}`);
    }
  } finally {
    await source.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openParquetRanges() reads any row range through one open file, as openParquet() does", async () => {
  const dir = await makeTempDir();
  try {
    const path = `${dir}/ranges.parquet`;
    await duckParquet(
      path,
      `SELECT range AS n, CASE WHEN range % 777 = 5 THEN NULL ELSE 'r' || range::VARCHAR END AS s,
        (range % 3 = 0) AS b FROM range(10000)`,
      1500,
    );
    const whole = await openParquet(path, { batchRows: 1000 });
    const all = await collect(whole.schema, whole.batches());
    await whole.close();
    const file = await openParquetRanges(path, { batchRows: 700 });
    try {
      assert.deepEqual(file.schema, whole.schema);
      assert.deepEqual(await file.rowGroups(), await parquetRowGroups(path));
      for (const [start, end] of [[0, 10000], [123, 4567], [9999, 10000], [4000, 4000], [0, 1]]) {
        const sizes: number[] = [];
        const got = await collect(
          file.schema,
          (async function* () {
            for await (const b of file.read({ start: start!, end: end! })) {
              sizes.push(b.length);
              yield b;
            }
          })(),
        );
        assert.ok(sizes.slice(0, -1).every((n) => n === 700), `${start}:${end} ${sizes}`);
        assertSameValues(got, sliceBatch(all, start!, end!), true);
      }
      assertSameValues(await collect(file.schema, file.read()), all, true);
      assert.throws(() => file.read({ start: 5, end: 2 }), { code: "INVALID_OPTION" });
    } finally {
      file.close();
    }
    file.close(); // idempotent
    assert.throws(() => file.read({ start: 0, end: 1 }), { code: "READ_FAILED" });
    await assert.rejects(openParquetRanges(path, { batchRows: 0 }), { code: "INVALID_OPTION" });
    await assert.rejects(openParquetRanges(path, { types: { s: "int64" } }), {
      code: "INVALID_OPTION",
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openParquetRanges() throws SCHEMA_MISMATCH only from the range holding the bad value", async () => {
  const dir = await makeTempDir();
  try {
    const path = `${dir}/ubig_ranges.parquet`;
    await duckParquet(
      path,
      `SELECT CASE WHEN range = 70 THEN 18446744073709551615::UBIGINT ELSE range::UBIGINT END AS u
        FROM range(100)`,
    );
    const file = await openParquetRanges(path, { batchRows: 10 });
    try {
      const ok = await collect(file.schema, file.read({ start: 0, end: 70 }));
      assert.equal(ok.length, 70);
      await assert.rejects(collect(file.schema, file.read({ start: 60, end: 80 })), (err) => {
        assert.ok(err instanceof IoError);
        assert.equal(err.code, "SCHEMA_MISMATCH");
        assert.equal(err.column, "u");
        assert.match(err.message, /at row 70 /);
        return true;
      });
      const after = await collect(file.schema, file.read({ start: 71, end: 100 }));
      assert.equal(cellValue(after.columns[0]!, 0), 71n);
    } finally {
      file.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
