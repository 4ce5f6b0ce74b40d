/**
 * The `bool_bits` predictor (bool): eight rows per byte, least significant
 * bit first. Any non-zero input byte counts as true.
 *
 * Layout (FORMAT.md §4): `[varint n][ceil(n / 8) bytes]`, row `i` in bit
 * `i % 8` of byte `floor(i / 8)`; the unused high bits of the last byte are 0,
 * and decoding refuses them otherwise.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { BoolColumn, Column, Field } from "../column.ts";
import { FormatError } from "../errors.ts";
import { checkDecodeField, expectColumn, openBlock } from "./_common.ts";
import { varintSize, writeVarint } from "./_ints.ts";
import type { DecodeContext, Predictor } from "./predictor.ts";

const ID = "bool_bits";
const BOOL: ReadonlySet<Field["type"]> = new Set(["bool"]);

function matches(field: Field): boolean {
  return field.type === "bool";
}

function encode(column: Column): Uint8Array {
  const { values } = expectColumn(ID, column, BOOL) as BoolColumn;
  const n = values.length;
  const at = varintSize(n);
  const out = new Uint8Array(at + Math.ceil(n / 8));
  writeVarint(out, 0, n);
  for (let i = 0; i < n; i++) {
    if (values[i] !== 0) out[at + (i >>> 3)]! |= 1 << (i & 7);
  }
  return out;
}

function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
  checkDecodeField(ID, context.field, matches(context.field));
  const reader = openBlock(ID, bytes, length, context.field);
  const at = reader.offset;
  const bits = reader.bytes(Math.ceil(length / 8), "bits");
  reader.end();
  const tail = length & 7;
  if (tail !== 0 && bits[bits.length - 1]! >>> tail !== 0) {
    throw new FormatError(
      "CORRUPT",
      `Cannot decode ${ID} block of column '${context.field.name}': expected the ${
        8 - tail
      } padding bits after row ${length - 1} to be 0, found 0x${
        (bits[bits.length - 1]! >>> tail).toString(16)
      }`,
      { column: context.field.name, offset: at + bits.length - 1 },
    );
  }
  const values = new Uint8Array(length);
  for (let i = 0; i < length; i++) values[i] = (bits[i >>> 3]! >>> (i & 7)) & 1;
  return { type: "bool", values, validity: null };
}

/**
 * Bit-packed booleans.
 *
 * @example Round-trip ten flags
 * ```ts
 * import assert from "node:assert/strict";
 * import { boolBits } from "./bool_bits.ts";
 * const field = { name: "ok", type: "bool", nullable: false } as const;
 * const column = { type: "bool", values: Uint8Array.of(1, 0, 0, 1, 1, 1, 0, 0, 1, 0), validity: null } as const;
 * const bytes = boolBits.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(boolBits.decode(bytes, 10, { field, deps: [] }).values, column.values);
 * ```
 */
export const boolBits: Predictor = Object.freeze(
  { id: ID, lossy: false, usesDeps: false, matches, encode, decode } satisfies Predictor,
);
