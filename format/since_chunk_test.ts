/**
 * Chunks that lack a column (1.8, FORMAT.md §6.1) at the format layer: the writer lays
 * out a null block exactly where a plan's `since_chunk` says, stamps 1.8 only then, and
 * the reader returns the lacking column as nulls.
 */
import assert from "node:assert/strict";
import { type Batch, cellValue, type Schema } from "./column.ts";
import { encodeChunk } from "./chunk.ts";
import { FormatError } from "./errors.ts";
import { type ArchiveHeader, archiveVersion, schemaToJson } from "./header.ts";
import { ArchiveReader } from "./reader.ts";
import { ArchiveWriter } from "./writer.ts";

const TMP = ".tmp/format_since_chunk";
await Deno.mkdir(TMP, { recursive: true });

const SCHEMA: Schema = [
  { name: "id", type: "int64", nullable: false },
  { name: "added", type: "string", nullable: true },
];

function header(since: number | undefined): ArchiveHeader {
  const columns = {
    id: { deps: [], quantization: "QUANT_NONE" as const },
    added: {
      deps: [],
      quantization: "QUANT_NONE" as const,
      ...(since === undefined ? {} : { since_chunk: since }),
    },
  };
  const schema = schemaToJson(SCHEMA);
  return {
    format: "permafrost",
    version: archiveVersion({ schema, encryption: null, codec: "zstd", columns }),
    schema,
    codec: "zstd",
    auto_reason: null,
    chunk_rows: 2,
    columns,
    lossy_columns: [],
    primary_key: null,
    partition: null,
    encryption: null,
    metadata: {},
  };
}

function rows(from: number): Batch {
  return {
    schema: SCHEMA,
    columns: [
      { type: "int64", values: BigInt64Array.of(BigInt(from), BigInt(from + 1)), validity: null },
      { type: "string", values: [`v${from}`, ""], validity: Uint8Array.of(1, 0) },
    ],
    length: 2,
  };
}

/** One chunk of `rows(from)` as encoded, optionally without its `added` block. */
async function chunk(from: number, lacking: boolean) {
  const h = header(undefined);
  const encoded = await encodeChunk(rows(from), { plans: h.columns, codec: "zstd" });
  return lacking ? { ...encoded, blocks: [encoded.blocks[0]!, null] } : encoded;
}

const isBadArgument = (err: unknown) => err instanceof FormatError && err.code === "BAD_ARGUMENT";

Deno.test("ArchiveWriter lays out a null block only before a column's since_chunk", async (t) => {
  await t.step("1.8 only when a plan has since_chunk", () => {
    assert.equal(header(undefined).version, "1.3");
    assert.equal(header(1).version, "1.8");
  });
  await t.step("a chunk lacking the column before since_chunk reads it as null", async () => {
    const path = `${TMP}/ok.pf`;
    const writer = await ArchiveWriter.create(path, header(1));
    await writer.writeChunk(await chunk(0, true));
    await writer.writeChunk(await chunk(2, false));
    await writer.finish();
    const reader = await ArchiveReader.open(path);
    try {
      assert.equal(reader.index.version, "1.8");
      assert.deepEqual(reader.index.footer.chunks[0]!.stats[1], {
        min: null,
        max: null,
        null_count: 2,
      });
      const got: unknown[][] = [];
      for await (const b of reader.read()) {
        for (let r = 0; r < b.length; r++) got.push(b.columns.map((c) => cellValue(c, r)));
      }
      assert.deepEqual(got, [[0n, null], [1n, null], [2n, "v2"], [3n, null]]);
    } finally {
      reader.close();
    }
  });
  await t.step("a null block where the column has started is refused", async () => {
    const writer = await ArchiveWriter.create(`${TMP}/early.pf`, header(1));
    try {
      await writer.writeChunk(await chunk(0, true));
      await assert.rejects(writer.writeChunk(await chunk(2, true)), isBadArgument);
    } finally {
      await writer.abort();
    }
  });
  await t.step("a block where the column has not started is refused", async () => {
    const writer = await ArchiveWriter.create(`${TMP}/late.pf`, header(1));
    try {
      await assert.rejects(writer.writeChunk(await chunk(0, false)), isBadArgument);
    } finally {
      await writer.abort();
    }
  });
  await t.step("a null block in an archive that names no since_chunk is refused", async () => {
    const writer = await ArchiveWriter.create(`${TMP}/plain.pf`, header(undefined));
    try {
      await assert.rejects(writer.writeChunk(await chunk(0, true)), isBadArgument);
    } finally {
      await writer.abort();
    }
  });
});
