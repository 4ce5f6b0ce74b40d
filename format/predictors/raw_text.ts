/**
 * The `raw_text` predictor (string): every string's UTF-8 byte length, then
 * every string's bytes. Separating lengths from text lets the codec model
 * each on its own; it is the fallback for strings that fit nothing better.
 *
 * Layout (FORMAT.md §4): `[varint n][varint byte length × n][UTF-8 bytes of
 * every string, concatenated]`. Decoding checks the lengths against the bytes
 * left before reading any text and validates the UTF-8.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { Column, Field, StringColumn } from "../column.ts";
import { checkDecodeField, expectColumn, openBlock, TEXT_TYPES, textColumn } from "./_common.ts";
import { varintSize, writeVarint } from "./_ints.ts";
import { planTexts, readTexts, writeTexts } from "./_text.ts";
import type { DecodeContext, EncodeContext, Predictor } from "./predictor.ts";

const ID = "raw_text";

function matches(field: Field): boolean {
  return TEXT_TYPES.has(field.type);
}

function encode(column: Column, context: EncodeContext): Uint8Array {
  const { values } = expectColumn(ID, column, TEXT_TYPES) as StringColumn;
  const plan = planTexts(values, context.field.name);
  const out = new Uint8Array(varintSize(values.length) + plan.size);
  writeTexts(plan, out, writeVarint(out, 0, values.length));
  return out;
}

function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
  checkDecodeField(ID, context.field, matches(context.field));
  const reader = openBlock(ID, bytes, length, context.field);
  const values = readTexts(reader, length, `${ID} block of column '${context.field.name}'`);
  reader.end();
  return textColumn(context.field, values);
}

/**
 * Length-prefixed UTF-8, for any strings.
 *
 * @example Round-trip strings, emoji and empty ones included
 * ```ts
 * import assert from "node:assert/strict";
 * import { rawText } from "./raw_text.ts";
 * const field = { name: "s", type: "string", nullable: false } as const;
 * const column = { type: "string" as const, values: ["a", "", "🧊 é"], validity: null };
 * const bytes = rawText.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(rawText.decode(bytes, 3, { field, deps: [] }).values, column.values);
 * ```
 */
export const rawText: Predictor = Object.freeze(
  { id: ID, lossy: false, usesDeps: false, matches, encode, decode } satisfies Predictor,
);
