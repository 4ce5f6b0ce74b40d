/**
 * One column block: its raw layout, and decoding it (codec, then predictor).
 *
 * Raw block layout (before the codec), FORMAT.md §5:
 *   flags u8 (bit 0: a validity bitmap follows) ·
 *   [validity: ceil(rows / 8) bytes, LSB first, 1 = value present] ·
 *   predictor bytes
 *
 * Encoding (the predictor trial, then the codec) is `block_encode.ts`: a reader
 * loads only the predictors its blocks name, through the registry.
 *
 * No file I/O. Runs in the block pool's Workers.
 *
 * @module
 */
import type { Codec } from "../codecs/codec.ts";
import { CodecError } from "../codecs/errors.ts";
import { type Column, type Field, isWideDecimal, sliceColumn } from "./column.ts";
import type { CodedColumn, DecodedColumn } from "./coded_strings.ts";
import { FormatError } from "./errors.ts";
import { predictorById } from "./predictors/registry.ts";

export type { EncodeBlockOptions, EncodedBlock } from "./block_encode.ts";

/** Bit 0 of a raw block's flags byte: a validity bitmap follows. */
export const FLAG_VALIDITY = 1;

/** Where a block sits, for error messages. */
export interface BlockLocation {
  chunk: number;
  column: string;
  offset: number;
}

/** What {@link decodeBlock} needs besides the stored bytes. */
export interface BlockDecodeOptions {
  rows: number;
  rawLength: number;
  field: Field;
  predictor: string;
  codec: Codec;
  /** The decoded columns it is conditioned on (as codes only where its predictor declares `codedDeps`). */
  deps: readonly DecodedColumn[];
  at: BlockLocation;
  /** Only rows `[0, prefix)` are wanted (the predictor may then decode only those). */
  prefix?: number;
  /**
   * A string column may come back as codes alone ({@link CodedColumn}), when its
   * predictor decodes by dictionary (`decodeCoded`) and every row is wanted.
   */
  codes?: boolean;
}

/**
 * Decodes a stored block back into a column.
 *
 * @param stored The stored bytes (hash already checked by the caller).
 * @param options Row count, field, predictor id, codec, decoded deps, location; `prefix`
 * when only rows `[0, prefix)` are wanted; `codes` when codes may stand for a string column's rows.
 * @returns The column, with validity restored: `prefix` rows when given, else `rows`.
 * @throws {FormatError} CORRUPT when the codec or predictor rejects the bytes; UNKNOWN_PREDICTOR.
 */
export function decodeBlock(
  stored: Uint8Array,
  options: BlockDecodeOptions & { codes?: false },
): Promise<Column>;
export function decodeBlock(
  stored: Uint8Array,
  options: BlockDecodeOptions,
): Promise<DecodedColumn>;
export async function decodeBlock(
  stored: Uint8Array,
  options: BlockDecodeOptions,
): Promise<DecodedColumn> {
  const { rows, field, at } = options;
  const wanted = options.prefix === undefined ? rows : Math.max(0, Math.min(rows, options.prefix));
  const predictor = await predictorById(options.predictor);
  if (!predictor.matches(field)) {
    throw new FormatError(
      "CORRUPT",
      `Cannot decode chunk ${at.chunk} column "${at.column}": predictor "${predictor.id}" does not apply to type ${field.type}`,
      { chunk: at.chunk, column: at.column, offset: at.offset },
    );
  }
  let raw: Uint8Array;
  try {
    raw = await options.codec.decode(stored, options.rawLength);
  } catch (cause) {
    const detail = cause instanceof CodecError ? cause.message : String(cause);
    throw new FormatError(
      "CORRUPT",
      `Cannot decode chunk ${at.chunk} column "${at.column}" with ${options.codec.id}: ${detail}`,
      { cause, chunk: at.chunk, column: at.column, offset: at.offset },
    );
  }
  try {
    if (raw.length < 1 || (raw[0]! & ~FLAG_VALIDITY) !== 0) {
      throw new FormatError("CORRUPT", `block flags byte is ${raw[0]}`);
    }
    let body = raw.subarray(1);
    let validity: Uint8Array | null = null;
    if (raw[0]! & FLAG_VALIDITY) {
      const bitmapLength = (rows + 7) >> 3;
      if (body.length < bitmapLength) {
        throw new FormatError(
          "CORRUPT",
          `validity bitmap needs ${bitmapLength} bytes, ${body.length} left`,
        );
      }
      validity = new Uint8Array(wanted);
      for (let i = 0; i < wanted; i++) validity[i] = (body[i >> 3]! >> (i & 7)) & 1;
      body = body.subarray(bitmapLength);
    }
    if (options.codes && predictor.decodeCoded && wanted === rows && field.type === "string") {
      const coded = predictor.decodeCoded(body, rows, { field, deps: options.deps });
      if (coded.codes.length !== rows) {
        throw new FormatError(
          "CORRUPT",
          `predictor returned ${coded.codes.length} codes, expected ${rows}`,
        );
      }
      return { type: "string", coded, validity } satisfies CodedColumn;
    }
    let column = predictor.decode(
      body,
      rows,
      wanted < rows ? { field, deps: options.deps, prefix: wanted } : { field, deps: options.deps },
    );
    // A predictor asked for a prefix may return it, or every row (it need not honour it).
    if (column.values.length !== rows && column.values.length !== wanted) {
      throw new FormatError(
        "CORRUPT",
        `predictor returned ${column.values.length} rows, expected ${wanted}`,
      );
    }
    if (column.values.length !== wanted) column = sliceColumn(column, 0, wanted);
    if (isWideDecimal(field) && column.values instanceof BigInt64Array) {
      column = { type: "decimal", values: Array.from(column.values), validity: null };
    }
    return validity ? ({ ...column, validity } as Column) : column;
  } catch (cause) {
    if (cause instanceof FormatError && cause.code !== "CORRUPT") throw cause;
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new FormatError(
      "CORRUPT",
      `Cannot decode chunk ${at.chunk} column "${at.column}" (${predictor.id}): ${detail}`,
      { cause, chunk: at.chunk, column: at.column, offset: at.offset },
    );
  }
}
