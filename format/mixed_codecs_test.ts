/**
 * Archives whose columns use different codecs (header codec `mixed`, 1.6): a header
 * that says `mixed` but leaves a column without its codec, or names a level that is
 * not an integer, is CORRUPT; a column naming a codec this reader does not know is
 * UNKNOWN_CODEC naming the column; every block decodes with its column's codec.
 */
import assert from "node:assert/strict";
import { decodeHeader, encodeHeader } from "./header.ts";
import { ArchiveReader } from "./reader.ts";
import { FormatError } from "./errors.ts";
import { sha256Hex } from "./_hash.ts";
import { writeTinyMixed } from "../tests/golden/make_golden.ts";

const GOLDEN = new URL("../tests/golden/tiny_v1_6_mixed.pf", import.meta.url).pathname;

async function goldenHeader() {
  const reader = await ArchiveReader.open(GOLDEN);
  try {
    return structuredClone(reader.index.header);
  } finally {
    reader.close();
  }
}

Deno.test("a mixed header without a column's codec, or with a bad level, is CORRUPT", async () => {
  const header = await goldenHeader();
  const noCodec = structuredClone(header);
  delete noCodec.columns.name!.codec;
  assert.throws(() => decodeHeader(encodeHeader(noCodec)), (err: unknown) => {
    assert.ok(err instanceof FormatError);
    assert.equal(err.code, "CORRUPT");
    assert.match(err.message, /codec is "mixed" but column "name" names no codec/);
    return true;
  });
  const badLevel = structuredClone(header);
  (badLevel.columns.id as { level: unknown }).level = "9";
  assert.throws(() => decodeHeader(encodeHeader(badLevel)), /column "id" has level "9"/);
});

Deno.test("a column naming an unknown codec is UNKNOWN_CODEC naming the column", async () => {
  await Deno.mkdir(".tmp/format", { recursive: true });
  const path = ".tmp/format/unknown_column_codec.pf";
  await writeTinyMixed(path);
  // Rename lzma2 to a codec no reader has, keeping the header's length, and fix the
  // header hash in the tail so the only fault is the codec.
  const bytes = await Deno.readFile(path);
  const text = new TextDecoder().decode(bytes);
  const at = text.indexOf('"codec":"lzma2"');
  assert.ok(at > 0);
  bytes.set(new TextEncoder().encode('"codec":"lzma9"'), at);
  const headerLength = new DataView(bytes.buffer).getUint32(12, true);
  const hash = sha256Hex(bytes.subarray(16, 16 + headerLength));
  const digest = Uint8Array.from(hash.match(/../g)!.map((h) => parseInt(h, 16)));
  bytes.set(digest, 16 + headerLength);
  await Deno.writeFile(path, bytes);
  await assert.rejects(ArchiveReader.open(path), (err: unknown) => {
    assert.ok(err instanceof FormatError, String(err));
    assert.equal(err.code, "UNKNOWN_CODEC", err.message);
    assert.match(err.message, /unknown codec "lzma9" \(column "id"\)/);
    return true;
  });
});
