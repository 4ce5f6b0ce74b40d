/**
 * Tests of a CSV range read from bytes already read (`readCsvRange` with `bytes`, a
 * freeze Worker's chunk), whose plain records are read as bytes before any text is
 * decoded: the same batches, codes and errors as the range read from the file as text,
 * on random files of every record shape (nulls, quotes, CRLF, blank lines, long and
 * non-ASCII texts, timestamps of other forms, cells that do not fit).
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Batch, Schema } from "../format/column.ts";
import { codesOf } from "../format/coded_strings.ts";
import { readCsvRange } from "./csv.ts";

const TMP = ".tmp/io_csv_bytes";
await Deno.remove(TMP, { recursive: true }).catch(() => {});
await Deno.mkdir(TMP, { recursive: true });

const SCHEMA: Schema = [
  { name: "id", type: "int64", nullable: true },
  { name: "at", type: "timestamp", unit: "us", nullable: true },
  { name: "city", type: "string", nullable: true },
  { name: "note", type: "string", nullable: true },
];

/** A batch's values, validity and string codes, comparable with deepEqual. */
function shape(batch: Batch) {
  return {
    length: batch.length,
    columns: batch.columns.map((c) => {
      const values = c.values as ArrayLike<unknown>;
      const coded = c.type === "string" ? codesOf(c.values as string[]) : undefined;
      return {
        values: Array.from(values),
        validity: c.validity ? [...c.validity] : null,
        codes: coded ? { codes: [...coded.codes], dictionary: [...coded.dictionary] } : null,
      };
    }),
  };
}

async function read(path: string, bytes: Uint8Array, given: boolean, batchRows: number) {
  const out: ReturnType<typeof shape>[] = [];
  try {
    const batches = readCsvRange(path, SCHEMA, { start: 0, end: bytes.length }, {
      delimiter: ",",
      batchRows,
      origin: { firstRow: 0 },
      ...(given ? { bytes } : {}),
    });
    for await (const batch of batches) out.push(shape(batch));
    return { out, error: null };
  } catch (err) {
    return { out, error: String(err) };
  }
}

Deno.test("a range read as bytes gives the batches, codes and errors of the range read as text", async () => {
  let seed = 11;
  const random = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const pick = <T>(xs: readonly T[]) => xs[random(xs.length)]!;
  const plain = () => [
    String(random(3) === 0 ? -random(1000) : random(2000)),
    `20${10 + random(10)}-0${1 + random(9)}-1${random(10)} 1${random(10)}:3${random(10)}:0${
      random(10)
    }`,
    pick(["LAS", "PHL", "ATL", "SAV", "SFO", "JFK", "BOS"]),
    pick(["a", "bb", "ccc", "dddd", "sixsix", "seven77", "eight888", "e"]),
  ];
  // Cells of every other shape, for one field of a record now and then.
  const odd: (() => [number, string])[] = [
    () => [0, ""],
    () => [2, ""],
    () => [3, '"quoted, with a comma"'],
    () => [3, "a long text of many characters"],
    () => [2, "Zürich"],
    () => [1, "2020-01-01T10:00:00"],
    () => [1, "2020-01-01 10:00:00.5"],
    () => [1, "2020-02-30 10:00:00"],
    () => [1, "2020-01-01"],
    () => [0, "007"],
    () => [0, "-0"],
    () => [0, "12345678901234567"],
    () => [0, "x1"],
    () => [3, 'in"side'],
  ];
  for (let round = 0; round < 150; round++) {
    const lines: string[] = [];
    const rows = 1 + random(40);
    for (let r = 0; r < rows; r++) {
      const cells = plain();
      if (random(4) === 0) {
        const [at, cell] = pick(odd)();
        cells[at] = cell;
      }
      let line = cells.join(",");
      if (random(15) === 0) line += "\r";
      lines.push(line);
      if (random(20) === 0) lines.push("");
    }
    const text = lines.join("\n") + (random(5) === 0 ? "" : "\n");
    const path = `${TMP}/r${round}.csv`;
    await Deno.writeTextFile(path, text);
    const bytes = await Deno.readFile(path);
    const batchRows = 1 + random(30);
    const asText = await read(path, bytes, false, batchRows);
    const asBytes = await read(path, bytes, true, batchRows);
    assert.ok(asText.error !== null || asText.out.length > 0);
    assert.deepEqual(asBytes, asText, `round ${round}:\n${text}`);
  }
});
