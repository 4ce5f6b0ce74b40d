import assert from "node:assert/strict";
import { join } from "node:path";
import { csvDialect, SNIFF_BYTES, sniffText } from "./csv_dialect.ts";
import { csvRowBoundaries, openCsv, readCsvRange } from "./csv.ts";
import { openSource } from "./source.ts";
import { type Batch, cellValue } from "../format/column.ts";

const TMP = ".tmp/io_csv_dialect";
await Deno.mkdir(TMP, { recursive: true });

Deno.test("sniffText() tells , ; tab and | apart, quote-aware", () => {
  const cases: [string, string, boolean][] = [
    ["a,b,c\n1,2,3\n4,5,6\n", ",", true],
    ["a;b\n1,5;2\n3,25;4\n", ";", true],
    ["name\tcity\nAda\tLondon\n", "\t", true],
    ["id|v\n1|x\n2|y\n", "|", true],
    ['a,b\n"x;y;z",2\n"p;q",3\n', ",", true],
    ['a;b\n"1,2,3";4\n"5,6";7\n', ";", true],
    ["a;b;c\n", ";", true],
    ["\ufeffa;b\r\n1;2\r\n", ";", true],
    ["single\n1\n2\n", ",", false],
    ["", ",", false],
  ];
  for (const [text, delimiter, sniffed] of cases) {
    const d = sniffText(text);
    assert.equal(d.delimiter, delimiter, JSON.stringify(text));
    assert.equal(d.sniffed, sniffed, JSON.stringify(text));
  }
  assert.equal(sniffText('a,b\n"x",1\n').quoted, true);
  assert.equal(sniffText("a,b\nx,1\n").quoted, false);
});

Deno.test("sniffText() ignores a last line cut short and lines past the sample", () => {
  const rows = Array.from({ length: 300 }, (_, i) => `${i};v${i}`).join("\n");
  assert.equal(sniffText(`a;b\n${rows}\n12;half,cut`).delimiter, ";");
});

Deno.test("csvDialect() keeps a given delimiter and reads only the file's start", async () => {
  const path = join(TMP, "big.csv");
  const line = "a;b\n" + "1;2\n".repeat(Math.ceil((2 * SNIFF_BYTES) / 4));
  await Deno.writeTextFile(path, line);
  assert.deepEqual(await csvDialect(path), { delimiter: ";", sniffed: true, quoted: false });
  assert.deepEqual(await csvDialect(path, ","), { delimiter: ",", sniffed: false, quoted: false });
});

async function rowsOf(batches: AsyncIterable<Batch>): Promise<unknown[][]> {
  const out: unknown[][] = [];
  for await (const b of batches) {
    for (let r = 0; r < b.length; r++) {
      out.push(b.columns.map((c) => cellValue(c, r)));
    }
  }
  return out;
}

Deno.test("openSource() reads ;, tab (.tsv) and | files as their columns, and says how", async () => {
  const files: [string, string][] = [
    ["semi.csv", "city;temp\nParis;12,5\nLyon;9\n"],
    ["tabs.tsv", "city\ttemp\nParis\t12.5\nLyon\t9\n"],
    ["pipes.psv", "city|temp\nParis|12.5\nLyon|9\n"],
  ];
  for (const [name, text] of files) {
    const path = join(TMP, name);
    await Deno.writeTextFile(path, text);
    const source = await openSource(path);
    assert.deepEqual(source.schema.map((f) => f.name), ["city", "temp"], name);
    assert.equal(source.dialect?.sniffed, true, name);
    assert.equal((await rowsOf(source.batches())).length, 2, name);
    await source.close();
  }
});

Deno.test("the cluster's row boundaries and ranges read a ; file as the local reader does", async () => {
  const path = join(TMP, "split.csv");
  const lines = ["id;label"];
  for (let i = 0; i < 1000; i++) lines.push(`${i};"item; ${i}"`);
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
  const local = await openCsv(path);
  const whole = await rowsOf(local.batches());
  const { offsets } = await csvRowBoundaries(path, 300);
  const pieces: unknown[][] = [];
  for (let i = 0; i + 1 < offsets.length; i++) {
    pieces.push(
      ...await rowsOf(
        readCsvRange(path, local.schema, { start: offsets[i]!, end: offsets[i + 1]! }),
      ),
    );
  }
  assert.equal(whole.length, 1000);
  assert.deepEqual(pieces, whole);
  assert.equal(local.schema.length, 2);
});
