/**
 * The `json_schema_v2` predictor (string, json): a column of JSON objects stored
 * shredded. Each frequent key gets sub-streams of its own (its strings, its plain
 * integers, its other values), every object row keeps only a _shape_ id, and the
 * shapes — the exact text around the values: braces, keys as spelled, colons,
 * commas and whitespace — are stored once per block. A value of a rare key goes
 * to one shared "rest" stream; a row that is not an object, or that the scanner
 * does not take, is kept whole in a raw stream. Thawing rebuilds every row from
 * its pieces, byte for byte.
 *
 * Why: in event logs (`{"user":123,"event":"click","ts":1700000000,…}`) the keys
 * and punctuation repeat on every row and each key's values follow their own
 * pattern; split apart, a codec sees a column of user ids, a column of event
 * names (a dictionary), a column of timestamps (deltas), instead of one text.
 *
 * The scanner (not `JSON.parse`, which loses spelling) takes a row only when it
 * is one object: `ws { ws "key" ws : ws value ws (, … | }) ws`, keys and string
 * values valid JSON strings (kept as their source text, escapes included),
 * numbers in JSON's grammar (a number spelled as a plain int64, `-?(0|[1-9]\d*)`
 * but not `-0`, goes to an integer stream; any other spelling stays text),
 * `true`/`false`/`null`, and nested objects or arrays kept as their source text.
 * The parts are adjacent slices of the row, so they rebuild it exactly; their
 * lengths are checked against the row's, and a row that would not add up stays raw.
 *
 * Declines (returns `null`) when fewer than 70% of the non-empty rows are
 * objects it takes, or when the shredded bytes are not smaller than `raw_text`'s.
 *
 * Layout (FORMAT.md §4.1), after `varint n`:
 * - `varint K` (≤ 32) sub-columns, the frequent keys (the keys are not stored:
 *   they are in the shapes' text);
 * - `varint S` shapes; for each, `varint m` values, then m slots
 *   (`varint target` ≤ K: 0 = the rest stream, t = sub-column t−1; `u8 kind`:
 *   0 = string, 1 = integer, 2 = other text; the rest holds no integers);
 * - one text stream (as `raw_text`'s: lengths then UTF-8) of Σ(m + 1) pieces:
 *   shape 1's m + 1 pieces, then shape 2's, …; a row of a shape is
 *   `piece 0, value 0, piece 1, …, value m−1, piece m`, a string value inside
 *   `"` quotes;
 * - planes of the row shape ids (0 = a raw row, s ≥ 1 = shape s);
 * - the raw rows: a text stream, one per row of id 0;
 * - the rest: a string stream (values of rare keys, in row then slot order);
 * - for each sub-column: its strings (a string stream), its integers (an integer
 *   stream), its other values (a string stream), each in row then slot order.
 *
 * A string stream is `u8 0` then a text stream, or `u8 1`, `varint d` (1..256),
 * a text stream of d distinct values and one u8 code per value, or `u8 2` then
 * the values as a nested shredded block (`varint count`, then this layout again;
 * at most 3 levels deep: nested objects such as `"props":{…}` get sub-columns too). An integer
 * stream is `u8 0` then planes of zigzag(v), or `u8 1` then planes of
 * zigzag(v[i] − v[i−1]) (v[−1] = 0, wrapping mod 2^64). Stream lengths are not
 * stored: the shapes and the row ids give them. Decoding refuses a target,
 * kind, shape id or code out of range and bytes left over (`CORRUPT`).
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { ByteReader } from "../_bytes.ts";
import type { Column, Field, StringColumn } from "../column.ts";
import { FormatError } from "../errors.ts";
import { checkDecodeField, expectColumn, openBlock, TEXT_TYPES, textColumn } from "./_common.ts";
import {
  bigIntsFromWords,
  deltasOf,
  planeWidth,
  prefixSumInPlace,
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

const ID = "json_schema_v2";
/** Share of non-empty rows that must be objects the scanner takes. */
const MIN_OBJECT_SHARE = 0.7;
/** Share of object rows a key must appear in (as often) to get a sub-column. */
const MIN_KEY_SHARE = 0.1;
/** Most sub-columns of a block. */
const MAX_KEYS = 32;
/** Most levels of nested objects shredded inside a block (the top level is 0). */
const MAX_DEPTH = 3;
/** Most entries of a string stream's dictionary (one byte per code). */
const MAX_DICTIONARY = 256;

