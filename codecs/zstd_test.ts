/**
 * Tests of `codecs/zstd.ts` beyond the shared codec conformance suite: the
 * frame it writes and the frames it refuses.
 *
 * @module
 */
import assert from "node:assert/strict";
import { constants, zstdCompressSync } from "node:zlib";
import { CodecError } from "./errors.ts";
import { zstd, zstdCompressedSize, zstdDecode, zstdEncode } from "./zstd.ts";

const TEXT = new TextEncoder().encode(
  Array.from({ length: 2000 }, (_, i) => `${i},reading-${i % 17},${(i * 0.25).toFixed(2)}\n`)
    .join(""),
);

function plainFrame(data: Uint8Array): Uint8Array {
  // What node:zlib writes by default: no content size, since the size is not pledged.
  const frame = zstdCompressSync(data, { params: { [constants.ZSTD_c_compressionLevel]: 3 } });
  return new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength);
}

async function rejectsWith(promise: Promise<unknown>, code: string, pattern?: RegExp) {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof CodecError);
    assert.equal(err.code, code, err.message);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

Deno.test("zstd has id 'zstd' and wire code 0x01", () => {
  assert.equal(zstd.id, "zstd");
  assert.equal(zstd.code, 0x01);
  assert.equal(zstd.encode, zstdEncode);
  assert.equal(zstd.decode, zstdDecode);
});

Deno.test("zstdEncode() writes one frame with the content size and no checksum", async () => {
  const frame = await zstdEncode(TEXT);
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  assert.equal(view.getUint32(0, true), 0xfd2fb528, "frame magic");
  const descriptor = frame[4]!;
  assert.notEqual(descriptor >> 6, 0, "content size field present");
  assert.equal(descriptor & 0x04, 0, "no content checksum");
  assert.equal(descriptor & 0x03, 0, "no dictionary id");
  assert.ok(frame.length < TEXT.length / 4, `compresses text (${frame.length} B)`);
});

Deno.test("zstdEncode() writes exactly one frame for incompressible blocks near 64 KiB", async (t) => {
  for (const size of [65_000, 65_520, 65_527, 65_536, 131_072]) {
    await t.step(`${size} random bytes`, async () => {
      const raw = new Uint8Array(size);
      for (let i = 0; i < size; i += 65_536) crypto.getRandomValues(raw.subarray(i, i + 65_536));
      const frame = await zstdEncode(raw);
      assert.ok(frame.length <= size + 16, `no empty frames appended (${frame.length} B)`);
      assert.equal(frame.buffer.byteLength, frame.length, "not a view of a larger buffer");
      assert.deepEqual(await zstdDecode(frame, size), raw);
    });
  }
});

/** Blocks of many sizes and kinds, around the kept context's size limit (8 KiB) too. */
function sampleBlocks(): Uint8Array[] {
  const blocks: Uint8Array[] = [];
  let seed = 7;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
  for (const size of [0, 1, 63, 64, 200, 301, 1000, 4096, 8191, 8192, 8193, 12_000, 17_000]) {
    blocks.push(Uint8Array.from({ length: size }, () => next()));
    blocks.push(Uint8Array.from({ length: size }, (_, i) => (i % 7) + (next() & 1)));
    blocks.push(TEXT.subarray(0, size));
  }
  return blocks;
}

Deno.test("zstdEncode() writes the frame zstdCompressSync writes with the same parameters", async () => {
  for (const level of [1, 3, 19]) {
    for (const raw of sampleBlocks()) {
      const expected = zstdCompressSync(
        raw,
        {
          params: {
            [constants.ZSTD_c_compressionLevel]: level,
            [constants.ZSTD_c_checksumFlag]: 0,
            [constants.ZSTD_c_contentSizeFlag]: 1,
          },
          pledgedSrcSize: raw.length,
          chunkSize: raw.length + 2048,
        } as Parameters<typeof zstdCompressSync>[1],
      );
      const frame = await zstdEncode(raw, level);
      assert.deepEqual(frame, new Uint8Array(expected), `level ${level}, ${raw.length} bytes`);
    }
  }
});

Deno.test("zstdCompressedSize() is the length of zstdCompressSync's frame at that level", () => {
  for (const level of [1, 3, 19]) {
    for (const raw of sampleBlocks()) {
      const expected = zstdCompressSync(
        raw,
        {
          params: { [constants.ZSTD_c_compressionLevel]: level },
          pledgedSrcSize: raw.length,
        } as Parameters<typeof zstdCompressSync>[1],
      ).length;
      assert.equal(
        zstdCompressedSize(raw, level),
        expected,
        `level ${level}, ${raw.length} bytes`,
      );
    }
  }
});

