import assert from "node:assert/strict";
import { encodeChunk } from "./chunk.ts";
import type { Batch, Schema } from "./column.ts";
import { concatBatches, sliceBatch } from "./column.ts";
import { headerBinding, importDataKey, makeKeyCheck, withEncryption } from "./crypto.ts";
import { FormatError, type FormatErrorCode } from "./errors.ts";
import type { ArchiveFooter } from "./header.ts";
import { schemaToJson } from "./header.ts";
import { localKeyProvider } from "./local_key.ts";
import type { KeyRing } from "./key_provider.ts";
import { planColumns } from "./plan.ts";
import { BlockPool } from "./pool.ts";
import { ArchiveReader } from "./reader.ts";
import { ArchiveWriter } from "./writer.ts";
import {
  ALL_TYPES,
  assertColumnEqual,
  randomBatch,
  resealArchive,
  TYPES_1_3,
  writeTestArchive,
} from "./_test_utils.ts";

const TMP = ".tmp/format_encrypted";
await Deno.mkdir(TMP, { recursive: true });

const KEY = Uint8Array.from({ length: 32 }, (_, i) => 200 - i);
const KEK = Uint8Array.from({ length: 32 }, (_, i) => i * 3);
const SECRET = "TOP-SECRET-PLANKTON-7781";

function isCode(code: FormatErrorCode) {
  return (e: unknown) => e instanceof FormatError && e.code === code;
}

async function readAll(path: string, keys?: KeyRing): Promise<Batch> {
  const reader = await ArchiveReader.open(path, { keys });
  try {
    const parts: Batch[] = [];
    for await (const b of reader.read()) parts.push(b);
    return concatBatches(reader.index.schema, parts);
  } finally {
    reader.close();
  }
}

function assertSame(back: Batch, original: Batch): void {
  assert.equal(back.length, original.length);
  original.schema.forEach((f, i) =>
    assertColumnEqual(back.columns[i]!, original.columns[i]!, f.name)
  );
}

function secretBatch(rows: number): Batch {
  const schema: Schema = [
    { name: "id", type: "int64", nullable: false },
    { name: "note", type: "string", nullable: false },
    { name: "copy", type: "string", nullable: false },
  ];
  const notes = Array.from({ length: rows }, (_, i) => (i % 7 === 0 ? SECRET : `row ${i % 5}`));
  return {
    schema,
    columns: [
      {
        type: "int64",
        values: BigInt64Array.from({ length: rows }, (_, i) => BigInt(i)),
        validity: null,
      },
      { type: "string", values: notes, validity: null },
      { type: "string", values: notes.slice(), validity: null },
    ],
    length: rows,
  };
}

Deno.test("an encrypted archive of the 1.3 column types is 1.4, with 1.5 types 1.5", async () => {
  const path = `${TMP}/raw_13.pf`;
  const batch = randomBatch(TYPES_1_3, 50, 3);
  await writeTestArchive(path, batch, { encryption: { key: KEY } });
  const reader = await ArchiveReader.open(path);
  try {
    assert.equal(reader.index.version, "1.4");
  } finally {
    reader.close();
  }
  assertSame(await readAll(path, { key: KEY }), batch);
});

Deno.test("ArchiveReader reads an archive encrypted with a raw key back exactly", async (t) => {
  const batch = randomBatch(ALL_TYPES, 500, 5);
  const path = `${TMP}/raw.pf`;
  await writeTestArchive(path, batch, { chunkRows: 128, encryption: { key: KEY } });
  await t.step("with the key", async () => {
    assertSame(await readAll(path, { key: KEY }), batch);
  });
  await t.step(
    "header says 1.5 (it has 1.5 types) and records the key's fingerprint, no EDEK",
    async () => {
      const reader = await ArchiveReader.open(path);
      try {
        assert.equal(reader.index.version, "1.5");
        assert.equal(reader.index.header.version, "1.5");
        assert.equal(reader.encrypted, true);
        const e = reader.index.header.encryption!;
        assert.equal(e.key_provider, "raw");
        assert.equal(e.edek, null);
        assert.match(e.key_id!, /^sha256:/);
        assert.equal((await reader.verify()).ok, true, "verify needs no key");
      } finally {
        reader.close();
      }
    },
  );
  await t.step("without a key: open works, reading rows is KEY_REQUIRED", async () => {
    await assert.rejects(readAll(path), isCode("KEY_REQUIRED"));
    await assert.rejects(ArchiveReader.open(path, { requireKey: true }), isCode("KEY_REQUIRED"));
  });
  await t.step("with a wrong key: WRONG_KEY at open, before any block", async () => {
    await assert.rejects(
      ArchiveReader.open(path, { keys: { key: new Uint8Array(32).fill(1) } }),
      isCode("WRONG_KEY"),
    );
  });
  await t.step("a plain archive ignores the key ring", async () => {
    const plain = `${TMP}/plain.pf`;
    await writeTestArchive(plain, batch, { chunkRows: 128 });
    assertSame(await readAll(plain, { key: KEY }), batch);
  });
});

