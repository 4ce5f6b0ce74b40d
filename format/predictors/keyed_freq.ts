/**
 * The `keyed_freq` predictor (int64, date, string; `usesDeps: true`): a column
 * coded by its values' frequency ranks under a key of one or two other columns
 * of the same chunk, with the ranks of each key stored together.
 *
 * Why next to `keyed_rank`: when a column is only correlated with its key
 * (flight `destination` given `origin`), what predicts a value is how often it
 * came under the key, not how recently. Each key keeps its values sorted by
 * count so far (ties: the earlier first), so a key's usual values get the small
 * ranks (counts so far, so the ranks adapt along the chunk). And the ranks of one key are stored side by side (key after key, in
 * the order keys first appear): a compressor then sees each key's rank
 * distribution as one run and adapts to it, which an interleaved stream hides.
 * On flights-3m this stores `destination` at about three quarters of its
 * unconditioned size. No list is stored: the decoder rebuilds every count.
 *
 * Layout (FORMAT.md §4), after `varint n`:
 * - the dictionary: `varint k`, then the k distinct values in order of first
 *   appearance (strings as `raw_text`'s lengths then UTF-8; integers as planes
 *   of zigzag(v));
 * - the new pairs: `varint m`, then m block ranks, one per rank 0 below, in
 *   row order: 0 = a value new to the block (the next dictionary value),
 *   g ≥ 1 = the g-th value of the block's own count-sorted list (every row
 *   counts, as under a key);
 * - the ranks, one per row, grouped by key (the rows of the first key to
 *   appear, in row order, then the second key's, and so on): 0 = a value new
 *   under this key (it goes to the end of the key's list), r ≥ 1 = the r-th
 *   value of the key's list; then the value's count grows by one and it swaps
 *   places with the first value of the list that had its old count (so each
 *   list stays sorted by count, larger first).
 *
 * Ranks are written one byte each, 255 and above as the byte 255 with the
 * excess in a varint after all the bytes: `[u8 × count][varint e][e varints]`.
 * Byte planes would cut a rank above 255 in two, and the codec would then see
 * neither half whole.
 *
 * Decoding refuses a rank above its key's list length, a dictionary id out of
 * range and a new-value count that does not match the ranks (`CORRUPT`).
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { ByteReader } from "../_bytes.ts";
import type { BigIntColumn, Column, Field, StringColumn } from "../column.ts";
import { FormatError } from "../errors.ts";
import { checkDecodeField, expectColumn, openBlock, rowsToDecode } from "./_common.ts";
import {
  planesSize,
  planeWidth,
  readPlanes,
  unzigzagInPlace,
  varintSize,
  wordsOf,
  writePlanes,
  writeVarint,
  zigzagInPlace,
} from "./_ints.ts";
import {
  codesOfEntries,
  columnOfEntries,
  depKeyIds,
  type Entries,
  intIds,
  textIds,
} from "./_keys.ts";
import { planTexts, readTexts, writeTexts } from "./_text.ts";
import type { DecodeContext, EncodeContext, Predictor } from "./predictor.ts";

const ID = "keyed_freq";
const FREQ_RANK_ID = "freq_rank";
const KEYED: ReadonlySet<Field["type"]> = new Set(["int64", "date", "string"]);

function matches(field: Field): boolean {
  return KEYED.has(field.type);
}

/**
 * The count-sorted value lists of every key, shared by encoder and decoder so
 * both move values the same way. Each (key, value) pair has a slot holding its
 * count and its index in the key's list. Counts never increase down a list.
 */
class KeyLists {
  readonly lists: number[][] = [];
  readonly #slots: number[][] = [];
  readonly #counts: number[] = [];
  readonly #index: number[] = [];

  /** Appends a value new under `key` (count 1, at the end); returns its slot. */
  add(key: number, value: number): number {
    const list = this.lists[key] ??= [];
    const slots = this.#slots[key] ??= [];
    const slot = this.#counts.length;
    this.#index.push(list.length);
    list.push(value);
    slots.push(slot);
    this.#counts.push(1);
    return slot;
  }

