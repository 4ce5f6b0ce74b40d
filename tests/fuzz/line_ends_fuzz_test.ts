/**
 * CSV line ends under random mixes of CR, LF and CRLF: random tables (cells holding
 * CR, LF, quotes, delimiters, unicode, empty strings and nulls) are written as CSV
 * with a random line end after each record, then read back three ways — the reader
 * (`openCsv`), the cluster's cut (`csvRowBoundaries` + `readCsvRange`), and the record
 * splitter and byte scanner fed the bytes in randomly cut buffers — and every way must
 * give exactly the table written. Fuzzed by case count, with seeds, so a failure
 * reproduces.
 */
import assert from "node:assert/strict";
import { type Batch, cellValue, concatBatches, type Schema } from "../../format/column.ts";
import { csvRowBoundaries, openCsv, readCsvRange } from "../../io/csv.ts";
import {
  collect,
  csvRecordEnds,
  csvRecords,
  cutBytes,
  makeTempDir,
  Rng,
} from "../../io/_test_utils.ts";

const CASES = 200;
const LINE_ENDS = ["\r", "\n", "\r\n"];
const PIECES = ["a", "b", "7", " ", ",", '"', '""', "\r", "\n", "\r\n", "é", "😀", "x y"];
const encoder = new TextEncoder();

type Table = { names: string[]; rows: (string | null)[][] };

function randomTable(rng: Rng): Table {
  const ncols = 1 + rng.int(4);
  const names = Array.from({ length: ncols }, (_, i) => `c${i}`);
  const rows = Array.from({ length: rng.int(40) }, () =>
    names.map((): string | null => {
      const r = rng.int(8);
      if (r === 0) return null;
      if (r === 1) return "";
      let s = "";
      for (let k = 1 + rng.int(5); k > 0; k--) s += rng.pick(PIECES);
      return s;
    }));
  return { names, rows };
}

function csvField(v: string | null): string {
  if (v === null) return "";
  if (v === "" || /[",\r\n]/.test(v)) return `"${v.replaceAll('"', '""')}"`;
  return v;
}

function csvText(rng: Rng, t: Table): string {
  const records = [t.names, ...t.rows].map((r) => r.map(csvField).join(","));
  let text = "";
  records.forEach((r, i) => {
    // Only an empty last record needs its line end (without it, it is no record).
    const last = i === records.length - 1 && r !== "";
    let end = last && rng.int(4) === 0 ? "" : rng.pick(LINE_ENDS);
    // A CR, then an empty record ended by LF, is the bytes of one CRLF: no reader can
    // tell them apart, so write that empty record's end as CR or CRLF.
    if (r === "" && end === "\n" && text.endsWith("\r")) end = "\r";
    text += r + end;
  });
  return text;
}

function rowsOf(batch: Batch): (string | null)[][] {
  const out: (string | null)[][] = [];
  for (let r = 0; r < batch.length; r++) {
    out.push(batch.columns.map((c) => cellValue(c, r) as string | null));
  }
  return out;
}

function randomCuts(rng: Rng, n: number): number[] {
  const cuts = new Set<number>();
  for (let k = rng.int(6); k > 0; k--) cuts.add(rng.int(n + 1));
  return [...cuts].sort((a, b) => a - b);
}

Deno.test("CSV round-trips exactly under random mixes of CR, LF and CRLF line ends", async () => {
  const dir = await makeTempDir();
  try {
    for (let seed = 1; seed <= CASES; seed++) {
      const rng = new Rng(seed);
      const table = randomTable(rng);
      const text = csvText(rng, table);
      const bytes = encoder.encode(text);
      const what = `seed ${seed}: ${JSON.stringify(text)}`;

      const cuts = randomCuts(rng, bytes.length);
      assert.deepEqual(await csvRecords(cutBytes(bytes, cuts)), [table.names, ...table.rows], what);
      const ends = csvRecordEnds(bytes, []);
      assert.equal(ends.length, table.rows.length + 1, what);
      assert.deepEqual(csvRecordEnds(bytes, cuts), ends, `${what}, cut at ${cuts}`);

      const path = `${dir}/fuzz.csv`;
      await Deno.writeFile(path, bytes);
      const types = Object.fromEntries(table.names.map((n) => [n, "string" as const]));
      const src = await openCsv(path, { types });
      const schema: Schema = src.schema;
      const whole = await collect(schema, src.batches());
      assert.deepEqual(rowsOf(whole), table.rows, what);

      const every = 1 + rng.int(7);
      const b = await csvRowBoundaries(path, every);
      assert.equal(b.rows, table.rows.length, what);
      const parts: Batch[] = [];
      for (let i = 0; i + 1 < b.offsets.length; i++) {
        const range = { start: b.offsets[i]!, end: b.offsets[i + 1]! };
        parts.push(await collect(schema, readCsvRange(path, schema, range, { batchRows: 3 })));
      }
      assert.deepEqual(rowsOf(concatBatches(schema, parts)), table.rows, `${what}, every ${every}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
