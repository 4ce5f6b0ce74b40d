/**
 * Tests of `_zstd_wasm.ts`: the module is the pinned build, it returns exactly what
 * `node:zlib`'s libzstd returns for the frames `zstd.ts` writes, it never returns other
 * bytes than libzstd for damaged frames, and `zstd.decode` in a fresh process (no
 * `node:zlib` yet) uses it for a frame the TypeScript decoder does not take.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { zstdDecompressSync } from "node:zlib";
import { CodecError } from "./errors.ts";
import { zstd } from "./zstd.ts";
import { zstdWasmAvailable, zstdWasmDecompress } from "./_zstd_wasm.ts";
import { ZSTD_WASM_BASE64, ZSTD_WASM_SHA256 } from "./_zstd_wasm_module.ts";

/** A small deterministic generator (tests must not depend on Math.random). */
function generator(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

function text(n: number, next: () => number): Uint8Array {
  const words = ["2012-01-0", "rain", "sun", ",", "\n", "0.5", "12.8", "drizzle", "fog"];
  let out = "";
  while (out.length < n) out += words[(next() * words.length) | 0];
  return new TextEncoder().encode(out.slice(0, n));
}

const KINDS: Record<string, (n: number, next: () => number) => Uint8Array> = {
  random: (n, next) => Uint8Array.from({ length: n }, () => (next() * 256) | 0),
  text,
  "mostly zero": (n, next) =>
    Uint8Array.from({ length: n }, () => next() < 0.9 ? 0 : (next() * 256) | 0),
  periodic: (n) => Uint8Array.from({ length: n }, (_, i) => (i * 7) & 255),
};

/** libzstd through node:zlib, or null where it fails. */
function native(frame: Uint8Array, rawLength: number): Uint8Array | null {
  try {
    return new Uint8Array(zstdDecompressSync(frame, { maxOutputLength: Math.max(1, rawLength) }));
  } catch {
    return null;
  }
}

Deno.test("the WebAssembly module is the pinned zstddec 0.3.4 build", () => {
  const bytes = Uint8Array.from(atob(ZSTD_WASM_BASE64), (c) => c.charCodeAt(0));
  assert.equal(createHash("sha256").update(bytes).digest("hex"), ZSTD_WASM_SHA256);
  assert.equal(bytes.length, 54394);
  assert.ok(zstdWasmAvailable());
});

Deno.test("zstdWasmDecompress() returns what was encoded, at every level, size and kind", async () => {
  const next = generator(1);
  for (const [kind, make] of Object.entries(KINDS)) {
    for (const n of [0, 1, 100, 40_000, 130_000, 300_000, 1_100_000]) {
      const data = make(n, next);
      for (const level of [1, 19]) {
        const frame = await zstd.encode(data, level);
        assert.deepEqual(zstdWasmDecompress(frame, n), data, `${kind}, ${n} bytes, level ${level}`);
      }
    }
  }
});

Deno.test("zstdWasmDecompress() of a damaged frame fails or returns what node:zlib returns", async () => {
  // One-shot ZSTD_decompress is the stricter: it refuses some damaged frames (a match
  // before the start of the output) that node:zlib's streaming decoder lets through as
  // garbage. An archive's blocks are hash-checked before they are decoded anyway.
  const next = generator(7);
  const data = text(20_000, next);
  let refused = 0;
  for (const level of [1, 19]) {
    const frame = await zstd.encode(data, level);
    for (let t = 0; t < 800; t++) {
      const damaged = frame.slice();
      for (let k = 0; k <= t % 3; k++) {
        damaged[(next() * damaged.length) | 0]! ^= 1 << ((next() * 8) | 0);
      }
      const theirs = native(damaged, data.length);
      let ours: Uint8Array | null = null;
      try {
        ours = zstdWasmDecompress(damaged, data.length);
      } catch (err) {
        assert.ok(err instanceof CodecError, String(err));
        refused++;
      }
      if (ours !== null) assert.deepEqual(ours, theirs, `level ${level}, try ${t}`);
    }
  }
  assert.ok(refused > 0);
});

Deno.test("zstdWasmDecompress() refuses another length, a bad checksum and truncation", async () => {
  const data = text(5000, generator(3));
  const frame = await zstd.encode(data);
  assert.throws(() => zstdWasmDecompress(frame, 4999), {
    code: "LENGTH_MISMATCH",
    message: /more than the expected 4999/,
  });
  assert.throws(() => zstdWasmDecompress(frame, 5001), { code: "LENGTH_MISMATCH" });
  for (let cut = 0; cut < frame.length; cut += 7) {
    assert.throws(() => zstdWasmDecompress(frame.subarray(0, cut), 5000), CodecError);
  }
  // A frame with a checksum whose last byte is wrong: libzstd checks it.
  const summed = zstdFrameWithChecksum(data);
  assert.deepEqual(zstdWasmDecompress(summed, data.length), data);
  const wrong = summed.slice();
  wrong[wrong.length - 1]! ^= 1;
  assert.throws(() => zstdWasmDecompress(wrong, data.length), {
    code: "DECODE_FAILED",
    message: /checksum/,
  });
});

function zstdFrameWithChecksum(data: Uint8Array): Uint8Array {
  const script = `
    import { constants, zstdCompressSync } from "node:zlib";
    const data = Uint8Array.from(${JSON.stringify([...data])});
    const f = zstdCompressSync(data, { params: { [constants.ZSTD_c_checksumFlag]: 1 } });
    console.log(JSON.stringify([...f]));
  `;
  const run = new Deno.Command(Deno.execPath(), { args: ["eval", script], stdout: "piped" })
    .outputSync();
  assert.ok(run.success);
  return Uint8Array.from(JSON.parse(new TextDecoder().decode(run.stdout)) as number[]);
}

Deno.test("zstd.decode() in a fresh process decodes a large frame before node:zlib is loaded", async () => {
  const data = text(200_000, generator(5));
  const frame = await zstd.encode(data, 19);
  const path = await Deno.makeTempFile({ suffix: ".zst" });
  try {
    await Deno.writeFile(path, frame);
    // The wasm module's instance exists only if zstd.ts used it.
    const script = `
      import { zstd } from ${JSON.stringify(new URL("./zstd.ts", import.meta.url).href)};
      const frame = await Deno.readFile(${JSON.stringify(path)});
      const out = await zstd.decode(frame, ${data.length});
      const h = new Uint8Array(await crypto.subtle.digest("SHA-256", out));
      console.log(Array.from(h, (b) => b.toString(16).padStart(2, "0")).join(""));
    `;
    const run = await new Deno.Command(Deno.execPath(), {
      args: ["eval", script],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(run.success, new TextDecoder().decode(run.stderr));
    const expected = createHash("sha256").update(data).digest("hex");
    assert.equal(new TextDecoder().decode(run.stdout).trim(), expected);
  } finally {
    await Deno.remove(path);
  }
});
