/**
 * The `category_u8` predictor (string): a dictionary of the distinct values
 * plus one byte per row. For low-cardinality strings (country codes, status
 * words, airport codes) it turns rows into a byte stream the codec shrinks to
 * almost nothing. Declines (returns `null`) above 256 distinct values.
 *
 * Layout (FORMAT.md §4): `[varint n][varint k ≤ 256][text stream of the k
 * distinct values, in order of first appearance][u8 code × n]`, where the
 * text stream is `raw_text`'s (lengths then UTF-8). Decoding refuses a code
 * ≥ k and a dictionary of more than 256 entries.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { Column, Field, StringColumn } from "../column.ts";
import { type CodedStrings, codesOf, withCodes } from "../coded_strings.ts";
import { FormatError } from "../errors.ts";
import {
  checkDecodeField,
  expectColumn,
  openBlock,
  rowsToDecode,
  TEXT_TYPES,
  textColumn,
} from "./_common.ts";
import { varintSize, writeVarint } from "./_ints.ts";
import { planTexts, readTexts, writeTexts } from "./_text.ts";
import type { DecodeContext, EncodeContext, Predictor } from "./predictor.ts";

const ID = "category_u8";
/** Most distinct values one block can hold: one byte per code. */
const MAX_CATEGORIES = 256;

function matches(field: Field): boolean {
  return TEXT_TYPES.has(field.type);
}

function encode(column: Column, context: EncodeContext): Uint8Array | null {
  const { values } = expectColumn(ID, column, TEXT_TYPES) as StringColumn;
  const n = values.length;
  const codeOf = new Map<string, number>();
  const dictionary: string[] = [];
  const codes = new Uint8Array(n);
  const byText = (v: string): number => {
    let code = codeOf.get(v);
    if (code === undefined) {
      if (dictionary.length === MAX_CATEGORIES) return -1;
      code = dictionary.length;
      codeOf.set(v, code);
      dictionary.push(v);
    }
    return code;
  };
  // Values that carry codes (`coded_strings.ts`: the CSV reader's, a decoder's) are
  // coded through their code's text once per code; the rest through their text.
  const coded = codesOf(values);
  if (coded !== undefined) {
    const { codes: given, dictionary: entries } = coded;
    const codeOfGiven = new Int32Array(entries.length).fill(-1);
    for (let i = 0; i < n; i++) {
      const v = values[i]!;
      const g = given[i]!;
      let code: number;
      if (v === entries[g]) {
        code = codeOfGiven[g]!;
        if (code < 0) code = codeOfGiven[g] = byText(v);
      } else {
        code = byText(v);
      }
      if (code < 0) return null;
      codes[i] = code;
    }
  } else {
    for (let i = 0; i < n; i++) {
      const code = byText(values[i]!);
      if (code < 0) return null;
      codes[i] = code;
    }
  }
  const plan = planTexts(dictionary, context.field.name);
  const out = new Uint8Array(varintSize(n) + varintSize(dictionary.length) + plan.size + n);
  let at = writeVarint(out, 0, n);
  at = writeVarint(out, at, dictionary.length);
  at = writeTexts(plan, out, at);
  out.set(codes, at);
  return out;
}

/** A block's dictionary and codes (all `length` of them, not yet checked against it). */
function readBlock(
  bytes: Uint8Array,
  length: number,
  context: DecodeContext,
): { dictionary: string[]; codes: Uint8Array; codesAt: number } {
  checkDecodeField(ID, context.field, matches(context.field));
  const reader = openBlock(ID, bytes, length, context.field);
  const kAt = reader.offset;
  const k = reader.varint("dictionary size");
  if (k > MAX_CATEGORIES || (k === 0 && length > 0)) {
    throw new FormatError(
      "CORRUPT",
      `Cannot decode ${what(context)}: expected a dictionary of ${
        length > 0 ? 1 : 0
      } to ${MAX_CATEGORIES} values, found ${k}`,
      { column: context.field.name, offset: kAt },
    );
  }
  const dictionary = readTexts(reader, k, `dictionary of ${what(context)}`);
  const codesAt = reader.offset;
  const codes = reader.bytes(length, "codes");
  reader.end();
  return { dictionary, codes, codesAt };
}

function what(context: DecodeContext): string {
  return `${ID} block of column '${context.field.name}'`;
}

function badCode(
  context: DecodeContext,
  block: { dictionary: readonly string[]; codes: Uint8Array; codesAt: number },
  row: number,
): FormatError {
  return new FormatError(
    "CORRUPT",
    `Cannot decode ${what(context)}: expected codes below ${block.dictionary.length}, found ${
      block.codes[row]
    } at row ${row}`,
    { column: context.field.name, offset: block.codesAt + row },
  );
}

function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
  const block = readBlock(bytes, length, context);
  const { dictionary, codes } = block;
  // A caller reading the first rows only gets those (their codes are checked alike).
  const rows = rowsToDecode(length, context.prefix);
  const values = withCodes(new Array<string>(rows), codes.subarray(0, rows), dictionary);
  const bad = fillValues(values, codes, dictionary);
  if (bad >= 0) throw badCode(context, block, bad);
  return textColumn(context.field, values);
}

function decodeCoded(bytes: Uint8Array, length: number, context: DecodeContext): CodedStrings {
  const block = readBlock(bytes, length, context);
  const { dictionary, codes } = block;
  const bad = firstCodeFrom(codes, dictionary.length);
  if (bad >= 0) throw badCode(context, block, bad);
  return { codes: new Uint32Array(codes), dictionary };
}

/** The first row whose code is `k` or more, or −1. */
function firstCodeFrom(codes: Uint8Array, k: number): number {
  for (let i = 0; i < codes.length; i++) if (codes[i]! >= k) return i;
  return -1;
}

/**
 * Puts each row's dictionary value in `values`; returns the first row whose code is
 * past the dictionary, or −1. Its own function so that V8, which optimizes the loop
 * in its middle (OSR), does not leave that code at `decode`'s next lines, which had
 * not run yet (no feedback: a deopt).
 */
function fillValues(values: string[], codes: Uint8Array, dictionary: readonly string[]): number {
  for (let i = 0; i < values.length; i++) {
    const v = dictionary[codes[i]!];
    if (v === undefined) return i;
    values[i] = v;
  }
  return -1;
}

/**
 * Dictionary + one byte per row, for strings with at most 256 distinct values.
 *
 * @example Round-trip a low-cardinality column
 * ```ts
 * import assert from "node:assert/strict";
 * import { categoryU8 } from "./category_u8.ts";
 * const field = { name: "city", type: "string", nullable: false } as const;
 * const column = { type: "string" as const, values: ["Oslo", "Rome", "Oslo"], validity: null };
 * const bytes = categoryU8.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(categoryU8.decode(bytes, 3, { field, deps: [] }).values, column.values);
 * ```
 */
export const categoryU8: Predictor = Object.freeze(
  {
    id: ID,
    lossy: false,
    usesDeps: false,
    matches,
    encode,
    decode,
    decodeCoded,
  } satisfies Predictor,
);
