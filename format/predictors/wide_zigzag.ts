/**
 * The `wide_zigzag` predictor (decimal wider than 18 digits): each unscaled value
 * zigzagged (so small magnitudes of either sign stay small) and stored as byte
 * planes of the width the largest value needs, up to 32 bytes (Decimal256). The
 * integer predictors take a wide decimal's block whenever every value fits 64 bits;
 * this one holds blocks that do not.
 *
 * Layout (FORMAT.md §4.1): `[varint n][u8 width 1..32][width byte planes of
 * zigzag(v)]`: byte 0 of every value, then byte 1, and so on (little-endian within
 * a value). Decoding checks the width and that every value fits the field's
 * precision, so a damaged block is `CORRUPT`, never an out-of-range decimal.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import { type Column, type DecimalColumn, type Field, isWideDecimal } from "../column.ts";
import { fitsPrecision } from "../decimal_value.ts";
import { FormatError } from "../errors.ts";
import { checkDecodeField, expectColumn, openBlock } from "./_common.ts";
import { varintSize, writeVarint } from "./_ints.ts";
import type { DecodeContext, EncodeContext, Predictor } from "./predictor.ts";

const ID = "wide_zigzag";
const DECIMAL: ReadonlySet<Field["type"]> = new Set(["decimal"]);
/** Widest value: 256 bits. */
const MAX_WIDTH = 32;

function matches(field: Field): boolean {
  return isWideDecimal(field);
}

function zigzag(v: bigint): bigint {
  return v < 0n ? (-v << 1n) - 1n : v << 1n;
}

function unzigzag(z: bigint): bigint {
  return (z & 1n) === 1n ? -((z + 1n) >> 1n) : z >> 1n;
}

function encode(column: Column, context: EncodeContext): Uint8Array {
  const { values } = expectColumn(ID, column, DECIMAL) as DecimalColumn;
  if (!matches(context.field)) {
    throw new FormatError(
      "BAD_ARGUMENT",
      `Cannot encode column '${context.field.name}' with ${ID}: it takes decimals of more than 18 digits`,
    );
  }
  const n = values.length;
  const zig = new Array<bigint>(n);
  let max = 0n;
  for (let i = 0; i < n; i++) {
    const z = zigzag(values[i]!);
    zig[i] = z;
    if (z > max) max = z;
  }
  let width = 1;
  while (width < MAX_WIDTH && max >> BigInt(8 * width) !== 0n) width++;
  const head = varintSize(n);
  const out = new Uint8Array(head + 1 + width * n);
  writeVarint(out, 0, n);
  out[head] = width;
  const planes = head + 1;
  for (let i = 0; i < n; i++) {
    let z = zig[i]!;
    for (let b = 0; b < width && z !== 0n; b++) {
      out[planes + b * n + i] = Number(z & 0xffn);
      z >>= 8n;
    }
  }
  return out;
}

function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
  const { field } = context;
  checkDecodeField(ID, field, matches(field));
  const what = `${ID} block of column '${field.name}'`;
  const reader = openBlock(ID, bytes, length, field);
  const width = reader.u8("width");
  if (width < 1 || width > MAX_WIDTH) {
    throw new FormatError(
      "CORRUPT",
      `Cannot decode ${what}: expected a width of 1..${MAX_WIDTH} bytes, found ${width}`,
      { column: field.name },
    );
  }
  const planes = reader.bytes(width * length, "planes");
  reader.end();
  const precision = field.precision ?? 0;
  const values = new Array<bigint>(length);
  for (let i = 0; i < length; i++) {
    let z = 0n;
    for (let b = width - 1; b >= 0; b--) z = (z << 8n) | BigInt(planes[b * length + i]!);
    const v = unzigzag(z);
    if (!fitsPrecision(v, precision)) {
      throw new FormatError(
        "CORRUPT",
        `Cannot decode ${what}: row ${i} holds ${v}, which has more than ${precision} digits`,
        { column: field.name },
      );
    }
    values[i] = v;
  }
  return { type: "decimal", values, validity: null };
}

/**
 * Zigzag + byte planes of any width, for decimals wider than 64 bits.
 *
 * @example Round-trip a DECIMAL(38, 2) block
 * ```ts
 * import assert from "node:assert/strict";
 * import { wideZigzag } from "./wide_zigzag.ts";
 * const field = { name: "amount", type: "decimal", nullable: false, precision: 38, scale: 2 } as const;
 * const values = [123456789012345678901234567890n, -5n, 0n];
 * const column = { type: "decimal", values, validity: null } as const;
 * const bytes = wideZigzag.encode(column, { field, deps: [], warn: () => {} })!;
 * assert.deepEqual(wideZigzag.decode(bytes, 3, { field, deps: [] }).values, values);
 * ```
 */
export const wideZigzag: Predictor = Object.freeze(
  { id: ID, lossy: false, usesDeps: false, matches, encode, decode } satisfies Predictor,
);
