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
 * @module
 */

/** A string column's rows as codes into a dictionary. */
export interface CodedStrings {
  /** One code per row: an index into `dictionary`. */
  readonly codes: Uint8Array | Uint16Array | Uint32Array;
  /** The texts the codes point at. */
  readonly dictionary: readonly string[];
}

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
  if (codes.length === values.length) coded.set(values, { codes, dictionary });
  return values;
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
