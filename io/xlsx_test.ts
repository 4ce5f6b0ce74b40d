import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import process from "node:process";
import type ExcelJSTypes from "exceljs";
import type { Batch, Schema } from "../format/column.ts";
import { IoError } from "./errors.ts";
import { writeOutput } from "./output.ts";
import { columnLetters, writeXlsx, xmlText } from "./xlsx.ts";
import { makeTempDir } from "./_test_utils.ts";

const SCHEMA: Schema = [
  { name: "id", type: "int64", nullable: true },
  { name: "x", type: "float64", nullable: true },
  { name: "ok", type: "bool", nullable: true },
  { name: "name & <note>", type: "string", nullable: true },
  { name: "day", type: "date", nullable: true },
  { name: "at", type: "timestamp", nullable: true, unit: "ms", timezone: "UTC" },
];

const DAY = (y: number, m: number, d: number) => BigInt(Date.UTC(y, m - 1, d) / 86_400_000);

const BATCH: Batch = {
  schema: SCHEMA,
  length: 5,
  columns: [
    {
      type: "int64",
      values: BigInt64Array.of(1n, -42n, 9007199254740993n, 0n, 7n),
      validity: Uint8Array.of(1, 1, 1, 0, 1),
    },
    {
      type: "float64",
      values: Float64Array.of(0.1, -2.5e300, NaN, Infinity, 3),
      validity: null,
    },
    { type: "bool", values: Uint8Array.of(1, 0, 1, 0, 0), validity: Uint8Array.of(1, 1, 1, 1, 0) },
    {
      type: "string",
      values: [
        "héllo 日本語 🧊",
        "a<b & c>d",
        "  padded  ",
        "ctl\u0001 _x0041_ end",
        "line\nbreak",
      ],
      validity: null,
    },
    {
      type: "date",
      values: BigInt64Array.of(DAY(2001, 2, 1), DAY(1999, 12, 31), DAY(1850, 6, 1), 0n, 0n),
      validity: Uint8Array.of(1, 1, 1, 1, 0),
    },
    {
      type: "timestamp",
      values: BigInt64Array.of(
        BigInt(Date.UTC(2001, 1, 1, 10, 30, 15, 250)),
        BigInt(Date.UTC(2024, 11, 31, 23, 59, 59)),
        0n,
        0n,
        0n,
      ),
      validity: Uint8Array.of(1, 1, 1, 0, 0),
    },
  ],
};

// exceljs (a real xlsx reader) loads fstream, which reads the umask at import time;
// the test task grants no --allow-sys, so answer the usual default instead.
process.umask = (() => 0o022) as typeof process.umask;
const { default: ExcelJS } = await import("exceljs");

async function readBack(path: string): Promise<ExcelJSTypes.Workbook> {
  const wb = new ExcelJS.Workbook();
  // exceljs's Buffer type comes from another @types/node than Deno's: same bytes.
  const bytes = Buffer.from(await Deno.readFile(path));
  await wb.xlsx.load(bytes as unknown as Parameters<typeof wb.xlsx.load>[0]);
  return wb;
}

