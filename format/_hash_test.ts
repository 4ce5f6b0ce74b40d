/**
 * Tests of `_hash.ts`: the TypeScript SHA-256 and every way the module hashes (before
 * and after `node:crypto` arrives, one-shot and incremental) give node:crypto's digests.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { sha256, sha256Bytes, sha256Hex, sha256HexAsync, sha256Script } from "./_hash.ts";

function reference(...parts: (Uint8Array | string)[]): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest("hex");
}

function bytes(n: number, seed: number): Uint8Array {
  let s = seed;
  return Uint8Array.from({ length: n }, () => (s = (s * 1103515245 + 12345) & 0x7fffffff) >> 16);
}

/** Lengths around SHA-256's 64-byte blocks and its 55/56-byte padding edge. */
const LENGTHS = [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 100_003];

Deno.test("sha256Script() gives node:crypto's digest at every block and padding edge", () => {
  for (const n of LENGTHS) {
    const data = bytes(n, n + 1);
    assert.equal(
      Array.from(sha256Script(data), (b) => b.toString(16).padStart(2, "0")).join(""),
      reference(data),
      `${n} bytes`,
    );
  }
  assert.equal(
    Array.from(
      sha256Script(new TextEncoder().encode("abc")),
      (b) => b.toString(16).padStart(2, "0"),
    )
      .join(""),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
  const a = bytes(70, 1), b = bytes(9, 2), c = bytes(200, 3);
  assert.deepEqual(sha256Script(a, b, c), sha256Script(new Uint8Array([...a, ...b, ...c])));
});

Deno.test("sha256Hex(), sha256Bytes() and sha256() agree with node:crypto, before and after it loads", async () => {
  const check = async () => {
    for (const n of LENGTHS) {
      const data = bytes(n, n + 7);
      assert.equal(sha256Hex(data), reference(data), `${n} bytes`);
      assert.equal(sha256Hex(data, data), reference(data, data), `${n} bytes twice`);
      assert.deepEqual(
        sha256Bytes(data),
        new Uint8Array(createHash("sha256").update(data).digest()),
      );
      // Incremental, in uneven pieces, strings hashed as UTF-8.
      const h = sha256();
      for (let at = 0; at < n; at += 1 + (at % 37)) h.update(data.subarray(at, at + 1 + (at % 37)));
      h.update("é ✓ permafrost");
      assert.equal(h.digest("hex"), reference(data, "é ✓ permafrost"), `${n} bytes, incremental`);
    }
    await new Promise((resolve) => setTimeout(resolve, 0));
  };
  await check();
  // Hash past the threshold, in one incremental hash that outlives the switch.
  const long = sha256();
  const piece = bytes(256 << 10, 99);
  for (let i = 0; i < 6; i++) {
    long.update(piece);
    sha256Hex(piece);
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  assert.equal(long.digest("hex"), reference(...Array(6).fill(piece)));
  await check();
});

Deno.test("sha256() copies what it keeps: the caller may reuse its buffer", () => {
  const buffer = new Uint8Array(100).fill(1);
  const h = sha256();
  h.update(buffer);
  buffer.fill(2);
  h.update(buffer);
  assert.equal(
    h.digest("hex"),
    reference(new Uint8Array(100).fill(1), new Uint8Array(100).fill(2)),
  );
});

Deno.test("sha256HexAsync gives node:crypto's digest for every size, and views of a larger buffer", async () => {
  // A fresh instance of the module, which has not loaded node:crypto: Web Crypto hashes.
  const fresh = (await import(new URL("./_hash.ts?web-crypto", import.meta.url).href)) as {
    sha256HexAsync: typeof sha256HexAsync;
  };
  const big = new Uint8Array(70_000).map((_, i) => (i * 131 + (i >> 9)) & 255);
  for (const n of [0, 1, 55, 56, 64, 1000, 16 << 10, (16 << 10) + 1, 70_000]) {
    for (const bytes of [big.subarray(0, n), big.subarray(70_000 - n)]) {
      const expected = createHash("sha256").update(bytes).digest("hex");
      const label = `${n} bytes at ${bytes.byteOffset}`;
      assert.equal(await fresh.sha256HexAsync(bytes), expected, label);
      assert.equal(await sha256HexAsync(bytes), expected, label);
    }
  }
});