const KIND_STRING = 0;
const KIND_INT = 1;
const KIND_OTHER = 2;
/** Kind the scanner gives a number, before the encoder sorts ints from the rest. */
const KIND_NUMBER = 3;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function matches(field: Field): boolean {
  return TEXT_TYPES.has(field.type);
}

// ---------------------------------------------------------------------------
// The scanner

/** One object row cut into its parts. */
export interface ScannedObject {
  /** The m + 1 texts around the m values (structure, whitespace, keys). */
  readonly pieces: string[];
  /** Each member's key, as spelled between its quotes. */
  readonly keys: string[];
  /** Each value's kind: `KIND_STRING`, `KIND_NUMBER` or `KIND_OTHER`. */
  readonly kinds: number[];
  /** Each value's text: between the quotes for a string, else as spelled. */
  readonly values: string[];
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

function skipWhitespace(s: string, i: number): number {
  while (i < s.length && isWhitespace(s.charCodeAt(i))) i++;
  return i;
}

/** Single-character escapes JSON allows after `\`: `" \ / b f n r t`. */
function isShortEscape(c: number): boolean {
  return c === 0x22 || c === 0x5c || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e ||
    c === 0x72 || c === 0x74;
}

/** Index after the closing quote of the JSON string whose opening quote is at `i`, or -1. */
function stringEnd(s: string, i: number): number {
  i++;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) return -1;
    if (c !== 0x5c) {
      i++;
      continue;
    }
    const e = s.charCodeAt(i + 1);
    if (e === 0x75) {
      for (let k = 2; k < 6; k++) if (!isHex(s.charCodeAt(i + k))) return -1;
      i += 6;
    } else if (isShortEscape(e)) {
      i += 2;
    } else {
      return -1;
    }
  }
  return -1;
}

/** Index after the JSON number starting at `i`, or -1. */
function numberEnd(s: string, i: number): number {
  if (s.charCodeAt(i) === 0x2d) i++;
  const first = s.charCodeAt(i);
  if (first === 0x30) i++;
  else if (first >= 0x31 && first <= 0x39) {
    while (isDigit(s.charCodeAt(i))) i++;
  } else return -1;
  if (s.charCodeAt(i) === 0x2e) {
    i++;
    if (!isDigit(s.charCodeAt(i))) return -1;
    while (isDigit(s.charCodeAt(i))) i++;
  }
  const e = s.charCodeAt(i);
  if (e === 0x65 || e === 0x45) {
    i++;
    const sign = s.charCodeAt(i);
    if (sign === 0x2b || sign === 0x2d) i++;
    if (!isDigit(s.charCodeAt(i))) return -1;
    while (isDigit(s.charCodeAt(i))) i++;
  }
  return i;
}

/**
 * Index after the nested object or array opening at `i`, or -1. Brackets are
 * counted outside strings; the text is kept as spelled, so it need not be checked further.
 */
function nestedEnd(s: string, i: number): number {
  let depth = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c === 0x22) {
      i = stringEnd(s, i);
      if (i < 0) return -1;
      continue;
    }
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return -1;
}

/** Index after the literal `word` at `i`, or -1. */
function literalEnd(s: string, i: number, word: string): number {
  return s.startsWith(word, i) ? i + word.length : -1;
}

/**
 * Cuts one row into a {@linkcode ScannedObject}, or returns null when it is not
 * one JSON object in the grammar the module header describes.
 *
 * @param s The row's text.
 * @returns Its parts, or null.
 */
