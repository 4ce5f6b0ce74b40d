/**
 * Telling a CSV file's delimiter from its first lines, for files that do not say:
 * `,`, `;` (spreadsheets in locales with decimal commas), tab (`.tsv`) or `|`. The
 * local reader, the append path and the cluster's row-boundary scan all ask here, so
 * they read a file the same way.
 *
 * The rule: split up to {@link SNIFF_RECORDS} records of the first
 * {@link SNIFF_BYTES} bytes (quote-aware: `"` quotes a field, `""` escapes one) with
 * each candidate; a candidate qualifies when every record has the same number of
 * fields and that number is above one; among those the most fields wins, ties in the
 * order `,` tab `;` `|`. With only a header line, the candidate found most often
 * outside quotes wins. When none qualifies the delimiter is `,`, as for any CSV, and
 * the reader's own checks report what does not fit.
 *
 * @module
 */
import { openForRead } from "./_file.ts";

/** Delimiters tried, in order of preference on a tie. */
export const SNIFFED_DELIMITERS: readonly string[] = Object.freeze([",", "\t", ";", "|"]);

/** Bytes read from the start of the file to tell its dialect. */
export const SNIFF_BYTES = 64 * 1024;

/** Records compared at most. */
export const SNIFF_RECORDS = 100;

/** How a CSV file is read. */
export interface CsvDialect {
  /** The field delimiter. */
  readonly delimiter: string;
  /** Whether it was told from the file (false: given, or the default for lack of a sign). */
  readonly sniffed: boolean;
  /** Whether any field of the lines read is quoted with `"`. */
  readonly quoted: boolean;
}

/**
 * The dialect of a CSV file: the delimiter given, or the one its first lines show.
 *
 * @param path The file.
 * @param delimiter The delimiter given (then nothing is read but the quoting check).
 * @returns The dialect.
 * @throws {IoError} READ_FAILED when the file cannot be read.
 */
export async function csvDialect(path: string, delimiter?: string): Promise<CsvDialect> {
  const head = await readHead(path);
  if (delimiter !== undefined) {
    return { delimiter, sniffed: false, quoted: head.includes('"') };
  }
  return sniffText(head);
}

/**
 * The dialect of the first lines of a CSV text (see the module doc for the rule).
 *
 * @param text The start of the file (a last line cut short is ignored).
 * @returns The dialect.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sniffText } from "./csv_dialect.ts";
 * assert.equal(sniffText("a;b\n1,5;2\n").delimiter, ";");
 * assert.equal(sniffText("a\tb\n1\t2\n").delimiter, "\t");
 * assert.equal(sniffText('a,b\n"x;y",2\n').delimiter, ",");
 * ```
 */
export function sniffText(text: string): CsvDialect {
  const quoted = text.includes('"');
  let best: { delimiter: string; fields: number } | null = null;
  for (const d of SNIFFED_DELIMITERS) {
    const counts = fieldCounts(text, d);
    if (counts.length < 2) continue;
    const first = counts[0]!;
    if (first > 1 && counts.every((c) => c === first) && (best === null || first > best.fields)) {
      best = { delimiter: d, fields: first };
    }
  }
  if (best !== null) return { delimiter: best.delimiter, sniffed: true, quoted };
  // A header alone: the candidate seen most often outside quotes.
  const counts = fieldCounts(text, ",");
  if (counts.length === 1) {
    let header: { delimiter: string; fields: number } | null = null;
    for (const d of SNIFFED_DELIMITERS) {
      const fields = fieldCounts(text, d)[0] ?? 1;
      if (fields > 1 && (header === null || fields > header.fields)) {
        header = { delimiter: d, fields };
      }
    }
    if (header !== null) return { delimiter: header.delimiter, sniffed: true, quoted };
  }
  return { delimiter: ",", sniffed: false, quoted };
}

/**
 * Fields per record with `delimiter`, quote-aware, for the complete records of `text`
 * (blank lines skipped, a last record without its line end dropped unless it is all
 * there is).
 */
function fieldCounts(text: string, delimiter: string): number[] {
  const counts: number[] = [];
  let fields = 1;
  let inQuotes = false;
  let any = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (; i < text.length && counts.length < SNIFF_RECORDS; i++) {
    const c = text[i]!;
    if (inQuotes) {
      if (c === '"') {
        if (text[i + 1] === '"') i++;
        else inQuotes = false;
      }
      continue;
    }
    if (c === '"') {
      inQuotes = true;
      any = true;
    } else if (c === delimiter) {
      fields++;
      any = true;
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      if (any) counts.push(fields);
      fields = 1;
      any = false;
    } else any = true;
  }
  if (any && counts.length === 0) counts.push(fields);
  return counts;
}

async function readHead(path: string): Promise<string> {
  const file = await openForRead(path);
  try {
    const buf = new Uint8Array(SNIFF_BYTES);
    let n = 0;
    while (n < buf.length) {
      const got = await file.read(buf.subarray(n));
      if (got === null) break;
      n += got;
    }
    // A multi-byte character cut at the end decodes as U+FFFD, which no rule looks at.
    return new TextDecoder().decode(buf.subarray(0, n));
  } finally {
    file.close();
  }
}
