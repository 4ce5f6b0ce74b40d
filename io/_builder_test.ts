/**
 * Tests of `_builder.ts`: what a batch builder reserves up front and how it grows.
 *
 * @module
 */
import assert from "node:assert/strict";
import { cellValue, type Schema } from "../format/column.ts";
import { BatchBuilder, BUILDER_CELL_BUDGET, MIN_BUILDER_ROWS } from "./_builder.ts";

function schemaOf(n: number): Schema {
  return Array.from({ length: n }, (_, i) => ({
    name: `c${i}`,
    type: i % 2 === 0 ? "float64" : "string",
    nullable: true,
  }));
}

Deno.test("BatchBuilder() reserves a cell budget for a wide schema, not a whole batch per column", () => {
  const wide = new BatchBuilder(schemaOf(10_000), 65_536, { growable: true });
  assert.ok(wide.rows * 10_000 <= BUILDER_CELL_BUDGET + 10_000 * MIN_BUILDER_ROWS);
  assert.equal(wide.columns[0]!.f64.length, wide.rows);
  assert.equal(wide.columns[1]!.str.length, wide.rows);
  const narrow = new BatchBuilder(schemaOf(4), 65_536, { growable: true });
  assert.equal(narrow.rows, 65_536, "a narrow table gets its whole batch at once");
  assert.equal(new BatchBuilder(schemaOf(40), 1000).rows, 1000, "not growable");
});

Deno.test("BatchBuilder.reserve() grows every column, keeping values and nulls", () => {
  const b = new BatchBuilder(schemaOf(70_000), 1000, { growable: true });
  assert.equal(b.rows, MIN_BUILDER_ROWS);
  const [f, s] = [b.columns[0]!, b.columns[1]!];
  for (let row = 0; row < 40; row++) {
    b.reserve(row);
    if (row % 7 === 0) {
      b.columns[0]!.setNull(row);
      b.columns[1]!.setNull(row);
    } else {
      b.columns[0]!.f64[row] = row / 2;
      b.columns[1]!.str[row] = `s${row}`;
    }
  }
  assert.ok(b.rows >= 40 && b.rows <= 1000);
  b.length = 40;
  const batch = b.finish();
  assert.equal(batch.columns[0]!.values.length, 40);
  assert.equal(cellValue(batch.columns[0]!, 0), null);
  assert.equal(cellValue(batch.columns[0]!, 39), 19.5);
  assert.equal(cellValue(batch.columns[1]!, 7), null);
  assert.equal(cellValue(batch.columns[1]!, 8), "s8");
  assert.equal(f, b.columns[0]);
  assert.equal(s, b.columns[1]);
});