  /** The index in its key's list of the pair in `slot`. */
  indexOf(slot: number): number {
    return this.#index[slot]!;
  }

  /**
   * Counts one more row of the value at `index` of `key`'s list: it swaps places
   * with the first value of the list that has its old count, so the list stays
   * sorted by count in O(log length).
   */
  hit(key: number, index: number): void {
    const list = this.lists[key]!;
    const slots = this.#slots[key]!;
    const counts = this.#counts;
    const slot = slots[index]!;
    const count = counts[slot]!;
    counts[slot] = count + 1;
    let lo = 0;
    let hi = index;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (counts[slots[mid]!]! > count) lo = mid + 1;
      else hi = mid;
    }
    if (lo === index) return;
    const other = slots[lo]!;
    const value = list[index]!;
    list[index] = list[lo]!;
    slots[index] = other;
    this.#index[other] = index;
    list[lo] = value;
    slots[lo] = slot;
    this.#index[slot] = lo;
  }
}

/** Rows per key, and where each key's ranks start in the grouped stream. */
function groupStarts(keys: Int32Array, keyCount: number): Uint32Array {
  const starts = new Uint32Array(keyCount + 1);
  for (let i = 0; i < keys.length; i++) starts[keys[i]! + 1]!++;
  for (let k = 0; k < keyCount; k++) starts[k + 1]! += starts[k]!;
  return starts;
}

/** A rank of 255 or more is this byte, its excess over 255 a varint after the bytes. */
const ESCAPE = 255;

/**
 * Size of {@link writeCapped}'s bytes: ranks are mostly small, and one byte per rank
 * (rather than byte planes, which split a large alphabet's ranks in two) lets the
 * codec see each rank whole.
 */
function cappedSize(values: ArrayLike<number>): number {
  let escapes = 0;
  let extra = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v >= ESCAPE) {
      escapes++;
      extra += varintSize(v - ESCAPE);
    }
  }
  return values.length + varintSize(escapes) + extra;
}

/** Writes `[u8 min(v, 255) × n][varint e][e varints of v − 255, in order]`. */
function writeCapped(values: ArrayLike<number>, out: Uint8Array, at: number): number {
  let escapes = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    out[at + i] = v >= ESCAPE ? ESCAPE : v;
    if (v >= ESCAPE) escapes++;
  }
  let pos = writeVarint(out, at + values.length, escapes);
  for (let i = 0; i < values.length; i++) {
    if (values[i]! >= ESCAPE) pos = writeVarint(out, pos, values[i]! - ESCAPE);
  }
  return pos;
}

/**
 * The escape bytes among the first `to`: a function of its own, as is
 * {@link nextEscape}, so that V8, which optimizes a long scan in the middle of it
 * (OSR), does not leave that code at `readCapped`'s next lines, which had not run
 * yet (no feedback: a deopt a block).
 */
function escapesBefore(bytes: Uint8Array, to: number): number {
  let escapes = 0;
  for (let i = 0; i < to; i++) if (bytes[i] === ESCAPE) escapes++;
  return escapes;
}

/** The first escape byte at or after `from` (the caller knows there is one). */
function nextEscape(bytes: Uint8Array, from: number): number {
  let i = from;
  while (bytes[i] !== ESCAPE) i++;
  return i;
}

/**
 * Reads what {@link writeCapped} wrote for `count` values, or only the first `keep`
 * of them (the bytes and every escape are read past either way; the count of escapes
 * is then checked against those kept only).
 */
