/**
 * Test helpers for `io/`: temp directories under the repo's ignored `.tmp/`, a seeded
 * random batch generator covering every type and the awkward values (int64 extremes,
 * -0, NaN payloads, subnormals, quotes, newlines, unicode, empty strings, nulls), and
 * column comparison by value or by bits.
 *
 * Test-only: no production module imports it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { resolve } from "node:path";
import {
  type Batch,
  type Column,
  concatBatches,
  emptyColumn,
  type Field,
  type Schema,
  type TimeUnit,
} from "../format/column.ts";
import { TICKS_PER_SECOND } from "./_parse.ts";
import { openLockedDuckDB, sqlString } from "./_duckdb.ts";

import { CsvByteScanner, CsvRecordReader, END, NEED_MORE } from "./_csv_records.ts";

const TMP_ROOT = new URL("../.tmp/", import.meta.url);

/**
 * Creates a fresh temp directory under `.tmp/` and returns its path.
 *
 * @returns The directory path.
 */
/**
 * Writes a Parquet fixture with DuckDB itself (not our writer) from a query.
 *
 * @param path Where.
 * @param select The rows (a SELECT).
 * @param rowGroupSize Rows per row group.
 */
export async function duckParquet(
  path: string,
  select: string,
  rowGroupSize = 2048,
): Promise<void> {
  const at = resolve(path); // the lockdown allows absolute paths
  const db = await openLockedDuckDB([at]);
  try {
    await db.connection.run(
      `COPY (${select}) TO ${
        sqlString(at)
      } (FORMAT parquet, ROW_GROUP_SIZE ${rowGroupSize}, USE_TMP_FILE false)`,
    );
  } finally {
    db.close();
  }
}

export async function makeTempDir(): Promise<string> {
  await Deno.mkdir(TMP_ROOT, { recursive: true });
  return await Deno.makeTempDir({ dir: TMP_ROOT.pathname, prefix: "io-test-" });
}

/** A small seeded PRNG (mulberry32), so failures reproduce. */
export class Rng {
  #s: number;
  /** @param seed Any integer. */
  constructor(seed: number) {
    this.#s = seed >>> 0;
  }
  /** A float in [0, 1). */
  next(): number {
    let t = (this.#s += 0x6d2b79f5);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** One of `xs`. */
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)] as T;
  }
  /** 64 random bits. */
  bits64(): bigint {
    return (BigInt(this.int(2 ** 32)) << 32n) | BigInt(this.int(2 ** 32));
  }
}

const INT64_EDGES = [-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n, 1n, 2n ** 53n + 1n, -(2n ** 53n) - 1n];
const STRING_BITS = [
  "",
  " ",
  "a",
  "zürich",
  "日本語",
  "😀🎉",
  '"',
  '""',
  ",",
  ";",
  "\n",
  "\r\n",
  "\r",
  "\t",
  " lead",
  "trail ",
  "\uFEFF",
  "NULL",
  "null",
  "NaN",
  "x,y",
  'say "hi"',
  "0123",
  "\\",
  "{",
  "\u0000",
];

/** Bounds (seconds) of the generated timestamps: years 0001 to 9999. */
const MIN_SECONDS = -62135596800;
const MAX_SECONDS = 253402300799;
/** Bounds of ns timestamps (int64 ns): years 1678 to 2261. */
const NS_SECONDS = 9200000000;

function randomFloat(rng: Rng): number {
  const r = rng.int(10);
  if (r === 0) {
    return rng.pick([0, -0, NaN, Infinity, -Infinity, 5e-324, -2.5e-320, 1e308, 0.1, 1.5]);
  }
  const buf = new Float64Array(1);
  new BigUint64Array(buf.buffer)[0] = rng.bits64();
  return buf[0] as number;
}

function randomTicks(rng: Rng, unit: TimeUnit): bigint {
  const per = { s: 1n, ms: 1000n, us: 1000000n, ns: 1000000000n }[unit];
  const lo = unit === "ns" ? -NS_SECONDS : MIN_SECONDS;
  const hi = unit === "ns" ? NS_SECONDS : MAX_SECONDS;
  const secs = BigInt(lo + rng.int(hi - lo));
  const frac = per === 1n ? 0n : BigInt(rng.int(Number(per)));
  return secs * per + (rng.int(4) === 0 ? 0n : frac);
}

function randomString(rng: Rng): string {
  let s = "";
  const parts = rng.int(4);
  for (let i = 0; i < parts; i++) {
    s += rng.int(3) === 0 ? rng.pick(STRING_BITS) : String.fromCodePoint(32 + rng.int(0x2fff));
  }
  // Keep clear of lone surrogates: UTF-8 cannot hold them.
  return s.toWellFormed();
}

