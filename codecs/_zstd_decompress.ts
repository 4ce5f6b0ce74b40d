/**
 * A Zstandard frame decoder in TypeScript (RFC 8878): what `zstd.ts` decodes a small
 * frame with until the process has loaded `node:zlib`. A quick command (`audit`,
 * `verify`, `peek` of a small archive) decompresses a footer and a few blocks of some
 * kilobytes; loading Deno's `node:zlib` for them costs ~20 ms of CPU, more than all of
 * its other work. Large amounts go to libzstd (`zstd.ts` decides), so this decoder's
 * speed does not matter, only that it returns exactly what libzstd returns or fails.
 *
 * It decodes one frame without a dictionary into exactly `rawLength` bytes: raw, RLE
 * and compressed blocks; raw, RLE, Huffman-compressed and treeless literals; predefined,
 * RLE, FSE-compressed and repeated sequence tables; repeat offsets. A frame with a
 * content checksum is refused (`zstd.ts` never writes one, and libzstd checks it).
 * Every malformed input is a `CodecError` (`DECODE_FAILED`, or `LENGTH_MISMATCH` for
 * output of another length); nothing reads or writes outside its buffers.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import { CodecError } from "./errors.ts";

/** Zstandard frame magic number, little-endian `0xFD2FB528`. */
const FRAME_MAGIC = 0xfd2fb528;
/** The largest block content (RFC 8878 §3.1.1.2.3). */
const MAX_BLOCK_SIZE = 128 << 10;

/** Thrown inside the decoder; `zstdDecompress` turns it into a `CodecError`. */
class Corrupt extends Error {
  constructor(readonly what: string, readonly tooLong = false) {
    super(what);
  }
}

/**
 * Decompresses one Zstandard frame into exactly `rawLength` bytes.
 *
 * @param data One Zstandard frame and nothing after it.
 * @param rawLength The exact decompressed length.
 * @returns The decompressed bytes.
 * @throws {CodecError} `DECODE_FAILED` for bytes that are not such a frame (or one
 * with a checksum or dictionary), `LENGTH_MISMATCH` when it expands to another length.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { zstdDecompress } from "./_zstd_decompress.ts";
 * // A raw block: magic, descriptor (single segment, 1-byte size), size 3, header, "abc".
 * const frame = new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0x20, 3, 0x19, 0, 0, 97, 98, 99]);
 * assert.deepEqual(zstdDecompress(frame, 3), new TextEncoder().encode("abc"));
 * ```
 */
export function zstdDecompress(data: Uint8Array, rawLength: number): Uint8Array {
  try {
    return decodeFrame(data, rawLength);
  } catch (err) {
    if (!(err instanceof Corrupt)) throw err;
    if (err.tooLong) {
      throw new CodecError(
        "LENGTH_MISMATCH",
        `Cannot decode zstd block: it expands to more than the expected ${rawLength} bytes`,
      );
    }
    throw new CodecError(
      "DECODE_FAILED",
      `Cannot decode zstd block of ${data.length} bytes: ${err.what}`,
    );
  }
}

/** Tables that a later block of the frame may repeat. */
interface FrameState {
  huffman: HuffmanTable | null;
  literalLengths: FseTable | null;
  offsets: FseTable | null;
  matchLengths: FseTable | null;
  /** Repeat offsets 1, 2 and 3. */
  rep: [number, number, number];
}

