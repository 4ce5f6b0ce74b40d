/**
 * The shared codec suite: every codec in `codecs/registry.ts` must pass it, so
 * a new codec is covered by its registry line alone.
 *
 * It checks round trips over edge-case blocks, determinism, that broken input
 * (truncated, bit-flipped, garbage, another codec's output) only ever yields a
 * `CodecError`, and that a wrong `rawLength` yields `LENGTH_MISMATCH`.
 *
 * Run with `--allow-read --allow-write --allow-run=zpaq` (zpaq needs its
 * binary and a temp dir; lzma2 reads its wasm binary).
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Codec } from "../../codecs/codec.ts";
import { CodecError } from "../../codecs/errors.ts";
import { CODECS } from "../../codecs/registry.ts";
import { pseudoRandomBytes, requireTool } from "../../internal/_test_utils.ts";

/** Column-like text: compressible, but not trivially. */
function sampleText(rows: number): Uint8Array {
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) {
    lines.push(`${1_700_000_000 + i * 7},sensor-${i % 13},${((i * 37) % 1000) / 10},ok\n`);
  }
  return new TextEncoder().encode(lines.join(""));
}

/** The blocks every codec must round-trip, by name. */
function roundTripCases(): [string, Uint8Array][] {
  const repetitive = new Uint8Array(1 << 20);
  const pattern = new TextEncoder().encode("timestamp,value\n1700000000,42\n");
  for (let i = 0; i < repetitive.length; i++) repetitive[i] = pattern[i % pattern.length]!;
  const allBytes = Uint8Array.from({ length: 256 }, (_, i) => i);
  return [
    ["an empty block", new Uint8Array(0)],
    ["a 1-byte block", Uint8Array.of(0x5a)],
    ["a zero byte", Uint8Array.of(0)],
    ["64 KiB of random bytes", pseudoRandomBytes(64 << 10, 0x9e3779b9)],
    ["1 MiB of one repeated row", repetitive],
    ["all 256 byte values", allBytes],
    ["all 256 byte values, 64 times", Uint8Array.from({ length: 256 * 64 }, (_, i) => i & 0xff)],
    ["column-like text", sampleText(500)],
  ];
}

/** Asserts that `promise` rejects with a `CodecError`, with `code` when given. */
async function assertCodecError(
  promise: Promise<unknown>,
  code: string | undefined,
  label: string,
): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(
      err instanceof CodecError,
      `${label}: expected a CodecError, got ${err instanceof Error ? err.name : typeof err}: ${
        String(err)
      }`,
    );
    if (code !== undefined) assert.equal(err.code, code, `${label}: ${err.message}`);
    assert.match(err.message, /^Cannot /, `${label}: message names the action`);
    assert.doesNotMatch(err.message, /\.$/, `${label}: message has no final period`);
    return true;
  }, label);
}

/**
 * Decodes possibly damaged bytes. Without a checksum in the codec, a flipped
 * literal can decode to other bytes of the right length (the archive's chunk
 * SHA-256 catches that), so success is allowed, but only with `rawLength`
 * bytes, and any failure must be a `CodecError`.
 */
async function decodeDamaged(
  codec: Codec,
  data: Uint8Array,
  rawLength: number,
  label: string,
): Promise<void> {
  try {
    const out = await codec.decode(data, rawLength);
    assert.equal(out.length, rawLength, `${label}: a successful decode has rawLength bytes`);
  } catch (err) {
    assert.ok(
      err instanceof CodecError,
      `${label}: expected a CodecError, got ${err instanceof Error ? err.name : typeof err}: ${
        String(err)
      }`,
    );
  }
}

/** Whether a codec can run here: the system program it runs, if any, is installed. */
function ready(codec: Codec): boolean {
  return codec.binary === undefined ||
    requireTool(codec.binary, "tests/conformance/codec_conformance_test.ts") !== null;
}

/**
 * Registers the conformance tests of one codec.
 *
 * @param codec The codec under test.
 * @param others Other codecs, whose output this one must refuse.
 */
