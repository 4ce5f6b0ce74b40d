import assert from "node:assert/strict";
import { concatBatches } from "./column.ts";
import type { Batch } from "./column.ts";
import { FormatError } from "./errors.ts";
import { ArchiveReader, readArchiveIndex } from "./reader.ts";
import { ALL_TYPES, assertColumnEqual, randomBatch, writeTestArchive } from "./_test_utils.ts";
import { newArchiveHeader } from "./new_archive.ts";

const TMP = ".tmp/format_reader";
await Deno.mkdir(TMP, { recursive: true });

async function readAll(
  path: string,
  options = {},
): Promise<{ batch: Batch; reader: ArchiveReader }> {
  const reader = await ArchiveReader.open(path);
  try {
    const parts: Batch[] = [];
    for await (const b of reader.read(options)) parts.push(b);
    const schema = parts[0]?.schema ?? reader.index.schema;
    return { batch: concatBatches(schema, parts), reader };
  } finally {
    reader.close();
  }
}

async function rejects(fn: () => Promise<unknown>, code: string): Promise<FormatError> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof FormatError, `expected FormatError, got ${err}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  throw new Error(`expected FormatError ${code}, nothing was thrown`);
}

Deno.test("ArchiveReader.read() round-trips every type exactly, for several seeds and codecs", async (t) => {
  for (const codec of ["zstd", "lzma2"]) {
    for (const seed of [1, 2, 3]) {
      await t.step(`${codec} seed ${seed}`, async () => {
        const rows = 50 + seed * 97;
        const batch = randomBatch(ALL_TYPES, rows, seed);
        const path = `${TMP}/rt_${codec}_${seed}.pf`;
        const written = await writeTestArchive(path, batch, { codec, chunkRows: 64 });
        assert.equal(written.rows, rows);
        const { batch: back } = await readAll(path);
        assert.equal(back.length, rows);
        ALL_TYPES.forEach((f, i) => assertColumnEqual(back.columns[i]!, batch.columns[i]!, f.name));
      });
    }
  }
});

Deno.test("ArchiveReader.read() touches only the chunks and columns asked for", async () => {
  const batch = randomBatch(ALL_TYPES, 1000, 7);
  const path = `${TMP}/slice.pf`;
  await writeTestArchive(path, batch, { chunkRows: 100 });
  const { batch: back, reader } = await readAll(path, {
    rows: { start: 455, end: 465 },
    columns: ["s", "i"],
  });
  assert.equal(reader.chunksRead, 1);
  assert.deepEqual(back.schema.map((f) => f.name), ["s", "i"]);
  assert.equal(back.length, 10);
  assert.deepEqual(back.columns[1]!.values, batch.columns[0]!.values.slice(455, 465));
  const total = reader.index.footer.chunks[4]!.length;
  assert.ok(reader.bytesRead < total, `read ${reader.bytesRead} of the chunk's ${total} bytes`);
  const across = await readAll(path, { rows: { start: 95, end: 105 } });
  assert.equal(across.reader.chunksRead, 2);
  assert.equal(across.batch.length, 10);
});

Deno.test("ArchiveReader.read() refuses an unknown column naming the known ones", async () => {
  const path = `${TMP}/cols.pf`;
  await writeTestArchive(path, randomBatch(ALL_TYPES, 10, 1));
  const reader = await ArchiveReader.open(path);
  try {
    const err = await rejects(async () => {
      for await (const _ of reader.read({ columns: ["nope"] })) { /* drain */ }
    }, "BAD_ARGUMENT");
    assert.match(err.message, /"nope".*"i"/);
  } finally {
    reader.close();
  }
});

