/**
 * Tests of `codecs/lzma2.ts` beyond the shared codec conformance suite: the
 * container-free encoding, its equality with liblzma's own `.xz` output, and
 * streaming across the 1 MiB I/O slices.
 *
 * Needs `--allow-read` (the wasm binary) and `--allow-env`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { easyBufferEncode, initModule, LZMA_CHECK_NONE } from "node-liblzma/wasm";
import { CodecError } from "./errors.ts";
import { lzma2, LZMA2_PRESET, lzma2Decode, lzma2Encode } from "./lzma2.ts";

function text(rows: number): Uint8Array {
  return new TextEncoder().encode(
    Array.from({ length: rows }, (_, i) => `${1_700_000_000 + i},dev-${i % 29},${i % 997}\n`)
      .join(""),
  );
}

/** The LZMA2 data inside a one-block `.xz` stream with sizes in its block header. */
function blockData(xz: Uint8Array): Uint8Array {
  const headerSize = (xz[12]! + 1) * 4;
  let pos = 14;
  const readVarint = () => {
    let value = 0;
    for (let shift = 0;; shift += 7) {
      const b = xz[pos++]!;
      value += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return value;
    }
  };
  assert.equal(xz[13]! & 0xc0, 0xc0, "buffer encoder writes both sizes");
  const compressedSize = readVarint();
  return xz.subarray(12 + headerSize, 12 + headerSize + compressedSize);
}

async function rejectsWith(promise: Promise<unknown>, code: string, pattern?: RegExp) {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof CodecError, String(err));
    assert.equal(err.code, code, err.message);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

Deno.test("lzma2 has id 'lzma2', wire code 0x02 and preset 6e", () => {
  assert.equal(lzma2.id, "lzma2");
  assert.equal(lzma2.code, 0x02);
  assert.equal(lzma2.encode, lzma2Encode);
  assert.equal(lzma2.decode, lzma2Decode);
  assert.equal(LZMA2_PRESET, 0x80000006);
});

Deno.test("lzma2Encode() writes the raw LZMA2 data of liblzma's 6e .xz output", async (t) => {
  await initModule();
  for (const [label, raw] of [["1 byte", Uint8Array.of(7)], ["text", text(3000)]] as const) {
    await t.step(label, async () => {
      const xz = easyBufferEncode(raw, LZMA2_PRESET, LZMA_CHECK_NONE);
      const packed = await lzma2Encode(raw);
      assert.deepEqual(packed, blockData(xz));
      assert.ok(
        xz.length - packed.length >= 40,
        `saves the container (${xz.length - packed.length} B)`,
      );
      assert.notEqual(packed[0], 0xfd, "no .xz magic");
      assert.equal(packed.at(-1), 0x00, "ends with the LZMA2 end marker");
    });
  }
});

Deno.test("lzma2Encode() writes the end marker alone when the block is empty", async () => {
  assert.deepEqual(await lzma2Encode(new Uint8Array(0)), Uint8Array.of(0));
  assert.deepEqual(await lzma2Decode(Uint8Array.of(0), 0), new Uint8Array(0));
});

Deno.test("lzma2Decode() round-trips blocks larger than one 1 MiB I/O slice", async () => {
  const rows = text(160_000); // about 3 MiB
  assert.ok(rows.length > 2 << 20);
  const packed = await lzma2Encode(rows);
  await initModule();
  const oneShot = blockData(easyBufferEncode(rows, LZMA2_PRESET, LZMA_CHECK_NONE));
  assert.deepEqual(packed, oneShot, "slicing the input does not change the output");
  const out = await lzma2Decode(packed, rows.length);
  assert.equal(out.length, rows.length);
  assert.ok(out.every((b, i) => b === rows[i]));
});

Deno.test("lzma2Decode() throws LENGTH_MISMATCH naming both lengths", async (t) => {
  const raw = text(500);
  const packed = await lzma2Encode(raw);
  await t.step("when the block is longer than rawLength", async () => {
    await rejectsWith(lzma2Decode(packed, raw.length - 1), "LENGTH_MISMATCH", /more than/);
  });
  await t.step("when the block is shorter than rawLength", async () => {
    await rejectsWith(
      lzma2Decode(packed, raw.length + 10),
      "LENGTH_MISMATCH",
      new RegExp(`expands to ${raw.length} bytes, expected ${raw.length + 10}`),
    );
  });
});

Deno.test("lzma2Decode() throws DECODE_FAILED when the data is corrupt", async (t) => {
  const raw = text(500);
  const packed = await lzma2Encode(raw);
  await t.step("an empty block", async () => {
    await rejectsWith(lzma2Decode(new Uint8Array(0), 0), "DECODE_FAILED", /empty/);
  });
  await t.step("a reserved LZMA2 control byte", async () => {
    const bad = packed.slice();
    bad[0] = 0x03; // control values 0x03..0x7f are invalid
    await rejectsWith(lzma2Decode(bad, raw.length), "DECODE_FAILED", /LZMA_DATA_ERROR/);
  });
  await t.step("an .xz file instead of raw LZMA2", async () => {
    await initModule();
    const xz = easyBufferEncode(raw, LZMA2_PRESET, LZMA_CHECK_NONE);
    await assert.rejects(lzma2Decode(xz, raw.length), CodecError);
  });
});

Deno.test("lzma2Decode() throws RangeError when rawLength is not a byte count", async () => {
  await assert.rejects(lzma2Decode(Uint8Array.of(0), -1), RangeError);
  await assert.rejects(lzma2Decode(Uint8Array.of(0), 0.5), RangeError);
});
