/**
 * The `keyed_rank` predictor (int64, date, string; `usesDeps: true`):
 * conditions a column on one or two other columns of the same chunk.
 *
 * For each row, the key is the tuple of the dependency columns' values at
 * that row. Each key keeps a move-to-front (MTF) list of the values this
 * column had under it. A row is coded as its value's rank in its key's list
 * (1 = most recent), or 0 for a value not in the list, which then goes to the
 * literal stream; either way the value moves to the front. When a column is a
 * function of its dependencies (flight `distance` given `origin` and
 * `destination`), every rank is 0 or 1 and the block compresses to almost
 * nothing; when it is merely correlated (`destination` given `origin`), ranks
 * stay small.
 *
 * Rank stream: one byte per row. Each list is capped at 255 entries (the
 * least recently used value falls off the end), so ranks are 0..255 and need
 * no escape; a value that fell off simply comes back as a new literal.
 *
 * Layout (FORMAT.md §4): `[varint n][u8 rank × n][literals]`, with one literal
 * per rank 0, in row order: for strings a text stream (`raw_text`'s lengths
 * then UTF-8), for integers `[u8 width][byte planes of zigzag(v)]`.
 * Decoding refuses a rank above its key's list length.
 *
 * Keys (`_keys.ts`): the tuple of the dependency values at a row, numbered
 * densely, so two different tuples never share a list.
 *
 * Encoding a value that is not in a long list skips the scan thanks to a set
 * of the (key, value) pairs currently listed, so the cost per row stays near
 * one `Map` lookup per column even when every list is full.
 *
 * The reader must pass the dependencies exactly as it will decode them: for a
 * quantized float dependency, the writer must key on the quantized values.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { ByteReader } from "../_bytes.ts";
import {
  type BigIntColumn,
  type Column,
  type Field,
  sliceColumn,
  type StringColumn,
} from "../column.ts";
import { rowsOf } from "../coded_strings.ts";
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

const ID = "keyed_rank";
const KEYED: ReadonlySet<Field["type"]> = new Set(["int64", "date", "string"]);
/** Longest MTF list per key, so that every rank fits one byte. */
const MAX_LIST = 255;
/** Lists shorter than this are scanned without asking the presence set first. */
const SHORT_LIST = 16;

function matches(field: Field): boolean {
  return KEYED.has(field.type);
}

function encode(column: Column, context: EncodeContext): Uint8Array {
  const col = expectColumn(ID, column, KEYED) as
    | (BigIntColumn & { type: "int64" | "date" })
    | (StringColumn & { type: "string" });
  const n = col.values.length;
  // The ids `keyIds(...depKeys(...))` gives, from string dependencies' codes when
  // they have them (as the decoder numbers them); a value's id only names it (ranks
  // depend on which rows are equal), so codes number string values too.
  const keys = depKeyIds(ID, context.deps, n, context.field, true).ids;
  const { ids: valueIds, count: valueCount } = col.type === "string"
    ? textIds(col.values)
    : intIds(col.values);
  const ranks = new Uint8Array(n);
  const literalRows: number[] = [];
  rankRows(keys, valueIds, valueCount, ranks, literalRows);
  const head = varintSize(n);
  if (col.type === "string") {
    const literals = literalRows.map((row) => col.values[row]!);
    const plan = planTexts(literals, context.field.name);
    const out = new Uint8Array(head + n + plan.size);
    writeVarint(out, 0, n);
    out.set(ranks, head);
    writeTexts(plan, out, head + n);
    return out;
  }
  const src = wordsOf(col.values);
  const words = new Uint32Array(2 * literalRows.length);
  for (let l = 0; l < literalRows.length; l++) {
    const row = literalRows[l]!;
    words[2 * l] = src[2 * row]!;
    words[2 * l + 1] = src[2 * row + 1]!;
  }
  zigzagInPlace(words);
  const width = planeWidth(words);
  const out = new Uint8Array(head + n + planesSize(words, width));
  writeVarint(out, 0, n);
  out.set(ranks, head);
  writePlanes(words, width, out, head + n);
  return out;
}

/**
 * The move-to-front ranks of `encode`: each row's rank in its key's list into `ranks`
 * (0 for a literal, whose row goes to `literalRows`). Alone, so that V8's optimized
 * code, entered in the middle of the loop (OSR), has nothing after the loop it never
 * ran (it had left at the literals' encoding, for want of feedback, once a chunk).
 */
function rankRows(
  keys: Int32Array,
  valueIds: Int32Array,
  valueCount: number,
  ranks: Uint8Array,
  literalRows: number[],
): void {
  const n = ranks.length;
  const lists: number[][] = [];
  // The (key, value) pairs of every list of SHORT_LIST entries or more, so a
  // new value skips the scan of a long list. Lists never shrink, so a list is
  // tracked from the moment it reaches SHORT_LIST. Only a hint: the scan
  // decides, and the decoder mirrors whatever the encoder did, so even an
  // inexact pair number (blocks over 94 million rows) costs compression, never
  // correctness.
  const present = new Set<number>();
  for (let i = 0; i < n; i++) {
    const key = keys[i]!;
    const v = valueIds[i]!;
    const list = lists[key] ??= [];
    const len = list.length;
    const pair = key * valueCount + v;
    let j = len;
    if (len < SHORT_LIST || present.has(pair)) {
      j = 0;
      while (j < len && list[j] !== v) j++;
    }
    if (j < len) {
      ranks[i] = j + 1;
      for (let k = j; k > 0; k--) list[k] = list[k - 1]!;
      list[0] = v;
      continue;
    }
    literalRows.push(i);
    if (len < SHORT_LIST) {
      list.unshift(v);
      if (len + 1 === SHORT_LIST) { for (const x of list) present.add(key * valueCount + x); }
    } else {
      if (len === MAX_LIST) present.delete(key * valueCount + list.pop()!);
      list.unshift(v);
      present.add(pair);
    }
  }
}

