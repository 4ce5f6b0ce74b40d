/**
 * The record count of a CSV file's cut (`csvRowBoundaries`, `csvRowRanges`) done 16
 * bytes at a time by a small WebAssembly SIMD function, on bytes read straight into its
 * memory: a freeze's cut passes every byte of the file once, on the thread that hands
 * out the chunks, and the JavaScript loop costs ~2 ns a byte there once optimized, more
 * while it is not (the cut runs once a process, cold); the Wasm loop is compiled before
 * its first call and costs a fraction of that.
 *
 * It counts only the plain records, those with no quote or CR: it stops at the first
 * quote or CR (the caller's quote-aware scanner takes that record), as the JavaScript
 * loop it stands for does. When WebAssembly SIMD is not available (`--jitless`, an old
 * engine) {@link CutArea.open} gives null and the caller keeps that loop.
 *
 * @module
 */

/**
 * The function, in the text format (assembled by hand below):
 *
 * ```wat
 * (func (export "scan") (param $p i32) (param $need i32) (param $one i32) (result i32)
 *   ;; from byte $p, 16 at a time: stops after the $need-th record (returns the
 *   ;; byte after its LF) or at the first quote or CR (returns -1), leaving at
 *   ;; [0] the records counted and at [4] the last LF passed (-1 for none).
 *   ;; An LF right after an LF, or at $p, ends no record unless $one is set.
 *   ...)
 * ```
 * The caller puts 16 quotes after the data, so the loop always stops.
 */
const I32 = 0x7f;
const V128 = 0x7b;
const op = {
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  ifI32: [0x04, I32],
  else: 0x05,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  return: 0x0f,
  get: 0x20,
  set: 0x21,
  tee: 0x22,
  i32Store: [0x36, 2, 0],
  const: 0x41,
  eqz: 0x45,
  ne: 0x47,
  geU: 0x4f,
  clz: 0x67,
  ctz: 0x68,
  popcnt: 0x69,
  add: 0x6a,
  sub: 0x6b,
  and: 0x71,
  or: 0x72,
  xor: 0x73,
  shl: 0x74,
  shrU: 0x76,
  v128Load: [0xfd, 0x00, 0, 0],
  v128Const: [0xfd, 0x0c],
  i8x16Eq: [0xfd, 0x23],
  v128Or: [0xfd, 0x50],
  i8x16Bitmask: [0xfd, 0x64],
} as const;

// Locals: parameters, then the function's own.
const P = 0, NEED = 1, ONE = 2;
const V = 3, LFS = 4, QUOTES = 5, CRS = 6; // v128
const LF = 7, SP = 8, REC = 9, CARRY = 10, COUNT = 11, LAST = 12, K = 13; // i32

/** An unsigned LEB128 number. */
function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

/** A signed LEB128 number (i32.const's immediate). */
function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

const get = (i: number) => [op.get, i];
const set = (i: number) => [op.set, i];
const i32 = (n: number) => [op.const, ...sleb(n)];
const splat = (byte: number) => [...op.v128Const, ...new Array<number>(16).fill(byte)];
const store = (at: number, local: number) => [...i32(at), ...get(local), ...op.i32Store];

const body: number[] = [
  // Locals: 4 v128, then 7 i32.
  2,
  4,
  V128,
  7,
  I32,
  ...splat(10),
  ...set(LFS),
  ...splat(34),
  ...set(QUOTES),
  ...splat(13),
  ...set(CRS),
  ...i32(1),
  ...set(CARRY), // $p itself starts a line: an LF there is a blank line
  ...i32(-1),
  ...set(LAST),
  op.loop,
  0x40,
  // v = the 16 bytes at p; lf, sp = bit masks of their LFs, and their quotes or CRs
  ...get(P),
  ...op.v128Load,
  ...set(V),
  ...get(V),
  ...get(LFS),
  ...op.i8x16Eq,
  ...op.i8x16Bitmask,
  ...set(LF),
  ...get(V),
  ...get(QUOTES),
  ...op.i8x16Eq,
  ...get(V),
  ...get(CRS),
  ...op.i8x16Eq,
  ...op.v128Or,
  ...op.i8x16Bitmask,
  ...set(SP),
  // A quote or CR: only the LFs before the first one count.
  ...get(SP),
  op.if,
  0x40,
  ...get(LF),
  ...i32(1),
  ...get(SP),
  op.ctz,
  op.shl,
  ...i32(1),
  op.sub,
  op.and,
  ...set(LF),
  op.end,
  // rec = the LFs that end a record: all of them, or those not right after an LF.
  ...get(ONE),
  ...op.ifI32,
  ...get(LF),
  op.else,
  ...get(LF),
  ...get(LF),
  ...i32(1),
  op.shl,
  ...get(CARRY),
  op.or,
  ...i32(-1),
  op.xor,
  op.and,
  op.end,
  ...set(REC),
  ...get(LF),
  ...i32(15),
  op.shrU,
  ...set(CARRY),
  // The $need-th record within these 16 bytes: clear the bits before it, return past it.
  ...get(COUNT),
  ...get(REC),
  op.popcnt,
  op.add,
  ...get(NEED),
  op.geU,
  op.if,
  0x40,
  ...get(NEED),
  ...get(COUNT),
  op.sub,
  ...i32(1),
  op.sub,
  ...set(K),
  op.block,
  0x40,
  op.loop,
  0x40,
  ...get(K),
  op.eqz,
  op.brIf,
  1,
  ...get(REC),
  ...get(REC),
  ...i32(1),
  op.sub,
  op.and,
  ...set(REC),
  ...get(K),
  ...i32(1),
  op.sub,
  ...set(K),
  op.br,
  0,
  op.end,
  op.end,
  ...store(0, NEED),
  ...get(P),
  ...get(REC),
  op.ctz,
  op.add,
  ...i32(1),
  op.add,
  op.return,
  op.end,
  ...get(COUNT),
  ...get(REC),
  op.popcnt,
  op.add,
  ...set(COUNT),
  // The last LF passed: where the record holding a quote or CR starts after it.
  ...get(LF),
  op.if,
  0x40,
  ...get(P),
  ...i32(31),
  op.add,
  ...get(LF),
  op.clz,
  op.sub,
  ...set(LAST),
  op.end,
  ...get(SP),
  op.if,
  0x40,
  ...store(0, COUNT),
  ...store(4, LAST),
  ...i32(-1),
  op.return,
  op.end,
  ...get(P),
  ...i32(16),
  op.add,
  ...set(P),
  op.br,
  0,
  op.end,
  ...i32(-1), // not reached: the loop ends by a return
  op.end,
];

