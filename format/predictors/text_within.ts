/**
 * The `text_within` predictor (string, json; `usesDeps: true`): a text column
 * whose values are often words of another text column of the same row — an
 * airport's city inside its name ("Livingston" in "Livingston Municipal"), a
 * product's brand inside its title.
 *
 * The words of the dependency's value are its maximal runs of word characters
 * (ASCII letters and digits, and every UTF-16 unit above U+007F, so accented
 * and non-Latin letters join their words); any other character separates them.
 * A row whose value is exactly the dependency's text from the start of word `a`
 * to the end of word `a + span` (a, span < 255; the first such `a`, then the
 * shortest span) is coded as those two numbers; any other row (an empty value
 * among them) is a literal. Encoder and decoder cut the same dependency string
 * into the same words, and the encoder keeps a match only when the slice is
 * the value, so decoding is exact.
 *
 * Layout (FORMAT.md §4): `[varint n][u8 a × n, 255 = literal][u8 span × m]`
 * (m rows that are not literals) `[text stream of the n − m literals]` (as
 * `raw_text`: their lengths, then their UTF-8). The writer declines a block in
 * which no row matches. A null dependency slot counts as the empty string.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { Column, Field, StringColumn } from "../column.ts";
import { rowsOf } from "../coded_strings.ts";
import { FormatError } from "../errors.ts";
import { checkDecodeField, expectColumn, openBlock, TEXT_TYPES, textColumn } from "./_common.ts";
import { varintSize, writeVarint } from "./_ints.ts";
import { depTokens } from "./_keys.ts";
import { planTexts, readTexts, writeTexts } from "./_text.ts";
import type { DecodeContext, EncodeContext, Predictor } from "./predictor.ts";

const ID = "text_within";
/** The `a` byte of a literal row; word indexes and spans are below it. */
const LITERAL = 255;

function matches(field: Field): boolean {
  return TEXT_TYPES.has(field.type);
}

function isWordUnit(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c > 127;
}

/**
 * The words of `s`: `starts[k]` and `ends[k]` (exclusive) of its k-th word, at most
 * {@link LITERAL} of them (later words cannot be named by a byte).
 */
function wordsOf(s: string, starts: number[], ends: number[]): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const word = isWordUnit(s.charCodeAt(i));
    if (word && !inWord) {
      if (count === LITERAL) return count;
      starts[count] = i;
    } else if (!word && inWord) ends[count++] = i;
    inWord = word;
  }
  if (inWord) ends[count++] = s.length;
  return count;
}

/** The one text dependency's value at each row, a null slot as "" (its key token). */
function depStrings(deps: readonly Column[]): readonly string[] | null {
  const dep = deps[0];
  if (deps.length !== 1 || dep === undefined || !TEXT_TYPES.has(dep.type)) return null;
  return depTokens(dep) as readonly string[];
}

function encode(column: Column, context: EncodeContext): Uint8Array | null {
  const { values } = expectColumn(ID, column, TEXT_TYPES) as StringColumn;
  const within = depStrings(context.deps);
  if (within === null || within.length !== values.length) return null;
  const n = values.length;
  const codes = new Uint8Array(n);
  const spans: number[] = [];
  const literals: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  for (let i = 0; i < n; i++) {
    const value = values[i]!;
    const source = within[i]!;
    const span = value.length === 0 || !source.includes(value)
      ? -1
      : findSpan(value, source, starts, ends);
    if (span < 0) {
      codes[i] = LITERAL;
      literals.push(value);
    } else {
      codes[i] = span >> 8;
      spans.push(span & 0xff);
    }
  }
  if (spans.length === 0) return null;
  const text = planTexts(literals, context.field.name);
  const out = new Uint8Array(varintSize(n) + n + spans.length + text.size);
  let at = writeVarint(out, 0, n);
  out.set(codes, at);
  at += n;
  out.set(spans, at);
  writeTexts(text, out, at + spans.length);
  return out;
}

/** `a << 8 | span` of the first word span of `source` that is `value`, or -1. */
function findSpan(value: string, source: string, starts: number[], ends: number[]): number {
  const count = wordsOf(source, starts, ends);
  for (let a = 0; a < count; a++) {
    const start = starts[a]!;
    if (source.charCodeAt(start) !== value.charCodeAt(0)) continue;
    for (let b = a; b < count && b - a < LITERAL; b++) {
      const length = ends[b]! - start;
      if (length > value.length) break;
      if (length === value.length && source.startsWith(value, start)) return (a << 8) | (b - a);
    }
  }
  return -1;
}

function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
  checkDecodeField(ID, context.field, matches(context.field));
  const what = `${ID} block of column '${context.field.name}'`;
  // No codedDeps: a dependency comes as rows (rowsOf keeps them as they are).
  const deps = context.deps.map(rowsOf);
  const within = depStrings(deps);
  if (within === null || within.length !== length) {
    throw new FormatError(
      "CORRUPT",
      `Cannot decode ${what}: expected one text dependency of ${length} rows, found ${
        deps.map((d) => `${d.type} of ${d.values.length} rows`).join(", ") || "none"
      }`,
      { column: context.field.name },
    );
  }
  const reader = openBlock(ID, bytes, length, context.field);
  const codes = reader.bytes(length, "word indexes");
  let matched = 0;
  for (let i = 0; i < length; i++) if (codes[i] !== LITERAL) matched++;
  const spans = reader.bytes(matched, "word spans");
  const literals = readTexts(reader, length - matched, what);
  reader.end();
  const values = new Array<string>(length);
  const starts: number[] = [];
  const ends: number[] = [];
  let nextSpan = 0;
  let nextLiteral = 0;
  for (let i = 0; i < length; i++) {
    const a = codes[i]!;
    if (a === LITERAL) {
      values[i] = literals[nextLiteral++]!;
      continue;
    }
    const b = a + spans[nextSpan++]!;
    const source = within[i]!;
    if (b >= wordsOf(source, starts, ends)) {
      throw new FormatError(
        "CORRUPT",
        `Cannot decode ${what}: row ${i} names words ${a}..${b} of a dependency value with fewer words`,
        { column: context.field.name },
      );
    }
    values[i] = source.slice(starts[a], ends[b]);
  }
  return textColumn(context.field, values);
}

/**
 * A text column coded as word spans of another text column where it can be.
 *
 * @example A city found in the airport's name, and one that is not
 * ```ts
 * import assert from "node:assert/strict";
 * import { textWithin } from "./text_within.ts";
 * const field = { name: "city", type: "string", nullable: false } as const;
 * const names = { type: "string" as const, values: ["Perry-Warsaw", "Meadow Lake"], validity: null };
 * const cities = { type: "string" as const, values: ["Warsaw", "Colorado Springs"], validity: null };
 * const bytes = textWithin.encode(cities, { field, deps: [names], warn: () => {} })!;
 * assert.deepEqual(textWithin.decode(bytes, 2, { field, deps: [names] }).values, cities.values);
 * ```
 */
export const textWithin: Predictor = Object.freeze(
  { id: ID, lossy: false, usesDeps: true, matches, encode, decode } satisfies Predictor,
);
