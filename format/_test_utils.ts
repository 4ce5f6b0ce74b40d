/**
 * Test helpers for the format layer: a seeded PRNG, random batches of every
 * column type (with nulls, extremes, unicode), exact column comparison, and
 * archive writing without `ops/`. Tests only.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { constants as zlibConstants, zstdCompressSync, zstdDecompressSync } from "node:zlib";
import { encodeChunk } from "./chunk.ts";
import { headerBinding, withEncryption } from "./crypto.ts";
import { type EncryptionOptions, prepareEncryption } from "./key_provider.ts";
import type { Batch, Column, Field, Schema } from "./column.ts";
import { sliceBatch } from "./column.ts";
import { archiveVersion, schemaToJson } from "./header.ts";
import type { ArchiveFooter, ArchiveHeader, ColumnPlan } from "./header.ts";
import { HASH_SIZE, TAIL_SIZE } from "./constants.ts";
import { sha256Hex } from "./_hash.ts";
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

/** A schema with one column of each type (two decimals: 64-bit and wide). */
export const ALL_TYPES: Schema = [
  { name: "i", type: "int64", nullable: true },
  { name: "f", type: "float64", nullable: true },
  { name: "b", type: "bool", nullable: true },
  { name: "ts", type: "timestamp", nullable: true, unit: "us", timezone: "UTC" },
  { name: "d", type: "date", nullable: true },
  { name: "s", type: "string", nullable: true },
  { name: "cat", type: "string", nullable: false },
  { name: "dec", type: "decimal", nullable: true, precision: 12, scale: 2 },
  { name: "dw", type: "decimal", nullable: true, precision: 38, scale: 10 },
  { name: "tm", type: "time", nullable: true, unit: "us" },
  { name: "dur", type: "duration", nullable: true, unit: "ns" },
  { name: "j", type: "json", nullable: true },
];

/** The columns of {@link ALL_TYPES} whose types a 1.3 archive holds. */
export const TYPES_1_3: Schema = ALL_TYPES.filter((f) =>
  !["decimal", "time", "duration", "json"].includes(f.type)
);