function decodeFrame(data: Uint8Array, rawLength: number): Uint8Array {
  if (data.length < 6) throw new Corrupt("too short for a frame header");
  if (u32(data, 0) !== FRAME_MAGIC) throw new Corrupt("bad frame magic");
  const descriptor = data[4]!;
  const fcsFlag = descriptor >> 6;
  const singleSegment = (descriptor & 0x20) !== 0;
  if ((descriptor & 0x08) !== 0) throw new Corrupt("reserved bit set in the frame header");
  if ((descriptor & 0x04) !== 0) throw new Corrupt("a frame with a checksum");
  if ((descriptor & 0x03) !== 0) throw new Corrupt("a frame that needs a dictionary");
  let pos = 5 + (singleSegment ? 0 : 1);
  const fcsBytes = [singleSegment ? 1 : 0, 2, 4, 8][fcsFlag]!;
  if (pos + fcsBytes > data.length) throw new Corrupt("truncated frame header");
  let contentSize = -1;
  if (fcsBytes === 1) contentSize = data[pos]!;
  else if (fcsBytes === 2) contentSize = (data[pos]! | (data[pos + 1]! << 8)) + 256;
  else if (fcsBytes === 4) contentSize = u32(data, pos);
  else if (fcsBytes === 8) contentSize = u32(data, pos) + u32(data, pos + 4) * 2 ** 32;
  pos += fcsBytes;
  if (contentSize >= 0 && contentSize !== rawLength) {
    throw new CodecError(
      "LENGTH_MISMATCH",
      `Cannot decode zstd block: frame declares ${contentSize} bytes, expected ${rawLength}`,
    );
  }
  const out = new Uint8Array(rawLength);
  let written = 0;
  const state: FrameState = {
    huffman: null,
    literalLengths: null,
    offsets: null,
    matchLengths: null,
    rep: [1, 4, 8],
  };
  for (;;) {
    if (pos + 3 > data.length) throw new Corrupt(`truncated block header at byte ${pos}`);
    const header = data[pos]! | (data[pos + 1]! << 8) | (data[pos + 2]! << 16);
    pos += 3;
    const last = (header & 1) !== 0;
    const type = (header >> 1) & 3;
    const size = header >>> 3;
    if (size > MAX_BLOCK_SIZE) throw new Corrupt(`a block of ${size} bytes`);
    if (type === 0) {
      if (pos + size > data.length) throw new Corrupt("truncated raw block");
      if (written + size > rawLength) throw new Corrupt("too long", true);
      out.set(data.subarray(pos, pos + size), written);
      written += size;
      pos += size;
    } else if (type === 1) {
      if (pos + 1 > data.length) throw new Corrupt("truncated RLE block");
      if (written + size > rawLength) throw new Corrupt("too long", true);
      out.fill(data[pos]!, written, written + size);
      written += size;
      pos += 1;
    } else if (type === 2) {
      if (pos + size > data.length) throw new Corrupt("truncated compressed block");
      written = decodeBlock(data.subarray(pos, pos + size), out, written, state);
      pos += size;
    } else {
      throw new Corrupt(`reserved block type at byte ${pos - 3}`);
    }
    if (last) break;
  }
  if (pos !== data.length) throw new Corrupt(`${data.length - pos} bytes follow the frame`);
  if (written !== rawLength) {
    throw new CodecError(
      "LENGTH_MISMATCH",
      `Cannot decode zstd block: it expands to ${written} bytes, expected ${rawLength}`,
    );
  }
  return out;
}

/** Decodes one compressed block into `out` at `at`; returns the new end of the output. */
function decodeBlock(block: Uint8Array, out: Uint8Array, at: number, state: FrameState): number {
  const { literals, end } = decodeLiterals(block, state);
  let pos = end;
  if (pos >= block.length) throw new Corrupt("no sequences section");
  const b0 = block[pos]!;
  let count: number;
  if (b0 < 128) {
    count = b0;
    pos += 1;
  } else if (b0 < 255) {
    if (pos + 2 > block.length) throw new Corrupt("truncated sequence count");
    count = ((b0 - 128) << 8) + block[pos + 1]!;
    pos += 2;
  } else {
    if (pos + 3 > block.length) throw new Corrupt("truncated sequence count");
    count = block[pos + 1]! + (block[pos + 2]! << 8) + 0x7f00;
    pos += 3;
  }
  if (count === 0) {
    if (pos !== block.length) throw new Corrupt("bytes after an empty sequences section");
    if (at + literals.length > out.length) throw new Corrupt("too long", true);
    out.set(literals, at);
    return at + literals.length;
  }
  if (pos >= block.length) throw new Corrupt("truncated sequence modes");
  const modes = block[pos++]!;
  if ((modes & 3) !== 0) throw new Corrupt("reserved bits set in the sequence modes");
  const ll = sequenceTable(block, pos, modes >> 6, LITERAL_LENGTHS, state.literalLengths);
  state.literalLengths = ll.table;
  const of = sequenceTable(block, ll.end, (modes >> 4) & 3, OFFSETS, state.offsets);
  state.offsets = of.table;
  const ml = sequenceTable(block, of.end, (modes >> 2) & 3, MATCH_LENGTHS, state.matchLengths);
  state.matchLengths = ml.table;
  return executeSequences(
    new BackwardBits(block, ml.end, block.length),
    count,
    { ll: ll.table, of: of.table, ml: ml.table },
    literals,
    out,
    at,
    state.rep,
  );
}

