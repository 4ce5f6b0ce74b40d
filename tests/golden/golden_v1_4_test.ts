/**
 * The encrypted golden archive (format 1.4, FORMAT.md §4.4): `tiny_v1_4_encrypted.pf`
 * holds the rows of `tiny_v1_3.pf` encrypted under the `local` provider with the
 * committed test key `testdata/tiny_v1_4.key`. Its bytes are pinned and it must
 * always thaw. Nonces and data keys are random, so today's writer cannot reproduce
 * the bytes; instead a fresh archive must have the same layout — header and footer
 * equal but for keys, nonces and hashes — and every block must decrypt to the same
 * codec bytes.
 */
import assert from "node:assert/strict";
import type { Batch } from "../../format/column.ts";
import { concatBatches } from "../../format/column.ts";
import { blockAad, headerBinding, importDataKey, openBlock } from "../../format/crypto.ts";
import { FormatError } from "../../format/errors.ts";
import { localKeyProvider } from "../../format/local_key.ts";
import { unlockDataKey } from "../../format/key_provider.ts";
import { type ArchiveIndex, ArchiveReader } from "../../format/reader.ts";
import { sha256Hex } from "../../format/_hash.ts";
import { assertColumnEqual } from "../../format/_test_utils.ts";
import { TINY_V1_4_KEY, tinyBatch, writeTinyEncrypted } from "./make_golden.ts";

const GOLDEN = new URL("./tiny_v1_4_encrypted.pf", import.meta.url).pathname;
const GOLDEN_SHA256 = "a7947f5a2bbd166a91e96ccf70bdc9b5fa7e5c6ffcf2fa1ac1e7c73ef4da4ea3";
const ring = async () => ({ providers: [localKeyProvider(await Deno.readFile(TINY_V1_4_KEY))] });

Deno.test("golden tiny_v1_4_encrypted.pf is pinned and thaws to its rows with its key", async () => {
  assert.equal(sha256Hex(await Deno.readFile(GOLDEN)), GOLDEN_SHA256, "the golden file changed");
  const reader = await ArchiveReader.open(GOLDEN, { keys: await ring() });
  try {
    assert.equal(reader.index.version, "1.4");
    const e = reader.index.header.encryption!;
    assert.deepEqual([e.algorithm, e.key_provider], ["AES-256-GCM", "local"]);
    const parts: Batch[] = [];
    for await (const b of reader.read()) parts.push(b);
    const back = concatBatches(reader.index.schema, parts);
    const expected = tinyBatch();
    expected.schema.forEach((f, i) =>
      assertColumnEqual(back.columns[i]!, expected.columns[i]!, f.name)
    );
    assert.equal((await reader.verify()).ok, true);
  } finally {
    reader.close();
  }
});

Deno.test("golden tiny_v1_4_encrypted.pf refuses a missing or wrong key", async () => {
  await assert.rejects(
    ArchiveReader.open(GOLDEN, { requireKey: true }),
    (e: unknown) => e instanceof FormatError && e.code === "KEY_REQUIRED",
  );
  await assert.rejects(
    ArchiveReader.open(GOLDEN, { keys: { key: new Uint8Array(32) } }),
    (e: unknown) => e instanceof FormatError && e.code === "WRONG_KEY",
  );
});

Deno.test("today's writer lays out 1.4 exactly as the golden file", async () => {
  await Deno.mkdir(".tmp/golden", { recursive: true });
  const fresh = ".tmp/golden/tiny_v1_4.pf";
  await writeTinyEncrypted(fresh);
  const [a, b] = [await indexOf(GOLDEN), await indexOf(fresh)];
  // Only the zstd footer's size may differ: it compresses random hashes.
  assert.equal(
    b.footer.payload_offset + b.footer.payload_length,
    a.footer.payload_offset + a.footer.payload_length,
  );
  assert.deepEqual(comparable(b), comparable(a), "same header and footer but keys and hashes");
  const [plainA, plainB] = [await blocks(GOLDEN, a), await blocks(fresh, b)];
  assert.deepEqual(plainB, plainA, "every block decrypts to the same codec bytes");
});

async function indexOf(path: string): Promise<ArchiveIndex> {
  const reader = await ArchiveReader.open(path);
  reader.close();
  return reader.index;
}

/** Header and footer with what is random per archive blanked out. */
function comparable(index: ArchiveIndex): unknown {
  const clone = structuredClone({ header: index.header, footer: index.footer });
  clone.header.encryption!.key_check = "";
  clone.header.encryption!.edek = clone.header.encryption!.edek!.length.toString();
  clone.footer.payload_sha256 = "";
  for (const c of clone.footer.chunks) {
    c.sha256 = "";
    for (const blk of c.blocks) blk!.sha256 = "";
  }
  return clone;
}

async function blocks(path: string, index: ArchiveIndex): Promise<number[][]> {
  const dataKey = await unlockDataKey(index.header.encryption!, await ring(), path);
  const key = await importDataKey(dataKey);
  const bytes = await Deno.readFile(path);
  const out: number[][] = [];
  for (const [c, chunk] of index.footer.chunks.entries()) {
    for (const [i, entry] of chunk.blocks.entries()) {
      const blk = entry!; // a 1.4 archive has every block
      const aad = blockAad({
        headerBinding: headerBinding(index.header),
        rowStart: chunk.row_start,
        rows: chunk.row_end - chunk.row_start,
        column: i,
        rawLength: blk.raw_length,
        predictor: blk.predictor,
      });
      const stored = bytes.subarray(blk.offset, blk.offset + blk.length);
      const at = { chunk: c, column: String(i), offset: blk.offset };
      out.push([...await openBlock(key, stored, aad, at)]);
    }
  }
  return out;
}