/** A schema with every type (and every timestamp unit). */
export const ALL_TYPES: Schema = [
  { name: "i", type: "int64", nullable: true },
  { name: "f", type: "float64", nullable: true },
  { name: "b", type: "bool", nullable: true },
  { name: "d", type: "date", nullable: true },
  { name: "t_us", type: "timestamp", nullable: true, unit: "us" },
  { name: "t_ns", type: "timestamp", nullable: true, unit: "ns" },
  { name: "t_ms_utc", type: "timestamp", nullable: true, unit: "ms", timezone: "UTC" },
  { name: "t_s", type: "timestamp", nullable: true, unit: "s" },
  { name: "s", type: "string", nullable: true },
  { name: 'with, "odd"\nname', type: "string", nullable: true },
];

/**
 * Generates a random batch of `schema` (every 10th-ish cell null).
 *
 * @param rng The generator.
 * @param schema Fields to fill.
 * @param length Rows.
 * @returns The batch.
 */
export function randomBatch(rng: Rng, schema: Schema, length: number): Batch {
  const columns = schema.map((f): Column => {
    const validity = new Uint8Array(length).fill(1);
    let anyNull = false;
    for (let i = 0; i < length; i++) {
      if (rng.int(10) === 0) {
        validity[i] = 0;
        anyNull = true;
      }
    }
    const v = anyNull ? validity : null;
    const isNull = (i: number) => v !== null && v[i] === 0;
    switch (f.type) {
      case "int64": {
        const values = new BigInt64Array(length);
        for (let i = 0; i < length; i++) {
          if (isNull(i)) continue;
          const r = rng.int(3);
          values[i] = r === 0
            ? rng.pick(INT64_EDGES)
            : r === 1
            ? BigInt.asIntN(64, rng.bits64())
            : BigInt(rng.int(2000) - 1000);
        }
        return { type: "int64", values, validity: v };
      }
      case "float64": {
        const values = new Float64Array(length);
        for (let i = 0; i < length; i++) if (!isNull(i)) values[i] = randomFloat(rng);
        return { type: "float64", values, validity: v };
      }
      case "float32": {
        // Any bit pattern: NaN payloads, subnormals, -0 and infinities among them.
        const bits = new Uint32Array(length);
        for (let i = 0; i < length; i++) if (!isNull(i)) bits[i] = rng.int(2 ** 32);
        return { type: "float32", values: new Float32Array(bits.buffer), validity: v };
      }
      case "float16": {
        const values = new Uint16Array(length);
        for (let i = 0; i < length; i++) if (!isNull(i)) values[i] = rng.int(2 ** 16);
        return { type: "float16", values, validity: v };
      }
      case "bool": {
        const values = new Uint8Array(length);
        for (let i = 0; i < length; i++) if (!isNull(i)) values[i] = rng.int(2);
        return { type: "bool", values, validity: v };
      }
      case "date": {
        const values = new BigInt64Array(length);
        for (let i = 0; i < length; i++) {
          if (!isNull(i)) {
            values[i] = BigInt(
              Math.floor((MIN_SECONDS + rng.int(MAX_SECONDS - MIN_SECONDS)) / 86400),
            );
          }
        }
        return { type: "date", values, validity: v };
      }
      case "timestamp": {
        const values = new BigInt64Array(length);
        for (let i = 0; i < length; i++) {
          if (!isNull(i)) values[i] = randomTicks(rng, f.unit ?? "us");
        }
        return { type: "timestamp", values, validity: v };
      }
      case "string": {
        const values = new Array<string>(length);
        for (let i = 0; i < length; i++) values[i] = isNull(i) ? "" : randomString(rng);
        return { type: "string", values, validity: v };
      }
      case "time":
      case "duration": {
        const values = new BigInt64Array(length);
        const perDay = BigInt(TICKS_PER_SECOND[f.unit ?? "us"]) * 86400n;
        for (let i = 0; i < length; i++) {
          if (isNull(i)) continue;
          const x = BigInt.asIntN(64, rng.bits64());
          values[i] = f.type === "time" ? (x < 0n ? -x : x) % perDay : x;
        }
        return { type: f.type, values, validity: v };
      }
      case "decimal": {
        const limit = 10n ** BigInt(f.precision ?? 18);
        const column = emptyColumn(f, length);
        const values = column.values as BigInt64Array | bigint[];
        for (let i = 0; i < length; i++) {
          if (isNull(i)) continue;
          const x = rng.int(4) === 0 ? limit - 1n : BigInt.asIntN(64, rng.bits64()) % limit;
          values[i] = rng.int(2) === 0 ? x : -x;
        }
        return { type: "decimal", values, validity: v };
      }
      case "json": {
        const values = new Array<string>(length);
        for (let i = 0; i < length; i++) {
          values[i] = isNull(i) ? "" : JSON.stringify({ s: randomString(rng), n: rng.int(1000) });
        }
        return { type: "json", values, validity: v };
      }
    }
  });
  return { schema, columns, length };
}

/**
 * Collects every batch of an async iterable into one batch.
 *
 * @param schema The schema.
 * @param batches The batches.
 * @returns One batch.
 */