function executeSequences(
  bits: BackwardBits,
  count: number,
  tables: { ll: FseTable; of: FseTable; ml: FseTable },
  literals: Uint8Array,
  out: Uint8Array,
  at: number,
  rep: [number, number, number],
): number {
  const { ll, of, ml } = tables;
  let llState = bits.read(ll.log);
  let ofState = bits.read(of.log);
  let mlState = bits.read(ml.log);
  let lit = 0;
  let op = at;
  for (let s = 0; s < count; s++) {
    const ofCode = of.symbol[ofState]!;
    const mlCode = ml.symbol[mlState]!;
    const llCode = ll.symbol[llState]!;
    if (ofCode > 31) throw new Corrupt(`offset code ${ofCode}`);
    if (mlCode > 52 || llCode > 35) throw new Corrupt("a length code out of range");
    const offsetValue = 2 ** ofCode + bits.read(ofCode);
    const matchLength = ML_BASE[mlCode]! + bits.read(ML_BITS[mlCode]!);
    const literalLength = LL_BASE[llCode]! + bits.read(LL_BITS[llCode]!);
    let offset: number;
    if (offsetValue > 3) {
      offset = offsetValue - 3;
      rep[2] = rep[1];
      rep[1] = rep[0];
      rep[0] = offset;
    } else {
      const index = offsetValue - 1 + (literalLength === 0 ? 1 : 0);
      if (index === 0) {
        offset = rep[0];
      } else {
        offset = index === 3 ? rep[0] - 1 : rep[index]!;
        if (index > 1) rep[2] = rep[1];
        rep[1] = rep[0];
        rep[0] = offset;
      }
    }
    if (s + 1 < count) {
      llState = ll.base[llState]! + bits.read(ll.bits[llState]!);
      mlState = ml.base[mlState]! + bits.read(ml.bits[mlState]!);
      ofState = of.base[ofState]! + bits.read(of.bits[ofState]!);
    }
    if (lit + literalLength > literals.length) throw new Corrupt("a sequence past the literals");
    if (op + literalLength + matchLength > out.length) throw new Corrupt("too long", true);
    out.set(literals.subarray(lit, lit + literalLength), op);
    op += literalLength;
    lit += literalLength;
    if (offset < 1 || offset > op) throw new Corrupt(`offset ${offset} at output byte ${op}`);
    if (offset >= matchLength) {
      out.copyWithin(op, op - offset, op - offset + matchLength);
      op += matchLength;
    } else {
      for (let i = 0; i < matchLength; i++, op++) out[op] = out[op - offset]!;
    }
  }
  if (!bits.exhausted()) throw new Corrupt("the sequences bitstream does not end where it should");
  const rest = literals.length - lit;
  if (op + rest > out.length) throw new Corrupt("too long", true);
  out.set(literals.subarray(lit), op);
  return op + rest;
}

// ---- Literals (RFC 8878 §3.1.1.3.1) ----

