import assert from "node:assert/strict";
import { foreignFile } from "./foreign.ts";

Deno.test("foreignFile() names the files people give by mistake, and nothing else", () => {
  const text = (t: string) => new TextEncoder().encode(t);
  const cases: [Uint8Array, RegExp | null][] = [
    [
      text("PAR1\x15\x04"),
      /^a Parquet file, not a Permafrost archive; freeze it first: permafrost freeze x /,
    ],
    [text("ARROW1\0\0"), /^an Arrow IPC file/],
    [Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x10, 0, 0, 0), /^an Arrow IPC stream/],
    [Uint8Array.of(0x1f, 0x8b, 8, 0), /^a gzip file, not a Permafrost archive$/],
    [Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0), /^a zstd file/],
    [text("PK\x03\x04\x14\0"), /^a zip file \(an xlsx workbook\?\)/],
    [text("SQLite format 3\0"), /^an SQLite database/],
    [Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0x44, 0x55, 0x43, 0x4b), /^a DuckDB database/],
    [text("id,city\n1,Paris\n"), /^a CSV file/],
    [text('\ufeff{"a":1}\n'), /^a JSON-lines file/],
    [text("caf\u00e9,x\n1,\u00e9"), /^a CSV file/],
    [Uint8Array.of(0, 1, 2, 3, 4), null],
    [new Uint8Array(0), null],
  ];
  for (const [head, expected] of cases) {
    const got = foreignFile(head, "x");
    if (expected === null) assert.equal(got, null);
    else assert.match(got ?? "", expected);
  }
});