function readCapped(
  reader: ByteReader,
  count: number,
  what: string,
  field: string,
  keep = count,
): Uint32Array {
  const bytes = reader.bytes(count, what);
  const values = new Uint32Array(keep < count ? bytes.subarray(0, keep) : bytes);
  const kept = values.length;
  const escapes = escapesBefore(bytes, kept);
  const at = reader.offset;
  const stored = reader.varint(`${what} escapes`);
  if (kept < count ? stored < escapes : stored !== escapes) {
    throw new FormatError(
      "CORRUPT",
      `Cannot decode ${what}: expected ${escapes} escaped values, found ${stored}`,
      { column: field, offset: at },
    );
  }
  let i = 0;
  for (let e = 0; e < stored; e++) {
    const excess = reader.varint(`${what} escape`);
    if (excess > 0xffffffff - ESCAPE) {
      throw new FormatError("CORRUPT", `Cannot decode ${what}: a rank past 2^32`, {
        column: field,
        offset: reader.offset,
      });
    }
    if (e >= escapes) continue;
    i = nextEscape(bytes, i);
    values[i++] = ESCAPE + excess;
  }
  return values;
}

/** Key ids of the rows, numbered from 0 in order of first appearance, and their count. */
type Keys = { ids: Int32Array; count: number };

/** Every row under one key: `freq_rank`. */
function oneKey(length: number): Keys {
  return { ids: new Int32Array(length), count: length > 0 ? 1 : 0 };
}

function encodeKeyed(column: Column, context: EncodeContext): Uint8Array | null {
  const n = column.values.length;
  // The ids `keyIds(...depKeys(...))` gives, from string dependencies' codes when
  // they have them (`coded_strings.ts`), as the decoder numbers them.
  return encode(ID, column, context.field, depKeyIds(ID, context.deps, n, context.field, true));
}

function encodeOneKey(column: Column, context: EncodeContext): Uint8Array | null {
  const n = column.values.length;
  return encode(FREQ_RANK_ID, column, context.field, oneKey(n), n / 2);
}

/**
 * Encodes `column` under `keys`; null when it has more than `maxValues` distinct
 * values (a column of mostly unique values gains nothing from ranks).
 */
function encode(
  id: string,
  column: Column,
  field: Field,
  keying: Keys,
  maxValues = Infinity,
): Uint8Array | null {
  const { ids: keys, count: keyCount } = keying;
  const col = expectColumn(id, column, KEYED) as
    | (BigIntColumn & { type: "int64" | "date" })
    | (StringColumn & { type: "string" });
  const n = col.values.length;
  // `denseIds` of the values (the same ids), from the strings' codes or through a
  // table of the ints when they allow it, with no hashing per row.
  const { ids: valueIds, count: valueCount } = col.type === "string"
    ? textIds(col.values)
    : intIds(col.values);
  if (valueCount > maxValues) return null;
  // The slot of each (key, value) pair listed so far.
  const slotOf = new Map<number, number>();
  const lists = new KeyLists();
  const starts = groupStarts(keys, keyCount);
  const cursor = starts.slice(0, keyCount);
  const ranks = new Uint32Array(n);
  const newRanks: number[] = [];
  // The whole block's count-sorted list (one key, 0), and each value's slot in it.
  const all = new KeyLists();
  const allSlot = new Int32Array(valueCount).fill(-1);
  const firstRow = new Int32Array(valueCount);
  for (let i = 0; i < n; i++) {
    const key = keys[i]!;
    const v = valueIds[i]!;
    const pair = key * valueCount + v;
    const slot = slotOf.get(pair);
    let rank = 0;
    if (slot !== undefined) {
      const index = lists.indexOf(slot);
      rank = index + 1;
      lists.hit(key, index);
    } else {
      slotOf.set(pair, lists.add(key, v));
      newRanks.push(allSlot[v]! < 0 ? 0 : all.indexOf(allSlot[v]!) + 1);
    }
    ranks[cursor[key]!++] = rank;
    if (allSlot[v]! < 0) {
      allSlot[v] = all.add(0, v);
      firstRow[v] = i;
    } else all.hit(0, all.indexOf(allSlot[v]!));
  }
  const dictRows = Array.from(firstRow);
  const head = varintSize(n) + varintSize(valueCount) + varintSize(newRanks.length);
  const tail = cappedSize(newRanks) + cappedSize(ranks);
  let out: Uint8Array;
  let at: number;
  if (col.type === "string") {
    const plan = planTexts(dictRows.map((row) => col.values[row]!), field.name);
    out = new Uint8Array(head + plan.size + tail);
    at = writeVarint(out, 0, n);
    at = writeVarint(out, at, valueCount);
    at = writeTexts(plan, out, at);
  } else {
    const src = wordsOf(col.values);
    const words = new Uint32Array(2 * valueCount);
    for (let d = 0; d < valueCount; d++) {
      words[2 * d] = src[2 * dictRows[d]!]!;
      words[2 * d + 1] = src[2 * dictRows[d]! + 1]!;
    }
    zigzagInPlace(words);
    const width = planeWidth(words);
    out = new Uint8Array(head + planesSize(words, width) + tail);
    at = writeVarint(out, 0, n);
    at = writeVarint(out, at, valueCount);
    at = writePlanes(words, width, out, at);
  }
  at = writeVarint(out, at, newRanks.length);
  at = writeCapped(newRanks, out, at);
  writeCapped(ranks, out, at);
  return out;
}