export function runCodecConformance(codec: Codec, others: readonly Codec[] = []): void {
  const name = `${codec.id}`;
  const runs = ready(codec);

  Deno.test(`${name}: id and code are stable`, () => {
    assert.match(codec.id, /^[a-z0-9]+$/);
    assert.ok(Number.isInteger(codec.code) && codec.code > 0 && codec.code < 256);
    assert.ok(Object.isFrozen(codec), "the codec object is frozen");
  });

  Deno.test(
    `${name}.decode() returns the encoded bytes for every kind of block`,
    { ignore: !runs },
    async (t) => {
      for (const [label, raw] of roundTripCases()) {
        await t.step(label, async () => {
          const original = raw.slice();
          const packed = await codec.encode(raw);
          assert.ok(packed instanceof Uint8Array);
          assert.deepEqual(raw, original, "encode leaves its input untouched");
          const packedCopy = packed.slice();
          const out = await codec.decode(packed, raw.length);
          assert.deepEqual(packed, packedCopy, "decode leaves its input untouched");
          assert.equal(out.length, raw.length);
          assert.ok(out.every((b, i) => b === raw[i]), "decoded bytes equal the input");
        });
      }
    },
  );

  Deno.test(`${name}.encode() gives the same bytes every time`, { ignore: !runs }, async (t) => {
    const raw = sampleText(800);
    const first = await codec.encode(raw);
    await t.step("when called again", async () => {
      assert.deepEqual(await codec.encode(raw), first);
    });
    await t.step("when the input is a view at an odd offset of a larger buffer", async () => {
      const backing = new Uint8Array(raw.length + 3);
      backing.set(raw, 1);
      assert.deepEqual(await codec.encode(backing.subarray(1, 1 + raw.length)), first);
    });
    await t.step("when the output is decoded from a view at an odd offset", async () => {
      const backing = new Uint8Array(first.length + 5);
      backing.set(first, 3);
      const out = await codec.decode(backing.subarray(3, 3 + first.length), raw.length);
      assert.deepEqual(out, raw);
    });
  });

  Deno.test(
    `${name}.decode() throws LENGTH_MISMATCH when rawLength is wrong`,
    { ignore: !runs },
    async (t) => {
      const raw = sampleText(200);
      const packed = await codec.encode(raw);
      // 2^40 also checks that no codec allocates rawLength bytes before it decodes them.
      for (const wrong of [raw.length - 1, raw.length + 1, 0, 1, raw.length * 2, 2 ** 40]) {
        await t.step(`rawLength ${wrong} instead of ${raw.length}`, async () => {
          await assertCodecError(
            codec.decode(packed, wrong),
            "LENGTH_MISMATCH",
            `rawLength ${wrong}`,
          );
        });
      }
      await t.step("an empty block decoded as 10 bytes", async () => {
        const empty = await codec.encode(new Uint8Array(0));
        await assertCodecError(codec.decode(empty, 10), "LENGTH_MISMATCH", "empty as 10");
      });
    },
  );

  Deno.test(
    `${name}.decode() throws a CodecError when the block is truncated`,
    { ignore: !runs },
    async (t) => {
      const raw = sampleText(300);
      const packed = await codec.encode(raw);
      const cuts = new Set([0, 1, 2, 4, 8, 13, packed.length >> 1, packed.length - 4]);
      cuts.add(packed.length - 1);
      for (const cut of [...cuts].filter((n) => n >= 0 && n < packed.length)) {
        await t.step(`cut to ${cut} of ${packed.length} bytes`, async () => {
          await assertCodecError(
            codec.decode(packed.subarray(0, cut), raw.length),
            undefined,
            `cut ${cut}`,
          );
        });
      }
    },
  );

  Deno.test(
    `${name}.decode() never throws another error when a bit flips`,
    { ignore: !runs },
    async (t) => {
      const raw = sampleText(300);
      const packed = await codec.encode(raw);
      const positions = new Set<number>();
      for (let i = 0; i < Math.min(24, packed.length); i++) positions.add(i);
      const random = pseudoRandomBytes(16, 0x1234567);
      for (const r of random) positions.add(Math.floor((r / 256) * packed.length));
      positions.add(packed.length >> 1);
      positions.add(packed.length - 1);
      await t.step(`${positions.size} single-bit flips`, async () => {
        let bit = 0;
        for (const pos of positions) {
          const damaged = packed.slice();
          damaged[pos]! ^= 1 << (bit++ % 8);
          await decodeDamaged(codec, damaged, raw.length, `flip at byte ${pos}`);
        }
      });
    },
  );

  Deno.test(
    `${name}.decode() throws a CodecError when given garbage`,
    { ignore: !runs },
    async (t) => {
      const garbage: [string, Uint8Array][] = [
        ["no bytes", new Uint8Array(0)],
        ["one zero byte", Uint8Array.of(0)],
        ["16 random bytes", pseudoRandomBytes(16, 7)],
        ["1000 random bytes", pseudoRandomBytes(1000, 8)],
        ["4096 zero bytes", new Uint8Array(4096)],
        ["4096 0xff bytes", new Uint8Array(4096).fill(0xff)],
      ];
      for (const [label, bytes] of garbage) {
        await t.step(label, async () => {
          await assertCodecError(codec.decode(bytes, 5000), undefined, label);
        });
      }
    },
  );

  for (const other of others) {
    Deno.test(`${name}.decode() throws a CodecError when given a ${other.id} block`, {
      ignore: !runs || !ready(other),
    }, async () => {
      const raw = sampleText(100);
      const foreign = await other.encode(raw);
      await assertCodecError(codec.decode(foreign, raw.length), undefined, `${other.id} block`);
    });
  }
}

for (const codec of CODECS) {
  runCodecConformance(codec, CODECS.filter((other) => other !== codec));
}
