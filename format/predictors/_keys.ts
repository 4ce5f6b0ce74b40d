/**
 * Keys of the conditioning predictors (`keyed_rank`, `keyed_freq`): the tuple of
 * one or two dependency columns' values at each row, numbered densely.
 *
 * Each dependency value becomes a primitive token: strings themselves; bools 0/1;
 * integers their exact `number` when within ±2^53, else the string
 * `"<high>:<low>"` of their two 32-bit halves; floats their `number` unless NaN
 * or ±0, else the string of their bit halves (so NaN payloads and -0 stay
 * distinct); float32/float16 their bit patterns. All tokens of one column come
 * from one type and a `Map` never equates a number with a string, so equal tokens
 * mean equal values. A null dependency slot gets the token of its type's zero,
 * whatever the slot holds. Key ids count from 0 in order of first appearance, so
 * encoder and decoder derive the same ids from the same dependency values.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import {
  type CodedStrings,
  codesOf,
  type DecodedColumn,
  rowCount,
  rowsOf,
  rowsOfCodes,
} from "../coded_strings.ts";
import type { Column, Field } from "../column.ts";
import { FormatError } from "../errors.ts";
import { intColumn } from "./_common.ts";
import { bigIntsFromWords, wordsOf } from "./_ints.ts";

const TWO_32 = 4294967296;
/** High words in `[-2^21, 2^21)`: the int64 is within ±2^53, exact as a number. */
const SAFE_HI = 0x200000;

/** A dependency value as a primitive a `Map` compares exactly. */
export type Token = string | number;

export function intTokens(values: BigInt64Array, validity: Uint8Array | null): Token[] {
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

function bitTokens(bits: Uint32Array | Uint16Array, validity: Uint8Array | null): Token[] {
  const out = new Array<Token>(bits.length);
  for (let i = 0; i < bits.length; i++) {
    out[i] = validity !== null && validity[i] === 0 ? 0 : bits[i]!;
  }
  return out;
}

/** One token per row of a dependency column. */
export function depTokens(dep: Column): readonly Token[] {
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
    case "float32":
      // Bit patterns: one token per distinct float32, NaN payloads and -0 apart.
      return bitTokens(
        new Uint32Array(dep.values.buffer, dep.values.byteOffset, dep.values.length),
        validity,
      );
    case "float16":
      return bitTokens(dep.values, validity);
    default:
      return intTokens(dep.values, validity);
  }
}

/** Checks the dependencies and returns their tokens (the second is null for one dependency). */
export function depKeys(
  id: string,
  deps: readonly Column[],
  length: number,
  field: Field,
  encoding: boolean,
): [readonly Token[], readonly Token[] | null] {
  checkDeps(id, deps, length, field, encoding);
  return [depTokens(deps[0]!), deps[1] === undefined ? null : depTokens(deps[1])];
}

/**
 * Checks the dependencies and returns the rows' key ids: what `keyIds(...depKeys(...))`
 * returns, but a string dependency a dictionary decoder built (`coded_strings.ts`) is
 * numbered from its codes, with no hashing of its strings per row.
 */
export function depKeyIds(
  id: string,
  deps: readonly DecodedColumn[],
  length: number,
  field: Field,
  encoding: boolean,
): { ids: Int32Array; count: number } {
  checkDeps(id, deps, length, field, encoding);
  if (deps[1] !== undefined) {
    const pairs = codedPairIds(deps[0]!, deps[1]);
    if (pairs !== null) return pairs;
  }
  const first = depIds(deps[0]!);
  return deps[1] === undefined ? first : pairIds(first, depIds(deps[1]), length);
}

/**
 * A coded dependency: its codes and dictionary, and the rows to check against them
 * (null for a `CodedColumn`, whose codes are its rows).
 */
interface CodedDep extends CodedStrings {
  values: readonly string[] | null;
}

/** A dependency's codes and dictionary, when it is a string column without nulls that has them. */
function codedOf(dep: DecodedColumn): CodedDep | null {
  if ((dep.type !== "string" && dep.type !== "json") || dep.validity !== null) return null;
  if ("coded" in dep) return { values: null, ...dep.coded };
  const coded = codesOf(dep.values);
  return coded === undefined ? null : { values: dep.values, ...coded };
}

/**
 * The key ids of two coded dependencies in one pass, straight from their codes: what
 * {@link keyIds} gives for their strings, since key ids number the distinct pairs in
 * order of first appearance, which any one-to-one naming of the pairs leaves the same,
 * and codes into dictionaries of distinct texts name them one to one. Null (the caller
 * then goes the general way) unless both have codes, both dictionaries hold distinct
 * texts, the table of code pairs stays proportional to the block, and every row is
 * its code's entry.
 */