function keyedEntries(bytes: Uint8Array, length: number, context: DecodeContext): Entries {
  // Every row's key places the ranks (they are grouped by key): the keys of all rows
  // are needed even for a prefix, which then only stops the last loop early.
  const rows = rowsToDecode(length, context.prefix);
  return decode(ID, bytes, length, rows, context.field, false, () => {
    return depKeyIds(ID, context.deps, length, context.field, false);
  });
}

function oneKeyEntries(bytes: Uint8Array, length: number, context: DecodeContext): Entries {
  // One key: the ranks are in row order, so a prefix of the rows needs a prefix of them.
  const rows = rowsToDecode(length, context.prefix);
  return decode(FREQ_RANK_ID, bytes, length, rows, context.field, true, () => oneKey(rows));
}

/**
 * The rows' values under one key (`freq_rank`), on typed arrays: the key's list and
 * the whole block's are then the same list, so one is kept. −1 when the ranks do
 * anything but what an encoder writes (a rank past the list, a new pair naming a
 * value already listed, more new values than the dictionary holds): the general loop
 * then decodes the block again and reports the problem as it always has.
 *
 * Fills `valueOfRow` (one entry per row decoded) and returns the count of new pairs
 * read (each new pair is a new value here, so it is also the count of values used).
 * The loop is alone in this function, and returns a number, so that V8, which
 * optimizes it in the middle of its first long loop (OSR), finds nothing after the
 * loop that never ran: with the object it returned, the optimized code left at that
 * object for want of feedback, and again on later chunks (17 deopts a thaw of
 * flights-3m).
 */
function oneKeyValues(
  ranks: Uint32Array,
  newRanks: Uint32Array,
  newCount: number,
  valueCount: number,
  valueOfRow: Uint32Array,
): number {
  // The list by position: its value and that value's count (never increasing down it).
  const valueAt = new Uint32Array(valueCount);
  const countAt = new Uint32Array(valueCount);
  const rows = valueOfRow.length;
  let listed = 0;
  for (let i = 0; i < rows; i++) {
    const rank = ranks[i]!;
    if (rank === 0) {
      if (listed >= newCount || listed >= valueCount || newRanks[listed] !== 0) return -1;
      valueAt[listed] = listed;
      countAt[listed] = 1;
      valueOfRow[i] = listed++;
      continue;
    }
    if (rank > listed) return -1;
    // A hit: the value's count grows by one and it swaps places with the first value
    // of the list that had its old count (as `KeyLists.hit`).
    const index = rank - 1;
    const v = valueAt[index]!;
    const count = countAt[index]!;
    countAt[index] = count + 1;
    valueOfRow[i] = v;
    if (index === 0 || countAt[index - 1]! > count) continue;
    let lo = 0;
    let hi = index;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (countAt[mid]! > count) lo = mid + 1;
      else hi = mid;
    }
    const other = valueAt[lo]!;
    valueAt[lo] = v;
    countAt[lo] = count + 1;
    valueAt[index] = other;
    countAt[index] = count;
  }
  return listed;
}

