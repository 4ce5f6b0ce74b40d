/**
 * SHA-256, synchronous and incremental (so a multi-gigabyte payload never has to sit
 * in memory), as 64 lowercase hex digits or 32 bytes.
 *
 * Two implementations give the same digests: `node:crypto`'s native one, and a
 * TypeScript one (FIPS 180-4) that needs no module load. Loading Deno's `node:crypto`
 * costs ~20 ms of CPU, more than `audit` or `verify` of a small archive spend on
 * everything else, while Web Crypto's native digest is one-shot and asynchronous and
 * the reader's checks are synchronous. So a process hashes its first
 * {@link NATIVE_AFTER} bytes in TypeScript and, past that, asks for `node:crypto` in
 * the background; every hash after it has arrived is native (the reader awaits I/O
 * between blocks, so a thaw or verify of a big archive is native after its first
 * megabyte). An incremental hash started before then keeps its input (up to
 * {@link BUFFER_LIMIT}) and moves to native when it can.
 *
 * @module
 */

type NodeCrypto = typeof import("node:crypto");

/** Bytes a process hashes in TypeScript before it loads `node:crypto`. */
const NATIVE_AFTER = 1 << 20;
/** Input an incremental hash keeps to move to `node:crypto` when it arrives. */
const BUFFER_LIMIT = 8 << 20;

let native: NodeCrypto | null = null;
let loading = false;
let hashedInScript = 0;

/** Counts bytes hashed in TypeScript; past the threshold, starts loading `node:crypto`. */
function countScriptBytes(n: number): void {
  hashedInScript += n;
  if (hashedInScript >= NATIVE_AFTER && !loading) {
    loading = true;
    import("node:crypto").then((m) => native = m, () => loading = false);
  }
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
  if (native) {
    const h = native.createHash("sha256");
    for (const p of parts) h.update(p);
    return h.digest("hex");
  }
  const h = new ScriptSha256();
  for (const p of parts) {
    h.update(p);
    countScriptBytes(p.length);
  }
  return hex(h.digest());
}

/** SHA-256 of `bytes` as 32 raw bytes. */
export function sha256Bytes(bytes: Uint8Array): Uint8Array {
  if (native) return new Uint8Array(native.createHash("sha256").update(bytes).digest());
  countScriptBytes(bytes.length);
  return new ScriptSha256().update(bytes).digest();
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
 * `node:crypto` when loaded; until then, a copy of the input (to hand over when it
 * arrives), and past {@link BUFFER_LIMIT}, the TypeScript hash to the end.
 */
class IncrementalSha256 implements Sha256 {
  #native: ReturnType<NodeCrypto["createHash"]> | null = null;
  #script: ScriptSha256 | null = null;
  #kept: Uint8Array[] = [];
  #keptBytes = 0;

  constructor() {
    if (native) this.#native = native.createHash("sha256");
  }

  update(data: Uint8Array | string): Sha256 {
    const bytes = bytesOf(data);
    if (this.#native === null && this.#script === null && native !== null) {
      this.#native = native.createHash("sha256");
      for (const kept of this.#kept) this.#native.update(kept);
      this.#kept = [];
    }
    if (this.#native !== null) {
      this.#native.update(bytes);
      return this;
    }
    countScriptBytes(bytes.length);
    if (this.#script === null && this.#keptBytes + bytes.length <= BUFFER_LIMIT) {
      this.#kept.push(bytes.slice());
      this.#keptBytes += bytes.length;
      return this;
    }
    if (this.#script === null) {
      this.#script = new ScriptSha256();
      for (const kept of this.#kept) this.#script.update(kept);
      this.#kept = [];
    }
    this.#script.update(bytes);
    return this;
  }

  digest(_encoding: "hex"): string {
    if (this.#native !== null) return this.#native.digest("hex");
    if (this.#script === null) {
      this.#script = new ScriptSha256();
      for (const kept of this.#kept) this.#script.update(kept);
      this.#kept = [];
    }
    return hex(this.#script.digest());
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
