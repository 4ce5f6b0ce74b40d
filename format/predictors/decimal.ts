/**
 * The `decimal_frame` and `decimal_delta` predictors (float64, lossless):
 * floats that were written as short decimals (`12.8`, `0.05`, `39.81`) stored
 * as integers `m` with one decimal scale `k` for the block, `x = m / 10^k`,
 * then through the integer predictors `frame_zigzag` / `delta_zigzag`.
 *
 * Why this is exact: for every value the encoder checks that `m / 10^k`
 * (one correctly rounded IEEE division of two exactly representable integers)
 * gives back the same 64 bits; if any value fails for every `k` up to
 * `MAX_SCALE` (NaN, ±Infinity, -0, or more digits), the predictor returns `null`
 * and the block falls back to `float64_planes`. Decoding performs the same
 * division, so it reproduces the bits the encoder checked.
 *
 * Layout (FORMAT.md §4): `[u8 k][bytes of frame_zigzag or delta_zigzag of m]`.
 *
 * Pure: no I/O, no globals.
 *
 * @module
 */
import type { Column, Field } from "../column.ts";
import { FormatError } from "../errors.ts";
import { checkDecodeField, expectColumn } from "./_common.ts";
import { deltaZigzag } from "./delta_zigzag.ts";
import { frameZigzag } from "./frame_zigzag.ts";
import type { DecodeContext, EncodeContext, Predictor } from "./predictor.ts";

/** Largest decimal scale tried (10^9: nanodegrees, micro-cents). */
export const MAX_SCALE = 9;
const FLOAT_TYPES = new Set(["float64"] as const);
const POW10 = Array.from({ length: MAX_SCALE + 1 }, (_, k) => 10 ** k);
const INT_FIELD: Field = { name: "m", type: "int64", nullable: false };

function matches(field: Field): boolean {
  return field.type === "float64";
}

/** The smallest scale at which every value is an exact short decimal, or -1. */
function scaleOf(values: Float64Array): number {
  let k = 0;
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    if (!Number.isFinite(x) || Object.is(x, -0)) return -1;
    for (;;) {
      const p = POW10[k]!;
      const m = Math.round(x * p);
      if (Math.abs(m) <= Number.MAX_SAFE_INTEGER && m / p === x) break;
      if (++k > MAX_SCALE) return -1;
    }
  }
  return k;
}

function makeDecimal(id: string, inner: Predictor): Predictor {
  function encode(column: Column, context: EncodeContext): Uint8Array | null {
    const values = (expectColumn(id, column, FLOAT_TYPES as ReadonlySet<Column["type"]>) as {
      values: Float64Array;
    })
      .values;
    const k = scaleOf(values);
    if (k < 0) return null;
    const p = POW10[k]!;
    const ints = new BigInt64Array(values.length);
    for (let i = 0; i < values.length; i++) ints[i] = BigInt(Math.round(values[i]! * p));
    const body = inner.encode({ type: "int64", values: ints, validity: null }, {
      ...context,
      field: INT_FIELD,
    });
    if (!body) return null;
    const out = new Uint8Array(1 + body.length);
    out[0] = k;
    out.set(body, 1);
    return out;
  }

  function decode(bytes: Uint8Array, length: number, context: DecodeContext): Column {
    checkDecodeField(id, context.field, matches(context.field));
    if (bytes.length < 1) {
      throw new FormatError(
        "CORRUPT",
        `Cannot decode ${id} block: it is empty, expected a scale byte`,
      );
    }
    const k = bytes[0]!;
    if (k > MAX_SCALE) {
      throw new FormatError(
        "CORRUPT",
        `Cannot decode ${id} block: scale is ${k}, at most ${MAX_SCALE} is valid`,
      );
    }
    const ints = inner.decode(bytes.subarray(1), length, { field: INT_FIELD, deps: [] })
      .values as BigInt64Array;
    const p = POW10[k]!;
    const values = new Float64Array(length);
    for (let i = 0; i < length; i++) {
      const m = Number(ints[i]!);
      if (!Number.isSafeInteger(m)) {
        throw new FormatError(
          "CORRUPT",
          `Cannot decode ${id} block: row ${i} holds ${
            ints[i]
          }, beyond the exact range of a decimal`,
        );
      }
      values[i] = m / p;
    }
    return { type: "float64", values, validity: null };
  }

  return Object.freeze({ id, lossy: false, usesDeps: false, matches, encode, decode }) as Predictor;
}

/** Short decimals as integers, frame of reference: for readings that jump around a range. */
export const decimalFrame: Predictor = makeDecimal("decimal_frame", frameZigzag);

/** Short decimals as integers, deltas: for slowly moving series (prices, temperatures). */
export const decimalDelta: Predictor = makeDecimal("decimal_delta", deltaZigzag);
