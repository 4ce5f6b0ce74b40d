/**
 * The binary bodies the cluster sends besides JSON:
 *
 * - a frozen chunk, worker → master (`POST /tasks/{id}/done`): {@link encodeChunkBody}
 *   and {@link decodeChunkBody};
 * - several frozen chunks, worker → master (`POST /tasks/done`), each framed as above,
 *   behind `"PFDONES1"`, a u32 count and a u32 length each: {@link encodeChunkBodies}
 *   and {@link decodeChunkBodies};
 * - a task's rows, master → worker (`GET /tasks/{id}/rows`, for a worker that cannot
 *   read the source itself): {@link encodeBatchBody} and {@link decodeBatchBody}.
 *
 * Both use one framing, little-endian:
 *
 * ```
 * magic     8 bytes   "PFCHUNK1" or "PFBATCH1"
 * meta_len  u32       length of the JSON that follows (at most 16 MiB)
 * meta      meta_len  UTF-8 JSON (ChunkMeta, or the batch's schema and column layout)
 * body      ...       the bytes the JSON describes, back to back, nothing after
 * ```
 *
 * Decoding trusts nothing, in the order of FORMAT.md's reader: enough bytes for
 * the fixed part, the magic, the JSON length against what is left, the JSON's
 * shape, then every length against the body, then (chunks) every block's SHA-256.
 * Any failure is a `JobError` `BAD_CHUNK` naming what was expected and found.
 *
 * Pure: no I/O.
 *
 * @module
 */
import { createHash } from "node:crypto";
import {
  type Batch,
  type Column,
  type Field,
  isWideDecimal,
  type Schema,
} from "../format/column.ts";
import type { EncodedChunk } from "../format/writer.ts";
import { JobError } from "../client/errors.ts";
import type { ChunkMeta, FieldJson } from "../client/types.ts";

/** Magic of a frozen-chunk body. */
export const CHUNK_MAGIC = "PFCHUNK1";
/** Magic of a rows body. */
export const BATCH_MAGIC = "PFBATCH1";
/** Magic of several frozen-chunk bodies in one (`POST /tasks/done`). */
export const BODIES_MAGIC = "PFDONES1";
/** Most chunk bodies in one `POST /tasks/done`. */
export const MAX_BODIES = 64;
/** Largest JSON part of a body. */
export const MAX_META_BYTES = 16 * 1024 * 1024;
/** Content type of both bodies. */
export const WIRE_CONTENT_TYPE = "application/vnd.permafrost.frame";

const FIXED = 12;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

function bad(message: string): JobError {
  return new JobError("BAD_CHUNK", message);
}