/**
 * Decodes the first `rows` rows of a block of `id` (all `length` of them, or a prefix
 * a caller asked for: then only the dictionary values, new pairs and, when `inOrder`
 * (one key), the ranks those rows use are put together, and the checks that need
 * every row are skipped); `keysOf` gives the rows' keys once the bytes are read (at
 * least `rows` of them; all `length` unless `inOrder`).
 */
function decode(
  id: string,
  bytes: Uint8Array,
  length: number,
  rows: number,
  field: Field,
  inOrder: boolean,
  keysOf: () => Keys,
): Entries {
  const prefix = rows < length;
  checkDecodeField(id, field, matches(field));
  const what = `${id} block of column '${field.name}'`;
  const reader = openBlock(id, bytes, length, field);
  const valueCount = reader.varint("dictionary size");
  if (valueCount > length) {
    throw new FormatError(
      "CORRUPT",
      `Cannot decode ${what}: expected at most ${length} dictionary values, found ${valueCount}`,
      { column: field.name, offset: reader.offset },
    );
  }
  const isString = field.type === "string";
  const texts = isString ? readTexts(reader, valueCount, `dictionary of ${what}`) : null;
  // The rows of a prefix use only the values that first appear in them.
  const ints = isString
    ? null
    : readPlanes(reader, valueCount, prefix ? Math.min(valueCount, rows) : valueCount);
  if (ints !== null) unzigzagInPlace(ints);
  const newCount = reader.varint("new pair count");
  if (newCount > length) {
    throw new FormatError(
      "CORRUPT",
      `Cannot decode ${what}: expected at most ${length} new pairs, found ${newCount}`,
      { column: field.name, offset: reader.offset },
    );
  }
  const idsAt = reader.offset;
  const newRanks = readCapped(
    reader,
    newCount,
    `new pairs of ${what}`,
    field.name,
    prefix ? Math.min(newCount, rows) : newCount,
  );
  const ranksAt = reader.offset;
  const ranks = readCapped(
    reader,
    length,
    `ranks of ${what}`,
    field.name,
    prefix && inOrder ? rows : length,
  );
  reader.end();
  if (inOrder) {
    const fastRows = new Uint32Array(rows);
    const used = oneKeyValues(ranks, newRanks, newCount, valueCount, fastRows);
    if (used >= 0) {
      if (!prefix && (used !== newCount || used !== valueCount)) {
        throw new FormatError(
          "CORRUPT",
          `Cannot decode ${what}: expected ${newCount} new pairs and ${valueCount} values, found ${used} and ${used}`,
          { column: field.name, offset: idsAt },
        );
      }
      return { dictionary: texts ?? ints!, indexOf: fastRows };
    }
  }
  const { ids: keys, count: keyCount } = keysOf();
  const starts = groupStarts(keys, keyCount);
  const cursor = starts.slice(0, keyCount);
  const lists = new KeyLists();
  const all = new KeyLists();
  const allSlot = new Int32Array(valueCount).fill(-1);
  const valueOfRow = new Uint32Array(rows);
  let next = 0;
  let nextValue = 0;
  for (let i = 0; i < rows; i++) {
    const key = keys[i]!;
    const at = cursor[key]!++;
    const rank = ranks[at]!;
    const listed = lists.lists[key]?.length ?? 0;
    if (rank > listed) {
      throw new FormatError(
        "CORRUPT",
        `Cannot decode ${what}: expected a rank of at most ${listed} at row ${i}, found ${rank}`,
        { column: field.name, offset: ranksAt },
      );
    }
    let v: number;
    if (rank === 0) {
      const known = all.lists[0]?.length ?? 0;
      const g = next < newCount ? newRanks[next]! : -1;
      if (g < 0 || g > known || (g === 0 && nextValue >= valueCount)) {
        throw new FormatError(
          "CORRUPT",
          next >= newCount
            ? `Cannot decode ${what}: expected more than ${newCount} new pairs`
            : `Cannot decode ${what}: expected a value rank of at most ${known} (or a new value) at row ${i}`,
          { column: field.name, offset: idsAt },
        );
      }
      next++;
      v = g === 0 ? nextValue++ : all.lists[0]![g - 1]!;
      lists.add(key, v);
    } else {
      v = lists.lists[key]![rank - 1]!;
      lists.hit(key, rank - 1);
    }
    if (allSlot[v]! < 0) allSlot[v] = all.add(0, v);
    else all.hit(0, all.indexOf(allSlot[v]!));
    valueOfRow[i] = v;
  }
  if (!prefix && (next !== newCount || nextValue !== valueCount)) {
    throw new FormatError(
      "CORRUPT",
      `Cannot decode ${what}: expected ${newCount} new pairs and ${valueCount} values, found ${next} and ${nextValue}`,
      { column: field.name, offset: idsAt },
    );
  }
  return { dictionary: texts ?? ints!, indexOf: valueOfRow };
}

