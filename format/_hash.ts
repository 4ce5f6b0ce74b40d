/**
 * SHA-256, synchronous and incremental (so a multi-gigabyte payload never has to sit
 * in memory), as 64 lowercase hex digits or 32 bytes.
 *
 * Two implementations give the same digests: `node:crypto`'s native one, and a
 * TypeScript one (FIPS 180-4) that needs no module load. Loading Deno's `node:crypto`
 * costs ~20 ms of CPU when no other Node module is loaded, more than `audit` or
 * `verify` of a small archive spend on everything else, while Web Crypto's native
 * digest is one-shot and asynchronous and the reader's checks are synchronous. But the
 * TypeScript hash runs in V8's interpreter in a fresh process (~16 MB/s over its first
 * 100 kB). So inputs under {@link NATIVE_FROM} bytes (a small archive's header, footer,
 * chunks) are hashed in TypeScript, and the first larger one loads `node:crypto`
 * synchronously (`process.getBuiltinModule`; by then `node:zlib` has usually
 * bootstrapped Node compatibility, which makes the load cheap), which hashes everything
 * after it. An incremental hash keeps its input until it reaches that size.
 *
 * A caller that can wait ({@link sha256HexAsync}: the reader's checks of a header,
 * footer and each block it reads) hashes with Web Crypto instead, which is native and
 * part of the runtime: a process that checks a few large blocks (a 10-row slice of a
 * big archive) loads `node:crypto` not at all, and one that checks small ones (`peek`
 * of a small archive) runs no TypeScript hash in V8's interpreter; once `node:crypto`
 * is loaded it hashes those too (synchronous, no copy).
 *
 * @module
 */
import { nodeBuiltin } from "../internal/node_builtin.ts";

type NodeCrypto = typeof import("node:crypto");
type NodeHash = ReturnType<NodeCrypto["createHash"]>;

/** Inputs (or an incremental hash's total) from this size on go to `node:crypto`. */
const NATIVE_FROM = 16 << 10;

let native: NodeCrypto | null = null;

/** `node:crypto`, loaded on first call; null where the runtime cannot load it synchronously. */
function nativeCrypto(): NodeCrypto | null {
  return native ??= nodeBuiltin<NodeCrypto>("node:crypto");
}

/** A native hash when `node:crypto` is loaded or `size` is worth loading it for. */
function nativeHash(size: number): NodeHash | null {
  const crypto = native ?? (size >= NATIVE_FROM ? nativeCrypto() : null);
  return crypto === null ? null : crypto.createHash("sha256");
}

/** An incremental SHA-256. */
export interface Sha256 {
  /** Adds bytes (a string is hashed as UTF-8). */
  update(data: Uint8Array | string): Sha256;
  /** The digest of everything added, as 64 lowercase hex digits. Call once. */
  digest(encoding: "hex"): string;
}

/** Starts an incremental SHA-256. */
export function sha256(): Sha256 {
  return new IncrementalSha256();
}

/** SHA-256 of the concatenated `parts` as 64 lowercase hex digits. */
export function sha256Hex(...parts: Uint8Array[]): string {
  const h = nativeHash(parts.reduce((n, p) => n + p.length, 0));
  if (h !== null) {
    for (const p of parts) h.update(p);
    return h.digest("hex");
  }
  return hex(sha256Script(...parts));
}

/**
 * SHA-256 of `bytes` as 64 lowercase hex digits, the same as {@link sha256Hex}, by
 * Web Crypto's native digest unless `node:crypto` is already loaded: it loads nothing,
 * and costs ~15 µs a call more than `node:crypto`, less than the TypeScript hash
 * does cold.
 *
 * @param bytes The input.
 * @returns The digest.
 */
export async function sha256HexAsync(bytes: Uint8Array): Promise<string> {
  const subtle = globalThis.crypto?.subtle;
  if (native !== null || subtle === undefined) {
    return sha256Hex(bytes);
  }
  // Web Crypto wants an ArrayBuffer-backed view (not a SharedArrayBuffer one).
  const view = bytes.buffer instanceof ArrayBuffer
    ? bytes as Uint8Array<ArrayBuffer>
    : new Uint8Array(bytes);
  return hex(new Uint8Array(await subtle.digest("SHA-256", view)));
}

/** SHA-256 of `bytes` as 32 raw bytes. */
export function sha256Bytes(bytes: Uint8Array): Uint8Array {
  const h = nativeHash(bytes.length);
  return h === null ? sha256Script(bytes) : new Uint8Array(h.update(bytes).digest());
}

/**
 * SHA-256 of the concatenated `parts` by the TypeScript implementation alone, whatever
 * is loaded: for tests and benchmarks that compare the two.
 */