export function scanObject(s: string): ScannedObject | null {
  let i = skipWhitespace(s, 0);
  if (s.charCodeAt(i) !== 0x7b) return null;
  i = skipWhitespace(s, i + 1);
  const pieces: string[] = [];
  const keys: string[] = [];
  const kinds: number[] = [];
  const values: string[] = [];
  let pieceStart = 0;
  if (s.charCodeAt(i) !== 0x7d) {
    for (;;) {
      if (s.charCodeAt(i) !== 0x22) return null;
      const keyEnd = stringEnd(s, i);
      if (keyEnd < 0) return null;
      keys.push(s.slice(i + 1, keyEnd - 1));
      i = skipWhitespace(s, keyEnd);
      if (s.charCodeAt(i) !== 0x3a) return null;
      i = skipWhitespace(s, i + 1);
      const c = s.charCodeAt(i);
      let end: number;
      if (c === 0x22) {
        end = stringEnd(s, i);
        if (end < 0) return null;
        pieces.push(s.slice(pieceStart, i));
        kinds.push(KIND_STRING);
        values.push(s.slice(i + 1, end - 1));
      } else {
        let kind = KIND_OTHER;
        if (c === 0x7b || c === 0x5b) end = nestedEnd(s, i);
        else if (c === 0x74) end = literalEnd(s, i, "true");
        else if (c === 0x66) end = literalEnd(s, i, "false");
        else if (c === 0x6e) end = literalEnd(s, i, "null");
        else {
          end = numberEnd(s, i);
          kind = KIND_NUMBER;
        }
        if (end < 0) return null;
        pieces.push(s.slice(pieceStart, i));
        kinds.push(kind);
        values.push(s.slice(i, end));
      }
      pieceStart = end;
      i = skipWhitespace(s, end);
      const separator = s.charCodeAt(i);
      if (separator === 0x7d) break;
      if (separator !== 0x2c) return null;
      i = skipWhitespace(s, i + 1);
    }
  }
  if (skipWhitespace(s, i + 1) !== s.length) return null;
  pieces.push(s.slice(pieceStart));
  return { pieces, keys, kinds, values };
}

/** Whether a JSON number's spelling is exactly how an int64 prints (`-?(0|[1-9]\d*)`, not `-0`). */
function isPlainInt(text: string): boolean {
  if (text === "-0") return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!isDigit(c) && !(i === 0 && c === 0x2d)) return false;
  }
  if (text.length <= 15) return true;
  const v = BigInt(text);
  return v >= INT64_MIN && v <= INT64_MAX;
}

// ---------------------------------------------------------------------------
// Streams

/** A stream planned for writing: its size and a writer. */
interface Part {
  readonly size: number;
  write(out: Uint8Array, at: number): number;
}

function varintPart(v: number): Part {
  return { size: varintSize(v), write: (out, at) => writeVarint(out, at, v) };
}

function bytePart(v: number): Part {
  return {
    size: 1,
    write: (out, at) => {
      out[at] = v;
      return at + 1;
    },
  };
}

function textsPart(values: readonly string[], column: string): Part {
  const plan = planTexts(values, column);
  return { size: plan.size, write: (out, at) => writeTexts(plan, out, at) };
}

/**
 * A string stream: the texts, a dictionary when it has at most 256 values, or the
 * values shredded again (nested objects), whichever is smallest.
 */
function stringsPart(values: readonly string[], column: string, depth: number): Part {
  const flat = flatStringsPart(values, column);
  const nested = depth < MAX_DEPTH ? shred(values, column, depth + 1) : null;
  if (nested === null || 1 + nested.length >= flat.size) return flat;
  return {
    size: 1 + nested.length,
    write: (out, at) => {
      out[at] = 2;
      out.set(nested, at + 1);
      return at + 1 + nested.length;
    },
  };
}