Deno.test("ArchiveReader.open() names what is wrong with a damaged file", async (t) => {
  const path = `${TMP}/good.pf`;
  await writeTestArchive(path, randomBatch(ALL_TYPES, 300, 5), { chunkRows: 100 });
  const good = await Deno.readFile(path);
  const bad = `${TMP}/bad.pf`;
  const withBytes = async (bytes: Uint8Array) => {
    await Deno.writeFile(bad, bytes);
    return bad;
  };
  await t.step("empty file is TRUNCATED", async () => {
    await rejects(async () => ArchiveReader.open(await withBytes(new Uint8Array(0))), "TRUNCATED");
  });
  await t.step("a CSV is BAD_MAGIC", async () => {
    await rejects(
      async () => ArchiveReader.open(await withBytes(new TextEncoder().encode("a,b\n1,2\n"))),
      "BAD_MAGIC",
    );
  });
  await t.step("major version 2 is UNSUPPORTED_VERSION", async () => {
    const b = good.slice();
    b[8] = 2;
    const err = await rejects(
      async () => ArchiveReader.open(await withBytes(b)),
      "UNSUPPORTED_VERSION",
    );
    assert.match(err.message, new RegExp(`2\\.${good[9]}`));
  });
  await t.step("every truncation is TRUNCATED", async () => {
    for (const keep of [1, 8, 16, 95, 200, good.length - 49, good.length - 1]) {
      await rejects(
        async () => ArchiveReader.open(await withBytes(good.slice(0, keep))),
        "TRUNCATED",
      );
    }
  });
  await t.step("a flipped header byte is HASH_MISMATCH", async () => {
    const b = good.slice();
    b[20]! ^= 0x01;
    await rejects(async () => ArchiveReader.open(await withBytes(b)), "HASH_MISMATCH");
  });
  await t.step("a flipped footer byte is HASH_MISMATCH", async () => {
    const b = good.slice();
    b[good.length - 60]! ^= 0x40;
    await rejects(async () => ArchiveReader.open(await withBytes(b)), "HASH_MISMATCH");
  });
  await t.step(
    "a flipped payload byte fails the read of that block, and verify names the chunk",
    async () => {
      const index = await readArchiveIndex(path);
      const chunk = index.footer.chunks[1]!;
      const b = good.slice();
      b[chunk.blocks[2]!.offset]! ^= 0x80;
      const reader = await ArchiveReader.open(await withBytes(b));
      try {
        await rejects(async () => {
          for await (const _ of reader.read()) { /* drain */ }
        }, "HASH_MISMATCH");
        const report = await reader.verify();
        assert.equal(report.ok, false);
        assert.equal(report.first_bad_chunk, 1);
        assert.match(report.errors[0]!.message, /Chunk 1 .*column "b"/);
      } finally {
        reader.close();
      }
    },
  );
});

Deno.test("ArchiveReader.verify() passes an intact archive", async () => {
  const path = `${TMP}/verify.pf`;
  const written = await writeTestArchive(path, randomBatch(ALL_TYPES, 250, 9), { chunkRows: 100 });
  const reader = await ArchiveReader.open(path);
  try {
    const report = await reader.verify();
    assert.equal(report.ok, true);
    assert.equal(report.chunks, 3);
    assert.equal(report.payload_sha256, written.payload_sha256);
    assert.equal(report.first_bad_chunk, null);
  } finally {
    reader.close();
  }
});

Deno.test("ArchiveWriter leaves nothing at the destination when aborted", async () => {
  const path = `${TMP}/never.pf`;
  await Deno.remove(path).catch(() => {});
  const { ArchiveWriter } = await import("./writer.ts");
  const { schemaToJson } = await import("./header.ts");
  const writer = await ArchiveWriter.create(path, {
    format: "permafrost",
    version: "1.3",
    schema: schemaToJson([{ name: "x", type: "int64", nullable: false }]),
    codec: "zstd",
    auto_reason: null,
    chunk_rows: 10,
    columns: { x: { deps: [], quantization: "QUANT_NONE" } },
    lossy_columns: [],
    primary_key: null,
    partition: null,
    encryption: null,
    metadata: {},
  });
  await writer.abort();
  await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
  const leftovers = [...Deno.readDirSync(TMP)].filter((e) => e.name.includes(".pf.tmp-"));
  assert.deepEqual(leftovers, []);
});

Deno.test("ArchiveWriter's mirror gets the file's bytes in order, finished once in place, aborted with it", async () => {
  const { ArchiveWriter } = await import("./writer.ts");
  const { encodeChunk, INLINE_ENCODER } = await import("./chunk.ts");
  const { planColumns } = await import("./plan.ts");
  const batch = randomBatch(ALL_TYPES, 50, 7);
  const plans = planColumns(batch);
  const header = newArchiveHeader(batch.schema, "zstd", null, plans, { chunkRows: 50 });
  const mirrored = (events: string[], bytes: Uint8Array[]) => ({
    write: (b: Uint8Array) => {
      bytes.push(b.slice());
      return Promise.resolve();
    },
    finish: () => {
      events.push("finish");
      return Promise.resolve();
    },
    abort: () => {
      events.push("abort");
      return Promise.resolve();
    },
  });
  const events: string[] = [];
  const bytes: Uint8Array[] = [];
  const path = `${TMP}/mirrored.pf`;
  const writer = await ArchiveWriter.create(path, header, { mirror: mirrored(events, bytes) });
  await writer.writeChunk(
    await encodeChunk(batch, { plans, codec: "zstd", encoder: INLINE_ENCODER }),
  );
  await writer.finish();
  assert.deepEqual(events, ["finish"]);
  const joined = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of bytes) {
    joined.set(b, at);
    at += b.length;
  }
  assert.deepEqual(joined, await Deno.readFile(path));
  const abandoned: string[] = [];
  const other = await ArchiveWriter.create(`${TMP}/abandoned.pf`, header, {
    mirror: mirrored(abandoned, []),
  });
  await other.abort();
  assert.deepEqual(abandoned, ["abort"]);
});

