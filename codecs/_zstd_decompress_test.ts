/**
 * Tests of `_zstd_decompress.ts`: it returns exactly what libzstd returns for the
 * frames `zstd.ts` writes (every level, block kind and size), and for damaged frames
 * it fails with a `CodecError` wherever libzstd fails and never returns other bytes.
 *
 * @module
 */
import assert from "node:assert/strict";
import { zstdDecompressSync } from "node:zlib";
import { CodecError } from "./errors.ts";
import { zstd } from "./zstd.ts";
import { zstdDecompress } from "./_zstd_decompress.ts";

/** A small deterministic generator (tests must not depend on Math.random). */
function generator(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

/** Inputs that steer libzstd into every literal and sequence mode. */
const KINDS: Record<string, (n: number, next: () => number) => Uint8Array> = {
  random: (n, next) => Uint8Array.from({ length: n }, () => (next() * 256) | 0),
  "four symbols": (n, next) => Uint8Array.from({ length: n }, () => (next() * 4) | 0),
  text: (n, next) => {
    const words = ["2012-01-0", "rain", "sun", ",", "\n", "0.5", "12.8", "drizzle", "fog"];
    let text = "";
    while (text.length < n) text += words[(next() * words.length) | 0];
    return new TextEncoder().encode(text.slice(0, n));
  },
  "mostly zero": (n, next) =>
    Uint8Array.from({ length: n }, () => next() < 0.9 ? 0 : (next() * 256) | 0),
  "random walk": (n, next) => {
    let v = 0;
    return Uint8Array.from({ length: n }, () => (v += ((next() * 3) | 0) - 1) & 255);
  },
  periodic: (n) => Uint8Array.from({ length: n }, (_, i) => (i * 7) & 255),
};

const SIZES = [0, 1, 5, 100, 1000, 40_000, 130_000, 300_000];

Deno.test("zstdDecompress() returns what was encoded, at every level, size and kind", async () => {
  const next = generator(1);
  for (const [kind, make] of Object.entries(KINDS)) {
    for (const n of SIZES) {
      const data = make(n, next);
      for (const level of [1, 3, 9, 19]) {
        const frame = await zstd.encode(data, level);
        assert.deepEqual(zstdDecompress(frame, n), data, `${kind}, ${n} bytes, level ${level}`);
      }
    }
  }
});

Deno.test("zstdDecompress() fails wherever libzstd fails and never returns other bytes", async () => {
  const next = generator(7);
  const text = KINDS.text!(20_000, next);
  let refused = 0;
  for (const level of [1, 19]) {
    const frame = await zstd.encode(text, level);
    for (let t = 0; t < 1500; t++) {
      const damaged = frame.slice();
      for (let k = 0; k <= t % 3; k++) {
        damaged[(next() * damaged.length) | 0]! ^= 1 << ((next() * 8) | 0);
      }
      let native: Uint8Array | null = null;
      try {
        native = new Uint8Array(zstdDecompressSync(damaged, { maxOutputLength: text.length }));
      } catch {
        native = null;
      }
      let ours: Uint8Array | null = null;
      try {
        ours = zstdDecompress(damaged, text.length);
      } catch (err) {
        assert.ok(err instanceof CodecError, String(err));
        refused++;
      }
      if (ours !== null) assert.deepEqual(ours, native, `level ${level}, try ${t}`);
    }
  }
  assert.ok(refused > 0);
});

Deno.test("zstdDecompress() refuses a wrong length, trailing bytes, a checksum and truncation", async () => {
  const data = KINDS.text!(5000, generator(3));
  const frame = await zstd.encode(data);
  assert.throws(() => zstdDecompress(frame, 4999), { code: "LENGTH_MISMATCH" });
  assert.throws(() => zstdDecompress(frame, 5001), { code: "LENGTH_MISMATCH" });
  const trailing = new Uint8Array([...frame, 0]);
  assert.throws(() => zstdDecompress(trailing, 5000), { code: "DECODE_FAILED" });
  for (let cut = 0; cut < frame.length; cut += 7) {
    assert.throws(() => zstdDecompress(frame.subarray(0, cut), 5000), CodecError);
  }
  const withChecksum = frame.slice();
  withChecksum[4]! |= 0x04;
  assert.throws(() => zstdDecompress(withChecksum, 5000), {
    code: "DECODE_FAILED",
    message: /checksum/,
  });
});

Deno.test("zstd.decode() gives the same bytes before and after node:zlib is loaded", async () => {
  // In this process zstd.encode has loaded node:zlib, so zstd.decode is libzstd;
  // a fresh process decodes the same small frame with the TypeScript decoder.
  const data = KINDS.text!(3000, generator(5));
  const frame = await zstd.encode(data, 19);
  const script = `
    import { zstd } from ${JSON.stringify(new URL("./zstd.ts", import.meta.url).href)};
    const frame = Uint8Array.from(${JSON.stringify([...frame])});
    const out = await zstd.decode(frame, ${data.length});
    console.log(JSON.stringify([...out]));
  `;
  const run = await new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(run.success, new TextDecoder().decode(run.stderr));
  const fresh = Uint8Array.from(JSON.parse(new TextDecoder().decode(run.stdout)) as number[]);
  assert.deepEqual(fresh, data);
  assert.deepEqual(await zstd.decode(frame, data.length), data);
});
