/**
 * The `text_lines` predictor (string, json): every value followed by a line feed,
 * as a text file holds a column. A context-mixing codec (zpaq) predicts a value's
 * first bytes from the end of the one before, which `raw_text` hides behind a
 * separate run of lengths: on an airport's names it is ~15% smaller under zpaq.
 * The writer declines a block in which a value holds a line feed.
 *
 * Layout (FORMAT.md §4): `[varint n][UTF-8 of each value, then 0x0A]`. Decoding
 * validates the UTF-8 and expects exactly n line feeds, the last at the end.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { Column, Field, StringColumn } from "../column.ts";
import { FormatError } from "../errors.ts";
import { checkDecodeField, expectColumn, openBlock, TEXT_TYPES, textColumn } from "./_common.ts";
import { varintSize, writeVarint } from "./_ints.ts";
import { decodeText, planTexts } from "./_text.ts";
import type { DecodeContext, EncodeContext, Predictor } from "./predictor.ts";

const ID = "text_lines";
const LINE_FEED = "\n";

function matches(field: Field): boolean {
  return TEXT_TYPES.has(field.type);
}

function encode(column: Column, context: EncodeContext): Uint8Array | null {
  const { values } = expectColumn(ID, column, TEXT_TYPES) as StringColumn;
  const n = values.length;
  if (n === 0) return null;
  for (let i = 0; i < n; i++) if (values[i]!.includes(LINE_FEED)) return null;
  // planTexts refuses lone surrogates by column and row, as raw_text does.
  const { text, lengths } = planTexts(values, context.field.name);
  const out = new Uint8Array(varintSize(n) + text.length + n);
  let at = writeVarint(out, 0, n);
  let from = 0;
  for (let i = 0; i < n; i++) {
    // The plan's bytes are the values back to back: copy each, then its line feed.
    const end = from + lengths[i]!;
    out.set(text.subarray(from, end), at);
    at += end - from;
    out[at++] = 0x0a;
    from = end;
  }
  return out;
}

function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
  checkDecodeField(ID, context.field, matches(context.field));
  const what = `${ID} block of column '${context.field.name}'`;
  const reader = openBlock(ID, bytes, length, context.field);
  const text = decodeText(bytes.subarray(reader.offset), what);
  const values = text.split(LINE_FEED);
  // n values, each ended by a line feed, split into n + 1 pieces, the last empty.
  if (values.length !== length + 1 || values[length] !== "") {
    throw new FormatError(
      "CORRUPT",
      `Cannot decode ${what}: expected ${length} lines ending in a line feed, found ${
        values.length - 1
      } line feeds${values[values.length - 1] === "" ? "" : " and text after the last"}`,
      { column: context.field.name },
    );
  }
  values.length = length;
  return textColumn(context.field, values);
}

/**
 * Strings as lines of text, for codecs that model text from its context.
 *
 * @example Round-trip strings, emoji and empty ones included
 * ```ts
 * import assert from "node:assert/strict";
 * import { textLines } from "./text_lines.ts";
 * const field = { name: "s", type: "string", nullable: false } as const;
 * const column = { type: "string" as const, values: ["a", "", "🧊 é"], validity: null };
 * const bytes = textLines.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(textLines.decode(bytes, 3, { field, deps: [] }).values, column.values);
 * ```
 */
export const textLines: Predictor = Object.freeze(
  { id: ID, lossy: false, usesDeps: false, matches, encode, decode } satisfies Predictor,
);
