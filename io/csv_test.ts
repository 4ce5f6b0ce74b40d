/**
 * Tests of `csv.ts`: RFC 4180 parsing, inference, the SCHEMA_MISMATCH fallback,
 * malformed input, and row-boundary cutting with byte-range reads.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type Batch, cellValue, concatBatches, type Schema } from "../format/column.ts";
import {
  csvRowBoundaries,
  type CsvRowRange,
  csvRowRanges,
  openCsv,
  readCsvHeader,
  readCsvRange,
} from "./csv.ts";
import { IoError } from "./errors.ts";
import { writeOutput } from "./output.ts";
import { MAX_COLUMNS } from "./types.ts";
import { codesOf } from "../format/coded_strings.ts";
import {
  ALL_TYPES,
  assertSameValues,
  collect,
  makeTempDir,
  randomBatch,
  Rng,
} from "./_test_utils.ts";

const TESTDATA = new URL("./testdata/", import.meta.url).pathname;

function rowsOf(batch: Batch): unknown[][] {
  const out: unknown[][] = [];
  for (let r = 0; r < batch.length; r++) out.push(batch.columns.map((c) => cellValue(c, r)));
  return out;
}

async function readAll(path: string, options = {}): Promise<Batch> {
  const src = await openCsv(path, options);
  return await collect(src.schema, src.batches());
}

Deno.test("openCsv() reads RFC 4180 quoting, CRLF and a BOM", async () => {
  const batch = await readAll(`${TESTDATA}quoted.csv`);
  assert.deepEqual(batch.schema.map((f) => [f.name, f.type]), [
    ["id", "int64"],
    ["name", "string"],
    ["note", "string"],
    ["amount", "float64"],
  ]);
  const rows = rowsOf(batch);
  assert.deepEqual(rows[0], [1n, "Smith, John", 'He said "hi"', 10.5]);
  assert.deepEqual(rows[1], [2n, "plain", "multi\r\nline\nnote", null]);
  assert.deepEqual(rows[2], [3n, "", null, -0.25], "quoted empty is '', unquoted empty is null");
  assert.deepEqual(rows[3], [4n, "  spaced  ", "trailing space ", 1000]);
  assert.equal(rows[4]?.[1], "日本語 ✓");
  assert.ok(Number.isNaN(rows[4]?.[3]));
});

Deno.test("openCsv() infers every type and keeps values exact", async () => {
  const batch = await readAll(`${TESTDATA}types.csv`);
  assert.deepEqual(batch.schema, [
    { name: "int", type: "int64", nullable: true },
    { name: "zip", type: "string", nullable: true },
    { name: "float", type: "float64", nullable: true },
    { name: "bool", type: "bool", nullable: true },
    { name: "date", type: "date", nullable: true },
    { name: "ts", type: "timestamp", nullable: true, unit: "us" },
    { name: "ts_tz", type: "timestamp", nullable: true, unit: "us", timezone: "UTC" },
    { name: "ts_ns", type: "timestamp", nullable: true, unit: "ns" },
    { name: "text", type: "string", nullable: true },
    { name: "empty", type: "string", nullable: true },
  ]);
  const rows = rowsOf(batch);
  assert.deepEqual(rows[0]?.slice(0, 5), [42n, "02134", 1.5, true, 19753n]);
  assert.deepEqual(rows[1]?.slice(0, 4), [-(2n ** 63n), "10001", -0, false]);
  assert.ok(Object.is(rows[1]?.[2], -0));
  assert.equal(rows[2]?.[0], 2n ** 63n - 1n);
  assert.equal(rows[2]?.[2], Infinity);
  assert.equal(rows[0]?.[5], 1706696430000000n);
  assert.equal(rows[0]?.[6], 1706696430000000n, "Z");
  assert.equal(rows[1]?.[6], 1706696430000000n, "+02:00 is applied");
  assert.equal(rows[2]?.[6], 1706696430000000n + 5400000000n, "-01:30 is applied");
  assert.equal(rows[0]?.[7], 1706696430123456789n);
  assert.equal(rows[4]?.[7], -(2n ** 63n));
  assert.deepEqual(rows[3], [null, null, null, null, null, null, null, null, null, null]);
  assert.equal(rows[4]?.[8], '"quoted"');
  assert.equal(rows[2]?.[8], null);
});

Deno.test("openCsv() honours forced types, delimiter and batchRows", async (t) => {
  const dir = await makeTempDir();
  try {
    await t.step("types forces a column to string", async () => {
      const batch = await readAll(`${TESTDATA}types.csv`, {
        types: { int: "string", ts: "string" },
      });
      assert.equal(batch.schema[0]?.type, "string");
      assert.equal(cellValue(batch.columns[0]!, 1), "-9223372036854775808");
      assert.equal(cellValue(batch.columns[5]!, 2), "1999-12-31T23:59:59.999999");
    });
    await t.step("types naming a missing column is INVALID_OPTION", async () => {
      await assert.rejects(openCsv(`${TESTDATA}types.csv`, { types: { nope: "string" } }), {
        name: "IoError",
        code: "INVALID_OPTION",
      });
    });
    await t.step("a semicolon delimiter", async () => {
      const path = `${dir}/semi.csv`;
      await Deno.writeTextFile(path, 'a;b\n1;"x;y"\n2;\n');
      const batch = await readAll(path, { delimiter: ";" });
      assert.deepEqual(rowsOf(batch), [[1n, "x;y"], [2n, null]]);
      await assert.rejects(openCsv(path, { delimiter: '"' }), { code: "INVALID_OPTION" });
    });
    await t.step("batches hold at most batchRows rows", async () => {
      const path = `${dir}/many.csv`;
      await Deno.writeTextFile(
        path,
        "n\n" + Array.from({ length: 25 }, (_, i) => `${i}\n`).join(""),
      );
      const src = await openCsv(path, { batchRows: 10 });
      const sizes: number[] = [];
      for await (const b of src.batches()) sizes.push(b.length);
      assert.deepEqual(sizes, [10, 10, 5]);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openCsv() handles blank lines, one-column files and empty files", async (t) => {
  const dir = await makeTempDir();
  try {
    await t.step("blank lines are skipped in a multi-column file", async () => {
      const path = `${dir}/blank.csv`;
      await Deno.writeTextFile(path, "a,b\r\n1,2\r\n\r\n3,4\n\n");
      assert.deepEqual(rowsOf(await readAll(path)), [[1n, 2n], [3n, 4n]]);
    });
    await t.step("a blank line is a null in a one-column file", async () => {
      const path = `${dir}/one.csv`;
      await Deno.writeTextFile(path, "a\n1\n\n3\n");
      assert.deepEqual(rowsOf(await readAll(path)), [[1n], [null], [3n]]);
    });
    await t.step("a file without a final newline", async () => {
      const path = `${dir}/nofinal.csv`;
      await Deno.writeTextFile(path, 'a,b\n1,"x"');
      assert.deepEqual(rowsOf(await readAll(path)), [[1n, "x"]]);
    });
    await t.step("a header-only file has string columns and no rows", async () => {
      const path = `${dir}/header.csv`;
      await Deno.writeTextFile(path, "a,b\n");
      const batch = await readAll(path);
      assert.deepEqual(batch.schema.map((f) => f.type), ["string", "string"]);
      assert.equal(batch.length, 0);
    });
    await t.step("an empty file has no columns", async () => {
      const path = `${dir}/empty.csv`;
      await Deno.writeTextFile(path, "");
      const src = await openCsv(path);
      assert.deepEqual(src.schema, []);
      assert.equal((await collect(src.schema, src.batches())).length, 0);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openCsv() rejects malformed CSV with PARSE_FAILED", async (t) => {
  const dir = await makeTempDir();
  try {
    const cases: [string, string | Uint8Array][] = [
      ["unterminated quote", 'a,b\n1,"open\n'],
      ["text after a closing quote", 'a,b\n1,"x"y\n'],
      ["too many fields", "a,b\n1,2,3\n"],
      ["too few fields", "a,b\n1\n"],
      ["duplicate header", "a,a\n1,2\n"],
      ["invalid UTF-8", new Uint8Array([0x61, 0x0a, 0xff, 0xfe, 0x0a])],
    ];
    for (const [what, content] of cases) {
      await t.step(what, async () => {
        const path = `${dir}/bad.csv`;
        if (typeof content === "string") await Deno.writeTextFile(path, content);
        else await Deno.writeFile(path, content);
        await assert.rejects(readAll(path), (err) => {
          assert.ok(err instanceof IoError, String(err));
          assert.equal(err.code, "PARSE_FAILED");
          assert.equal(err.path, path);
          return true;
        });
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openCsv() batches throw SCHEMA_MISMATCH past the sample, and types recovers", async () => {
  const dir = await makeTempDir();
  try {
    const path = `${dir}/late.csv`;
    const lines = ["id,n"];
    for (let i = 1; i <= 30000; i++) lines.push(`${i},${i === 20001 ? "abc" : i * 3}`);
    await Deno.writeTextFile(path, lines.join("\n") + "\n");
    const src = await openCsv(path, { sampleRows: 10000 });
    assert.equal(src.schema[1]?.type, "int64");
    await assert.rejects(collect(src.schema, src.batches()), (err) => {
      assert.ok(err instanceof IoError);
      assert.equal(err.code, "SCHEMA_MISMATCH");
      assert.equal(err.column, "n");
      assert.match(err.message, /'abc'/);
      assert.match(err.message, /20001/);
      return true;
    });
    const again = await openCsv(path, { sampleRows: 10000, types: { n: "string" } });
    const batch = await collect(again.schema, again.batches());
    assert.equal(batch.length, 30000);
    assert.equal(cellValue(batch.columns[1]!, 20000), "abc");
    assert.equal(cellValue(batch.columns[1]!, 19999), "60000");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("csvRowBoundaries() cuts ranges whose rows concatenate to the whole file", async (t) => {
  const dir = await makeTempDir();
  try {
    const rng = new Rng(7);
    const path = `${dir}/random.csv`;
    const written = [randomBatch(rng, ALL_TYPES, 777), randomBatch(rng, ALL_TYPES, 555)];
    await writeOutput(path, ALL_TYPES, written);
    const whole = await readAll(path);
    for (const every of [1, 100, 333, 1332, 5000]) {
      await t.step(`every ${every} rows`, async () => {
        const b = await csvRowBoundaries(path, every);
        assert.equal(b.rows, 1332);
        assert.equal(b.offsets.length - 1, Math.ceil(1332 / every));
        assert.equal(b.offsets.at(-1), b.bytes);
        const parts: Batch[] = [];
        for (let i = 0; i + 1 < b.offsets.length; i++) {
          const range = { start: b.offsets[i]!, end: b.offsets[i + 1]! };
          const part = await collect(
            whole.schema,
            readCsvRange(path, whole.schema, range, { batchRows: 97 }),
          );
          assert.equal(part.length, Math.min(every, 1332 - i * every), `range ${i}`);
          parts.push(part);
        }
        assertSameValues(concatBatches(whole.schema, parts), whole, true);
      });
    }
    await t.step(
      "csvRowRanges() gives the same ranges one by one, and may be left early",
      async () => {
        for (const every of [1, 100, 1332, 5000]) {
          const b = await csvRowBoundaries(path, every);
          const { header, ranges } = await csvRowRanges(path, every);
          assert.equal(header.dataStart, b.dataStart);
          const got: CsvRowRange[] = [];
          for await (const range of ranges) got.push(range);
          assert.deepEqual(
            got,
            b.offsets.slice(1).map((end, i) => ({
              start: b.offsets[i]!,
              end,
              rows: Math.min(every, 1332 - i * every),
            })),
          );
        }
        // Leaving after the first range closes the file (the test's sanitizer checks).
        const { ranges } = await csvRowRanges(path, 10);
        for await (const range of ranges) {
          assert.equal(range.rows, 10);
          break;
        }
      },
    );
    await t.step("quoted newlines, blank lines and a BOM", async () => {
      const b = await csvRowBoundaries(`${TESTDATA}quoted.csv`, 2);
      const header = await readCsvHeader(`${TESTDATA}quoted.csv`);
      assert.equal(header.dataStart, 3 + "id,name,note,amount\r\n".length);
      assert.equal(b.dataStart, header.dataStart);
      assert.equal(b.rows, 5);
      const whole = await readAll(`${TESTDATA}quoted.csv`);
      const parts: Batch[] = [];
      for (let i = 0; i + 1 < b.offsets.length; i++) {
        const range = { start: b.offsets[i]!, end: b.offsets[i + 1]! };
        parts.push(
          await collect(whole.schema, readCsvRange(`${TESTDATA}quoted.csv`, whole.schema, range)),
        );
      }
      assert.deepEqual(parts.map((p) => p.length), [2, 2, 1]);
      assertSameValues(concatBatches(whole.schema, parts), whole, true);
    });
    await t.step(
      "boundaries at every Nth record's end, wherever quotes, CRs and blank lines fall",
      async () => {
        // The cut reads 4 bytes at a time between quotes and CRs: records of every length
        // put each kind of byte at every place in a word.
        const p = `${dir}/mixed.csv`;
        const rng = new Rng(11);
        let text = "a,b\n";
        const ends: number[] = [];
        for (let r = 0; r < 2000; r++) {
          const pick = rng.int(10);
          const field = "x".repeat(rng.int(9));
          const cell = pick === 0 ? `"q\n${field}"` : pick === 1 ? `"${field}"""` : field;
          text += `${r},${cell}${pick === 2 ? "\r\n" : "\n"}`;
          ends.push(new TextEncoder().encode(text).length);
          if (rng.int(20) === 0) text += rng.int(2) === 0 ? "\n" : "\r\n";
        }
        await Deno.writeTextFile(p, text);
        for (const every of [1, 3, 64, 2000]) {
          const b = await csvRowBoundaries(p, every);
          assert.equal(b.rows, 2000);
          const want = [4, ...ends.filter((_, r) => (r + 1) % every === 0 && r + 1 < 2000)];
          assert.deepEqual(b.offsets.slice(0, -1), want, `every ${every}`);
          assert.equal(b.offsets.at(-1), text.length);
        }
      },
    );
    await t.step("blank lines are not rows", async () => {
      const p = `${dir}/blank.csv`;
      await Deno.writeTextFile(p, "a,b\n1,2\n\n3,4\r\n\r\n5,6\n");
      const b = await csvRowBoundaries(p, 2);
      assert.equal(b.rows, 3);
      const schema: Schema = [
        { name: "a", type: "int64", nullable: true },
        { name: "b", type: "int64", nullable: true },
      ];
      const first = await collect(
        schema,
        readCsvRange(p, schema, { start: b.offsets[0]!, end: b.offsets[1]! }),
      );
      assert.equal(first.length, 2);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openCsv() reads realistic files", {
  ignore: !existsSync("/tmp/vega/package/data/airports.csv"),
}, async (t) => {
  for (const name of ["airports.csv", "seattle-weather.csv", "stocks.csv"]) {
    await t.step(name, async () => {
      const path = `/tmp/vega/package/data/${name}`;
      const batch = await readAll(path);
      assert.ok(batch.length > 0);
      const dir = await makeTempDir();
      try {
        await writeOutput(`${dir}/out.csv`, batch.schema, [batch]);
        assertSameValues(await readAll(`${dir}/out.csv`), batch, true);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    });
  }
});

function existsSync(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("openCsv() reads CR, CRLF and LF line ends, mixed, as csvRowBoundaries cuts them", async (t) => {
  const dir = await makeTempDir();
  try {
    const expected = [[1n, "x"], [2n, "multi\rline"], [3n, null], [4n, "end"]];
    const files: [string, string][] = [
      ["CR only", 'a,b\r1,x\r2,"multi\rline"\r3,\r4,end\r'],
      ["mixed", 'a,b\r\n1,x\r2,"multi\rline"\n3,\r\n\r4,end'],
    ];
    for (const [what, text] of files) {
      await t.step(what, async () => {
        const path = `${dir}/lines.csv`;
        await Deno.writeTextFile(path, text);
        const whole = await readAll(path);
        assert.deepEqual(whole.schema.map((f) => f.name), ["a", "b"]);
        assert.deepEqual(rowsOf(whole), expected);
        const b = await csvRowBoundaries(path, 1);
        assert.equal(b.rows, 4);
        const parts: Batch[] = [];
        for (let i = 0; i + 1 < b.offsets.length; i++) {
          const range = { start: b.offsets[i]!, end: b.offsets[i + 1]! };
          parts.push(await collect(whole.schema, readCsvRange(path, whole.schema, range)));
        }
        assert.deepEqual(parts.map((p) => p.length), [1, 1, 1, 1]);
        assertSameValues(concatBatches(whole.schema, parts), whole, true);
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openCsv() reads a CRLF that straddles two reads as one line end", async () => {
  const dir = await makeTempDir();
  try {
    // One column, where a blank line is a null row: an extra empty record would show.
    const path = `${dir}/one.csv`;
    const head = "v\r\n";
    const row = "x".repeat(1021) + "\r\n"; // 1,023 bytes: the 1,025th row's CR is byte 2^20 - 1
    const filler = "y".repeat((1 << 20) - 1 - head.length - 1024 * row.length);
    const text = head + row.repeat(1024) + filler + "\r\nlast\r\n";
    assert.equal(text.indexOf("\r\nlast"), (1 << 20) - 1);
    await Deno.writeTextFile(path, text);
    const batch = await readAll(path);
    assert.equal(batch.length, 1026);
    assert.equal(cellValue(batch.columns[0]!, 1025), "last");
    assert.equal((await csvRowBoundaries(path, 1000)).rows, 1026);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openCsv() names the exact row and byte offset of invalid UTF-8", async () => {
  const dir = await makeTempDir();
  try {
    const path = `${dir}/bad.csv`;
    const lines = ["id,name"];
    for (let i = 1; i <= 120_000; i++) lines.push(`${i},n${i}`);
    const before = new TextEncoder().encode(lines.join("\n") + "\n120001,ab");
    const bytes = new Uint8Array(before.length + 2);
    bytes.set(before);
    bytes.set([0xff, 0x0a], before.length);
    await Deno.writeFile(path, bytes);
    await assert.rejects(readAll(path), (err) => {
      assert.ok(err instanceof IoError);
      assert.equal(err.code, "PARSE_FAILED");
      assert.equal(err.offset, before.length);
      assert.match(err.message, /data row 120001 is not valid UTF-8/);
      assert.match(err.message, new RegExp(`offset ${before.length}\\b`));
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readCsvHeader() refuses more than MAX_COLUMNS columns with TOO_MANY_COLUMNS", async () => {
  const dir = await makeTempDir();
  try {
    const header = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`).join(",");
    await Deno.writeTextFile(`${dir}/max.csv`, `${header(MAX_COLUMNS)}\n`);
    assert.equal((await readCsvHeader(`${dir}/max.csv`)).names.length, MAX_COLUMNS);
    const path = `${dir}/wide.csv`;
    await Deno.writeTextFile(path, `${header(MAX_COLUMNS + 1)}\n`);
    for (const read of [() => openCsv(path), () => csvRowBoundaries(path, 100)]) {
      await assert.rejects(read(), (err) => {
        assert.ok(err instanceof IoError);
        assert.equal(err.code, "TOO_MANY_COLUMNS");
        assert.match(err.message, /10001 columns, more than the 10000/);
        return true;
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a plain record (read in one pass) gives the values and errors of the record reader's path", async () => {
  // Quoting a field sends its record down the record reader's path with the same
  // cell text; an empty cell stays unquoted (quoted, it would be "" instead of null).
  const schema: Schema = [
    { name: "i", type: "int64", nullable: true },
    { name: "f", type: "float64", nullable: true },
    { name: "t", type: "timestamp", unit: "us", nullable: true },
    { name: "s", type: "string", nullable: true },
    { name: "b", type: "bool", nullable: true },
    { name: "d", type: "date", nullable: true },
  ];
  const good = [
    [
      "0",
      "-5",
      "7",
      "123456789012345",
      "-999999999999999",
      "1234567890123456",
      "-9223372036854775808",
      "",
    ],
    ["1.5", "-0", ".5", "NaN", "inf", "-Infinity", "1e300", "0.1", ""],
    [
      "2001-01-01 00:01:00",
      "2001-01-01T00:01:00Z",
      "2004-02-29 23:59:59",
      "2001-01-01 00:01:00.123456",
      "2001-01-01 00:01",
      "2001-01-01",
      "2001-01-01 00:01:00+05:30",
      "",
    ],
    ["abc", "a b", "ünïcödé", 'x"y', "2001-01-01 00:01:00", "-", ""],
    ["true", "FALSE", "True", ""],
    ["2001-01-01", "1999-12-31", ""],
  ];
  const bad = [
    ["-0", "007", "00", "-", "+1", "1e3", "12 ", "99999999999999999999", "1.0"],
    ["abc", "1..2", "0.30000000000000001", "--1"],
    ["2001-02-29 00:00:00", "2001-01-01 24:00:00", "2001-01-01 00:01:00.1234567", "x"],
    [],
    ["yes", "1"],
    ["2001-13-01", "01/01/2001"],
  ];
  let x = 5;
  const next = (n: number) => (x = (x * 1103515245 + 12345) % 2147483648) % n;
  const quote = (cell: string) => cell === "" ? "" : `"${cell.replaceAll('"', '""')}"`;
  const rows = Array.from({ length: 400 }, () => good.map((cells) => cells[next(cells.length)]!));
  const dir = await makeTempDir();
  try {
    const read = async (name: string, lines: string[][], quoted: boolean) => {
      const path = `${dir}/${name}.csv`;
      const text = lines.map((r) => r.map((c) => quoted ? quote(c) : c).join(",")).join("\n");
      await Deno.writeTextFile(path, `${schema.map((f) => f.name).join(",")}\n${text}\n`);
      const start = (await readCsvHeader(path)).dataStart;
      const end = (await Deno.stat(path)).size;
      return await collect(schema, readCsvRange(path, schema, { start, end }, { batchRows: 64 }));
    };
    const plain = await read("plain", rows, false);
    assert.equal(plain.length, 400);
    assertSameValues(plain, await read("quoted", rows, true), true);
    for (const [c, cells] of bad.entries()) {
      for (const cell of cells) {
        const lines = rows.slice(0, 50).map((r) => [...r]);
        lines[33]![c] = cell;
        const errors: string[] = [];
        for (const quoted of [false, true]) {
          await assert.rejects(read(`bad${c}`, lines, quoted), (err: IoError) => {
            errors.push(`${err.code}: ${err.message}`);
            return true;
          });
        }
        assert.match(errors[0]!, /^SCHEMA_MISMATCH: .* row 34\b/, cell);
        assert.equal(errors[0]!.replace(/csv'/, ""), errors[1]!.replace(/csv'/, ""), cell);
      }
    }
    // Too few and too many fields, a CR line end, and a blank line: the reader's path.
    const odd = rows.slice(0, 20).map((r) => r.join(","));
    odd[5] = odd[5] + "\r";
    odd[9] = "";
    const path = `${dir}/odd.csv`;
    await Deno.writeTextFile(path, `i,f,t,s,b,d\n${odd.join("\n")}\n`);
    const start = (await readCsvHeader(path)).dataStart;
    const got = await collect(
      schema,
      readCsvRange(path, schema, { start, end: (await Deno.stat(path)).size }),
    );
    assert.equal(got.length, 19);
    for (
      const [line, message] of [[`${odd[0]},x`, /has 7 fields/], [
        odd[0]!.slice(0, odd[0]!.lastIndexOf(",")),
        /has 5 fields/,
      ]] as const
    ) {
      await Deno.writeTextFile(path, `i,f,t,s,b,d\n${odd[1]}\n${line}\n`);
      await assert.rejects(
        collect(schema, readCsvRange(path, schema, { start, end: (await Deno.stat(path)).size })),
        message,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openCsv() gives short texts codes into a dictionary of distinct texts, each row its code's entry", async () => {
  const dir = await makeTempDir();
  const path = `${dir}/codes.csv`;
  const long = "a text longer than seven";
  await Deno.writeTextFile(path, `k,n\nOSL,1\nJFK,2\n"OSL",3\nOSL,4\n${long},5\n,6\nJFK,7\n`);
  const src = await openCsv(path, { batchRows: 4 });
  const values: string[] = [];
  for await (const batch of src.batches()) {
    const column = batch.columns[0]!;
    assert.equal(column.type, "string");
    const texts = column.values as string[];
    const coded = codesOf(texts);
    assert.ok(coded !== undefined);
    assert.equal(coded.codes.length, texts.length);
    assert.equal(new Set(coded.dictionary).size, coded.dictionary.length);
    for (const [i, v] of texts.entries()) {
      // A row read otherwise (quoted, long, null) may hold any code, never a wrong one.
      if (v === coded.dictionary[coded.codes[i]!]) assert.ok(["OSL", "JFK"].includes(v));
      else assert.ok([long, "OSL", ""].includes(v));
      values.push(column.validity?.[i] === 0 ? "null" : v);
    }
  }
  assert.deepEqual(values, ["OSL", "JFK", "OSL", "OSL", long, "null", "JFK"]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("openCsv() codes up to 65,536 distinct short texts of a column, past its table's growths, and reads the rest as texts", async () => {
  const dir = await makeTempDir();
  const path = `${dir}/many_codes.csv`;
  // 70,000 distinct texts of 1 to 7 characters (past MAX_SHARED_TEXTS), each twice.
  const text = (i: number) => `t${i.toString(36)}`.slice(0, 7);
  const rows: string[] = [];
  for (let i = 0; i < 70_000; i++) rows.push(`${text(i)},${i}`);
  for (let i = 0; i < 70_000; i++) rows.push(`${text(i)},${i}`);
  await Deno.writeTextFile(path, `k,n\n${rows.join("\n")}\n`);
  const src = await openCsv(path, { batchRows: 140_000, types: { k: "string" } });
  let seen = 0;
  for await (const batch of src.batches()) {
    const texts = batch.columns[0]!.values as string[];
    const coded = codesOf(texts);
    assert.ok(coded !== undefined);
    assert.equal(coded.dictionary.length, 65_536);
    assert.equal(new Set(coded.dictionary).size, 65_536);
    let entries = 0;
    for (let r = 0; r < texts.length; r++) {
      assert.equal(texts[r], text(r % 70_000));
      if (texts[r] === coded.dictionary[coded.codes[r]!]) entries++;
    }
    // Every row of the first 65,536 texts is its code's entry, in order of appearance.
    assert.equal(entries, 2 * 65_536);
    assert.equal(coded.dictionary[1234], text(1234));
    seen += texts.length;
  }
  assert.equal(seen, 140_000);
  await Deno.remove(dir, { recursive: true });
});