function frame(magic: string, meta: unknown, parts: readonly Uint8Array[]): Uint8Array {
  const json = encoder.encode(JSON.stringify(meta));
  const size = FIXED + json.length + parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(size);
  out.set(encoder.encode(magic), 0);
  new DataView(out.buffer).setUint32(8, json.length, true);
  out.set(json, FIXED);
  let at = FIXED + json.length;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function unframe(magic: string, bytes: Uint8Array): { meta: unknown; body: Uint8Array } {
  if (bytes.length < FIXED) {
    throw bad(`Cannot read body: it is ${bytes.length} bytes, the frame needs at least ${FIXED}`);
  }
  const found = String.fromCharCode(...bytes.subarray(0, 8));
  if (found !== magic) {
    throw bad(`Cannot read body: expected magic "${magic}", found ${JSON.stringify(found)}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const metaLength = view.getUint32(8, true);
  if (metaLength > MAX_META_BYTES || metaLength > bytes.length - FIXED) {
    throw bad(
      `Cannot read body: its JSON part claims ${metaLength} bytes, ${
        bytes.length - FIXED
      } bytes follow (limit ${MAX_META_BYTES})`,
    );
  }
  let meta: unknown;
  try {
    meta = JSON.parse(decoder.decode(bytes.subarray(FIXED, FIXED + metaLength)));
  } catch (cause) {
    throw new JobError("BAD_CHUNK", "Cannot read body: its JSON part is not valid UTF-8 JSON", {
      cause,
    });
  }
  if (meta === null || typeof meta !== "object" || Array.isArray(meta)) {
    throw bad("Cannot read body: its JSON part is not an object");
  }
  return { meta, body: bytes.subarray(FIXED + metaLength) };
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** A frozen chunk with what identifies the attempt that made it. */
export interface ChunkBody {
  /** Task, lease, worker, rows, blocks and stats. */
  meta: ChunkMeta;
  /** The chunk, ready for `ArchiveWriter.writeChunk`. */
  chunk: EncodedChunk;
}

/**
 * Frames a frozen chunk for `POST /tasks/{id}/done`.
 *
 * @param id Task, lease and worker of the attempt.
 * @param chunk The encoded chunk.
 * @returns The body.
 *
 * @example Round trip
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeChunkBody, encodeChunkBody } from "./wire.ts";
 * const chunk = { rows: 2, blocks: [{ bytes: Uint8Array.of(1, 2, 3), raw_length: 9, predictor: "raw" }],
 *   stats: [{ min: 1, max: 2, null_count: 0 }] };
 * const body = encodeChunkBody({ task_id: "t", lease: "l", worker_id: "w" }, chunk);
 * assert.deepEqual(decodeChunkBody(body).chunk.blocks[0]!.bytes, Uint8Array.of(1, 2, 3));
 * ```
 */
export function encodeChunkBody(
  id: { task_id: string; lease: string; worker_id: string },
  chunk: EncodedChunk,
): Uint8Array {
  const meta: ChunkMeta = {
    task_id: id.task_id,
    lease: id.lease,
    worker_id: id.worker_id,
    rows: chunk.rows,
    blocks: chunk.blocks.map((b) => ({
      length: b.bytes.length,
      raw_length: b.raw_length,
      predictor: b.predictor,
      sha256: sha256Hex(b.bytes),
    })),
    stats: chunk.stats,
  };
  return frame(CHUNK_MAGIC, meta, chunk.blocks.map((b) => b.bytes));
}

/**
 * Reads and checks a frozen chunk: framing, lengths, and every block's SHA-256.
 *
 * @param bytes The body.
 * @returns Meta and chunk (block bytes are views into `bytes`).
 * @throws {JobError} BAD_CHUNK naming the first thing wrong.
 */
export function decodeChunkBody(bytes: Uint8Array): ChunkBody {
  const { meta: raw, body } = unframe(CHUNK_MAGIC, bytes);
  const m = raw as Record<string, unknown>;
  for (const key of ["task_id", "lease", "worker_id"]) {
    if (typeof m[key] !== "string") throw bad(`Cannot read chunk: "${key}" is not a string`);
  }
  if (!isCount(m.rows) || m.rows === 0) {
    throw bad(
      `Cannot read chunk: "rows" must be a positive integer, got ${JSON.stringify(m.rows)}`,
    );
  }
  if (!Array.isArray(m.blocks) || !Array.isArray(m.stats)) {
    throw bad(`Cannot read chunk: "blocks" and "stats" must be arrays`);
  }
  if (m.blocks.length !== m.stats.length) {
    throw bad(
      `Cannot read chunk: ${m.blocks.length} blocks but ${m.stats.length} column statistics`,
    );
  }
  let at = 0;
  const blocks: EncodedChunk["blocks"] = [];
  m.blocks.forEach((b: unknown, i: number) => {
    const e = b as Record<string, unknown>;
    if (
      e === null || typeof e !== "object" || !isCount(e.length) || !isCount(e.raw_length) ||
      typeof e.predictor !== "string" || typeof e.sha256 !== "string"
    ) {
      throw bad(`Cannot read chunk: block ${i} lacks length, raw_length, predictor or sha256`);
    }
    if (e.length > body.length - at) {
      throw bad(
        `Cannot read chunk: block ${i} claims ${e.length} bytes, ${body.length - at} are left`,
      );
    }
    const blockBytes = body.subarray(at, at + e.length);
    at += e.length;
    const sum = sha256Hex(blockBytes);
    if (sum !== e.sha256) {
      throw bad(`Cannot read chunk: block ${i} has SHA-256 ${sum}, its entry says ${e.sha256}`);
    }
    blocks.push({ bytes: blockBytes, raw_length: e.raw_length, predictor: e.predictor });
  });
  if (at !== body.length) {
    throw bad(`Cannot read chunk: blocks hold ${at} bytes, the body has ${body.length}`);
  }
  for (const [i, s] of (m.stats as unknown[]).entries()) {
    const st = s as Record<string, unknown>;
    if (st === null || typeof st !== "object" || !isCount(st.null_count)) {
      throw bad(`Cannot read chunk: statistics ${i} lack null_count`);
    }
  }
  const meta = m as unknown as ChunkMeta;
  return { meta, chunk: { rows: meta.rows, blocks, stats: meta.stats } };
}

/**
 * Frames several frozen-chunk bodies ({@link encodeChunkBody}) for one
 * `POST /tasks/done`: `"PFDONES1"`, a u32 count, then each body as a u32 length and
 * its bytes, nothing after.
 *
 * @param bodies The chunk bodies (1..{@link MAX_BODIES}).
 * @returns The body.
 */
export function encodeChunkBodies(bodies: readonly Uint8Array[]): Uint8Array {
  const size = FIXED + bodies.reduce((n, b) => n + 4 + b.length, 0);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set(encoder.encode(BODIES_MAGIC), 0);
  view.setUint32(8, bodies.length, true);
  let at = FIXED;
  for (const b of bodies) {
    view.setUint32(at, b.length, true);
    out.set(b, at + 4);
    at += 4 + b.length;
  }
  return out;
}

/**
 * Splits a `POST /tasks/done` body into its chunk bodies (views into `bytes`), each
 * still to be checked by {@link decodeChunkBody}.
 *
 * @param bytes The body.
 * @returns The chunk bodies.
 * @throws {JobError} BAD_CHUNK naming what is wrong with the framing.
 */
export function decodeChunkBodies(bytes: Uint8Array): Uint8Array[] {
  if (bytes.length < FIXED) {
    throw bad(`Cannot read results: the body is ${bytes.length} bytes, it needs at least ${FIXED}`);
  }
  const found = String.fromCharCode(...bytes.subarray(0, 8));
  if (found !== BODIES_MAGIC) {
    throw bad(
      `Cannot read results: expected magic "${BODIES_MAGIC}", found ${JSON.stringify(found)}`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint32(8, true);
  if (count < 1 || count > MAX_BODIES) {
    throw bad(`Cannot read results: ${count} results, send 1..${MAX_BODIES}`);
  }
  const out: Uint8Array[] = [];
  let at = FIXED;
  for (let i = 0; i < count; i++) {
    if (bytes.length - at < 4) throw bad(`Cannot read results: result ${i} has no length`);
    const length = view.getUint32(at, true);
    if (length > bytes.length - at - 4) {
      throw bad(
        `Cannot read results: result ${i} claims ${length} bytes, ${
          bytes.length - at - 4
        } are left`,
      );
    }
    out.push(bytes.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  if (at !== bytes.length) {
    throw bad(`Cannot read results: ${bytes.length - at} bytes follow the last result`);
  }
  return out;
}

interface BatchColumnMeta {
  type: Column["type"];
  validity: boolean;
  bytes: number;
}

interface BatchMeta {
  schema: FieldJson[];
  length: number;
  columns: BatchColumnMeta[];
}

const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

function viewBytes(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/**
 * Frames a batch of rows (validity kept exactly, present or not, so the chunk
 * encodes to the same bytes as from the source).
 *
 * @param batch The rows.
 * @returns The body.
 *
 * @example Round trip
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeBatchBody, encodeBatchBody } from "./wire.ts";
 * const batch = {
 *   schema: [{ name: "n", type: "int64" as const, nullable: true }, { name: "s", type: "string" as const, nullable: false }],
 *   columns: [
 *     { type: "int64" as const, values: BigInt64Array.of(1n, 0n), validity: Uint8Array.of(1, 0) },
 *     { type: "string" as const, values: ["a", "é"], validity: null },
 *   ],
 *   length: 2,
 * };
 * assert.deepEqual(decodeBatchBody(encodeBatchBody(batch)), batch);
 * ```
 */
export function encodeBatchBody(batch: Batch): Uint8Array {
  if (!LITTLE_ENDIAN) throw new Error("Cannot frame a batch on a big-endian machine");
  const parts: Uint8Array[] = [];
  const columns: BatchColumnMeta[] = batch.columns.map((c) => {
    const own: Uint8Array[] = [];
    if (c.validity) own.push(c.validity);
    if (c.type === "string" || c.type === "json" || Array.isArray(c.values)) {
      // Texts, and a wide decimal's bigints as their decimal digits.
      const lengths = new Uint32Array(c.values.length);
      const texts = (c.values as (string | bigint)[]).map((s, i) => {
        const b = encoder.encode(String(s));
        lengths[i] = b.length;
        return b;
      });
      own.push(viewBytes(lengths), ...texts);
    } else {
      own.push(viewBytes(c.values));
    }
    parts.push(...own);
    return {
      type: c.type,
      validity: c.validity !== null,
      bytes: own.reduce((n, p) => n + p.length, 0),
    };
  });
  const meta: BatchMeta = {
    schema: batch.schema.map((f) => ({ ...f })) as FieldJson[],
    length: batch.length,
    columns,
  };
  return frame(BATCH_MAGIC, meta, parts);
}

/**
 * Reads a batch framed by {@link encodeBatchBody}.
 *
 * @param bytes The body.
 * @returns The batch (typed arrays are copies, aligned).
 * @throws {JobError} BAD_CHUNK naming the first thing wrong.
 */
export function decodeBatchBody(bytes: Uint8Array): Batch {
  const { meta: raw, body } = unframe(BATCH_MAGIC, bytes);
  const m = raw as Partial<BatchMeta>;
  if (!Array.isArray(m.schema) || !Array.isArray(m.columns) || !isCount(m.length)) {
    throw bad("Cannot read rows: the JSON part lacks schema, columns or length");
  }
  if (m.schema.length !== m.columns.length) {
    throw bad(`Cannot read rows: ${m.schema.length} fields but ${m.columns.length} columns`);
  }
  const rows = m.length;
  let at = 0;
  const take = (n: number, what: string): Uint8Array => {
    if (n > body.length - at) {
      throw bad(`Cannot read rows: ${what} needs ${n} bytes, ${body.length - at} are left`);
    }
    const out = body.slice(at, at + n);
    at += n;
    return out;
  };
  const columns: Column[] = m.columns.map((c, i) => {
    const field = m.schema![i]!;
    if (!c || typeof c !== "object" || c.type !== field.type) {
      throw bad(`Cannot read rows: column ${i} type does not match field "${field.name}"`);
    }
    const start = at;
    const validity = c.validity ? take(rows, `validity of column ${i}`) : null;
    let column: Column;
    const texts = (what: string): string[] => {
      const lengths = new Uint32Array(take(rows * 4, `${what} lengths of column ${i}`).buffer);
      const values: string[] = new Array(rows);
      for (let r = 0; r < rows; r++) {
        const b = take(lengths[r]!, `${what} ${r} of column ${i}`);
        try {
          values[r] = decoder.decode(b);
        } catch (cause) {
          throw new JobError(
            "BAD_CHUNK",
            `Cannot read rows: ${what} ${r} of column ${i} is not UTF-8`,
            { cause },
          );
        }
      }
      return values;
    };
    switch (c.type) {
      case "int64":
      case "timestamp":
      case "date":
      case "time":
      case "duration":
        column = {
          type: c.type,
          values: new BigInt64Array(take(rows * 8, `column ${i}`).buffer),
          validity,
        };
        break;
      case "decimal":
        if (isWideDecimal(field as Field)) {
          const values = texts("decimal").map((t, r) => {
            if (!/^-?\d+$/.test(t)) {
              throw bad(`Cannot read rows: decimal ${r} of column ${i} is not an integer`);
            }
            return BigInt(t);
          });
          column = { type: "decimal", values, validity };
        } else {
          column = {
            type: "decimal",
            values: new BigInt64Array(take(rows * 8, `column ${i}`).buffer),
            validity,
          };
        }
        break;
      case "float64":
        column = {
          type: c.type,
          values: new Float64Array(take(rows * 8, `column ${i}`).buffer),
          validity,
        };
        break;
      case "float32":
        column = {
          type: c.type,
          values: new Float32Array(take(rows * 4, `column ${i}`).buffer),
          validity,
        };
        break;
      case "float16":
        column = {
          type: c.type,
          values: new Uint16Array(take(rows * 2, `column ${i}`).buffer),
          validity,
        };
        break;
      case "bool":
        column = { type: c.type, values: take(rows, `column ${i}`), validity };
        break;
      case "string":
      case "json":
        column = { type: c.type, values: texts("string"), validity };
        break;
      default:
        throw bad(`Cannot read rows: column ${i} has unknown type ${JSON.stringify(c.type)}`);
    }
    if (at - start !== c.bytes) {
      throw bad(
        `Cannot read rows: column ${i} took ${at - start} bytes, its entry says ${c.bytes}`,
      );
    }
    return column;
  });
  if (at !== body.length) {
    throw bad(`Cannot read rows: columns hold ${at} bytes, the body has ${body.length}`);
  }
  return { schema: m.schema as Schema, columns, length: rows };
}
