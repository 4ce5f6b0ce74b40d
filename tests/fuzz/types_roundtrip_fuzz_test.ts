/**
 * Round-trip fuzz of the column types: seeded random schemas (decimals of random
 * precision and scale, inside and beyond 64 bits; times and durations in every unit;
 * JSON values nested, huge, escaped; int64 extremes; nulls everywhere) are frozen, thawed
 * to every output format, and read back with the archive's types forced, as `append`
 * reads them. Every value must come back exactly, or the output must refuse the
 * column by name (a decimal beyond Parquet's 38 digits) — never a changed value.
 * Runs a fixed number of cases, so failures reproduce from the seed.
 */
import assert from "node:assert/strict";
import type { Batch, Field, Schema, TimeUnit } from "../../format/column.ts";
import { concatBatches } from "../../format/column.ts";
import { prng, randomBatch } from "../../format/_test_utils.ts";
import { freeze } from "../../ops/freeze.ts";
import { thaw } from "../../ops/thaw.ts";
import { openSource } from "../../io/source.ts";
import type { ForcedType } from "../../io/types.ts";
import { IoError } from "../../io/errors.ts";

const TMP = ".tmp/fuzz_types";
await Deno.remove(TMP, { recursive: true }).catch(() => {});
await Deno.mkdir(TMP, { recursive: true });

const CASES = 12;
const UNITS: TimeUnit[] = ["s", "ms", "us", "ns"];

/** A random schema of the types added in 1.5, with a few older ones between them. */
function randomSchema(rand: () => number): Schema {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const n = 2 + Math.floor(rand() * 5);
  return Array.from({ length: n }, (_, i): Field => {
    const name = `c${i}`;
    switch (pick(["decimal", "decimal", "time", "duration", "json", "int64"])) {
      case "decimal": {
        const precision = pick([1, 4, 9, 18, 19, 38, 60, 76]);
        const scale = Math.floor(rand() * (Math.min(precision, 12) + 1));
        return { name, type: "decimal", nullable: true, precision, scale };
      }
      case "time":
        return { name, type: "time", nullable: true, unit: pick(UNITS) };
      case "duration":
        return { name, type: "duration", nullable: true, unit: pick(UNITS) };
      case "json":
        return { name, type: "json", nullable: true };
      default:
        return { name, type: "int64", nullable: true };
    }
  });
}

/** Keeps generated values inside what each type holds (times within a day, decimals within precision). */
function clamp(batch: Batch): Batch {
  const columns = batch.columns.map((c, i) => {
    const f = batch.schema[i]!;
    if (f.type === "time") {
      const day = 86_400n * BigInt({ s: 1, ms: 1e3, us: 1e6, ns: 1e9 }[f.unit ?? "us"]);
      const values = (c.values as BigInt64Array).map((v) => ((v % day) + day) % day);
      return { ...c, values } as typeof c;
    }
    if (f.type === "decimal") {
      const limit = 10n ** BigInt(f.precision!);
      const values = c.values as ArrayLike<bigint>;
      const out = Array.isArray(values) ? [...values] : BigInt64Array.from(values);
      for (let r = 0; r < out.length; r++) out[r] = out[r]! % limit;
      return { ...c, values: out } as typeof c;
    }
    return c;
  });
  return { ...batch, columns };
}

function forcedTypes(schema: Schema): Record<string, ForcedType> {
  return Object.fromEntries(schema.map((f) => {
    const { name: _n, nullable: _x, ...type } = f;
    return [f.name, type];
  }));
}

async function readBack(path: string, schema: Schema): Promise<Batch> {
  const src = await openSource(path, { types: forcedTypes(schema) });
  const parts: Batch[] = [];
  try {
    for await (const b of src.batches()) parts.push(b);
  } finally {
    await src.close();
  }
  return concatBatches(src.schema, parts);
}

function cells(batch: Batch, i: number): unknown[] {
  const c = batch.columns[i]!;
  return Array.from(
    { length: batch.length },
    (_, r) => c.validity && c.validity[r] === 0 ? null : c.values[r],
  );
}

Deno.test("random schemas of the 1.5 types round-trip exactly through every output format", async () => {
  let compared = 0;
  let refusals = 0;
  for (let k = 0; k < CASES; k++) {
    const rand = prng(1000 + k);
    const schema = randomSchema(rand);
    const batch = clamp(randomBatch(schema, 40 + Math.floor(rand() * 200), 77 + k, 0.2));
    const pf = `${TMP}/case${k}.pf`;
    await freeze({ schema, batches: [batch] }, pf, { chunkRows: 64, threads: 0 });
    for (const ext of ["arrow", "parquet", "jsonl", "csv"]) {
      const out = `${TMP}/case${k}.${ext}`;
      const wide = schema.find((f) => f.type === "decimal" && f.precision! > 38);
      try {
        await thaw(pf, out);
      } catch (err) {
        // The one refusal allowed: Parquet (through DuckDB) holds at most 38 digits.
        assert.ok(ext === "parquet" && wide !== undefined, `case ${k} .${ext}: ${err}`);
        assert.ok(err instanceof IoError && err.code === "WRITE_FAILED", String(err));
        assert.match(err.message, new RegExp(`column '${wide.name}'`));
        refusals++;
        continue;
      }
      assert.ok(ext !== "parquet" || wide === undefined, `case ${k}: Parquet took ${wide?.name}`);
      const back = await readBack(out, schema);
      assert.equal(back.length, batch.length, `case ${k} .${ext}: rows`);
      schema.forEach((f, i) => {
        assert.deepEqual(
          cells(back, i).map(String),
          cells(batch, i).map(String),
          `case ${k} .${ext}: column ${f.name} (${JSON.stringify(f)})`,
        );
        compared++;
      });
    }
  }
  assert.ok(compared > CASES * 8, `compared ${compared} columns`);
  assert.ok(refusals > 0, "some case had a decimal beyond 38 digits for Parquet to refuse");
});
