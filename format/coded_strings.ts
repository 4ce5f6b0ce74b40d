/**
 * What a dictionary decoder knew about a string column it built: each row's code
 * into the dictionary of distinct texts. A predictor that decodes by dictionary
 * (`category_u8`, the keyed predictors) records it with {@link withCodes}; readers of
 * the column downstream (the keyed predictors' keys, the CSV renderer) ask
 * {@link codesOf} and do their work once per dictionary entry instead of once per row:
 * number the keys from the codes, encode each entry's UTF-8 once and copy it.
 *
 * A side table keyed by the values array, not a field of the column: `Column` and
 * every consumer that does not care stay as they are, and a column sliced, copied or
 * rebuilt simply has no codes. Consumers must still check, row by row, that
 * `values[i] === dictionary[codes[i]]` (one pointer comparison when it holds, as the
 * decoder stored the dictionary's own strings) and fall back to the value itself
 * when it does not, so that a values array changed after decoding can never be
 * misread.
 *
 * A column can also be held as its codes alone ({@link CodedColumn}), its rows never
 * built: what a decode that only posts a column on (a thaw's decoding Worker) asks a
 * dictionary decoder for. There the codes are the column, not a hint beside it, so
 * nothing needs checking; {@link rowsOf} builds the rows where a consumer needs them.
 *
 * @module
 */
import type { Column } from "./column.ts";

/** A string column's rows as codes into a dictionary. */
export interface CodedStrings {
  /** One code per row: an index into `dictionary` (always this one array type, so loops over codes stay monomorphic). */
  readonly codes: Uint32Array;
  /** The texts the codes point at. */
  readonly dictionary: readonly string[];
}

/**
 * A string column held as codes into its dictionary, without one string per row: a
 * dictionary decoder's answer to a caller that asked for codes (`Predictor.decodeCoded`,
 * `decodeChunkJob`'s `codes`), and how such a column crosses between threads.
 */
export interface CodedColumn {
  readonly type: "string";
  readonly coded: CodedStrings;
  readonly validity: Uint8Array | null;
}

/** A decoded column: rows, or (a string column) codes alone. */
export type DecodedColumn = Column | CodedColumn;

const coded = new WeakMap<readonly string[], CodedStrings>();

/**
 * Records that `values[i]` is `dictionary[codes[i]]` for every row.
 *
 * @param values The column's values (built from the dictionary's strings).
 * @param codes One code per value (as many as `values`).
 * @param dictionary The entries.
 * @returns `values`.
 */
export function withCodes<T extends readonly string[]>(
  values: T,
  codes: Uint8Array | Uint16Array | Uint32Array,
  dictionary: readonly string[],
): T {
  if (codes.length === values.length) {
    coded.set(values, {
      codes: codes instanceof Uint32Array ? codes : new Uint32Array(codes),
      dictionary,
    });
  }
  return values;
}

/**
 * A coded column's rows built from its codes, `dictionary[codes[i]]` each, with the
 * codes recorded on them ({@link withCodes}).
 *
 * @param codes One code per row (each below `dictionary.length`: the caller checked).
 * @param dictionary The entries.
 * @param into An array of `codes.length` to fill; by default a new one.
 * @returns The rows (`into` when given).
 */
export function rowsOfCodes(
  codes: Uint32Array,
  dictionary: readonly string[],
  into: string[] = new Array<string>(codes.length),
): string[] {
  for (let i = 0; i < codes.length; i++) into[i] = dictionary[codes[i]!]!;
  return withCodes(into, codes, dictionary);
}

/**
 * A {@link CodedColumn}'s rows built from its codes, with the codes recorded on them
 * ({@link withCodes}).
 *
 * @param column The coded column.
 * @param into An array of the rows' length to fill (a caller that reads the rows only
 * for a while can keep one per column); by default a new one.
 * @returns The column with its rows.
 */