Deno.test("encodeChunk() encrypts in the block pool's Workers", async () => {
  const batch = randomBatch(ALL_TYPES, 300, 9);
  const plans = planColumns(batch);
  const header = withEncryption(
    {
      format: "permafrost",
      version: "1.3",
      schema: schemaToJson(batch.schema),
      codec: "zstd",
      auto_reason: null,
      chunk_rows: 100,
      columns: plans,
      lossy_columns: [],
      primary_key: null,
      partition: null,
      encryption: null,
      metadata: {},
    },
    {
      algorithm: "AES-256-GCM",
      key_provider: "raw",
      key_id: null,
      edek: null,
      key_check: await makeKeyCheck(await importDataKey(KEY)),
    },
  );
  const path = `${TMP}/pool.pf`;
  const pool = new BlockPool(2);
  try {
    const writer = await ArchiveWriter.create(path, header);
    const chunks = [0, 100, 200].map((at) =>
      encodeChunk(sliceBatch(batch, at, at + 100), {
        plans,
        codec: "zstd",
        encoder: pool,
        encryption: { dataKey: KEY, headerBinding: headerBinding(header), rowStart: at },
      })
    );
    for (const c of chunks) await writer.writeChunk(await c);
    await writer.finish();
  } finally {
    pool.close();
  }
  assertSame(await readAll(path, { key: KEY }), batch);
});

Deno.test("ArchiveReader unwraps a local envelope key, and refuses another key file", async () => {
  const batch = randomBatch(ALL_TYPES, 200, 11);
  const path = `${TMP}/local.pf`;
  await writeTestArchive(path, batch, {
    chunkRows: 64,
    encryption: { provider: localKeyProvider(KEK) },
  });
  const reader = await ArchiveReader.open(path);
  const e = reader.index.header.encryption!;
  reader.close();
  assert.equal(e.key_provider, "local");
  assert.equal(e.edek!.length, 56, "a 40-byte AES-KW EDEK in base64");
  assertSame(await readAll(path, { providers: [localKeyProvider(KEK)] }), batch);
  assertSame(await readAll(path, { key: KEK }), batch);
  await assert.rejects(readAll(path, { key: KEY }), isCode("WRONG_KEY"));
  await assert.rejects(readAll(path, { key: undefined }), isCode("KEY_REQUIRED"));
});