function decodeLiterals(
  block: Uint8Array,
  state: FrameState,
): { literals: Uint8Array; end: number } {
  if (block.length < 1) throw new Corrupt("empty compressed block");
  const b0 = block[0]!;
  const type = b0 & 3;
  const sizeFormat = (b0 >> 2) & 3;
  if (type === 0 || type === 1) {
    let size: number;
    let pos: number;
    if (sizeFormat === 0 || sizeFormat === 2) {
      size = b0 >> 3;
      pos = 1;
    } else if (sizeFormat === 1) {
      if (block.length < 2) throw new Corrupt("truncated literals header");
      size = (b0 >> 4) + (block[1]! << 4);
      pos = 2;
    } else {
      if (block.length < 3) throw new Corrupt("truncated literals header");
      size = (b0 >> 4) + (block[1]! << 4) + (block[2]! << 12);
      pos = 3;
    }
    if (size > MAX_BLOCK_SIZE) throw new Corrupt(`${size} literals`);
    if (type === 0) {
      if (pos + size > block.length) throw new Corrupt("truncated raw literals");
      return { literals: block.subarray(pos, pos + size), end: pos + size };
    }
    if (pos + 1 > block.length) throw new Corrupt("truncated RLE literals");
    return { literals: new Uint8Array(size).fill(block[pos]!), end: pos + 1 };
  }
  const headerBytes = sizeFormat < 2 ? 3 : sizeFormat + 2;
  if (block.length < headerBytes) throw new Corrupt("truncated literals header");
  let header = 0;
  for (let i = headerBytes - 1; i >= 0; i--) header = header * 256 + block[i]!;
  const sizeBits = [10, 10, 14, 18][sizeFormat]!;
  const regenerated = Math.floor(header / 16) % 2 ** sizeBits;
  const compressed = Math.floor(header / 2 ** (4 + sizeBits)) % 2 ** sizeBits;
  const streams = sizeFormat === 0 ? 1 : 4;
  if (regenerated > MAX_BLOCK_SIZE) throw new Corrupt(`${regenerated} literals`);
  const end = headerBytes + compressed;
  if (end > block.length) throw new Corrupt("truncated compressed literals");
  let pos = headerBytes;
  if (type === 2) {
    const tree = readHuffmanTree(block, pos, end);
    state.huffman = tree.table;
    pos = tree.end;
  } else if (state.huffman === null) {
    throw new Corrupt("treeless literals with no earlier Huffman table");
  }
  const literals = new Uint8Array(regenerated);
  const table = state.huffman!;
  if (streams === 1) {
    decodeHuffmanStream(block, pos, end, table, literals, 0, regenerated);
  } else {
    if (pos + 6 > end) throw new Corrupt("truncated jump table");
    const s1 = block[pos]! | (block[pos + 1]! << 8);
    const s2 = block[pos + 2]! | (block[pos + 3]! << 8);
    const s3 = block[pos + 4]! | (block[pos + 5]! << 8);
    pos += 6;
    const starts = [pos, pos + s1, pos + s1 + s2, pos + s1 + s2 + s3, end];
    if (starts[3]! > end) throw new Corrupt("jump table past the literals");
    const quarter = Math.ceil(regenerated / 4);
    for (let i = 0; i < 4; i++) {
      const from = Math.min(regenerated, i * quarter);
      const to = i === 3 ? regenerated : Math.min(regenerated, (i + 1) * quarter);
      decodeHuffmanStream(block, starts[i]!, starts[i + 1]!, table, literals, from, to);
    }
  }
  return { literals, end };
}

/** A Huffman decoding table indexed by the next `maxBits` bits. */
interface HuffmanTable {
  maxBits: number;
  symbol: Uint8Array;
  bits: Uint8Array;
}

function readHuffmanTree(
  block: Uint8Array,
  start: number,
  end: number,
): { table: HuffmanTable; end: number } {
  if (start >= end) throw new Corrupt("truncated Huffman tree");
  const header = block[start]!;
  let pos = start + 1;
  let weights: number[];
  if (header < 128) {
    if (pos + header > end) throw new Corrupt("truncated Huffman weights");
    weights = fseWeights(block, pos, pos + header);
    pos += header;
  } else {
    const count = header - 127;
    const bytes = Math.ceil(count / 2);
    if (pos + bytes > end) throw new Corrupt("truncated Huffman weights");
    weights = [];
    for (let i = 0; i < count; i++) {
      const b = block[pos + (i >> 1)]!;
      weights.push(i % 2 === 0 ? b >> 4 : b & 15);
    }
    pos += bytes;
  }
  return { table: huffmanTable(weights), end: pos };
}