Deno.test("writeOutput() to .xlsx writes a workbook exceljs reads back with typed cells", async () => {
  const dir = await makeTempDir();
  try {
    const path = `${dir}/out.xlsx`;
    const result = await writeOutput(path, SCHEMA, [BATCH]);
    assert.equal(result.rows, 5);
    const wb = await readBack(path);
    assert.equal(wb.worksheets.length, 1);
    const ws = wb.worksheets[0]!;
    assert.equal(ws.rowCount, 6);
    assert.deepEqual(
      (ws.getRow(1).values as unknown[]).slice(1),
      SCHEMA.map((f) => f.name),
    );
    assert.equal(ws.getRow(1).font?.bold ?? ws.getCell("A1").font?.bold, true);
    const row = (r: number) => (ws.getRow(r).values as unknown[]).slice(1);
    assert.deepEqual(row(2), [
      1,
      0.1,
      true,
      "héllo 日本語 🧊",
      new Date(Date.UTC(2001, 1, 1)),
      new Date(Date.UTC(2001, 1, 1, 10, 30, 15, 250)),
    ]);
    assert.deepEqual(row(3), [
      -42,
      -2.5e300,
      false,
      "a<b & c>d",
      new Date(Date.UTC(1999, 11, 31)),
      new Date(Date.UTC(2024, 11, 31, 23, 59, 59)),
    ]);
    // Beyond 2^53 an int64 is text (exact); NaN is text; a date before 1900-03-01 is ISO text.
    assert.equal(ws.getCell("A4").value, "9007199254740993");
    assert.equal(ws.getCell("B4").value, "NaN");
    assert.equal(ws.getCell("C4").value, true);
    assert.equal(ws.getCell("D4").value, "  padded  ");
    assert.equal(ws.getCell("E4").value, "1850-06-01");
    // Nulls are empty cells.
    assert.equal(ws.getCell("A5").value, null);
    assert.equal(ws.getCell("B5").value, "Infinity");
    assert.equal(ws.getCell("F5").value, null);
    assert.equal(ws.getCell("C6").value, null);
    assert.equal(ws.getCell("D6").value, "line\nbreak");
    assert.equal(ws.getCell("E6").value, null);
    assert.equal(ws.getCell("E2").numFmt, "yyyy-mm-dd");
    assert.equal(ws.getCell("F2").numFmt, "yyyy-mm-dd hh:mm:ss.000");
    // A control character XML cannot hold travels as ECMA-376's _xHHHH_ escape (Excel
    // decodes it; exceljs shows it raw), and a literal _xHHHH_ is protected by _x005F_.
    assert.equal(ws.getCell("D5").value, "ctl_x0001_ _x005F_x0041_ end");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeXlsx() refuses rows past the sheet limit unless asked to split, then repeats the header", async () => {
  const dir = await makeTempDir();
  try {
    const schema: Schema = [{ name: "n", type: "int64", nullable: false }];
    const batch: Batch = {
      schema,
      length: 7,
      columns: [{
        type: "int64",
        values: BigInt64Array.of(1n, 2n, 3n, 4n, 5n, 6n, 7n),
        validity: null,
      }],
    };
    const once = async function* () {
      yield batch;
    };
    const file = await Deno.open(`${dir}/refused.xlsx`, { write: true, create: true });
    try {
      await assert.rejects(
        writeXlsx(file, schema, once(), { sheetRows: 3 }),
        (e) =>
          e instanceof IoError && e.code === "INVALID_OPTION" && /--split-sheets/.test(e.message),
      );
    } finally {
      file.close();
    }
    const split = await Deno.open(`${dir}/split.xlsx`, { write: true, create: true });
    try {
      assert.equal(await writeXlsx(split, schema, once(), { sheetRows: 3, splitSheets: true }), 7);
    } finally {
      split.close();
    }
    const wb = await readBack(`${dir}/split.xlsx`);
    assert.deepEqual(wb.worksheets.map((w) => w.name), ["Sheet1", "Sheet2", "Sheet3"]);
    assert.deepEqual(
      wb.worksheets.map((w) => w.getSheetValues().slice(1).map((r) => (r as unknown[])[1])),
      [["n", 1, 2, 3], ["n", 4, 5, 6], ["n", 7]],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeOutput() to .xlsx of no rows writes a header-only sheet", async () => {
  const dir = await makeTempDir();
  try {
    await writeOutput(`${dir}/empty.xlsx`, SCHEMA, []);
    const ws = (await readBack(`${dir}/empty.xlsx`)).worksheets[0]!;
    assert.equal(ws.rowCount, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("xmlText() escapes markup, control characters and literal _xHHHH_ escapes", () => {
  assert.equal(xmlText(`a&b<c>"d"`), "a&amp;b&lt;c&gt;&quot;d&quot;");
  assert.equal(xmlText("x\u0001y"), "x_x0001_y");
  assert.equal(xmlText("_x0041_"), "_x005F_x0041_");
  assert.equal(columnLetters(25), "Z");
  assert.equal(columnLetters(26), "AA");
});