export function codedColumn(
  column: CodedColumn,
  into: string[] = new Array<string>(column.coded.codes.length),
): Column {
  const { codes, dictionary } = column.coded;
  return {
    type: "string",
    values: rowsOfCodes(codes, dictionary, into),
    validity: column.validity,
  };
}

/**
 * A decoded column with rows: a {@link CodedColumn}'s built ({@link codedColumn}), any
 * other as it is.
 *
 * @param column The column.
 * @returns A column of rows.
 */
export function rowsOf(column: DecodedColumn): Column {
  return "coded" in column ? codedColumn(column) : column;
}

/** A decoded column's row count. */
export function rowCount(column: DecodedColumn): number {
  return "coded" in column ? column.coded.codes.length : column.values.length;
}

/**
 * The codes recorded for a values array by {@link withCodes}, if any (check each row
 * as this module's header says before trusting a code).
 *
 * @param values A string column's values.
 * @returns The codes and dictionary, or undefined.
 */
export function codesOf(values: readonly string[]): CodedStrings | undefined {
  const found = coded.get(values);
  return found !== undefined && found.codes.length === values.length ? found : undefined;
}

const encoder = new TextEncoder();

/**
 * The UTF-8 bytes of a coded column's first `length` rows, laid end to end, with each
 * row's end in `offsets[i + 1]` (Arrow's string layout): each entry encoded once, then
 * copied per row. Null, with `offsets` to be rewritten, when the values have no codes,
 * a row is not its code's entry, an entry a row uses is not well-formed UTF-16 (the
 * caller's general path then reports it), or the bytes pass 2 GiB.
 *
 * @param values A string column's values.
 * @param length Rows (the column's length).
 * @param offsets `length + 1` offsets, `offsets[0]` already 0.
 * @returns The bytes, in a buffer of their exact size; or null.
 */
export function codedUtf8(
  values: readonly string[],
  length: number,
  offsets: Int32Array,
): Uint8Array | null {
  const coded = codesOf(values);
  if (coded === undefined || length !== values.length) return null;
  return utf8OfCodes(coded, values, offsets);
}

/**
 * {@link codedUtf8} of codes: of a {@link CodedColumn}'s (`values` null: its codes are
 * its rows), or of rows that carry them (`values`, each checked against its code).
 *
 * @param coded The codes and dictionary.
 * @param values The rows to check, or null.
 * @param offsets `codes.length + 1` offsets, `offsets[0]` already 0.
 * @returns The bytes, in a buffer of their exact size; or null.
 */
export function utf8OfCodes(
  coded: CodedStrings,
  values: readonly string[] | null,
  offsets: Int32Array,
): Uint8Array | null {
  const { codes, dictionary } = coded;
  const length = codes.length;
  if (dictionary.length > length) return null;
  const at = new Int32Array(dictionary.length);
  const size = new Int32Array(dictionary.length);
  let room = 0;
  for (const s of dictionary) room += 3 * s.length;
  const bytes = new Uint8Array(room);
  let end = 0;
  for (let e = 0; e < dictionary.length; e++) {
    const s = dictionary[e]!;
    at[e] = end;
    if (!s.isWellFormed()) {
      size[e] = -1;
      continue;
    }
    size[e] = encoder.encodeInto(s, bytes.subarray(end)).written;
    end += size[e]!;
  }
  let total = 0;
  for (let i = 0; i < length; i++) {
    const c = codes[i]!;
    const n = size[c]!;
    if (n < 0 || (values !== null && values[i] !== dictionary[c])) return null;
    total += n;
    if (total > 2147483647) return null;
    offsets[i + 1] = total;
  }
  const out = new Uint8Array(total);
  let p = 0;
  for (let i = 0; i < length; i++) {
    const c = codes[i]!;
    const from = at[c]!;
    const n = size[c]!;
    if (n > 16) out.set(bytes.subarray(from, from + n), p);
    else for (let k = 0; k < n; k++) out[p + k] = bytes[from + k]!;
    p += n;
  }
  return out;
}
