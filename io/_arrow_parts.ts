/**
 * A batch's Arrow buffers ({@link ArrowParts}) built without apache-arrow, for the
 * column types whose buffers are plain: int64 and timestamp (the values as they are),
 * float64, and strings (offsets and UTF-8, copied from each dictionary entry's bytes
 * when the decoder left codes or gave the column as codes alone, else ASCII copied char
 * by char). A thaw's Workers then
 * never load apache-arrow (about 70 ms of each Worker's start on this machine); the
 * thread writing the file still does. The parts are those `arrow_table.ts`'s
 * `batchToArrowParts` makes, buffer for buffer (`_arrow_parts_test.ts` compares them);
 * any other column type, or a string that is not ASCII and has no codes, gives null
 * and the caller takes that path.
 *
 * @module
 */
import type { Batch } from "../format/column.ts";
import {
  codedColumn,
  codedUtf8,
  type DecodedColumn,
  utf8OfCodes,
} from "../format/coded_strings.ts";
import { movable } from "../internal/transfer.ts";
import type { ArrowColumnParts, ArrowParts } from "./arrow_table.ts";

/**
 * The batch's Arrow parts, or null when a column needs apache-arrow's conversion.
 *
 * @param batch The rows; a string column may be its codes alone (`CodedColumn`).
 * @returns The parts and the buffers to transfer, or null.
 */
export function plainArrowParts(
  batch: Pick<Batch, "length"> & { columns: readonly DecodedColumn[] },
): { parts: ArrowParts; transfer: ArrayBuffer[] } | null {
  const built: (Omit<ArrowColumnParts, "values"> & { values: ArrayBufferView })[] = [];
  for (const col of batch.columns) {
    const part = plainColumn(col);
    if (part === null) return null;
    built.push(part);
  }
  // Moved in the order `batchToArrowParts` moves them (a buffer already moving is copied).
  const transfer = new Set<ArrayBuffer>();
  const own = <T extends ArrayBufferView>(view: T): T => movable(view, transfer);
  const columns = built.map((c): ArrowColumnParts => ({
    length: c.length,
    nullCount: c.nullCount,
    nullBitmap: c.nullBitmap ? own(c.nullBitmap) : null,
    valueOffsets: c.valueOffsets ? own(c.valueOffsets) : null,
    values: own(c.values),
  }));
  return { parts: { arrowParts: true, length: batch.length, columns }, transfer: [...transfer] };
}

function plainColumn(col: DecodedColumn): ArrowColumnParts | null {
  if ("coded" in col) {
    const length = col.coded.codes.length;
    const offsets = new Int32Array(length + 1);
    const bytes = utf8OfCodes(col.coded, null, offsets);
    if (bytes !== null) {
      return { ...arrowNulls(col.validity, length), length, valueOffsets: offsets, values: bytes };
    }
    return plainColumn(codedColumn(col)); // more entries than rows, or one not well-formed
  }
  const length = col.values.length;
  const { nullCount, nullBitmap } = arrowNulls(col.validity, length);
  switch (col.type) {
    case "int64":
    case "timestamp":
    case "float64":
      return { length, nullCount, nullBitmap, valueOffsets: null, values: col.values };
    case "string": {
      const offsets = new Int32Array(length + 1);
      const bytes = codedUtf8(col.values, length, offsets) ?? asciiUtf8(col.values, offsets);
      if (bytes === null) return null;
      return { length, nullCount, nullBitmap, valueOffsets: offsets, values: bytes };
    }
    default:
      return null;
  }
}

/**
 * A column's null count and Arrow validity bitmap (LSB first), the bitmap null when
 * no row is null. `arrow_table.ts` takes it too.
 *
 * @param validity One byte per row, 0 for null; or null when every row is present.
 * @param length Rows.
 * @returns The count and the bitmap.
 */
export function arrowNulls(
  validity: Uint8Array | null,
  length: number,
): { nullCount: number; nullBitmap: Uint8Array | null } {
  let nullCount = 0;
  if (validity !== null) { for (let i = 0; i < length; i++) if (validity[i] === 0) nullCount++; }
  return { nullCount, nullBitmap: nullCount > 0 ? packBits(validity!, length) : null };
}

/**
 * One bit per row, least significant first, set where `bytes[i]` is not 0 (Arrow's
 * validity and boolean layout).
 *
 * @param bytes One byte per row.
 * @param len Rows.
 * @returns The bitmap.
 */
export function packBits(bytes: Uint8Array, len: number): Uint8Array {
  const out = new Uint8Array((len + 7) >> 3);
  for (let i = 0; i < len; i++) if (bytes[i]) out[i >> 3]! |= 1 << (i & 7);
  return out;
}

/**
 * The UTF-8 bytes of a column of ASCII strings (the common case: one byte per code
 * unit) laid end to end, with each row's end in `offsets[i + 1]`, in a buffer of their
 * exact size (the one a Worker moves and Arrow writes); null at the first string that
 * is not ASCII, or past 2 GiB (the caller then encodes the general way).
 * `arrow_table.ts` lays out its ASCII columns with it too.
 *
 * @param values A string column's values.
 * @param offsets `values.length + 1` offsets, `offsets[0]` already 0.
 * @returns The bytes, or null.
 */
export function asciiUtf8(values: readonly string[], offsets: Int32Array): Uint8Array | null {
  let total = 0;
  for (let i = 0; i < values.length; i++) {
    total += values[i]!.length;
    if (total > 2147483647) return null;
    offsets[i + 1] = total;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (let i = 0; i < values.length; i++) {
    const s = values[i]!;
    for (let j = 0; j < s.length; j++) {
      const c = s.charCodeAt(j);
      if (c >= 0x80) return null;
      out[at++] = c;
    }
  }
  return out;
}