/** A string stream of the texts, or of a dictionary when it has at most 256 values and is smaller. */
function flatStringsPart(values: readonly string[], column: string): Part {
  const raw = textsPart(values, column);
  const codeOf = new Map<string, number>();
  const dictionary: string[] = [];
  const codes = new Uint8Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    let code = codeOf.get(v);
    if (code === undefined) {
      if (dictionary.length === MAX_DICTIONARY) return { ...raw, size: 1 + raw.size, write: mode0 };
      code = dictionary.length;
      codeOf.set(v, code);
      dictionary.push(v);
    }
    codes[i] = code;
  }
  function mode0(out: Uint8Array, at: number): number {
    out[at] = 0;
    return raw.write(out, at + 1);
  }
  const dict = textsPart(dictionary, column);
  const dictSize = 1 + varintSize(dictionary.length) + dict.size + codes.length;
  if (values.length === 0 || dictSize >= 1 + raw.size) return { size: 1 + raw.size, write: mode0 };
  return {
    size: dictSize,
    write: (out, at) => {
      out[at] = 1;
      at = writeVarint(out, at + 1, dictionary.length);
      at = dict.write(out, at);
      out.set(codes, at);
      return at + codes.length;
    },
  };
}

/** An integer stream: zigzag values, or zigzag deltas when their planes are narrower. */
function intsPart(values: readonly bigint[]): Part {
  const words = wordsOf(BigInt64Array.from(values));
  const plain = words.slice();
  zigzagInPlace(plain);
  const deltas = deltasOf(words);
  zigzagInPlace(deltas);
  const plainWidth = planeWidth(plain);
  const deltaWidth = planeWidth(deltas);
  const useDeltas = deltaWidth < plainWidth;
  const mode = useDeltas ? 1 : 0;
  const chosen = useDeltas ? deltas : plain;
  const width = useDeltas ? deltaWidth : plainWidth;
  return {
    size: 2 + width * values.length,
    write: (out, at) => {
      out[at] = mode;
      return writePlanes(chosen, width, out, at + 1);
    },
  };
}

function idsPart(ids: Uint32Array): Part {
  const words = new Uint32Array(ids.length * 2);
  for (let i = 0; i < ids.length; i++) words[2 * i] = ids[i]!;
  const width = planeWidth(words);
  return { size: 1 + width * ids.length, write: (out, at) => writePlanes(words, width, out, at) };
}

// ---------------------------------------------------------------------------
// Encoding

/** A distinct shape: its pieces and, per value, `target * 4 + kind`. */
interface Shape {
  readonly pieces: readonly string[];
  readonly slots: readonly number[];
}

/** The length of the row rebuilt from its parts (quotes around strings), without building it. */
function renderedLength(scanned: ScannedObject): number {
  const { pieces, kinds, values } = scanned;
  let n = 0;
  for (const piece of pieces) n += piece.length;
  for (let j = 0; j < values.length; j++) {
    n += values[j]!.length + (kinds[j] === KIND_STRING ? 2 : 0);
  }
  return n;
}

/** Quick pre-check: could this row be an object (first and last non-blank characters)? */
function looksLikeObject(s: string): boolean {
  const start = skipWhitespace(s, 0);
  let end = s.length - 1;
  while (end > start && isWhitespace(s.charCodeAt(end))) end--;
  return s.charCodeAt(start) === 0x7b && s.charCodeAt(end) === 0x7d;
}

/**
 * Shreds the rows, or returns null when fewer than 70% of the non-empty rows
 * are objects the scanner takes. Does not compare sizes (see `encode`).
 *
 * @param values The rows.
 * @param column The column's name, for errors.
 * @returns The block, or null.
 */
