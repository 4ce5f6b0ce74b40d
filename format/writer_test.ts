/**
 * The writer's footer (FORMAT.md §6): zstd 19 up to `FOOTER_LEVEL_19_MAX_BYTES` of
 * JSON (the bytes of normal archives as ever), a cheaper level above; either way a
 * zstd frame that today's reader and an older one read and verify. `freeze --profile
 * max_speed` asks for a quick footer (`QUICK_FOOTER_LEVEL`); every other freeze keeps 19.
 */
import assert from "node:assert/strict";
import { zstdDecompressSync } from "node:zlib";
import { zstd } from "../codecs/zstd.ts";
import type { Batch, Schema } from "./column.ts";
import { TAIL_SIZE } from "./constants.ts";
import { ArchiveReader } from "./reader.ts";
import { writeTestArchive } from "./_test_utils.ts";
import { FOOTER_LEVEL_19_MAX_BYTES, footerLevel, QUICK_FOOTER_LEVEL } from "./writer.ts";
import { freeze } from "../ops/freeze.ts";
import { historyHas, readerAt } from "../tests/_history.ts";

const TMP = ".tmp/format_writer";
await Deno.mkdir(TMP, { recursive: true });

const SCHEMA: Schema = [{ name: "id", type: "int64", nullable: false }];

function ids(rows: number): Batch {
  const values = new BigInt64Array(rows);
  for (let i = 0; i < rows; i++) values[i] = BigInt(i * 7919);
  return { schema: SCHEMA, columns: [{ type: "int64", values, validity: null }], length: rows };
}

/** The archive's stored footer and its JSON. */
async function footerOf(path: string): Promise<{ stored: Uint8Array; json: Uint8Array }> {
  const bytes = await Deno.readFile(path);
  const tail = bytes.subarray(bytes.length - TAIL_SIZE);
  const length = new DataView(tail.buffer, tail.byteOffset).getUint32(32, true);
  const stored = bytes.slice(bytes.length - TAIL_SIZE - length, bytes.length - TAIL_SIZE);
  return { stored, json: new Uint8Array(zstdDecompressSync(stored)) };
}

async function assertReads(reader: typeof ArchiveReader, path: string, rows: number) {
  const r = await reader.open(path);
  try {
    const report = await r.verify();
    assert.equal(report.ok, true);
    let seen = 0;
    for await (const batch of r.read()) {
      const values = batch.columns[0]!.values as BigInt64Array;
      for (let i = 0; i < batch.length; i++) assert.equal(values[i], BigInt((seen + i) * 7919));
      seen += batch.length;
    }
    assert.equal(seen, rows);
  } finally {
    r.close();
  }
}

Deno.test("footerLevel: zstd 19 up to the limit, a cheaper level above it", () => {
  assert.equal(footerLevel(0), 19);
  assert.equal(footerLevel(FOOTER_LEVEL_19_MAX_BYTES), 19);
  assert.ok(footerLevel(FOOTER_LEVEL_19_MAX_BYTES + 1) < 19);
});

Deno.test("a small footer is the zstd 19 frame of its JSON, byte for byte as before", async () => {
  const path = `${TMP}/small_footer.pf`;
  await writeTestArchive(path, ids(40), { chunkRows: 4 });
  const { stored, json } = await footerOf(path);
  assert.ok(json.length <= FOOTER_LEVEL_19_MAX_BYTES);
  assert.deepEqual(stored, await zstd.encode(json, 19));
  await assertReads(ArchiveReader, path, 40);
});

Deno.test("a large footer (many chunks) round trips and verifies", async () => {
  const path = `${TMP}/large_footer.pf`;
  await writeTestArchive(path, ids(700), { chunkRows: 1 });
  const { stored, json } = await footerOf(path);
  assert.ok(json.length > FOOTER_LEVEL_19_MAX_BYTES, `footer JSON of ${json.length} bytes`);
  assert.deepEqual(stored, await zstd.encode(json, footerLevel(json.length)));
  await assertReads(ArchiveReader, path, 700);
});

Deno.test("max_speed's footer is the quick level's frame; other profiles keep zstd 19", async () => {
  const csv = `${TMP}/profiles.csv`;
  const lines = ["id,name,x"];
  for (let i = 0; i < 3000; i++) lines.push(`${i},n${i % 37},${(i * 0.37).toFixed(2)}`);
  await Deno.writeTextFile(csv, lines.join("\n") + "\n");
  for (const profile of ["max_speed", "balanced"] as const) {
    const path = `${TMP}/profile_${profile}.pf`;
    await freeze(csv, path, { profile, chunkRows: 500, threads: 0 });
    const { stored, json } = await footerOf(path);
    const level = profile === "max_speed" ? QUICK_FOOTER_LEVEL : 19;
    assert.deepEqual(stored, await zstd.encode(json, level), profile);
    const r = await ArchiveReader.open(path);
    try {
      assert.equal((await r.verify()).ok, true);
      assert.equal(r.index.footer.rows, 3000);
    } finally {
      r.close();
    }
  }
  assert.notEqual(QUICK_FOOTER_LEVEL, 19);
});

// A reader from before large footers took a lower level (it predates format 1.7 too).
const OLD_READER = "0ee5dac";

Deno.test({
  name: "an older reader reads and verifies an archive with a large footer",
  ignore: !(await historyHas(OLD_READER)), // a shallow clone has no history
  fn: async () => {
    const path = `${TMP}/large_footer_old.pf`;
    await writeTestArchive(path, ids(700), { chunkRows: 1 });
    assert.ok((await footerOf(path)).json.length > FOOTER_LEVEL_19_MAX_BYTES);
    const old = await readerAt(OLD_READER, `${Deno.cwd()}/${TMP}/reader_old`);
    await assertReads(old.ArchiveReader as unknown as typeof ArchiveReader, path, 700);
  },
});
