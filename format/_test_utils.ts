/**
 * Test helpers for the format layer: a seeded PRNG, random batches of every
 * column type (with nulls, extremes, unicode), exact column comparison, and
 * archive writing without `ops/`. Tests only.
 *
 * @module
 */
import assert from "node:assert/strict";
import { encodeChunk } from "./chunk.ts";
import type { Batch, Column, Field, Schema } from "./column.ts";
import { sliceBatch } from "./column.ts";
import { schemaToJson } from "./header.ts";
import type { ArchiveHeader, ColumnPlan } from "./header.ts";
import { planColumns } from "./plan.ts";
import { ArchiveWriter, type WrittenArchive } from "./writer.ts";

/** A small seeded PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A schema with one column of each type, all nullable. */
export const ALL_TYPES: Schema = [
  { name: "i", type: "int64", nullable: true },
  { name: "f", type: "float64", nullable: true },
  { name: "b", type: "bool", nullable: true },
  { name: "ts", type: "timestamp", nullable: true, unit: "us", timezone: "UTC" },
  { name: "d", type: "date", nullable: true },
  { name: "s", type: "string", nullable: true },
  { name: "cat", type: "string", nullable: false },
];

const WORDS = [
  "",
  "a",
  "héllo",
  "日本語",
  "emoji 🧊",
  'comma,quote"',
  "line\nbreak",
  "NULL",
  "null",
];
const FLOATS = [
  0,
  -0,
  NaN,
  Infinity,
  -Infinity,
  5e-324,
  -5e-324,
  1.7976931348623157e308,
  0.1,
  -2.5,
];

/**
 * Random rows for a schema.
 *
 * @param schema The schema.
 * @param rows Row count.
 * @param seed PRNG seed.
 * @param nullRate Share of null slots in nullable columns.
 * @returns One batch.
 */
export function randomBatch(schema: Schema, rows: number, seed: number, nullRate = 0.1): Batch {
  const rand = prng(seed);
  const columns = schema.map((f) => randomColumn(f, rows, rand, f.nullable ? nullRate : 0));
  return { schema, columns, length: rows };
}

function randomColumn(field: Field, n: number, rand: () => number, nullRate: number): Column {
  const validity = nullRate > 0
    ? Uint8Array.from({ length: n }, () => (rand() < nullRate ? 0 : 1))
    : null;
  const isNull = (i: number) => validity !== null && validity[i] === 0;
  switch (field.type) {
    case "int64":
    case "timestamp":
    case "date": {
      const values = new BigInt64Array(n);
      let t = 1_600_000_000_000_000n;
      for (let i = 0; i < n; i++) {
        if (isNull(i)) continue;
        const r = rand();
        if (field.type === "timestamp") {
          t += BigInt(Math.floor(rand() * 3)) * 60_000_000n;
          values[i] = r < 0.02 ? t - 3_600_000_000n : t; // occasionally out of order
        } else if (field.type === "date") {
          values[i] = BigInt(Math.floor(rand() * 40000) - 5000);
        } else if (r < 0.05) values[i] = r < 0.025 ? -(2n ** 63n) : 2n ** 63n - 1n;
        else if (r < 0.1) values[i] = 2n ** 53n + BigInt(Math.floor(rand() * 1000));
        else values[i] = BigInt(Math.floor(rand() * 2000) - 1000);
      }
      return { type: field.type, values, validity };
    }
    case "float64": {
      const values = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        if (isNull(i)) continue;
        values[i] = rand() < 0.3
          ? FLOATS[Math.floor(rand() * FLOATS.length)]!
          : (rand() - 0.5) * 1e6;
      }
      return { type: "float64", values, validity };
    }
    case "bool":
      return {
        type: "bool",
        values: Uint8Array.from({ length: n }, (_, i) => (isNull(i) ? 0 : rand() < 0.5 ? 1 : 0)),
        validity,
      };
    case "string": {
      const values: string[] = [];
      for (let i = 0; i < n; i++) {
        if (isNull(i)) values.push("");
        else if (field.name === "cat") values.push(`k${Math.floor(rand() * 7)}`);
        else {values.push(
            WORDS[Math.floor(rand() * WORDS.length)]! +
              (rand() < 0.5 ? String(Math.floor(rand() * 1e6)) : ""),
          );}
      }
      return { type: "string", values, validity };
    }
  }
}

/**
 * Asserts two columns are equal cell by cell (floats bit for bit, nulls as nulls).
 *
 * @param actual Decoded column.
 * @param expected Original column.
 * @param label For messages.
 */
export function assertColumnEqual(actual: Column, expected: Column, label: string): void {
  assert.equal(actual.type, expected.type, `${label}: type`);
  assert.equal(actual.values.length, expected.values.length, `${label}: length`);
  for (let i = 0; i < expected.values.length; i++) {
    const ev = expected.validity ? expected.validity[i] : 1;
    const av = actual.validity ? actual.validity[i] : 1;
    assert.equal(av, ev, `${label}: validity of row ${i}`);
    if (ev === 0) continue;
    if (expected.type === "float64") {
      const a = new BigUint64Array(Float64Array.of(actual.values[i] as number).buffer)[0];
      const e = new BigUint64Array(Float64Array.of(expected.values[i] as number).buffer)[0];
      assert.equal(a, e, `${label}: bits of row ${i}`);
    } else {
      assert.equal(actual.values[i], expected.values[i], `${label}: row ${i}`);
    }
  }
}

/**
 * Writes batches as an archive with the format layer alone (inline encoder).
 *
 * @param path Destination.
 * @param batch All rows.
 * @param options Codec and chunk rows.
 * @returns What was written.
 */
export async function writeTestArchive(
  path: string,
  batch: Batch,
  options: { codec?: string; chunkRows?: number; plans?: Record<string, ColumnPlan> } = {},
): Promise<WrittenArchive> {
  const chunkRows = options.chunkRows ?? 100;
  const codec = options.codec ?? "zstd";
  const plans = options.plans ?? planColumns(sliceBatch(batch, 0, chunkRows));
  const header: ArchiveHeader = {
    format: "permafrost",
    version: "1.3",
    schema: schemaToJson(batch.schema),
    codec,
    auto_reason: null,
    chunk_rows: chunkRows,
    columns: plans,
    lossy_columns: [],
    primary_key: null,
    partition: null,
    encryption: null,
    metadata: {},
  };
  const writer = await ArchiveWriter.create(path, header);
  for (let at = 0; at < batch.length; at += chunkRows) {
    await writer.writeChunk(
      await encodeChunk(sliceBatch(batch, at, at + chunkRows), { plans, codec }),
    );
  }
  return await writer.finish();
}
