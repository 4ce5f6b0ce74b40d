/**
 * Archives with float32 and float16 columns (1.7, FORMAT.md §3 and §9): written and
 * read back bit for bit, refused under an older minor, and a newer minor this reader
 * cannot parse is UNSUPPORTED_VERSION.
 *
 * @module
 */
import assert from "node:assert/strict";
import { concatBatches, type Schema } from "./column.ts";
import type { Batch } from "./column.ts";
import { VERSION_MINOR_FLOAT_TYPES, VERSION_MINOR_READ } from "./constants.ts";
import { FormatError } from "./errors.ts";
import { ArchiveReader } from "./reader.ts";
import { assertColumnEqual, randomBatch, resealArchive, writeTestArchive } from "./_test_utils.ts";

const TMP = ".tmp/format_float_types";
await Deno.mkdir(TMP, { recursive: true });

const SCHEMA: Schema = [
  { name: "f32", type: "float32", nullable: true },
  { name: "f16", type: "float16", nullable: false },
  { name: "f64", type: "float64", nullable: true },
];

async function readAll(path: string): Promise<{ batch: Batch; version: string }> {
  const reader = await ArchiveReader.open(path);
  try {
    const parts: Batch[] = [];
    for await (const b of reader.read({})) parts.push(b);
    return { batch: concatBatches(reader.index.schema, parts), version: reader.index.version };
  } finally {
    reader.close();
  }
}

/** The archive with its preamble and tail minor set to `minor` (neither is hashed). */
function withMinor(bytes: Uint8Array, minor: number): Uint8Array {
  const out = bytes.slice();
  out[9] = minor;
  out[out.length - 48 + 37] = minor;
  return out;
}

async function openBytes(bytes: Uint8Array, name: string): Promise<FormatError> {
  const path = `${TMP}/${name}.pf`;
  await Deno.writeFile(path, bytes);
  try {
    const reader = await ArchiveReader.open(path);
    reader.close();
  } catch (err) {
    assert.ok(err instanceof FormatError, String(err));
    return err;
  }
  throw new Error(`${name}: expected a FormatError`);
}

Deno.test("ArchiveReader.read() gives float32 and float16 columns back bit for bit (1.7)", async (t) => {
  for (const [seed, codec] of [[1, "zstd"], [2, "lzma2"], [3, "zstd"]] as const) {
    await t.step(`${codec}, seed ${seed}`, async () => {
      const batch = randomBatch(SCHEMA, 700 + seed * 31, seed);
      const path = `${TMP}/rt_${seed}.pf`;
      await writeTestArchive(path, batch, { codec, chunkRows: 256 });
      const { batch: back, version } = await readAll(path);
      assert.equal(version, `1.${VERSION_MINOR_FLOAT_TYPES}`);
      assert.deepEqual(back.schema, SCHEMA);
      SCHEMA.forEach((f, i) => assertColumnEqual(back.columns[i]!, batch.columns[i]!, f.name));
    });
  }
});

Deno.test("ArchiveReader.open() refuses float32 columns under a minor older than 1.7", async () => {
  const path = `${TMP}/minor.pf`;
  await writeTestArchive(path, randomBatch(SCHEMA, 50, 4));
  const bytes = await Deno.readFile(path);
  const err = await openBytes(withMinor(bytes, 6), "minor6");
  assert.equal(err.code, "CORRUPT");
  assert.match(err.message, /cannot hold float32 or float16 columns/);
});

Deno.test("ArchiveReader.open() says UNSUPPORTED_VERSION for a newer minor's unknown type", async () => {
  const path = `${TMP}/newer.pf`;
  await writeTestArchive(path, randomBatch(SCHEMA, 50, 5));
  const quad = resealArchive(await Deno.readFile(path), {
    header: (h) => {
      const fields = (h.schema as { fields: { type: Record<string, unknown> }[] }).fields;
      fields[0]!.type = { name: "floatingpoint", precision: "QUAD" };
    },
  });
  const newer = await openBytes(withMinor(quad, VERSION_MINOR_READ + 1), "newer");
  assert.equal(newer.code, "UNSUPPORTED_VERSION");
  assert.match(newer.message, /newer than this reader/);
  // The same header under a minor this reader knows is damage, not a newer format.
  const known = await openBytes(withMinor(quad, VERSION_MINOR_READ), "known");
  assert.equal(known.code, "CORRUPT");
});