Deno.test("ArchiveReader refuses tampered encrypted blocks with a typed error, never wrong data", async (t) => {
  const batch = secretBatch(300);
  const path = `${TMP}/tamper.pf`;
  const plans = planColumns(batch, { conditioning: false });
  await writeTestArchive(path, batch, { chunkRows: 100, plans, encryption: { key: KEY } });
  const good = await Deno.readFile(path);
  const reader = await ArchiveReader.open(path);
  const footer = reader.index.footer;
  reader.close();
  const bad = `${TMP}/tamper_bad.pf`;
  const block = footer.chunks[1]!.blocks[1]!;

  await t.step("a flipped ciphertext byte is a HASH_MISMATCH", async () => {
    const b = good.slice();
    b[block.offset + 20]! ^= 0x40;
    await Deno.writeFile(bad, b);
    await assert.rejects(readAll(bad, { key: KEY }), isCode("HASH_MISMATCH"));
  });
  await t.step("with every hash recomputed, it is DECRYPT_FAILED", async () => {
    for (const at of [0, 11, 12, 20, block.length - 17, block.length - 1]) {
      const b = good.slice();
      b[block.offset + at]! ^= 0x01;
      await Deno.writeFile(bad, resealArchive(b));
      await assert.rejects(readAll(bad, { key: KEY }), isCode("DECRYPT_FAILED"), `byte ${at}`);
      const r = await ArchiveReader.open(bad);
      assert.equal((await r.verify()).ok, true, "the hashes were fixed up");
      r.close();
    }
  });
  await t.step("a footer entry edited to decode with another predictor or length", async () => {
    const edits: ((f: ArchiveFooter) => void)[] = [
      (f) => (f.chunks[0]!.blocks[0]!.predictor = "frame_zigzag"),
      (f) => (f.chunks[0]!.blocks[0]!.raw_length += 1),
    ];
    for (const edit of edits) {
      await Deno.writeFile(bad, resealArchive(good.slice(), { footer: edit }));
      await assert.rejects(readAll(bad, { key: KEY }), isCode("DECRYPT_FAILED"));
    }
  });
  await t.step("two equal blocks swapped between columns", async () => {
    const c = footer.chunks[0]!;
    const [a, b] = [c.blocks[1]!, c.blocks[2]!];
    assert.equal(a.length, b.length, "columns note and copy hold the same values");
    const bytes = good.slice();
    bytes.set(good.subarray(b.offset, b.offset + b.length), a.offset);
    bytes.set(good.subarray(a.offset, a.offset + a.length), b.offset);
    await Deno.writeFile(bad, resealArchive(bytes));
    await assert.rejects(readAll(bad, { key: KEY }), isCode("DECRYPT_FAILED"));
  });
  await t.step("a replaced key_check is WRONG_KEY", async () => {
    const other = await writeTestArchive(`${TMP}/other.pf`, batch, {
      chunkRows: 100,
      encryption: { key: new Uint8Array(32).fill(5) },
    });
    const otherReader = await ArchiveReader.open(other.path);
    const check = otherReader.index.header.encryption!.key_check;
    otherReader.close();
    await Deno.writeFile(
      bad,
      resealArchive(good.slice(), {
        header: (h) => ((h.encryption as Record<string, unknown>).key_check = check),
      }),
    );
    await assert.rejects(readAll(bad, { key: KEY }), isCode("WRONG_KEY"));
  });
  await t.step(
    "a header edited to decode blocks otherwise (type, codec, plan, key check)",
    async () => {
      const edits: ((h: Record<string, unknown>) => void)[] = [
        (h) => {
          const fields = (h.schema as { fields: { type: unknown }[] }).fields;
          fields[0]!.type = { name: "date", unit: "DAY" };
        },
        (h) => ((h.schema as { fields: { nullable: boolean }[] }).fields[1]!.nullable = true),
        (h) => (h.codec = "lzma2"),
        (h) => (h.chunk_rows = 99),
        (h) => (h.primary_key = "id"),
        (h) => (h.lossy_columns = ["id"]),
      ];
      for (const edit of edits) {
        await Deno.writeFile(bad, resealArchive(good.slice(), { header: edit }));
        await assert.rejects(readAll(bad, { key: KEY }), isCode("DECRYPT_FAILED"));
      }
    },
  );
  await t.step(
    "metadata and the key wrapping are not bound: they change without re-encryption",
    async () => {
      await Deno.writeFile(
        bad,
        resealArchive(good.slice(), { header: (h) => (h.metadata = { description: "edited" }) }),
      );
      assertSame(await readAll(bad, { key: KEY }), batch);
    },
  );
  await t.step("encryption removed from the header: the ciphertext does not decode", async () => {
    await Deno.writeFile(
      bad,
      resealArchive(good.slice(), { header: (h) => (h.encryption = null) }),
    );
    await assert.rejects(readAll(bad, { key: KEY }), isCode("CORRUPT"));
  });
});