/**
 * The zero ranks (literals) among the first `to`: a function of its own so that
 * V8, which optimizes a long count in the middle of it (OSR), does not leave that
 * code at `decode`'s next lines, which had not run yet (no feedback: a deopt a chunk).
 */
function zerosBefore(ranks: Uint8Array, to: number): number {
  let zeros = 0;
  for (let i = 0; i < to; i++) if (ranks[i] === 0) zeros++;
  return zeros;
}

function entries(bytes: Uint8Array, length: number, context: DecodeContext): Entries {
  const { field } = context;
  checkDecodeField(ID, field, matches(field));
  const what = `${ID} block of column '${field.name}'`;
  const reader = openBlock(ID, bytes, length, field);
  const ranksAt = reader.offset;
  const ranks = reader.bytes(length, "ranks");
  // A caller reading the first `rows` rows only: their ranks and keys, and the
  // literals they take (the first ones, in row order), are all that is decoded.
  const rows = rowsToDecode(length, context.prefix);
  const isString = field.type === "string";
  let literalCount = 0;
  let ints: Uint32Array | null = null;
  if (rows < length && !isString) {
    // The literal count follows from the planes' size: no pass over every rank.
    const used = zerosBefore(ranks, rows);
    const stored = literalCountOfPlanes(bytes, reader, what, field.name);
    if (used > stored) {
      throw new FormatError(
        "CORRUPT",
        `Cannot decode ${what}: expected at least ${used} literals, found ${stored}`,
        { column: field.name, offset: reader.offset },
      );
    }
    ints = readPlanes(reader, stored, used);
  } else {
    literalCount = zerosBefore(ranks, length);
  }
  const texts = isString ? readTexts(reader, literalCount, `literals of ${what}`) : null;
  ints ??= isString ? null : readPlanes(reader, literalCount);
  reader.end();
  if (ints !== null) unzigzagInPlace(ints);
  const deps = rows < length
    ? context.deps.map((d) => sliceColumn(rowsOf(d), 0, rows))
    : context.deps;
  const { ids: keys, count: keyCount } = depKeyIds(ID, deps, rows, field, false);
  const lists: number[][] = [];
  // Each key's front value (-1: its list is empty): a rank of 1, the usual rank of a
  // column its keys determine, reads it and moves nothing.
  const front = new Int32Array(keyCount).fill(-1);
  const literalOfRow = new Uint32Array(rows);
  let next = 0;
  for (let i = 0; i < rows; i++) {
    const key = keys[i]!;
    const r = ranks[i]!;
    if (r === 1 && front[key]! >= 0) {
      literalOfRow[i] = front[key]!;
      continue;
    }
    const list = lists[key] ??= [];
    let lit: number;
    if (r === 0) {
      lit = next++;
      if (list.length === MAX_LIST) list.pop();
      list.unshift(lit);
    } else {
      if (r > list.length) {
        throw new FormatError(
          "CORRUPT",
          `Cannot decode ${what}: expected a rank of at most ${list.length} at row ${i}, found ${r}`,
          { column: field.name, offset: ranksAt + i },
        );
      }
      lit = list[r - 1]!;
      for (let k = r - 1; k > 0; k--) list[k] = list[k - 1]!;
      list[0] = lit;
    }
    front[key] = lit;
    literalOfRow[i] = lit;
  }
  return { dictionary: texts ?? ints!, indexOf: literalOfRow };
}

/**
 * How many integer literals the byte planes at the reader hold (`[u8 width][width ×
 * count bytes]`, the last field of `block`), without moving it.
 */
function literalCountOfPlanes(
  block: Uint8Array,
  reader: ByteReader,
  what: string,
  column: string,
): number {
  const rest = reader.remaining;
  const width = rest > 0 ? block[reader.offset]! : 0;
  if (rest < 1 || (width === 0 ? rest !== 1 : (rest - 1) % width !== 0)) {
    throw new FormatError(
      "CORRUPT",
      `Cannot decode ${what}: ${rest} bytes of literals are not a byte-plane width and whole planes`,
      { column, offset: reader.offset },
    );
  }
  return width === 0 ? 0 : (rest - 1) / width;
}

/**
 * Per-key move-to-front ranks, for a column predicted by one or two others.
 *
 * @example A distance that depends on the route
 * ```ts
 * import assert from "node:assert/strict";
 * import { keyedRank } from "./keyed_rank.ts";
 * const field = { name: "distance", type: "int64", nullable: false } as const;
 * const origin = { type: "string" as const, values: ["OSL", "JFK", "OSL"], validity: null };
 * const distance = { type: "int64", values: BigInt64Array.of(3690n, 3690n, 3690n), validity: null } as const;
 * const bytes = keyedRank.encode(distance, { field, deps: [origin], warn: () => {} })!;
 * const back = keyedRank.decode(bytes, 3, { field, deps: [origin] });
 * assert.deepEqual(back.values, distance.values);
 * ```
 */
export const keyedRank: Predictor = Object.freeze(
  {
    id: ID,
    lossy: false,
    usesDeps: true,
    prefixDeps: true,
    codedDeps: true,
    matches,
    encode,
    decode: (bytes, length, context) =>
      columnOfEntries(context.field, entries(bytes, length, context)),
    decodeCoded: (bytes, length, context) => codesOfEntries(entries(bytes, length, context)),
  } satisfies Predictor,
);