/** Huffman weights compressed with FSE: two interleaved states over one bitstream. */
function fseWeights(block: Uint8Array, start: number, end: number): number[] {
  const { table, end: tableEnd } = readFseTable(block, start, end, 6, 255);
  const bits = new BackwardBits(block, tableEnd, end);
  let s1 = bits.read(table.log);
  let s2 = bits.read(table.log);
  const weights: number[] = [];
  for (;;) {
    if (weights.length > 254) throw new Corrupt("too many Huffman weights");
    weights.push(table.symbol[s1]!);
    s1 = table.base[s1]! + bits.read(table.bits[s1]!);
    if (bits.overflowed()) {
      weights.push(table.symbol[s2]!);
      break;
    }
    weights.push(table.symbol[s2]!);
    s2 = table.base[s2]! + bits.read(table.bits[s2]!);
    if (bits.overflowed()) {
      weights.push(table.symbol[s1]!);
      break;
    }
  }
  return weights;
}

function huffmanTable(weights: number[]): HuffmanTable {
  let total = 0;
  for (const w of weights) {
    if (w > 12) throw new Corrupt(`Huffman weight ${w}`);
    if (w > 0) total += 1 << (w - 1);
  }
  if (total === 0) throw new Corrupt("Huffman weights all zero");
  const maxBits = 32 - Math.clz32(total);
  if (maxBits > 12) throw new Corrupt(`Huffman codes of ${maxBits} bits`);
  const left = (1 << maxBits) - total;
  if ((left & (left - 1)) !== 0) throw new Corrupt("Huffman weights do not complete a tree");
  const all = [...weights, 31 - Math.clz32(left) + 1];
  if (all.length > 256) throw new Corrupt("too many Huffman symbols");
  const size = 1 << maxBits;
  const symbol = new Uint8Array(size);
  const bits = new Uint8Array(size);
  let next = 0;
  for (let w = 1; w <= maxBits; w++) {
    for (let s = 0; s < all.length; s++) {
      if (all[s] !== w) continue;
      const span = 1 << (w - 1);
      symbol.fill(s, next, next + span);
      bits.fill(maxBits + 1 - w, next, next + span);
      next += span;
    }
  }
  if (next !== size) throw new Corrupt("Huffman weights do not fill the table");
  return { maxBits, symbol, bits };
}

function decodeHuffmanStream(
  block: Uint8Array,
  start: number,
  end: number,
  table: HuffmanTable,
  out: Uint8Array,
  from: number,
  to: number,
): void {
  if (start >= end) {
    if (from === to) return;
    throw new Corrupt("an empty Huffman stream");
  }
  // The hottest loop here, kept to local variables: peek `maxBits` bits (at most 12,
  // so three bytes hold them at any bit offset), look the symbol up, consume its bits.
  const { maxBits, symbol, bits } = table;
  const mask = (1 << maxBits) - 1;
  let left = new BackwardBits(block, start, end).left;
  for (let i = from; i < to; i++) {
    const p = left - maxBits;
    let index: number;
    if (p >= 0) {
      const at = start + (p >> 3);
      const v = block[at]! | (block[at + 1]! << 8) | (block[at + 2]! << 16);
      index = (v >>> (p & 7)) & mask;
    } else {
      // Past the first bit: the bits below it read as zero.
      const v = block[start]! | (block[start + 1]! << 8);
      index = left > 0 ? (v & ((1 << left) - 1)) << -p : 0;
    }
    out[i] = symbol[index]!;
    left -= bits[index]!;
  }
  if (left !== 0) throw new Corrupt("a Huffman stream does not end where it should");
}

// ---- FSE (RFC 8878 §4.1) ----

/** An FSE decoding table: per state, its symbol and how to find the next state. */
interface FseTable {
  log: number;
  symbol: Uint8Array;
  bits: Uint8Array;
  base: Uint16Array;
}