export function shred(values: readonly string[], column: string, depth = 0): Uint8Array | null {
  const n = values.length;
  let nonEmpty = 0;
  let candidates = 0;
  // More non-objects than 30% of all rows rules out 70% of the non-empty ones: stop early,
  // so text columns that are not JSON cost the trial one look at their first rows.
  const maxMisses = n * (1 - MIN_OBJECT_SHARE);
  for (const v of values) {
    if (v.length === 0) continue;
    nonEmpty++;
    if (looksLikeObject(v)) candidates++;
    else if (nonEmpty - candidates > maxMisses) return null;
  }
  const needed = Math.max(1, Math.ceil(nonEmpty * MIN_OBJECT_SHARE));
  if (candidates < needed) return null;

  const scanned = new Array<ScannedObject | null>(n);
  const keyCounts = new Map<string, number>();
  let objects = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    let row = v.length > 0 && looksLikeObject(v) ? scanObject(v) : null;
    // The scanner cuts the row into adjacent slices, so they rebuild it exactly; the length
    // check guards that (a row whose parts do not add up is kept raw, never changed).
    if (row !== null && renderedLength(row) !== v.length) row = null;
    scanned[i] = row;
    if (row === null) continue;
    objects++;
    for (const key of row.keys) keyCounts.set(key, (keyCounts.get(key) ?? 0) + 1);
  }
  if (objects < needed) return null;

  const minCount = Math.max(1, Math.ceil(objects * MIN_KEY_SHARE));
  const frequent = [...keyCounts].filter(([, count]) => count >= minCount)
    .sort((a, b) => b[1] - a[1]) // stable: ties keep first appearance
    .slice(0, MAX_KEYS)
    .map(([key]) => key);
  const targetOf = new Map(frequent.map((key, k) => [key, k + 1]));
  const K = frequent.length;

  const shapeIds = new Map<string, number>();
  const shapes: Shape[] = [];
  const ids = new Uint32Array(n);
  const rawRows: string[] = [];
  const rest: string[] = [];
  const strings: string[][] = Array.from({ length: K }, () => []);
  const ints: bigint[][] = Array.from({ length: K }, () => []);
  const others: string[][] = Array.from({ length: K }, () => []);
  for (let i = 0; i < n; i++) {
    const row = scanned[i];
    if (!row) {
      rawRows.push(values[i]!);
      continue;
    }
    const slots: number[] = [];
    for (let j = 0; j < row.keys.length; j++) {
      const target = targetOf.get(row.keys[j]!) ?? 0;
      const value = row.values[j]!;
      let kind = row.kinds[j]!;
      if (kind === KIND_NUMBER) kind = target > 0 && isPlainInt(value) ? KIND_INT : KIND_OTHER;
      slots.push(target * 4 + kind);
      if (target === 0) rest.push(value);
      else if (kind === KIND_STRING) strings[target - 1]!.push(value);
      else if (kind === KIND_INT) ints[target - 1]!.push(BigInt(value));
      else others[target - 1]!.push(value);
    }
    // Pieces hold no control characters (JSON strings refuse them raw): \u0000 and \u0001 separate.
    const key = `${row.pieces.join("\u0000")}\u0001${slots.join(",")}`;
    let id = shapeIds.get(key);
    if (id === undefined) {
      shapes.push({ pieces: row.pieces, slots });
      id = shapes.length;
      shapeIds.set(key, id);
    }
    ids[i] = id;
  }

  const parts: Part[] = [varintPart(n), varintPart(K), varintPart(shapes.length)];
  for (const shape of shapes) {
    parts.push(varintPart(shape.slots.length));
    for (const slot of shape.slots) parts.push(varintPart(slot >>> 2), bytePart(slot & 3));
  }
  parts.push(textsPart(shapes.flatMap((shape) => shape.pieces), column));
  parts.push(idsPart(ids), textsPart(rawRows, column), stringsPart(rest, column, depth));
  for (let k = 0; k < K; k++) {
    parts.push(
      stringsPart(strings[k]!, column, depth),
      intsPart(ints[k]!),
      stringsPart(others[k]!, column, depth),
    );
  }
  const out = new Uint8Array(parts.reduce((total, part) => total + part.size, 0));
  let at = 0;
  for (const part of parts) at = part.write(out, at);
  return out;
}

function encode(column: Column, context: EncodeContext): Uint8Array | null {
  const { values } = expectColumn(ID, column, TEXT_TYPES) as StringColumn;
  const shredded = shred(values, context.field.name);
  if (shredded === null) return null;
  const rawSize = varintSize(values.length) + planTexts(values, context.field.name).size;
  return shredded.length < rawSize ? shredded : null;
}

// ---------------------------------------------------------------------------
// Decoding

function corrupt(what: string, message: string, offset: number, column: string): FormatError {
  return new FormatError("CORRUPT", `Cannot decode ${what}: ${message}`, { column, offset });
}