/** JSON values of every kind, as source text (escapes, big numbers, nesting). */
const JSON_TEXTS = [
  "1",
  "-0",
  "1e400",
  "123456789012345678901234567890",
  "0.1",
  '"x"',
  '"\\ud800 lone"',
  '"caf\\u00e9"',
  "true",
  "false",
  "[]",
  "{}",
  '[1,"x",null]',
  '{"a":{"b":[1,2,{"c":null}]},"z":1,"a2":"\\n"}',
  '{"k": 1 , "k": 2}',
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
    case "time":
    case "duration": {
      const values = new BigInt64Array(n);
      const day = 86_400_000_000n;
      for (let i = 0; i < n; i++) {
        if (isNull(i)) continue;
        const r = rand();
        if (field.type === "time") values[i] = BigInt(Math.floor(rand() * Number(day)));
        else if (r < 0.05) values[i] = r < 0.025 ? -(2n ** 63n) : 2n ** 63n - 1n;
        else values[i] = BigInt(Math.floor((rand() - 0.3) * 1e15));
      }
      return { type: field.type, values, validity };
    }
    case "decimal": {
      const limit = 10n ** BigInt(field.precision ?? 18) - 1n;
      const pick = (): bigint => {
        const r = rand();
        if (r < 0.04) return r < 0.02 ? limit : -limit;
        if (r < 0.1) return 2n ** 63n + BigInt(Math.floor(rand() * 1000));
        return BigInt(Math.floor((rand() - 0.5) * 1e9));
      };
      const wide = (field.precision ?? 0) > 18;
      const values = wide ? new Array<bigint>(n).fill(0n) : new BigInt64Array(n);
      for (let i = 0; i < n; i++) {
        if (isNull(i)) continue;
        const v = pick();
        values[i] = v > limit || v < -limit ? v % limit : v;
      }
      return { type: "decimal", values, validity };
    }
    case "json": {
      const values: string[] = [];
      for (let i = 0; i < n; i++) {
        values.push(isNull(i) ? "" : JSON_TEXTS[Math.floor(rand() * JSON_TEXTS.length)]!);
      }
      return { type: "json", values, validity };
    }
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
    case "float32":
    case "float16": {
      // Random bit patterns (NaN payloads, signalling NaNs, subnormals, -0 and
      // infinities among them) half the time, a smooth series otherwise.
      const bits = field.type === "float32" ? new Uint32Array(n) : new Uint16Array(n);
      const smooth = field.type === "float32" ? new Float32Array(1) : null;
      for (let i = 0; i < n; i++) {
        if (isNull(i)) continue;
        if (rand() < 0.5) {
          bits[i] = Math.floor(rand() * (field.type === "float32" ? 2 ** 32 : 2 ** 16));
        } else if (smooth !== null) {
          smooth[0] = 20 + Math.sin(i / 40) * 5;
          bits[i] = new Uint32Array(smooth.buffer)[0]!;
        } else {
          bits[i] = 0x4d00 + (i % 64); // 20.0 and up, in half steps
        }
      }
      return field.type === "float32"
        ? { type: "float32", values: new Float32Array(bits.buffer), validity }
        : { type: "float16", values: bits as Uint16Array, validity };
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
  assert.equal(
    actual.values instanceof BigInt64Array,
    expected.values instanceof BigInt64Array,
    `${label}: representation`,
  );
  const n = expected.values.length;
  for (let i = 0; i < n; i++) {
    const ev = expected.validity ? expected.validity[i] : 1;
    const av = actual.validity ? actual.validity[i] : 1;
    assert.equal(av, ev, `${label}: validity of row ${i}`);
    if (ev === 0) continue;
    if (expected.type === "float64") {
      const a = new BigUint64Array(Float64Array.of(actual.values[i] as number).buffer)[0];
      const e = new BigUint64Array(Float64Array.of(expected.values[i] as number).buffer)[0];
      assert.equal(a, e, `${label}: bits of row ${i}`);
    } else if (expected.type === "float32") {
      const av = actual.values as Float32Array;
      const a = new Uint32Array(av.buffer, av.byteOffset, n)[i];
      const e = new Uint32Array(expected.values.buffer, expected.values.byteOffset, n)[i];
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
 * @param options Codec, chunk rows, plans, encryption.
 * @returns What was written.
 */
export async function writeTestArchive(
  path: string,
  batch: Batch,
  options: {
    codec?: string;
    chunkRows?: number;
    plans?: Record<string, ColumnPlan>;
    encryption?: EncryptionOptions;
  } = {},
): Promise<WrittenArchive> {
  const chunkRows = options.chunkRows ?? 100;
  const codec = options.codec ?? "zstd";
  const plans = options.plans ?? planColumns(sliceBatch(batch, 0, chunkRows));
  const schema = schemaToJson(batch.schema);
  const header: ArchiveHeader = {
    format: "permafrost",
    version: archiveVersion({ schema, encryption: null, codec, columns: plans }),
    schema,
    codec,
    auto_reason: null,
    chunk_rows: chunkRows,
    columns: plans,
    lossy_columns: batch.schema.filter((f) => plans[f.name]?.quantization !== "QUANT_NONE")
      .map((f) => f.name),
    primary_key: null,
    partition: null,
    encryption: null,
    metadata: {},
  };
  const enc = options.encryption ? await prepareEncryption(options.encryption) : null;
  const final = withEncryption(header, enc?.header ?? null);
  const writer = await ArchiveWriter.create(path, final);
  for (let at = 0; at < batch.length; at += chunkRows) {
    const encryption = enc
      ? { dataKey: enc.dataKey, headerBinding: headerBinding(final), rowStart: at }
      : undefined;
    await writer.writeChunk(
      await encodeChunk(sliceBatch(batch, at, at + chunkRows), { plans, codec, encryption }),
    );
  }
  return await writer.finish();
}

/** What {@link resealArchive} may change before it recomputes every hash. */
export interface ResealEdits {
  /** Edits the parsed header JSON (may change its length). */
  header?: (header: Record<string, unknown>) => void;
  /** Edits the parsed footer JSON (offsets are shifted afterwards; hashes recomputed). */
  footer?: (footer: ArchiveFooter) => void;
}

/**
 * An attacker's toolkit for tests: takes archive bytes (whose payload may have been
 * altered), applies edits to header and footer, and recomputes every SHA-256 —
 * header, blocks, chunks, payload, footer — so the result passes every hash check
 * and only deeper checks (decoders, AES-GCM) can catch the change.
 *
 * @param bytes A well-formed archive (its payload may be changed in place).
 * @param edits Header and footer edits.
 * @returns The resealed archive.
 */
export function resealArchive(bytes: Uint8Array, edits: ResealEdits = {}): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(12, true);
  const footerLength = view.getUint32(bytes.length - TAIL_SIZE + 32, true);
  const headerJson = JSON.parse(new TextDecoder().decode(bytes.subarray(16, 16 + headerLength)));
  const oldPayloadStart = 16 + headerLength + HASH_SIZE;
  const footerStart = bytes.length - TAIL_SIZE - footerLength;
  const footer = JSON.parse(
    new TextDecoder().decode(
      zstdDecompressSync(bytes.subarray(footerStart, footerStart + footerLength)),
    ),
  ) as ArchiveFooter;
  const payload = bytes.subarray(oldPayloadStart, footerStart);
  edits.header?.(headerJson);
  edits.footer?.(footer);
  const header = new TextEncoder().encode(JSON.stringify(headerJson));
  const payloadStart = 16 + header.length + HASH_SIZE;
  const shift = payloadStart - oldPayloadStart;
  const slice = (offset: number, length: number) =>
    payload.subarray(offset - payloadStart, offset - payloadStart + length);
  footer.payload_offset = payloadStart;
  footer.payload_length = payload.length;
  footer.payload_sha256 = sha256Hex(payload);
  for (const chunk of footer.chunks) {
    chunk.offset += shift;
    for (const block of chunk.blocks) {
      if (block === null) continue;
      block.offset += shift;
      block.sha256 = sha256Hex(slice(block.offset, block.length));
    }
    chunk.sha256 = sha256Hex(slice(chunk.offset, chunk.length));
  }
  const footerJson = new TextEncoder().encode(JSON.stringify(footer));
  const footerBytes = zstdCompressSync(
    footerJson,
    {
      pledgedSrcSize: footerJson.length,
      params: { [zlibConstants.ZSTD_c_contentSizeFlag]: 1 },
    } as Parameters<typeof zstdCompressSync>[1],
  );
  const out = new Uint8Array(payloadStart + payload.length + footerBytes.length + TAIL_SIZE);
  out.set(bytes.subarray(0, 16), 0);
  new DataView(out.buffer).setUint32(12, header.length, true);
  out.set(header, 16);
  out.set(createHash("sha256").update(header).digest(), 16 + header.length);
  out.set(payload, payloadStart);
  out.set(footerBytes, payloadStart + payload.length);
  const tail = bytes.slice(bytes.length - TAIL_SIZE);
  tail.set(createHash("sha256").update(footerBytes).digest(), 0);
  new DataView(tail.buffer).setUint32(32, footerBytes.length, true);
  out.set(tail, out.length - TAIL_SIZE);
  return out;
}
