import assert from "node:assert/strict";
import type { Batch } from "../format/column.ts";
import {
  CHUNK_MAGIC,
  decodeBatchBody,
  decodeChunkBodies,
  decodeChunkBody,
  encodeBatchBody,
  encodeChunkBodies,
  encodeChunkBody,
} from "./wire.ts";

const chunk = {
  rows: 3,
  blocks: [
    { bytes: Uint8Array.of(1, 2, 3), raw_length: 10, predictor: "delta_zigzag" },
    { bytes: Uint8Array.of(9), raw_length: 4, predictor: "raw_text" },
  ],
  stats: [{ min: "1", max: "3", null_count: 0 }, { min: "a", max: "c", null_count: 1 }],
};
const id = { task_id: "job-t0", lease: "lease-1", worker_id: "w1" };

function expectBad(bytes: Uint8Array, pattern: RegExp) {
  assert.throws(() => decodeChunkBody(bytes), (e: unknown) => {
    assert.equal((e as { code?: string }).code, "BAD_CHUNK");
    assert.match((e as Error).message, pattern);
    return true;
  });
}

Deno.test("decodeChunkBody() reads back what encodeChunkBody() framed", () => {
  const body = decodeChunkBody(encodeChunkBody(id, chunk));
  assert.equal(body.meta.task_id, "job-t0");
  assert.equal(body.meta.lease, "lease-1");
  assert.deepEqual(body.chunk, chunk);
});

Deno.test("decodeChunkBody() refuses damaged bodies with BAD_CHUNK naming the problem", async (t) => {
  const good = encodeChunkBody(id, chunk);
  const metaLength = new DataView(good.buffer).getUint32(8, true);
  await t.step("shorter than the fixed part", () => expectBad(good.subarray(0, 5), /at least 12/));
  await t.step("another magic", () => {
    const b = good.slice();
    b[0] = 0x58;
    expectBad(b, /expected magic "PFCHUNK1"/);
  });
  await t.step("a JSON length past the end", () => {
    const b = good.slice();
    new DataView(b.buffer).setUint32(8, 1 << 30, true);
    expectBad(b, /claims 1073741824 bytes/);
  });
  await t.step("JSON that is not JSON", () => {
    const b = good.slice();
    b[12] = 0x7b + 1;
    expectBad(b, /not valid UTF-8 JSON/);
  });
  await t.step("a block byte flipped", () => {
    const b = good.slice();
    b[12 + metaLength] = b[12 + metaLength]! ^ 0xff;
    expectBad(b, /block 0 has SHA-256/);
  });
  await t.step(
    "truncated blocks",
    () => expectBad(good.subarray(0, good.length - 1), /block 1 claims 1 bytes, 0 are left/),
  );
  await t.step("bytes after the last block", () => {
    const b = new Uint8Array(good.length + 2);
    b.set(good);
    expectBad(b, /blocks hold 4 bytes, the body has 6/);
  });
  await t.step("zero rows", () => {
    expectBad(encodeChunkBody(id, { ...chunk, rows: 0 }), /"rows" must be a positive integer/);
  });
  await t.step("stats that do not match the blocks", () => {
    expectBad(
      encodeChunkBody(id, { ...chunk, stats: [chunk.stats[0]!] }),
      /2 blocks but 1 column statistics/,
    );
  });
  assert.equal(new TextDecoder().decode(good.subarray(0, 8)), CHUNK_MAGIC);
});

Deno.test("decodeBatchBody() reads back every column type with its validity exactly", () => {
  const batch: Batch = {
    schema: [
      { name: "i", type: "int64", nullable: true },
      { name: "f", type: "float64", nullable: false },
      { name: "b", type: "bool", nullable: false },
      { name: "t", type: "timestamp", nullable: false, unit: "ms", timezone: "UTC" },
      { name: "s", type: "string", nullable: true },
      { name: "d", type: "date", nullable: false },
    ],
    columns: [
      {
        type: "int64",
        values: BigInt64Array.of(-1n, 0n, 9007199254740993n),
        validity: Uint8Array.of(1, 0, 1),
      },
      { type: "float64", values: Float64Array.of(NaN, -0, 1.5), validity: null },
      { type: "bool", values: Uint8Array.of(1, 0, 1), validity: null },
      { type: "timestamp", values: BigInt64Array.of(1n, 2n, 3n), validity: null },
      { type: "string", values: ["", "ünï", "x".repeat(1000)], validity: Uint8Array.of(1, 1, 1) },
      { type: "date", values: BigInt64Array.of(19000n, 19001n, 19002n), validity: null },
    ],
    length: 3,
  };
  const back = decodeBatchBody(encodeBatchBody(batch));
  assert.deepEqual(back, batch);
  // A sliced batch (a view into a bigger one) frames only its rows.
  const sliced: Batch = {
    schema: [batch.schema[0]!],
    columns: [{ type: "int64", values: BigInt64Array.of(5n, 6n, 7n).subarray(1), validity: null }],
    length: 2,
  };
  assert.deepEqual(
    decodeBatchBody(encodeBatchBody(sliced)).columns[0]!.values,
    BigInt64Array.of(6n, 7n),
  );
});

Deno.test("decodeBatchBody() refuses truncated rows with BAD_CHUNK", () => {
  const body = encodeBatchBody({
    schema: [{ name: "s", type: "string", nullable: false }],
    columns: [{ type: "string", values: ["abc", "def"], validity: null }],
    length: 2,
  });
  assert.throws(() => decodeBatchBody(body.subarray(0, body.length - 1)), { code: "BAD_CHUNK" });
  assert.throws(() => decodeBatchBody(encodeChunkBody(id, chunk)), { code: "BAD_CHUNK" });
});

Deno.test("encodeChunkBodies() / decodeChunkBodies() carry several chunk bodies, and refuse bad framing with BAD_CHUNK", () => {
  const bodies = ["a", "b", "c"].map((id) =>
    encodeChunkBody({ task_id: id, lease: "l", worker_id: "w" }, chunk)
  );
  const framed = encodeChunkBodies(bodies);
  const back = decodeChunkBodies(framed);
  assert.deepEqual(back.map((b) => decodeChunkBody(b).meta.task_id), ["a", "b", "c"]);
  const refused = (bytes: Uint8Array) =>
    assert.throws(() => decodeChunkBodies(bytes), { name: "JobError", code: "BAD_CHUNK" });
  refused(framed.subarray(0, 5));
  refused(framed.subarray(0, framed.length - 1));
  refused(Uint8Array.of(...framed, 0));
  refused(encodeChunkBodies([]));
  const wrongMagic = framed.slice();
  wrongMagic[0] = 0;
  refused(wrongMagic);
  const tooLong = framed.slice();
  new DataView(tooLong.buffer).setUint32(12, 1 << 30, true);
  refused(tooLong);
});