/**
 * Per-key frequency ranks, grouped by key, for a column predicted by one or two others.
 *
 * @example A destination that depends on the origin
 * ```ts
 * import assert from "node:assert/strict";
 * import { keyedFreq } from "./keyed_freq.ts";
 * const field = { name: "destination", type: "string", nullable: false } as const;
 * const origin = { type: "string" as const, values: ["OSL", "JFK", "OSL", "OSL"], validity: null };
 * const destination = { type: "string" as const, values: ["BGO", "LAX", "TRD", "BGO"], validity: null };
 * const bytes = keyedFreq.encode(destination, { field, deps: [origin], warn: () => {} })!;
 * const back = keyedFreq.decode(bytes, 4, { field, deps: [origin] });
 * assert.deepEqual(back.values, destination.values);
 * ```
 */
export const keyedFreq: Predictor = Object.freeze(
  {
    id: ID,
    lossy: false,
    usesDeps: true,
    codedDeps: true,
    matches,
    encode: encodeKeyed,
    decode: (bytes, length, context) =>
      columnOfEntries(context.field, keyedEntries(bytes, length, context)),
    decodeCoded: (bytes, length, context) => codesOfEntries(keyedEntries(bytes, length, context)),
  } satisfies Predictor,
);

/**
 * Frequency ranks with every row under one key (`freq_rank`): a column of many
 * repeated values — more than `category_u8` holds — as ranks of a count-sorted
 * list, so the common values get the small bytes. Declines a block where over
 * half the rows hold distinct values.
 *
 * @example Distances that repeat
 * ```ts
 * import assert from "node:assert/strict";
 * import { freqRank } from "./keyed_freq.ts";
 * const field = { name: "distance", type: "int64", nullable: false } as const;
 * const distance = { type: "int64", values: BigInt64Array.of(746n, 199n, 746n, 746n), validity: null } as const;
 * const bytes = freqRank.encode(distance, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(freqRank.decode(bytes, 4, { field, deps: [] }).values, distance.values);
 * ```
 */
export const freqRank: Predictor = Object.freeze(
  {
    id: FREQ_RANK_ID,
    lossy: false,
    usesDeps: false,
    matches,
    encode: encodeOneKey,
    decode: (bytes, length, context) =>
      columnOfEntries(context.field, oneKeyEntries(bytes, length, context)),
    decodeCoded: (bytes, length, context) => codesOfEntries(oneKeyEntries(bytes, length, context)),
  } satisfies Predictor,
);