function readStrings(
  reader: ByteReader,
  count: number,
  depth: number,
  where: { what: string; column: string },
): string[] {
  const { what, column } = where;
  const modeAt = reader.offset;
  const mode = reader.u8("string stream mode");
  if (mode === 0) return readTexts(reader, count, what);
  if (mode === 2 && depth < MAX_DEPTH) {
    const countAt = reader.offset;
    const nested = reader.varint("nested row count");
    if (nested !== count) {
      throw corrupt(what, `expected ${count} nested rows, found ${nested}`, countAt, column);
    }
    return readShredded(reader, count, depth + 1, { what: `nested ${what}`, column });
  }
  if (mode !== 1) {
    throw corrupt(
      what,
      `expected a string stream mode 0, 1${depth < MAX_DEPTH ? " or 2" : ""}, found ${mode}`,
      modeAt,
      column,
    );
  }
  const dAt = reader.offset;
  const d = reader.varint("dictionary size");
  if (d < 1 || d > MAX_DICTIONARY || d > count) {
    throw corrupt(
      what,
      `expected a dictionary of 1 to ${Math.min(MAX_DICTIONARY, count)} values, found ${d}`,
      dAt,
      column,
    );
  }
  const dictionary = readTexts(reader, d, what);
  const codesAt = reader.offset;
  const codes = reader.bytes(count, "dictionary codes");
  const out = new Array<string>(count);
  for (let i = 0; i < count; i++) {
    const v = dictionary[codes[i]!];
    if (v === undefined) {
      throw corrupt(what, `expected codes below ${d}, found ${codes[i]}`, codesAt + i, column);
    }
    out[i] = v;
  }
  return out;
}

function readInts(reader: ByteReader, count: number, what: string, column: string): string[] {
  const modeAt = reader.offset;
  const mode = reader.u8("integer stream mode");
  if (mode > 1) {
    throw corrupt(what, `expected an integer stream mode 0 or 1, found ${mode}`, modeAt, column);
  }
  const words = readPlanes(reader, count);
  unzigzagInPlace(words);
  if (mode === 1) prefixSumInPlace(words);
  const values = bigIntsFromWords(words);
  const out = new Array<string>(count);
  for (let i = 0; i < count; i++) out[i] = String(values[i]);
  return out;
}

function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
  checkDecodeField(ID, context.field, matches(context.field));
  const column = context.field.name;
  const reader = openBlock(ID, bytes, length, context.field);
  const values = readShredded(reader, length, 0, {
    what: `${ID} block of column '${column}'`,
    column,
  });
  reader.end();
  return textColumn(context.field, values);
}

