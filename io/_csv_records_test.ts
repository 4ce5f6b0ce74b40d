/**
 * Tests of `_csv_records.ts`: the text splitter and the byte scanner agree on line
 * ends (LF, CRLF, a lone CR) however the input is cut into buffers.
 *
 * @module
 */
import assert from "node:assert/strict";
import { CsvByteScanner } from "./_csv_records.ts";
import { csvRecordEnds, csvRecords } from "./_test_utils.ts";
import { IoError } from "./errors.ts";

const encoder = new TextEncoder();

/** Record ends of `text` through `CsvByteScanner`, fed in buffers cut at `cuts`. */
function recordEnds(text: string, cuts: number[]): number[] {
  return csvRecordEnds(encoder.encode(text), cuts);
}

Deno.test("CsvRecordReader.next() ends records at LF, CRLF and a lone CR", async (t) => {
  await t.step("CR only", async () => {
    assert.deepEqual(await csvRecords(["a,b\r1,2\r3,4\r"]), [["a", "b"], ["1", "2"], ["3", "4"]]);
  });
  await t.step("mixed line ends, and no line end at the end", async () => {
    assert.deepEqual(await csvRecords(["a,b\n1,2\r\n3,4\r5,6"]), [
      ["a", "b"],
      ["1", "2"],
      ["3", "4"],
      ["5", "6"],
    ]);
  });
  await t.step(
    "a CR inside a quoted field is data; one after a closing quote ends the record",
    async () => {
      assert.deepEqual(await csvRecords(['a,b\r"x\ry",2\r"q"\r']), [
        ["a", "b"],
        ["x\ry", "2"],
        ["q"],
      ]);
    },
  );
  await t.step("a CRLF split across buffers is one line end, not an empty record", async () => {
    assert.deepEqual(await csvRecords(["a\r", "\nb\r", "\n", "c"]), [["a"], ["b"], ["c"]]);
    assert.deepEqual(await csvRecords(['"a"\r', "\nb"]), [["a"], ["b"]]);
  });
  await t.step(
    "a lone CR at a buffer's end ends its record once the next byte is read",
    async () => {
      assert.deepEqual(await csvRecords(["a\r", "b\r"]), [["a"], ["b"]]);
    },
  );
  await t.step("blank lines of every kind", async () => {
    assert.deepEqual(await csvRecords(["a\r\r\n\n\rb"]), [["a"], [null], [null], [null], ["b"]]);
  });
});

Deno.test("CsvByteScanner.recordEnd() agrees with CsvRecordReader on every line end and cut", async () => {
  const text = 'h1,h2\r1,"x\ry"\r\n2,3\n"q""",4\r\r\n5,6\r';
  const expected = [6, 15, 19, 27, 29, 33];
  for (let cut = 0; cut <= text.length; cut++) {
    assert.deepEqual(recordEnds(text, cut === 0 ? [] : [cut]), expected, `cut at ${cut}`);
  }
  assert.deepEqual((await csvRecords([text])).length, expected.length);
});

Deno.test("CsvByteScanner.recordEnd() waits for the byte after a CR at the buffer's end", () => {
  const scanner = new CsvByteScanner(44);
  assert.equal(scanner.recordEnd(encoder.encode("a,b\r"), 0, false), -1);
  scanner.reset();
  assert.equal(scanner.recordEnd(encoder.encode("a,b\r"), 0, true), 4);
  scanner.reset();
  assert.equal(scanner.recordEnd(encoder.encode('"a",b\r'), 0, false), -1);
});

Deno.test("CsvRecordReader.fill() names the record and byte offset of invalid UTF-8", async () => {
  const bad = new Uint8Array([0x78, 0xff, 0x0a]);
  await assert.rejects(csvRecords(["a\nb\nc\n", "d\ne", bad, "f\n"]), (err) => {
    assert.ok(err instanceof IoError);
    assert.equal(err.code, "PARSE_FAILED");
    assert.equal(err.offset, 10);
    assert.match(err.message, /data row 5 is not valid UTF-8 \(the bad byte is at offset 10\)/);
    return true;
  });
});