function codedPairIds(
  a: DecodedColumn,
  b: DecodedColumn,
): { ids: Int32Array; count: number } | null {
  const ca = codedOf(a);
  const cb = codedOf(b);
  if (ca === null || cb === null) return null;
  const n = ca.codes.length;
  const wide = cb.dictionary.length;
  const room = ca.dictionary.length * wide;
  if (room > 4 * n + 1024) return null;
  if (new Set(ca.dictionary).size !== ca.dictionary.length) return null;
  if (new Set(cb.dictionary).size !== wide) return null;
  const ids = new Int32Array(n);
  const count = codedPairLoop(ca, cb, new Int32Array(room).fill(-1), ids);
  return count < 0 ? null : { ids, count };
}

/**
 * {@link codedPairIds}'s loop: fills `ids`, returns the count of pairs, or −1 when a
 * row is not its code's entry. Alone, and returning a number, so that V8's optimized
 * code (entered in the middle of the loop, OSR) has nothing after the loop it never
 * ran: it had left at the object `codedPairIds` returns, for want of feedback.
 */
function codedPairLoop(
  ca: CodedDep,
  cb: CodedDep,
  slot: Int32Array,
  ids: Int32Array,
): number {
  const { values: va, codes: xa, dictionary: da } = ca;
  const { values: vb, codes: xb, dictionary: db } = cb;
  const wide = db.length;
  const n = ids.length;
  let count = 0;
  for (let i = 0; i < n; i++) {
    const x = xa[i]!;
    const y = xb[i]!;
    if ((va !== null && va[i] !== da[x]) || (vb !== null && vb[i] !== db[y])) return -1;
    const pair = x * wide + y;
    let id = slot[pair]!;
    if (id < 0) {
      id = count++;
      slot[pair] = id;
    }
    ids[i] = id;
  }
  return count;
}

/**
 * {@link denseIds} of strings (the same ids): from their codes when they have them
 * (`coded_strings.ts`: a dictionary decoder's or the CSV reader's), with no hashing of
 * the rows whose value is their code's entry.
 */
export function textIds(values: readonly string[]): { ids: Int32Array; count: number } {
  const coded = codesOf(values);
  return coded === undefined ? denseIds(values) : codedIds(values, coded.codes, coded.dictionary);
}

/**
 * `denseIds(intTokens(values, null))` (the same ids): through a table indexed by
 * value when every value is within ±2^53 and their range is proportional to the
 * block, with no tokens and no hashing; else that way.
 */
export function intIds(values: BigInt64Array): { ids: Int32Array; count: number } {
  const n = values.length;
  const words = wordsOf(values);
  const range = new Float64Array(2);
  if (n === 0 || !intRange(words, n, range) || range[1]! - range[0]! > 4 * n + 1024) {
    return denseIds(intTokens(values, null));
  }
  const min = range[0]!;
  const slot = new Int32Array(range[1]! - min + 1).fill(-1);
  const ids = new Int32Array(n);
  const count = slotIds(words, min, slot, ids);
  return { ids, count };
}

/**
 * {@link intIds}'s first loop: the least and greatest of `n` int64 values (as 32-bit
 * words) into `range`; false when one is beyond ±2^53. Alone, and returning a boolean,
 * so that V8's optimized code, entered in the middle of the loop (OSR), has nothing
 * after the loop it never ran (it had left at `intIds`' object, for want of feedback).
 */
function intRange(words: Uint32Array, n: number, range: Float64Array): boolean {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const hi = words[2 * i + 1]! | 0;
    if (hi < -SAFE_HI || hi >= SAFE_HI) return false;
    const x = hi * TWO_32 + words[2 * i]!;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  range[0] = min;
  range[1] = max;
  return true;
}

/**
 * {@link intIds}' second loop (alone for the reason {@link intRange} is): numbers the
 * values in order of first appearance through `slot`, a table indexed by value −
 * `min`, into `ids`; returns how many there are.
 */
function slotIds(words: Uint32Array, min: number, slot: Int32Array, ids: Int32Array): number {
  const n = ids.length;
  let count = 0;
  for (let i = 0; i < n; i++) {
    const at = (words[2 * i + 1]! | 0) * TWO_32 + words[2 * i]! - min;
    let id = slot[at]!;
    if (id < 0) id = slot[at] = count++;
    ids[i] = id;
  }
  return count;
}

/** A dependency's dense ids (see {@link denseIds}): from its codes when it has them. */
function depIds(dep: DecodedColumn): { ids: Int32Array; count: number } {
  const coded = codedOf(dep);
  if (coded !== null) return codedIds(coded.values, coded.codes, coded.dictionary);
  return denseIds(depTokens(rowsOf(dep)));
}