export function sha256Script(...parts: Uint8Array[]): Uint8Array {
  const h = new ScriptSha256();
  for (const p of parts) h.update(p);
  return h.digest();
}

const UTF8 = new TextEncoder();

function bytesOf(data: Uint8Array | string): Uint8Array {
  return typeof data === "string" ? UTF8.encode(data) : data;
}

/**
 * A copy of the input while it is small, then `node:crypto` (or, where the runtime
 * cannot load it, the TypeScript hash) from the input kept on.
 */
class IncrementalSha256 implements Sha256 {
  #hash: NodeHash | ScriptSha256 | null;
  #kept: Uint8Array[] = [];
  #keptBytes = 0;

  constructor() {
    this.#hash = nativeHash(0);
  }

  update(data: Uint8Array | string): Sha256 {
    const bytes = bytesOf(data);
    if (this.#hash === null && this.#keptBytes + bytes.length < NATIVE_FROM) {
      this.#kept.push(bytes.slice());
      this.#keptBytes += bytes.length;
      return this;
    }
    this.#hash ??= this.#start(this.#keptBytes + bytes.length);
    this.#hash.update(bytes);
    return this;
  }

  digest(_encoding: "hex"): string {
    const h = this.#hash ?? this.#start(this.#keptBytes);
    return h instanceof ScriptSha256 ? hex(h.digest()) : h.digest("hex");
  }

  /** The hash to go on with, fed what was kept. */
  #start(size: number): NodeHash | ScriptSha256 {
    const h = nativeHash(size) ?? new ScriptSha256();
    for (const kept of this.#kept) h.update(kept);
    this.#kept = [];
    return h;
  }
}

/** SHA-256's round constants (FIPS 180-4 §4.2.2). */
// deno-fmt-ignore
const K = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 in TypeScript (FIPS 180-4 §6.2). */
class ScriptSha256 {
  #h = Int32Array.from([
    0x6a09e667,
    0xbb67ae85,
    0x3c6ef372,
    0xa54ff53a,
    0x510e527f,
    0x9b05688c,
    0x1f83d9ab,
    0x5be0cd19,
  ]);
  #w = new Int32Array(64);
  #block = new Uint8Array(64);
  #filled = 0;
  #length = 0;

  update(bytes: Uint8Array): this {
    this.#length += bytes.length;
    let at = 0;
    if (this.#filled > 0) {
      const take = Math.min(64 - this.#filled, bytes.length);
      this.#block.set(bytes.subarray(0, take), this.#filled);
      this.#filled += take;
      at = take;
      if (this.#filled < 64) return this;
      this.#compress(this.#block, 0);
      this.#filled = 0;
    }
    for (; at + 64 <= bytes.length; at += 64) this.#compress(bytes, at);
    if (at < bytes.length) {
      this.#block.set(bytes.subarray(at));
      this.#filled = bytes.length - at;
    }
    return this;
  }

  digest(): Uint8Array {
    const bits = this.#length * 8;
    const tail = new Uint8Array(this.#filled + 9 <= 64 ? 64 : 128);
    tail.set(this.#block.subarray(0, this.#filled));
    tail[this.#filled] = 0x80;
    const view = new DataView(tail.buffer);
    view.setUint32(tail.length - 8, Math.floor(bits / 2 ** 32));
    view.setUint32(tail.length - 4, bits >>> 0);
    for (let at = 0; at < tail.length; at += 64) this.#compress(tail, at);
    const out = new Uint8Array(32);
    const outView = new DataView(out.buffer);
    for (let i = 0; i < 8; i++) outView.setInt32(i * 4, this.#h[i]!);
    return out;
  }

  #compress(p: Uint8Array, at: number): void {
    const w = this.#w;
    for (let i = 0; i < 16; i++) {
      const j = at + i * 4;
      w[i] = (p[j]! << 24) | (p[j + 1]! << 16) | (p[j + 2]! << 8) | p[j + 3]!;
    }
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    const h = this.#h;
    let a = h[0]!, b = h[1]!, c = h[2]!, d = h[3]!, e = h[4]!, f = h[5]!, g = h[6]!, hh = h[7]!;
    for (let i = 0; i < 64; i++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (hh + s1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] = (h[0]! + a) | 0;
    h[1] = (h[1]! + b) | 0;
    h[2] = (h[2]! + c) | 0;
    h[3] = (h[3]! + d) | 0;
    h[4] = (h[4]! + e) | 0;
    h[5] = (h[5]! + f) | 0;
    h[6] = (h[6]! + g) | 0;
    h[7] = (h[7]! + hh) | 0;
  }
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

function hex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += HEX[b];
  return s;
}
