/**
 * Tests of `_csv_cut_simd.ts`: the Wasm SIMD count gives what a byte-by-byte count
 * gives, wherever LFs, blank lines, quotes and CRs fall in its 16-byte loads.
 *
 * @module
 */
import assert from "node:assert/strict";
import { CutArea, type PlainScan } from "./_csv_cut_simd.ts";
import { Rng } from "./_test_utils.ts";

/** The count byte by byte, as `plainRecords` in `csv.ts` makes it. */
function reference(bytes: Uint8Array, pos: number, need: number, one: boolean): PlainScan {
  let records = 0;
  let start = pos;
  let lastLf = -1;
  for (let i = pos; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c === 10) {
      if (one || i > start) {
        if (++records === need) return { records, end: i + 1, lastLf: -1 };
      }
      start = i + 1;
      lastLf = i;
    } else if (c === 34 || c === 13) break;
  }
  return { records, end: -1, lastLf };
}

Deno.test("CutArea.scan() counts plain records as a byte-by-byte count does", () => {
  const area = CutArea.open(64);
  assert.ok(area, "WebAssembly SIMD runs in Deno");
  const rng = new Rng(5);
  const alphabet = [...'ab,1\n\n\n\n"\r'].map((c) => c.charCodeAt(0));
  for (let t = 0; t < 3000; t++) {
    const length = rng.int(200);
    const bytes = new Uint8Array(length);
    const special = rng.int(3) === 0; // quotes and CRs rare or absent
    for (let i = 0; i < length; i++) {
      const c = alphabet[rng.int(special ? alphabet.length : alphabet.length - 2)]!;
      bytes[i] = c;
    }
    area.reserve(length);
    area.room.set(bytes);
    area.setLength(length);
    const pos = length === 0 ? 0 : rng.int(length);
    const need = 1 + rng.int(20);
    const one = rng.int(4) === 0;
    assert.deepEqual(
      area.scan(pos, need, one),
      reference(bytes, pos, need, one),
      `${JSON.stringify(new TextDecoder().decode(bytes))} from ${pos}, need ${need}`,
    );
  }
});

Deno.test("CutArea keeps its data when it grows, and stops at the data's end", () => {
  const area = CutArea.open(16)!;
  const line = new TextEncoder().encode("x,y\n");
  area.room.set(line);
  area.setLength(line.length);
  area.reserve(200_000); // more than a page: the memory grows
  assert.deepEqual(area.bytes, line);
  for (let at = 4; at < 200_000; at += 4) area.room.set(line, at);
  area.setLength(200_000);
  assert.deepEqual(area.scan(0, 60_000, false), { records: 50_000, end: -1, lastLf: 199_999 });
  assert.deepEqual(area.scan(0, 50_000, false), { records: 50_000, end: 200_000, lastLf: -1 });
  area.setLength(6); // bytes past the data's end are not read
  assert.deepEqual(area.scan(0, 2, false), { records: 1, end: -1, lastLf: 3 });
});