/** Reads a shredded block's body (after its row count) at nesting `depth`. */
function readShredded(
  reader: ByteReader,
  length: number,
  depth: number,
  where: { what: string; column: string },
): string[] {
  const { what, column } = where;

  const kAt = reader.offset;
  const K = reader.varint("sub-column count");
  if (K > MAX_KEYS) {
    throw corrupt(what, `expected at most ${MAX_KEYS} sub-columns, found ${K}`, kAt, column);
  }
  const sAt = reader.offset;
  const S = reader.varint("shape count");
  if (S > reader.remaining) {
    throw corrupt(what, `expected at most ${reader.remaining} shapes, found ${S}`, sAt, column);
  }
  const targets: Uint8Array[] = [];
  const kinds: Uint8Array[] = [];
  let pieceCount = 0;
  for (let s = 0; s < S; s++) {
    const mAt = reader.offset;
    const m = reader.varint("value count");
    if (m > reader.remaining) {
      throw corrupt(
        what,
        `expected at most ${reader.remaining} values in shape ${s + 1}, found ${m}`,
        mAt,
        column,
      );
    }
    const shapeTargets = new Uint8Array(m);
    const shapeKinds = new Uint8Array(m);
    for (let j = 0; j < m; j++) {
      const at = reader.offset;
      const target = reader.varint("slot target");
      const kind = reader.u8("slot kind");
      if (target > K || kind > KIND_OTHER || (target === 0 && kind === KIND_INT)) {
        throw corrupt(
          what,
          `expected a slot of sub-column 0..${K} and kind 0..2 (no integers in the rest), found ${target}/${kind}`,
          at,
          column,
        );
      }
      shapeTargets[j] = target;
      shapeKinds[j] = kind;
    }
    targets.push(shapeTargets);
    kinds.push(shapeKinds);
    pieceCount += m + 1;
  }
  const allPieces = readTexts(reader, pieceCount, `shapes of ${what}`);

  const idsAt = reader.offset;
  const idWords = readPlanes(reader, length);
  const ids = new Uint32Array(length);
  const rowsOfShape = new Float64Array(S + 1);
  for (let i = 0; i < length; i++) {
    const lo = idWords[2 * i]!;
    if (idWords[2 * i + 1] !== 0 || lo > S) {
      throw corrupt(
        what,
        `expected shape ids up to ${S}, found one above at row ${i}`,
        idsAt,
        column,
      );
    }
    ids[i] = lo;
    rowsOfShape[lo]!++;
  }
  // Stream lengths: rows of each shape times its slots of each stream.
  let restCount = 0;
  const counts = new Float64Array(3 * K);
  for (let s = 0; s < S; s++) {
    const rows = rowsOfShape[s + 1]!;
    if (rows === 0) continue;
    const shapeTargets = targets[s]!;
    for (let j = 0; j < shapeTargets.length; j++) {
      const target = shapeTargets[j]!;
      if (target === 0) restCount += rows;
      else counts[3 * (target - 1) + kinds[s]![j]!]! += rows;
    }
  }
  const rawRows = readTexts(reader, rowsOfShape[0]!, `raw rows of ${what}`);
  const rest = readStrings(reader, restCount, depth, { what: `rest of ${what}`, column });
  const streams: string[][] = [];
  for (let k = 0; k < K; k++) {
    const sub = `sub-column ${k + 1} of ${what}`;
    streams.push(readStrings(reader, counts[3 * k]!, depth, { what: sub, column }));
    streams.push(readInts(reader, counts[3 * k + 1]!, sub, column));
    streams.push(readStrings(reader, counts[3 * k + 2]!, depth, { what: sub, column }));
  }

  const firstPiece = new Uint32Array(S);
  for (let s = 1; s < S; s++) firstPiece[s] = firstPiece[s - 1]! + targets[s - 1]!.length + 1;
  const cursors = new Uint32Array(streams.length);
  let rawAt = 0;
  let restAt = 0;
  const values = new Array<string>(length);
  for (let i = 0; i < length; i++) {
    const id = ids[i]!;
    if (id === 0) {
      values[i] = rawRows[rawAt++]!;
      continue;
    }
    const shapeTargets = targets[id - 1]!;
    const shapeKinds = kinds[id - 1]!;
    let p = firstPiece[id - 1]!;
    let row = allPieces[p++]!;
    for (let j = 0; j < shapeTargets.length; j++) {
      const target = shapeTargets[j]!;
      const kind = shapeKinds[j]!;
      let value: string;
      if (target === 0) value = rest[restAt++]!;
      else {
        const stream = 3 * (target - 1) + kind;
        value = streams[stream]![cursors[stream]!++]!;
      }
      row += kind === KIND_STRING ? `"${value}"` : value;
      row += allPieces[p++]!;
    }
    values[i] = row;
  }
  return values;
}

/**
 * JSON objects shredded into per-key streams, rebuilt byte for byte.
 *
 * @example Round-trip event rows, spacing and spelling kept
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonSchemaV2 } from "./json_shred.ts";
 * const field = { name: "e", type: "json", nullable: false } as const;
 * const values = Array.from(
 *   { length: 50 },
 *   (_, i) => `{"user": ${i % 7}, "event":"click", "ts":${1700000000 + i}, "x": 1.50}`,
 * );
 * const column = { type: "json" as const, values, validity: null };
 * const bytes = jsonSchemaV2.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(jsonSchemaV2.decode(bytes, 50, { field, deps: [] }).values, values);
 * ```
 */
export const jsonSchemaV2: Predictor = Object.freeze(
  { id: ID, lossy: false, usesDeps: false, matches, encode, decode } satisfies Predictor,
);