Deno.test("zstdEncode() compresses at level 19, smaller than level 3", async () => {
  assert.ok((await zstdEncode(TEXT)).length < plainFrame(TEXT).length);
});

Deno.test("zstdDecode() reads a frame without a content size", async () => {
  const frame = plainFrame(TEXT);
  assert.equal(frame[4]! >> 6, 0, "this frame declares no content size");
  assert.deepEqual(await zstdDecode(frame, TEXT.length), TEXT);
});

Deno.test("zstdDecode() caps the output when the frame declares no size", async (t) => {
  const frame = plainFrame(TEXT);
  await t.step("longer than rawLength", async () => {
    await rejectsWith(zstdDecode(frame, 100), "LENGTH_MISMATCH", /more than the expected 100/);
  });
  await t.step("shorter than rawLength", async () => {
    await rejectsWith(zstdDecode(frame, TEXT.length + 1), "LENGTH_MISMATCH");
  });
});

Deno.test("zstdDecode() rejects a declared size other than rawLength before decoding", async () => {
  const frame = await zstdEncode(TEXT);
  await rejectsWith(
    zstdDecode(frame, 7),
    "LENGTH_MISMATCH",
    new RegExp(`frame declares ${TEXT.length} bytes, expected 7`),
  );
});

Deno.test("zstdDecode() throws DECODE_FAILED when bytes follow the frame", async (t) => {
  const frame = await zstdEncode(TEXT);
  await t.step("three garbage bytes", async () => {
    const padded = new Uint8Array([...frame, 1, 2, 3]);
    await rejectsWith(zstdDecode(padded, TEXT.length), "DECODE_FAILED", /3 bytes follow the frame/);
  });
  await t.step("a second frame", async () => {
    const twice = new Uint8Array([...frame, ...frame]);
    await rejectsWith(zstdDecode(twice, TEXT.length), "DECODE_FAILED");
  });
});

Deno.test("zstdDecode() throws DECODE_FAILED when the frame is not a plain zstd frame", async (t) => {
  await t.step("a skippable frame", async () => {
    const skippable = Uint8Array.of(0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0);
    await rejectsWith(zstdDecode(skippable, 0), "DECODE_FAILED", /bad frame magic/);
  });
  await t.step("a frame that needs a dictionary", async () => {
    const frame = await zstdEncode(TEXT);
    frame[4]! |= 0x01;
    await rejectsWith(zstdDecode(frame, TEXT.length), "DECODE_FAILED", /dictionary/);
  });
  await t.step("the reserved header bit set", async () => {
    const frame = await zstdEncode(TEXT);
    frame[4]! |= 0x08;
    await rejectsWith(zstdDecode(frame, TEXT.length), "DECODE_FAILED", /reserved bit/);
  });
  await t.step("an empty input, which node:zlib alone would accept", async () => {
    await rejectsWith(zstdDecode(new Uint8Array(0), 0), "DECODE_FAILED", /too short/);
  });
});

Deno.test("zstdDecode() wraps a libzstd failure with its cause", async () => {
  const frame = await zstdEncode(TEXT);
  const descriptor = frame[4]!;
  const fcsBytes = [descriptor & 0x20 ? 1 : 0, 2, 4, 8][descriptor >> 6]!;
  const blockStart = 5 + (descriptor & 0x20 ? 0 : 1) + fcsBytes;
  const blockHeader = frame[blockStart]! | (frame[blockStart + 1]! << 8) |
    (frame[blockStart + 2]! << 16);
  assert.equal(blockHeader & 1, 1, "the sample fits one (last) block");
  assert.equal((blockHeader >> 1) & 3, 2, "the block is compressed");
  // Keep the frame structure, ruin the compressed block's content.
  const damaged = frame.slice();
  damaged.fill(0xff, blockStart + 3);
  await assert.rejects(zstdDecode(damaged, TEXT.length), (err: unknown) => {
    assert.ok(err instanceof CodecError);
    assert.equal(err.code, "DECODE_FAILED");
    assert.ok(err.cause instanceof Error, "keeps the zlib error as cause");
    return true;
  });
});

Deno.test("zstdDecode() throws RangeError when rawLength is not a byte count", async () => {
  const frame = await zstdEncode(TEXT);
  for (const bad of [-1, 1.5, Number.NaN]) {
    await assert.rejects(zstdDecode(frame, bad), RangeError);
  }
});
