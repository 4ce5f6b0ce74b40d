/**
 * Tests of `_arrow_parts.ts`: its parts are `batchToArrowParts`'s, buffer for buffer,
 * for every column type it takes (strings as codes alone too), and it declines every other.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Batch, Column, Schema } from "../format/column.ts";
import { type CodedColumn, withCodes } from "../format/coded_strings.ts";
import { batchToArrowParts } from "./arrow_table.ts";
import { schemaToArrow } from "./arrow_schema.ts";
import { plainArrowParts } from "./_arrow_parts.ts";
import { randomBatch, Rng } from "./_test_utils.ts";

const SCHEMA: Schema = [
  { name: "t", type: "timestamp", nullable: true, unit: "us" },
  { name: "z", type: "timestamp", nullable: true, unit: "ns", timezone: "UTC" },
  { name: "i", type: "int64", nullable: true },
  { name: "f", type: "float64", nullable: true },
  { name: "s", type: "string", nullable: true },
];

function viaArrow(batch: Batch) {
  return batchToArrowParts(batch, schemaToArrow(batch.schema));
}

Deno.test("plainArrowParts() gives batchToArrowParts()'s parts for the types it takes", () => {
  const rng = new Rng(17);
  for (const length of [0, 1, 7, 8, 9, 1000]) {
    const batch = randomBatch(rng, SCHEMA, length);
    // Strings as a dictionary decoder leaves them (with codes), and as ASCII without.
    const dictionary = ["LAX", "", "a,b", "ü", "🧊"];
    const codes = Uint32Array.from({ length }, (_, i) => (i * 3) % dictionary.length);
    const coded: Column = {
      type: "string",
      values: withCodes(Array.from(codes, (c) => dictionary[c]!), codes, dictionary),
      validity: batch.columns[4]!.validity,
    };
    const ascii: Column = {
      type: "string",
      values: Array.from({ length }, (_, i) => `v${i % 13}`),
      validity: null,
    };
    for (const strings of [coded, ascii]) {
      const b: Batch = { ...batch, columns: [...batch.columns.slice(0, 4), strings] };
      const plain = plainArrowParts(b);
      assert.ok(plain !== null, `length ${length}`);
      assert.deepEqual(plain.parts, viaArrow(b).parts);
      // Every buffer moved is a buffer of its own.
      const moved = new Set(plain.transfer);
      for (const c of plain.parts.columns) {
        for (const view of [c.values, c.nullBitmap, c.valueOffsets]) {
          if (view) assert.ok(moved.has(view.buffer as ArrayBuffer));
        }
      }
    }
    // The coded strings as codes alone (a thaw Worker's decode): the same parts.
    const codesAlone: CodedColumn = {
      type: "string",
      coded: { codes, dictionary },
      validity: coded.validity,
    };
    const alone = plainArrowParts({ columns: [...batch.columns.slice(0, 4), codesAlone], length });
    const rows: Batch = { ...batch, columns: [...batch.columns.slice(0, 4), coded] };
    assert.deepEqual(alone?.parts, viaArrow(rows).parts, `codes alone, length ${length}`);
  }
});

Deno.test("plainArrowParts() declines other types and strings it would have to encode", () => {
  const rng = new Rng(3);
  for (const type of ["bool", "date", "float32", "decimal", "json", "time"] as const) {
    const schema: Schema = [{
      name: "c",
      type,
      nullable: true,
      unit: "us",
      precision: 10,
      scale: 2,
    }];
    assert.equal(plainArrowParts(randomBatch(rng, schema, 10)), null, type);
  }
  const schema: Schema = [{ name: "s", type: "string", nullable: false }];
  const batch: Batch = {
    schema,
    columns: [{ type: "string", values: ["ok", "ünicode"], validity: null }],
    length: 2,
  };
  assert.equal(plainArrowParts(batch), null);
  // Codes alone of an entry that is not well-formed UTF-16: apache-arrow's path names it.
  const lone: CodedColumn = {
    type: "string",
    coded: { codes: Uint32Array.of(0, 1), dictionary: ["ok", "\uD800"] },
    validity: null,
  };
  assert.equal(plainArrowParts({ columns: [lone], length: 2 }), null);
});
