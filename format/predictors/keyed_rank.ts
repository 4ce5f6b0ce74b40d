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
 * Keys: each dependency value becomes a primitive token: strings themselves;
 * bools 0/1; integers their exact `number` when within ±2^53, else the string
 * `"<high>:<low>"` of their two 32-bit halves; floats their `number` unless
 * NaN or ±0, else the string of their bit halves (so NaN payloads and -0 stay
 * distinct). All tokens of one column come from one type and a `Map` never
 * equates a number with a string, so equal tokens mean equal values. Each
 * dependency's tokens are numbered densely (one `Map` lookup per row), and a
 * pair of numbers is combined arithmetically, so two different tuples never
 * share a list and no separator can collide. A null dependency slot
 * (validity 0) gets the token of its type's zero, whatever the slot holds.
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
import type { BigIntColumn, Column, Field, StringColumn } from "../column.ts";
import { FormatError } from "../errors.ts";
import { checkDecodeField, expectColumn, intColumn, openBlock } from "./_common.ts";
import {
  bigIntsFromWords,
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
import { planTexts, readTexts, writeTexts } from "./_text.ts";
import type { DecodeContext, EncodeContext, Predictor } from "./predictor.ts";

const ID = "keyed_rank";
const KEYED: ReadonlySet<Field["type"]> = new Set(["int64", "date", "string"]);
/** Longest MTF list per key, so that every rank fits one byte. */
const MAX_LIST = 255;
/** Lists shorter than this are scanned without asking the presence set first. */
const SHORT_LIST = 16;
const TWO_32 = 4294967296;
/** High words in `[-2^21, 2^21)`: the int64 is within ±2^53, exact as a number. */
const SAFE_HI = 0x200000;

type Token = string | number;

function matches(field: Field): boolean {
  return KEYED.has(field.type);
}

function intTokens(values: BigInt64Array, validity: Uint8Array | null): Token[] {
  const words = wordsOf(values);
  const out = new Array<Token>(values.length);
  for (let i = 0; i < values.length; i++) {
    if (validity !== null && validity[i] === 0) {
      out[i] = 0;
      continue;
    }
    const lo = words[2 * i]!;
    const hi = words[2 * i + 1]! | 0;
    out[i] = hi >= -SAFE_HI && hi < SAFE_HI ? hi * TWO_32 + lo : `${hi}:${lo}`;
  }
  return out;
}

function floatTokens(values: Float64Array, validity: Uint8Array | null): Token[] {
  const words = wordsOf(values);
  const out = new Array<Token>(values.length);
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    if (validity !== null && validity[i] === 0) out[i] = "0:0";
    else if (x === x && x !== 0) out[i] = x;
    else out[i] = `${words[2 * i + 1]}:${words[2 * i]}`;
  }
  return out;
}

/** One token per row of a dependency column. */
function depTokens(dep: Column): readonly Token[] {
  const { validity } = dep;
  switch (dep.type) {
    case "string":
    case "json":
      if (validity === null) return dep.values;
      return dep.values.map((v, i) => (validity[i] === 0 ? "" : v));
    case "decimal":
      if (dep.values instanceof BigInt64Array) return intTokens(dep.values, validity);
      return dep.values.map((v, i) => (validity !== null && validity[i] === 0 ? "0" : String(v)));
    case "bool": {
      const out = new Array<Token>(dep.values.length);
      for (let i = 0; i < out.length; i++) {
        out[i] = (validity === null || validity[i] !== 0) && dep.values[i] !== 0 ? 1 : 0;
      }
      return out;
    }
    case "float64":
      return floatTokens(dep.values, validity);
    default:
      return intTokens(dep.values, validity);
  }
}

/** Checks the dependencies and returns their tokens (the second is null for one dependency). */
function depKeys(
  deps: readonly Column[],
  length: number,
  field: Field,
  encoding: boolean,
): [readonly Token[], readonly Token[] | null] {
  const code = encoding ? "BAD_ARGUMENT" : "CORRUPT";
  const action = encoding ? "encode" : "decode";
  if (deps.length !== 1 && deps.length !== 2) {
    throw new FormatError(
      code,
      `Cannot ${action} ${ID} block of column '${field.name}': expected 1 or 2 dependency columns, found ${deps.length}`,
      { column: field.name },
    );
  }
  for (const [d, dep] of deps.entries()) {
    if (dep.values.length !== length) {
      throw new FormatError(
        code,
        `Cannot ${action} ${ID} block of column '${field.name}': expected dependency ${d} to have ${length} rows, found ${dep.values.length}`,
        { column: field.name },
      );
    }
  }
  return [depTokens(deps[0]!), deps[1] === undefined ? null : depTokens(deps[1])];
}

