/**
 * Decoding a prefix of a chunk's rows (`DecodeContext.prefix`, `decodeChunkJob`'s
 * `prefix`, a reader's read that ends inside a chunk) gives the same rows as decoding
 * every row and slicing: for every predictor, whether it honours the prefix or not,
 * and for columns conditioned on others.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertColumnEqual, randomBatch, writeTestArchive } from "./_test_utils.ts";
import { ALL_TYPES } from "./_test_utils.ts";
import { type Batch, type Column, type Field, type Schema, sliceColumn } from "./column.ts";
import { planColumns } from "./plan.ts";
import { loadPredictors } from "./predictors/registry.ts";
import type { Predictor } from "./predictors/predictor.ts";
import { ArchiveReader } from "./reader.ts";

const ROUTES: [string, string, bigint][] = [
  ["OSL", "JFK", 3690n],
  ["JFK", "OSL", 3690n],
  ["OSL", "LHR", 746n],
  ["LHR", "JFK", 3451n],
  ["OSL", "BGO", 199n],
  ["BGO", "OSL", 199n],
];

const N = 700;

/** Columns with the shapes the predictors look for, over {@link N} rows. */
function shapedColumns(): { field: Field; column: Column }[] {
  const picks = Array.from({ length: N }, (_, i) => ROUTES[(i * 7 + (i >> 3)) % ROUTES.length]!);
  let t = 1_700_000_000_000_000n;
  const ts = BigInt64Array.from(
    { length: N },
    (_, i) => t += i % 17 === 0 ? 3_600_000_000n : 60_000_000n,
  );
  return [
    // Repeats with over 255 distinct values: frequency ranks past one byte (escapes).
    {
      field: { name: "many", type: "int64", nullable: false },
      column: {
        type: "int64",
        values: BigInt64Array.from({ length: N }, (_, i) => BigInt(((i * 37) % 300) - 100)),
        validity: null,
      },
    },
    {
      field: { name: "words", type: "string", nullable: false },
      column: {
        type: "string",
        values: Array.from({ length: N }, (_, i) => `w${(i * 37) % 300}`),
        validity: null,
      },
    },
    {
      field: { name: "when", type: "timestamp", nullable: false, unit: "us" },
      column: { type: "timestamp", values: ts, validity: null },
    },
    {
      field: { name: "origin", type: "string", nullable: false },
      column: { type: "string", values: picks.map((r) => r[0]), validity: null },
    },
    {
      field: { name: "dest", type: "string", nullable: false },
      column: { type: "string", values: picks.map((r) => r[1]), validity: null },
    },
    {
      field: { name: "distance", type: "int64", nullable: false },
      column: {
        type: "int64",
        values: BigInt64Array.from(picks.map((r) => r[2])),
        validity: null,
      },
    },
  ];
}

/** Every column of a random batch of each type, without nulls (the block layer strips them). */
function randomColumns(): { field: Field; column: Column }[] {
  const batch = randomBatch(ALL_TYPES, N, 17, 0);
  return batch.schema.map((field, i) => ({ field, column: batch.columns[i]! }));
}

Deno.test("every predictor decodes a prefix as the first rows of a whole decode", async () => {
  const predictors: readonly Predictor[] = await loadPredictors();
  const columns = [...shapedColumns(), ...randomColumns()];
  const origin = columns.find((c) => c.field.name === "origin")!.column;
  const dest = columns.find((c) => c.field.name === "dest")!.column;
  let checked = 0;
  for (const p of predictors) {
    for (const { field, column } of columns) {
      if (!p.matches(field)) continue;
      for (const deps of p.usesDeps ? [[origin], [origin, dest]] : [[]]) {
        const bytes = p.encode(column, { field, deps, warn: () => {} });
        if (bytes === null) continue;
        const whole = p.decode(bytes, N, { field, deps });
        for (const prefix of [0, 1, 9, 300, N - 1]) {
          const label = `${p.id} on ${field.name} (${deps.length} deps), prefix ${prefix}`;
          const given = p.prefixDeps ? deps.map((d) => sliceColumn(d, 0, prefix)) : deps;
          const part = p.decode(bytes, N, { field, deps: given, prefix });
          assert.ok(
            part.values.length === N || part.values.length === prefix,
            `${label}: ${part.values.length} values`,
          );
          assertColumnEqual(sliceColumn(part, 0, prefix), sliceColumn(whole, 0, prefix), label);
        }
        checked++;
      }
    }
  }
  // The predictors of flights-3m's columns all took part.
  for (const id of ["ts_delta_s", "freq_rank", "keyed_freq", "keyed_rank", "category_u8"]) {
    assert.ok(predictors.some((p) => p.id === id), id);
  }
  assert.ok(checked > 40, `${checked} encodings checked`);
});

Deno.test("a read that ends inside a chunk returns the rows a whole read does", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const shaped = shapedColumns();
    const random = randomBatch(ALL_TYPES, N, 5, 0.2);
    const schema: Schema = [...shaped.map((c) => c.field), ...random.schema];
    const batch: Batch = {
      schema,
      columns: [...shaped.map((c) => c.column), ...random.columns],
      length: N,
    };
    const plans = planColumns(batch);
    // Conditioned columns, one of them on a column conditioned in turn, and on a
    // column with nulls.
    plans.distance = { ...plans.distance!, deps: ["origin", "dest"] };
    plans.dest = { ...plans.dest!, deps: ["origin"] };
    plans.words = { ...plans.words!, deps: ["s"] };
    const path = join(dir, "a.pf");
    await writeTestArchive(path, batch, { chunkRows: 250, plans });
    const reader = await ArchiveReader.open(path);
    try {
      const names = schema.map((f) => f.name);
      const all: (readonly Column[])[] = [];
      for await (const b of reader.read()) all.push(b.columns);
      const wholeColumn = (c: number, start: number, end: number): Column => {
        // Every chunk has 250 rows: the ranges below stay inside one chunk.
        const chunk = Math.floor(start / 250);
        return sliceColumn(all[chunk]![c]!, start - chunk * 250, end - chunk * 250);
      };
      const ranges: [number, number][] = [[0, 1], [0, 10], [250, 260], [255, 499], [500, 699]];
      for (const [start, end] of ranges) {
        for (const columns of [names, ["distance"], ["dest", "many"], ["words", "when", "ts"]]) {
          const batches: Batch[] = [];
          for await (const b of reader.read({ rows: { start, end }, columns })) batches.push(b);
          assert.equal(batches.length, 1);
          const got = batches[0]!;
          assert.equal(got.length, end - start);
          for (const [i, name] of columns.entries()) {
            const label = `${name} rows ${start}:${end} of [${columns.join(",")}]`;
            assert.equal(got.columns[i]!.values.length, end - start, label);
            assertColumnEqual(got.columns[i]!, wholeColumn(names.indexOf(name), start, end), label);
          }
        }
      }
    } finally {
      reader.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
