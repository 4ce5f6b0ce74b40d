/**
 * The one predictor interface: a reversible transform of a column's values into
 * bytes that a codec compresses well (deltas, zigzag, byte planes, dictionaries).
 *
 * A predictor is one file in `format/predictors/` exporting one object that
 * satisfies `Predictor`, plus one line in `registry.ts`. Its `id` is written into
 * archive footers: never rename or reuse one.
 *
 * The block layer (`format/block.ts`) owns nulls: it strips validity into a
 * bitmap before calling `encode` (null slots hold the type's zero) and puts it
 * back after `decode`. Predictors see values only.
 *
 * Pure: no I/O, no globals. Implements FORMAT.md §4 (predictors).
 *
 * @module
 */
import type { Column, Field } from "../column.ts";
import type { CodedStrings, DecodedColumn } from "../coded_strings.ts";

/** Float quantization levels. `QUANT_NONE` (the default) is lossless. */
export type Quantization = "QUANT_NONE" | "QUANT_HIGH" | "QUANT_MEDIUM" | "QUANT_LOW";

/** All quantization levels, lossless first. */
export const QUANTIZATIONS: readonly Quantization[] = Object.freeze([
  "QUANT_NONE",
  "QUANT_HIGH",
  "QUANT_MEDIUM",
  "QUANT_LOW",
]);

/** A non-fatal observation made while encoding (e.g. a non-monotonic timestamp series). */
export interface FormatWarning {
  /** Stable code, e.g. `NON_MONOTONIC_TIMESTAMPS`. */
  readonly code: string;
  /** Human sentence. */
  readonly message: string;
  /** Column the warning concerns. */
  readonly column: string;
}

/** What a predictor gets besides the values when encoding. */
export interface EncodeContext {
  /** The column's field. */
  readonly field: Field;
  /**
   * Columns of the same chunk this block is conditioned on (same length), in the
   * order the footer records them. Empty unless the predictor declares `usesDeps`.
   */
  readonly deps: readonly Column[];
  /** Receives warnings; never throws. */
  readonly warn: (warning: FormatWarning) => void;
}

/** What a predictor gets besides the bytes when decoding. */
export interface DecodeContext {
  /** The column's field. */
  readonly field: Field;
  /**
   * The decoded dependency columns, as at encode time: all `length` rows, or at least
   * `prefix` of them when `prefix` is given and the predictor declares `prefixDeps`.
   * A string dependency comes as codes alone (`CodedColumn`) only to a predictor that
   * declares `codedDeps`.
   */
  readonly deps: readonly DecodedColumn[];
  /**
   * The rows the caller will read, from the first: set when it needs only values
   * `[0, prefix)` (a slice or `peek` of a chunk's first rows; 0 ≤ prefix < length).
   * A decoder may then return just those `prefix` values, the same as the first
   * `prefix` of a whole decode, and skip the work and the checks of the rows after
   * them; one that ignores it returns all `length` values, which is as correct.
   * The bytes are those of all `length` rows either way. Optional: absent, decode all.
   */
  readonly prefix?: number;
}

/** A reversible (or, for quantizers, declared-lossy) column transform. */
export interface Predictor {
  /** Stable name written into archive footers. */
  readonly id: string;
  /** True when decode(encode(x)) may differ from x (float quantizers). */
  readonly lossy: boolean;
  /** True when the predictor conditions on other columns (`deps`). */
  readonly usesDeps: boolean;
  /**
   * True when a decode given `context.prefix` reads only the first `prefix` rows of
   * its `deps` (row `i` depends on rows up to `i` of them), so a reader may decode
   * those columns that far only. Optional: absent, the deps of a prefix decode are
   * decoded whole, as for any decode.
   */
  readonly prefixDeps?: boolean;
  /**
   * True when a decode takes a string dependency as codes into its dictionary
   * (`CodedColumn`, no string per row), so a reader that wants codes may decode it so.
   * Optional: absent, dependencies come as rows.
   */
  readonly codedDeps?: boolean;
  /** Whether this predictor can encode columns of this field's type. */
  matches(field: Field): boolean;
  /**
   * Encodes the values of `column` (validity already stripped; null slots hold zero).
   * Returns `null` when the data does not fit this predictor (e.g. more than 256
   * distinct strings for `category_u8`), so the caller falls back to another.
   */
  encode(column: Column, context: EncodeContext): Uint8Array | null;
  /**
   * Decodes exactly `length` values (or `context.prefix` of them, when given and
   * honoured). Throws `FormatError` (`CORRUPT`) naming the
   * expected and found counts when the bytes do not hold that; never returns wrong-length data.
   * The returned column has `validity: null`.
   */
  decode(bytes: Uint8Array, length: number, context: DecodeContext): Column;
  /**
   * For a predictor that decodes strings by dictionary: all `length` rows of a string
   * column as codes into the dictionary the block holds, checked as `decode` checks
   * them, without building a string per row; `decode` returns the same rows built
   * (`rowsOfCodes`). Never given `context.prefix`. Optional: absent, readers decode rows.
   */
  decodeCoded?(bytes: Uint8Array, length: number, context: DecodeContext): CodedStrings;
}