/**
 * {@link denseIds} of strings known as codes into a dictionary: an id per code on its
 * first row, through the text (so two codes of equal texts share one id), the same ids
 * as the strings would get. A row whose value is not its code's entry is numbered
 * through its text too.
 */
function codedIds(
  values: readonly string[] | null,
  codes: Uint32Array,
  dictionary: readonly string[],
): { ids: Int32Array; count: number } {
  const idOf = new Map<Token, number>();
  const idOfCode = new Int32Array(dictionary.length).fill(-1);
  const n = codes.length;
  const ids = new Int32Array(n);
  const byText = (t: string): number => {
    let id = idOf.get(t);
    if (id === undefined) {
      id = idOf.size;
      idOf.set(t, id);
    }
    return id;
  };
  for (let i = 0; i < n; i++) {
    const c = codes[i]!;
    if (values !== null && values[i] !== dictionary[c]) {
      ids[i] = byText(values[i]!);
      continue;
    }
    let id = idOfCode[c]!;
    if (id < 0) id = idOfCode[c] = byText(dictionary[c]!);
    ids[i] = id;
  }
  return { ids, count: idOf.size };
}

function checkDeps(
  id: string,
  deps: readonly DecodedColumn[],
  length: number,
  field: Field,
  encoding: boolean,
): void {
  const code = encoding ? "BAD_ARGUMENT" : "CORRUPT";
  const action = encoding ? "encode" : "decode";
  if (deps.length !== 1 && deps.length !== 2) {
    throw new FormatError(
      code,
      `Cannot ${action} ${id} block of column '${field.name}': expected 1 or 2 dependency columns, found ${deps.length}`,
      { column: field.name },
    );
  }
  for (const [d, dep] of deps.entries()) {
    if (rowCount(dep) !== length) {
      throw new FormatError(
        code,
        `Cannot ${action} ${id} block of column '${field.name}': expected dependency ${d} to have ${length} rows, found ${
          rowCount(dep)
        }`,
        { column: field.name },
      );
    }
  }
}

/** Numbers each distinct token from 0, in order of first appearance. */
export function denseIds(tokens: readonly Token[]): { ids: Int32Array; count: number } {
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
export function keyIds(
  a: readonly Token[],
  b: readonly Token[] | null,
): { ids: Int32Array; count: number } {
  const first = denseIds(a);
  if (b === null) return first;
  return pairIds(first, denseIds(b), a.length);
}

/** Key ids of the pairs of two dependencies' dense ids (see {@link keyIds}). */
function pairIds(
  first: { ids: Int32Array; count: number },
  second: { ids: Int32Array; count: number },
  n: number,
): { ids: Int32Array; count: number } {
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

/**
 * What a keyed decode finds: each row's entry in the block's dictionary of values
 * (texts for a string column, integers as words `[low, high]` per entry otherwise).
 */
export interface Entries {
  /** The block's values. */
  dictionary: readonly string[] | Uint32Array;
  /** One entry index per row (checked by the decoder: each below the entry count). */
  indexOf: Uint32Array;
}

/**
 * The column whose row `i` is entry `indexOf[i]` of a decoded dictionary. The keyed
 * predictors' last step (`decode`).
 *
 * @param field The column's field.
 * @param entries The dictionary and each row's entry.
 * @returns The column, without validity.
 */
export function columnOfEntries(field: Field, { dictionary, indexOf }: Entries): Column {
  const length = indexOf.length;
  if (!(dictionary instanceof Uint32Array)) {
    return { type: "string", values: rowsOfCodes(indexOf, dictionary), validity: null };
  }
  const words = new Uint32Array(2 * length);
  for (let i = 0; i < length; i++) {
    const d = indexOf[i]!;
    words[2 * i] = dictionary[2 * d]!;
    words[2 * i + 1] = dictionary[2 * d + 1]!;
  }
  return intColumn(field, bigIntsFromWords(words));
}

/**
 * A string column's entries as codes into its texts, no string per row: the keyed
 * predictors' `decodeCoded`.
 *
 * @param entries What the decode found (a string column's: texts).
 * @returns The codes and the texts.
 * @throws {TypeError} For an integer column's entries (a caller bug: codes are for strings).
 */
export function codesOfEntries({ dictionary, indexOf }: Entries): CodedStrings {
  if (dictionary instanceof Uint32Array) {
    throw new TypeError("Codes are for string columns; this block holds integers");
  }
  return { codes: indexOf, dictionary };
}