/** Numbers each distinct token from 0, in order of first appearance. */
function denseIds(tokens: readonly Token[]): { ids: Int32Array; count: number } {
  const idOf = new Map<Token, number>();
  const ids = new Int32Array(tokens.length);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    let id = idOf.get(t);
    if (id === undefined) {
      id = idOf.size;
      idOf.set(t, id);
    }
    ids[i] = id;
  }
  return { ids, count: idOf.size };
}

/**
 * One key id per row, numbered from 0 in order of first appearance: rows with
 * the same dependency tuple get the same id. With two dependencies the pair of
 * their dense ids `(x, y)` is numbered through `x * count(y) + y`, exact below
 * 2^53 (blocks under 94 million rows); encoder and decoder derive the same ids
 * either way, so correctness never depends on it.
 */
function keyIds(
  a: readonly Token[],
  b: readonly Token[] | null,
): { ids: Int32Array; count: number } {
  const first = denseIds(a);
  if (b === null) return first;
  const second = denseIds(b);
  const n = a.length;
  const wide = second.count;
  const ids = new Int32Array(n);
  let count = 0;
  if (first.count * wide <= 4 * n + 1024) {
    // A table proportional to the block: no hashing at all.
    const slot = new Int32Array(first.count * wide).fill(-1);
    for (let i = 0; i < n; i++) {
      const pair = first.ids[i]! * wide + second.ids[i]!;
      let id = slot[pair]!;
      if (id < 0) {
        id = count++;
        slot[pair] = id;
      }
      ids[i] = id;
    }
    return { ids, count };
  }
  const idOf = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const pair = first.ids[i]! * wide + second.ids[i]!;
    let id = idOf.get(pair);
    if (id === undefined) {
      id = count++;
      idOf.set(pair, id);
    }
    ids[i] = id;
  }
  return { ids, count };
}

function encode(column: Column, context: EncodeContext): Uint8Array {
  const col = expectColumn(ID, column, KEYED) as
    | (BigIntColumn & { type: "int64" | "date" })
    | (StringColumn & { type: "string" });
  const n = col.values.length;
  const [a, b] = depKeys(context.deps, n, context.field, true);
  const keys = keyIds(a, b).ids;
  const { ids: valueIds, count: valueCount } = denseIds(
    col.type === "string" ? col.values : intTokens(col.values, null),
  );
  const lists: number[][] = [];
  // The (key, value) pairs of every list of SHORT_LIST entries or more, so a
  // new value skips the scan of a long list. Lists never shrink, so a list is
  // tracked from the moment it reaches SHORT_LIST. Only a hint: the scan
  // decides, and the decoder mirrors whatever the encoder did, so even an
  // inexact pair number (blocks over 94 million rows) costs compression, never
  // correctness.
  const present = new Set<number>();
  const ranks = new Uint8Array(n);
  const literalRows: number[] = [];
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

function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
  const { field } = context;
  checkDecodeField(ID, field, matches(field));
  const what = `${ID} block of column '${field.name}'`;
  const reader = openBlock(ID, bytes, length, field);
  const ranksAt = reader.offset;
  const ranks = reader.bytes(length, "ranks");
  let literalCount = 0;
  for (let i = 0; i < length; i++) if (ranks[i] === 0) literalCount++;
  const isString = field.type === "string";
  const texts = isString ? readTexts(reader, literalCount, `literals of ${what}`) : null;
  const ints = isString ? null : readPlanes(reader, literalCount);
  reader.end();
  if (ints !== null) unzigzagInPlace(ints);
  const [a, b] = depKeys(context.deps, length, field, false);
  const keys = keyIds(a, b).ids;
  const lists: number[][] = [];
  const literalOfRow = new Uint32Array(length);
  let next = 0;
  for (let i = 0; i < length; i++) {
    const list = lists[keys[i]!] ??= [];
    const r = ranks[i]!;
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
    literalOfRow[i] = lit;
  }
  if (texts !== null) {
    const values = new Array<string>(length);
    for (let i = 0; i < length; i++) values[i] = texts[literalOfRow[i]!]!;
    return { type: "string", values, validity: null };
  }
  const lits = ints!;
  const words = new Uint32Array(2 * length);
  for (let i = 0; i < length; i++) {
    const l = literalOfRow[i]!;
    words[2 * i] = lits[2 * l]!;
    words[2 * i + 1] = lits[2 * l + 1]!;
  }
  return intColumn(field, bigIntsFromWords(words));
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
  { id: ID, lossy: false, usesDeps: true, matches, encode, decode } satisfies Predictor,
);