const section = (id: number, content: number[]) => [id, ...leb(content.length), ...content];
const name = (s: string) => [s.length, ...[...s].map((c) => c.charCodeAt(0))];

/** The module: imports its memory ("e" "m"), exports "scan". */
const MODULE = new Uint8Array([
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00,
  ...section(1, [1, 0x60, 3, I32, I32, I32, 1, I32]),
  ...section(2, [1, ...name("e"), ...name("m"), 0x02, 0x00, 1]),
  ...section(3, [1, 0]),
  ...section(7, [1, ...name("scan"), 0x00, 0]),
  ...section(10, [1, ...leb(body.length), ...body]),
]);

/** Where the data starts in the memory: [0] and [4] hold the function's answers. */
const DATA = 64;
/** Quotes written after the data, so a 16-byte load past it stops the loop. */
const PAD = 16;
const QUOTE = 34;
const PAGE = 65536;

let compiled: WebAssembly.Module | null | undefined;

function wasmModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(MODULE);
    } catch {
      compiled = null; // no WebAssembly SIMD here: the caller's loop counts
    }
  }
  return compiled;
}

/** What {@link CutArea.scan} found. */
export interface PlainScan {
  /** Plain records counted (the `need` asked for when `end` ≥ 0). */
  records: number;
  /** Byte just past the `need`-th record's LF; -1 when a quote, a CR or the data's end came first. */
  end: number;
  /** The last LF passed before that stop, -1 for none (only when `end` is -1). */
  lastLf: number;
}

/**
 * The bytes being cut, held in a Wasm memory: `bytes` is a view of them, which the
 * caller fills (reads a file into) and scans. It grows when asked for more room.
 */
export class CutArea {
  #memory: WebAssembly.Memory;
  #scan: (p: number, need: number, one: number) => number;
  #answers: Int32Array;
  #bytes: Uint8Array;
  #length = 0;

  private constructor(module: WebAssembly.Module, capacity: number) {
    this.#memory = new WebAssembly.Memory({ initial: pagesFor(capacity) });
    const instance = new WebAssembly.Instance(module, { e: { m: this.#memory } });
    this.#scan = instance.exports.scan as (p: number, need: number, one: number) => number;
    this.#answers = new Int32Array(this.#memory.buffer, 0, 2);
    this.#bytes = new Uint8Array(this.#memory.buffer, DATA, capacity);
  }

  /**
   * An area of at least `capacity` bytes, or null when WebAssembly SIMD cannot run here.
   *
   * @param capacity Bytes it holds at first.
   */
  static open(capacity: number): CutArea | null {
    const module = wasmModule();
    return module ? new CutArea(module, capacity) : null;
  }

  /** The data: the first `length` bytes of the area (see {@link CutArea.setLength}). */
  get bytes(): Uint8Array {
    return this.#bytes.subarray(0, this.#length);
  }

  /** Room for data, `length` set or not: the whole area, to read into. */
  get room(): Uint8Array {
    return this.#bytes;
  }

  /**
   * Makes room for `capacity` bytes, keeping the data (views taken before are stale).
   *
   * @param capacity Bytes wanted.
   */
  reserve(capacity: number): void {
    if (capacity <= this.#bytes.length) return;
    const pages = pagesFor(capacity) - this.#memory.buffer.byteLength / PAGE;
    this.#memory.grow(pages);
    this.#answers = new Int32Array(this.#memory.buffer, 0, 2);
    this.#bytes = new Uint8Array(this.#memory.buffer, DATA, capacity);
  }

  /**
   * Sets how many bytes of the area are data, and marks its end for the scan.
   *
   * @param length Bytes of data, from the area's start.
   */
  setLength(length: number): void {
    this.#length = length;
    new Uint8Array(this.#memory.buffer, DATA + length, PAD).fill(QUOTE);
  }

  /**
   * Counts the plain records from `pos` of the data, up to `need` of them.
   *
   * @param pos Where a record starts.
   * @param need Records wanted (≥ 1).
   * @param oneColumn Whether an empty line is a record (a file of one column).
   * @returns What it found; positions are indexes of the data.
   */
  scan(pos: number, need: number, oneColumn: boolean): PlainScan {
    const end = this.#scan(DATA + pos, need, oneColumn ? 1 : 0);
    if (end >= 0) return { records: need, end: end - DATA, lastLf: -1 };
    const last = this.#answers[1]!;
    return { records: this.#answers[0]!, end: -1, lastLf: last < 0 ? -1 : last - DATA };
  }
}

/** Pages of memory for `capacity` bytes of data, its header and its end mark. */
function pagesFor(capacity: number): number {
  return Math.ceil((DATA + capacity + PAD) / PAGE);
}