export async function collect(schema: Schema, batches: AsyncIterable<Batch>): Promise<Batch> {
  const all: Batch[] = [];
  for await (const b of batches) all.push(b);
  if (all.length === 0) return { schema, columns: schema.map((f) => emptyOf(f)), length: 0 };
  return concatBatches(schema, all);
}

function emptyOf(f: Field): Column {
  return emptyColumn(f, 0);
}

function floatBits(values: Float64Array, i: number): bigint {
  return new DataView(values.buffer, values.byteOffset).getBigUint64(i * 8, true);
}

const NS_PER: Record<TimeUnit, bigint> = { s: 1000000000n, ms: 1000000n, us: 1000n, ns: 1n };

/**
 * Asserts that two batches hold the same values: nulls in the same places, int64 and
 * strings equal, timestamps equal as instants (units may differ), floats equal by
 * `Object.is` (or by bits when `bitExact`).
 *
 * @param actual The batch read back.
 * @param expected The batch written.
 * @param bitExact Compare floats bit for bit.
 */
export function assertSameValues(actual: Batch, expected: Batch, bitExact: boolean): void {
  assert.equal(actual.length, expected.length, "row count");
  assert.equal(actual.columns.length, expected.columns.length, "column count");
  const n = expected.length;
  for (let c = 0; c < expected.columns.length; c++) {
    const a = actual.columns[c] as Column;
    const e = expected.columns[c] as Column;
    const fa = actual.schema[c] as Field;
    const fe = expected.schema[c] as Field;
    const where = (i: number) => `column '${fe.name}' row ${i}`;
    assert.equal(fa.name, fe.name, `name of column ${c}`);
    assert.equal(a.type, e.type, `type of ${fe.name}`);
    for (let i = 0; i < n; i++) {
      const na = a.validity !== null && a.validity[i] === 0;
      const ne = e.validity !== null && e.validity[i] === 0;
      assert.equal(na, ne, `null at ${where(i)}`);
      if (ne) continue;
      if (e.type === "float64") {
        const x = a.values[i] as number;
        const y = e.values[i] as number;
        if (bitExact) {
          assert.equal(
            floatBits(a.values as Float64Array, i),
            floatBits(e.values, i),
            `bits at ${where(i)}`,
          );
        } else {
          assert.ok(Object.is(x, y), `${x} vs ${y} at ${where(i)}`);
        }
      } else if (e.type === "float32") {
        const av = a.values as Float32Array;
        const x = new Uint32Array(av.buffer, av.byteOffset, n)[i]!;
        const y = new Uint32Array(e.values.buffer, e.values.byteOffset, n)[i]!;
        // Not bit-exact (through text): the same value, every NaN alike.
        const same = bitExact || x === y ||
          (Number.isNaN(a.values[i] as number) && Number.isNaN(e.values[i] as number));
        assert.ok(same, `float32 bits ${x.toString(16)} vs ${y.toString(16)} at ${where(i)}`);
      } else if (e.type === "float16") {
        const x = a.values[i] as number;
        const y = e.values[i] as number;
        const nan = (h: number) => (h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0;
        assert.ok(
          x === y || (!bitExact && nan(x) && nan(y)),
          `float16 ${x} vs ${y} at ${where(i)}`,
        );
      } else if (e.type === "timestamp") {
        const x = (a.values[i] as bigint) * NS_PER[fa.unit ?? "us"];
        const y = (e.values[i] as bigint) * NS_PER[fe.unit ?? "us"];
        assert.equal(x, y, `instant at ${where(i)}`);
      } else {
        assert.equal(a.values[i], e.values[i], where(i));
      }
    }
  }
}

/**
 * Every record of a CSV text given in pieces (read buffers), through
 * `CsvRecordReader`, as field values.
 *
 * @param parts The bytes (or text), cut where reads would end.
 * @returns One array of field values per record, the header included.
 */
export async function csvRecords(parts: (string | Uint8Array)[]): Promise<(string | null)[][]> {
  const encoder = new TextEncoder();
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for (const p of parts) yield typeof p === "string" ? encoder.encode(p) : p;
  }
  const rr = new CsvRecordReader(chunks(), {
    delimiter: 44,
    capacity: 2,
    growable: true,
    path: "test.csv",
    where: (r) => `data row ${r + 1}`,
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

/**
 * The record ends `CsvByteScanner` finds in `bytes` fed in buffers cut at `cuts`, as
 * `csvRowBoundaries` feeds it.
 *
 * @param bytes The CSV bytes.
 * @param cuts Offsets where one read ends and the next begins, ascending.
 * @returns The offset just past each record.
 */
export function csvRecordEnds(bytes: Uint8Array, cuts: number[]): number[] {
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

/**
 * Cuts bytes into pieces at the given offsets.
 *
 * @param bytes The bytes.
 * @param cuts Ascending offsets.
 * @returns The pieces (copies).
 */
export function cutBytes(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  for (const c of [...cuts, bytes.length]) {
    out.push(bytes.slice(at, c));
    at = c;
  }
  return out;
}