Deno.test("ArchiveReader.read() round-trips the edge sizes: empty, one row, exactly chunk_rows, chunk_rows + 1", async (t) => {
  const chunkRows = 32;
  for (const rows of [0, 1, chunkRows - 1, chunkRows, chunkRows + 1, 3 * chunkRows]) {
    await t.step(`${rows} rows`, async () => {
      const batch = randomBatch(ALL_TYPES, rows, 100 + rows);
      const path = `${TMP}/edge_${rows}.pf`;
      const written = await writeTestArchive(path, batch, { chunkRows });
      assert.equal(written.rows, rows);
      assert.equal(written.chunks, Math.ceil(rows / chunkRows));
      const { batch: back, reader } = await readAll(path);
      assert.equal(reader.index.footer.rows, rows);
      assert.equal(back.length, rows);
      if (rows > 0) {
        ALL_TYPES.forEach((f, i) => assertColumnEqual(back.columns[i]!, batch.columns[i]!, f.name));
      }
    });
  }
});

Deno.test("ArchiveReader.read() and readChunkBytes() name the archive in every error", async () => {
  const good = `${TMP}/named.pf`;
  await writeTestArchive(good, randomBatch(ALL_TYPES, 300, 9), { chunkRows: 100 });
  const bytes = await Deno.readFile(good);
  const path = `${TMP}/named-damaged.pf`;
  const reader0 = await ArchiveReader.open(good);
  const block = reader0.index.footer.chunks[1]!.blocks[2]!;
  reader0.close();
  bytes[block.offset + 1]! ^= 0x40;
  await Deno.writeFile(path, bytes);
  const reader = await ArchiveReader.open(path);
  try {
    const damaged = await rejects(async () => {
      for await (const _ of reader.read()) { /* drain */ }
    }, "HASH_MISMATCH");
    assert.match(damaged.message, /Chunk 1 column .* does not match its SHA-256/);
    assert.ok(damaged.message.includes(`'${path}'`), damaged.message);
    assert.deepEqual([damaged.path, damaged.chunk], [path, 1]);
    const chunk = await rejects(() => reader.readChunkBytes(1), "HASH_MISMATCH");
    assert.ok(chunk.message.includes(`'${path}'`), chunk.message);
    const column = await rejects(async () => {
      for await (const _ of reader.read({ columns: ["nope"] })) { /* drain */ }
    }, "BAD_ARGUMENT");
    assert.ok(column.message.includes(`'${path}'`), column.message);
    assert.equal(column.column, "nope");
  } finally {
    reader.close();
  }
});

Deno.test("ArchiveWriter.create() refuses a destination that is not a regular file, and follows a link to one", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ dir: TMP, prefix: "targets-" }));
  try {
    const batch = randomBatch(ALL_TYPES, 20, 3);
    const fifo = `${dir}/pipe`;
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.ok(made.success, "mkfifo");
    await Deno.mkdir(`${dir}/folder`);
    await Deno.symlink(fifo, `${dir}/link-to-pipe`);
    for (const target of [fifo, `${dir}/folder`, `${dir}/link-to-pipe`]) {
      const err = await rejects(() => writeTestArchive(target, batch), "WRITE_FAILED");
      assert.match(err.message, /is not a regular file/);
    }
    assert.ok((await Deno.lstat(fifo)).isFifo);
    assert.ok((await Deno.lstat(`${dir}/link-to-pipe`)).isSymlink);
    await Deno.writeTextFile(`${dir}/real.pf`, "old");
    await Deno.symlink(`${dir}/real.pf`, `${dir}/link.pf`);
    await writeTestArchive(`${dir}/link.pf`, batch);
    assert.ok((await Deno.lstat(`${dir}/link.pf`)).isSymlink, "the link is kept");
    assert.equal((await readAll(`${dir}/real.pf`)).batch.length, 20);
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.deepEqual(names, ["folder", "link-to-pipe", "link.pf", "pipe", "real.pf"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