/** Reads an FSE table description (forward bits) and builds its decoding table. */
function readFseTable(
  data: Uint8Array,
  start: number,
  end: number,
  maxLog: number,
  maxSymbol: number,
): { table: FseTable; end: number } {
  let bitPos = start * 8;
  const limit = end * 8;
  const read = (n: number): number => {
    if (bitPos + n > limit) throw new Corrupt("truncated FSE table description");
    let v = 0;
    for (let i = 0; i < n; i++, bitPos++) {
      v |= ((data[bitPos >> 3]! >> (bitPos & 7)) & 1) << i;
    }
    return v;
  };
  const peek = (n: number): number => {
    let v = 0;
    for (let i = 0; i < n; i++) {
      const p = bitPos + i;
      if (p < limit) v |= ((data[p >> 3]! >> (p & 7)) & 1) << i;
    }
    return v;
  };
  const log = read(4) + 5;
  if (log > maxLog) throw new Corrupt(`FSE accuracy log ${log} above ${maxLog}`);
  const probabilities: number[] = [];
  let remaining = (1 << log) + 1;
  let threshold = 1 << log;
  let nbBits = log + 1;
  while (remaining > 1) {
    if (probabilities.length > maxSymbol) throw new Corrupt("too many FSE symbols");
    const max = 2 * threshold - 1 - remaining;
    let value: number;
    const low = peek(nbBits - 1);
    if (low < max) {
      value = low;
      read(nbBits - 1);
    } else {
      value = read(nbBits);
      if (value >= threshold) value -= max;
    }
    const probability = value - 1;
    remaining -= probability < 0 ? -probability : probability;
    probabilities.push(probability);
    if (probability === 0) {
      for (;;) {
        const repeat = read(2);
        for (let i = 0; i < repeat; i++) probabilities.push(0);
        if (repeat !== 3) break;
      }
    }
    while (remaining < threshold) {
      nbBits--;
      threshold >>= 1;
    }
  }
  if (remaining !== 1) throw new Corrupt("FSE probabilities do not add up");
  if (probabilities.length > maxSymbol + 1) throw new Corrupt("too many FSE symbols");
  return { table: fseTable(probabilities, log), end: (bitPos + 7) >> 3 };
}

function fseTable(probabilities: readonly number[], log: number): FseTable {
  const size = 1 << log;
  const symbol = new Uint8Array(size);
  const bits = new Uint8Array(size);
  const base = new Uint16Array(size);
  const next = new Array<number>(probabilities.length).fill(0);
  let high = size - 1;
  for (let s = 0; s < probabilities.length; s++) {
    if (probabilities[s] === -1) {
      symbol[high--] = s;
      next[s] = 1;
    } else {
      next[s] = probabilities[s]!;
    }
  }
  const step = (size >> 1) + (size >> 3) + 3;
  let position = 0;
  for (let s = 0; s < probabilities.length; s++) {
    for (let i = 0; i < probabilities[s]!; i++) {
      symbol[position] = s;
      do position = (position + step) & (size - 1); while (position > high);
    }
  }
  if (position !== 0) throw new Corrupt("FSE probabilities do not spread over the table");
  for (let u = 0; u < size; u++) {
    const s = symbol[u]!;
    const state = next[s]!++;
    const n = log - (31 - Math.clz32(state));
    bits[u] = n;
    base[u] = (state << n) - size;
  }
  return { log, symbol, bits, base };
}

function rleTable(s: number): FseTable {
  return {
    log: 0,
    symbol: Uint8Array.of(s),
    bits: Uint8Array.of(0),
    base: Uint16Array.of(0),
  };
}

/** One kind of sequence field: its predefined table and the largest code. */
interface SequenceKind {
  name: string;
  predefined: () => FseTable;
  maxSymbol: number;
  maxLog: number;
}

function sequenceTable(
  block: Uint8Array,
  pos: number,
  mode: number,
  kind: SequenceKind,
  previous: FseTable | null,
): { table: FseTable; end: number } {
  if (mode === 0) return { table: kind.predefined(), end: pos };
  if (mode === 1) {
    if (pos >= block.length) throw new Corrupt(`truncated ${kind.name} RLE symbol`);
    const s = block[pos]!;
    if (s > kind.maxSymbol) throw new Corrupt(`${kind.name} code ${s}`);
    return { table: rleTable(s), end: pos + 1 };
  }
  if (mode === 2) return readFseTable(block, pos, block.length, kind.maxLog, kind.maxSymbol);
  if (previous === null) throw new Corrupt(`a repeated ${kind.name} table with none before`);
  return { table: previous, end: pos };
}