Deno.test("an encrypted archive holds no plaintext of its strings, in blocks or footer", async () => {
  const batch = secretBatch(400);
  const needle = new TextEncoder().encode(SECRET);
  const plainPath = `${TMP}/secret_plain.pf`;
  const path = `${TMP}/secret.pf`;
  await writeTestArchive(plainPath, batch, { chunkRows: 100, codec: "zstd" });
  await writeTestArchive(path, batch, { chunkRows: 100, encryption: { key: KEY } });
  assert.ok(indexOf(await Deno.readFile(plainPath), needle) >= 0, "the check can see plaintext");
  assert.equal(indexOf(await Deno.readFile(path), needle), -1);
  const reader = await ArchiveReader.open(path);
  try {
    for (const c of reader.index.footer.chunks) {
      for (const s of c.stats) assert.deepEqual([s.min, s.max], [null, null]);
    }
  } finally {
    reader.close();
  }
  assertSame(await readAll(path, { key: KEY }), batch);
});

Deno.test("ArchiveWriter refuses plaintext blocks in an encrypted archive and a wrong version", async () => {
  const batch = secretBatch(10);
  const plans = planColumns(batch);
  const base = {
    format: "permafrost" as const,
    version: "1.3",
    schema: schemaToJson(batch.schema),
    codec: "zstd",
    auto_reason: null,
    chunk_rows: 10,
    columns: plans,
    lossy_columns: [],
    primary_key: null,
    partition: null,
    encryption: null,
    metadata: {},
  };
  const encryption = {
    algorithm: "AES-256-GCM" as const,
    key_provider: "raw",
    key_id: null,
    edek: null,
    key_check: "A".repeat(40),
  };
  await assert.rejects(
    ArchiveWriter.create(`${TMP}/w.pf`, { ...base, encryption }),
    isCode("BAD_ARGUMENT"),
  );
  const writer = await ArchiveWriter.create(`${TMP}/w.pf`, withEncryption(base, encryption));
  try {
    await assert.rejects(
      writer.writeChunk(await encodeChunk(batch, { plans, codec: "zstd" })),
      isCode("BAD_ARGUMENT"),
    );
  } finally {
    await writer.abort();
  }
  const plain = await ArchiveWriter.create(`${TMP}/w.pf`, base);
  try {
    await assert.rejects(
      plain.writeChunk(
        await encodeChunk(batch, {
          plans,
          codec: "zstd",
          encryption: {
            dataKey: KEY,
            headerBinding: headerBinding({ ...base, encryption }),
            rowStart: 0,
          },
        }),
      ),
      isCode("BAD_ARGUMENT"),
    );
  } finally {
    await plain.abort();
  }
});

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

Deno.test("an envelope key rotates by re-wrapping the EDEK alone; the blocks stay as they are", async () => {
  const batch = randomBatch(ALL_TYPES, 150, 13);
  const path = `${TMP}/rotate.pf`;
  const oldKek = localKeyProvider(KEK);
  const newKek = localKeyProvider(new Uint8Array(32).fill(0x42));
  await writeTestArchive(path, batch, { chunkRows: 50, encryption: { provider: oldKek } });
  const reader = await ArchiveReader.open(path, { keys: { providers: [oldKek] } });
  const dataKey = reader.dataKey()!;
  reader.close();
  const wrapped = await newKek.wrap(dataKey);
  const good = await Deno.readFile(path);
  const rotated = resealArchive(good.slice(), {
    header: (h) => {
      const e = h.encryption as Record<string, unknown>;
      e.key_id = wrapped.keyId;
      e.edek = btoa(String.fromCharCode(...wrapped.edek));
    },
  });
  const view = new DataView(good.buffer);
  const payload = (b: Uint8Array) => {
    const v = new DataView(b.buffer, b.byteOffset);
    const start = 16 + v.getUint32(12, true) + 32;
    return b.subarray(start, b.length - 48 - v.getUint32(b.length - 16, true));
  };
  assert.ok(view.byteLength > 0);
  assert.deepEqual(payload(rotated), payload(good), "no block was rewritten");
  await Deno.writeFile(`${TMP}/rotated.pf`, rotated);
  assertSame(await readAll(`${TMP}/rotated.pf`, { providers: [newKek] }), batch);
  await assert.rejects(readAll(`${TMP}/rotated.pf`, { providers: [oldKek] }), isCode("WRONG_KEY"));
});
