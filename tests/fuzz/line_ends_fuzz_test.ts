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
import { CsvByteScanner, CsvRecordReader, END, NEED_MORE } from "../../io/_csv_records.ts";
import { collect, makeTempDir, Rng } from "../../io/_test_utils.ts";

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

async function* cutInto(bytes: Uint8Array, cuts: number[]): AsyncGenerator<Uint8Array> {
  let at = 0;
  for (const c of [...cuts, bytes.length]) {
    yield bytes.slice(at, c);
    at = c;
  }
}

function randomCuts(rng: Rng, n: number): number[] {
  const cuts = new Set<number>();
  for (let k = rng.int(6); k > 0; k--) cuts.add(rng.int(n + 1));
  return [...cuts].sort((a, b) => a - b);
}

/** Records of `bytes` fed in buffers cut at `cuts`, through the record splitter. */
async function splitRecords(bytes: Uint8Array, cuts: number[]): Promise<(string | null)[][]> {
  const rr = new CsvRecordReader(cutInto(bytes, cuts), {
    delimiter: 44,
    capacity: 2,
    growable: true,
    path: "fuzz.csv",
    where: (r) => `record ${r + 1}`,
  });
  const out: (string | null)[][] = [];
  for (;;) {
    const st = rr.next();
    if (st === NEED_MORE) {
      await rr.fill();
      continue;
    }
    if (st === END) return out;
    out.push(Array.from({ length: rr.count }, (_, i) => rr.field(i)));
  }
}

/** Record ends of `bytes` fed in buffers cut at `cuts`, through the byte scanner. */
function scanEnds(bytes: Uint8Array, cuts: number[]): number[] {
  const scanner = new CsvByteScanner(44);
  const bounds = [...cuts, bytes.length];
  const ends: number[] = [];
  let buf = new Uint8Array(0);
  let base = 0;
  let pos = 0;
  let fed = 0;
  for (;;) {
    const final = fed >= bounds.length;
    if (pos >= buf.length && final) return ends;
    const end = pos >= buf.length ? -1 : scanner.recordEnd(buf, pos, final);
    if (end >= 0) {
      ends.push(base + end);
      pos = end;
      continue;
    }
    const more = final ? new Uint8Array(0) : bytes.subarray(bounds[fed - 1] ?? 0, bounds[fed]);
    fed++;
    const next = new Uint8Array(buf.length - pos + more.length);
    next.set(buf.subarray(pos));
    next.set(more, buf.length - pos);
    base += pos;
    buf = next;
    pos = 0;
    scanner.reset();
  }
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
      assert.deepEqual(await splitRecords(bytes, cuts), [table.names, ...table.rows], what);
      const ends = scanEnds(bytes, []);
      assert.equal(ends.length, table.rows.length + 1, what);
      assert.deepEqual(scanEnds(bytes, cuts), ends, `${what}, cut at ${cuts}`);

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