function predefined(probabilities: readonly number[], log: number): () => FseTable {
  let table: FseTable | null = null;
  return () => table ??= fseTable(probabilities, log);
}

// Predefined distributions and the code tables of RFC 8878 §3.1.1.3.2.2 and §3.1.1.3.2.1.1.

// deno-fmt-ignore
const LL_DEFAULT = [
  4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
  -1, -1, -1, -1,
];
// deno-fmt-ignore
const ML_DEFAULT = [
  1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1,
];
// deno-fmt-ignore
const OF_DEFAULT = [
  1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1,
];

const LITERAL_LENGTHS: SequenceKind = {
  name: "literal length",
  maxSymbol: 35,
  maxLog: 9,
  predefined: predefined(LL_DEFAULT, 6),
};
const MATCH_LENGTHS: SequenceKind = {
  name: "match length",
  maxSymbol: 52,
  maxLog: 9,
  predefined: predefined(ML_DEFAULT, 6),
};
const OFFSETS: SequenceKind = {
  name: "offset",
  maxSymbol: 31,
  maxLog: 8,
  predefined: predefined(OF_DEFAULT, 5),
};

// deno-fmt-ignore
const LL_BASE = [
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 24, 28, 32, 40, 48, 64,
  128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
];
// deno-fmt-ignore
const LL_BITS = [
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11,
  12, 13, 14, 15, 16,
];
// deno-fmt-ignore
const ML_BASE = [
  3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
  29, 30, 31, 32, 33, 34, 35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051,
  4099, 8195, 16387, 32771, 65539,
];
// deno-fmt-ignore
const ML_BITS = [
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
];

// ---- Bits ----

/**
 * A backward bitstream (RFC 8878 §4.1.1): read from the end of `[start, end)`, from
 * the bit under the highest set bit of the last byte down to the first bit. Bits
 * asked for past the start read as zero and leave the stream overflowed.
 */
class BackwardBits {
  #data: Uint8Array;
  #start: number;
  /** Bits left to read, counted from the start; negative once overflowed. */
  #left: number;

  constructor(data: Uint8Array, start: number, end: number) {
    if (end <= start) throw new Corrupt("an empty bitstream");
    const last = data[end - 1]!;
    if (last === 0) throw new Corrupt("a bitstream without its end mark");
    this.#data = data;
    this.#start = start;
    this.#left = (end - 1 - start) * 8 + (31 - Math.clz32(last));
  }

  /** The next `n` bits (at most 32), most significant first, without consuming them. */
  peek(n: number): number {
    if (n === 0) return 0;
    if (n > 24) {
      return this.peekAt(this.#left - 24, 24) * 2 ** (n - 24) + this.peekAt(this.#left - n, n - 24);
    }
    return this.peekAt(this.#left - n, n);
  }

  /** The `n` bits from bit `p` up (bits below 0 are zero). */
  private peekAt(p: number, n: number): number {
    if (p < 0) {
      if (n + p <= 0) return 0;
      return this.peekAt(0, n + p) << -p;
    }
    const data = this.#data;
    const i = this.#start + (p >> 3);
    const v = (data[i] ?? 0) | ((data[i + 1] ?? 0) << 8) | ((data[i + 2] ?? 0) << 16) |
      ((data[i + 3] ?? 0) << 24);
    return (v >>> (p & 7)) & ((1 << n) - 1);
  }

  read(n: number): number {
    const v = this.peek(n);
    this.#left -= n;
    return v;
  }

  /** Bits left to read (negative once overflowed). */
  get left(): number {
    return this.#left;
  }

  /** True when more bits were read than the stream holds. */
  overflowed(): boolean {
    return this.#left < 0;
  }

  /** True when every bit was read, no more. */
  exhausted(): boolean {
    return this.#left === 0;
  }
}

function u32(data: Uint8Array, at: number): number {
  return (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24)) >>> 0;
}
