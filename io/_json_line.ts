/**
 * A scanner for one JSON-lines record: a top-level object whose members come out as
 * (key, kind, source span) without building JS values. Numbers keep their source text
 * (so integers beyond 2^53 stay exact) and nested objects/arrays keep theirs (so they
 * can be stored verbatim as text). Strings are decoded, through `JSON.parse` only when
 * they hold escapes.
 *
 * Accepts the non-standard number tokens `NaN`, `Infinity` and `-Infinity` (as Python's
 * `json` writes them), so float columns holding them round-trip.
 *
 * Pure: no I/O.
 *
 * @module
 */

/** Member kinds. */
export const J_NULL = 0;
/** A JSON string (decoded in `strs`). */
export const J_STRING = 1;
/** A JSON number (source span). */
export const J_NUMBER = 2;
/** `true`. */
export const J_TRUE = 3;
/** `false`. */
export const J_FALSE = 4;
/** An object or array (source span). */
export const J_NESTED = 5;

/** Thrown (and turned into an `IoError` by the caller) when a line is not a JSON object. */
export class JsonLineError extends Error {
  override name = "JsonLineError";
}

/** The members of the last scanned line. */
export class JsonLineScanner {
  /** Member keys. */
  keys: string[] = [];
  /** Member kinds (`J_*`). */
  kinds: number[] = [];
  /** Value span starts. */
  vs: number[] = [];
  /** Value span ends. */
  ve: number[] = [];
  /** Decoded strings, for `J_STRING` members. */
  strs: string[] = [];
  /** Number of members. */
  count = 0;

  /**
   * Scans `text[s, e)`, one JSON object.
   *
   * @throws {JsonLineError} when it is not one JSON object.
   */
  scan(text: string, s: number, e: number): void {
    this.count = 0;
    let i = skipWs(text, s, e);
    if (i >= e || text.charCodeAt(i) !== 123) {
      throw new JsonLineError("the line is not a JSON object");
    }
    i = skipWs(text, i + 1, e);
    if (i < e && text.charCodeAt(i) === 125) {
      this.#end(text, i + 1, e);
      return;
    }
    for (;;) {
      if (i >= e || text.charCodeAt(i) !== 34) throw new JsonLineError("expected a quoted key");
      const kq = stringEnd(text, i, e);
      const key = decodeString(text, i, kq);
      i = skipWs(text, kq + 1, e);
      if (i >= e || text.charCodeAt(i) !== 58) {
        throw new JsonLineError(`expected ':' after key '${key}'`);
      }
      i = skipWs(text, i + 1, e);
      if (i >= e) throw new JsonLineError(`missing value of key '${key}'`);
      const k = this.count++;
      this.keys[k] = key;
      this.vs[k] = i;
      const c = text.charCodeAt(i);
      if (c === 34) {
        const q = stringEnd(text, i, e);
        this.kinds[k] = J_STRING;
        this.strs[k] = decodeString(text, i, q);
        i = q + 1;
      } else if (c === 123 || c === 91) {
        const end = nestedEnd(text, i, e);
        try {
          JSON.parse(text.slice(i, end));
        } catch {
          throw new JsonLineError(`the value of key '${key}' is not valid JSON`);
        }
        this.kinds[k] = J_NESTED;
        i = end;
      } else if (c === 116 && text.startsWith("true", i)) {
        this.kinds[k] = J_TRUE;
        i += 4;
      } else if (c === 102 && text.startsWith("false", i)) {
        this.kinds[k] = J_FALSE;
        i += 5;
      } else if (c === 110 && text.startsWith("null", i)) {
        this.kinds[k] = J_NULL;
        i += 4;
      } else {
        const end = numberEnd(text, i, e);
        if (end === i) throw new JsonLineError(`the value of key '${key}' is not valid JSON`);
        this.kinds[k] = J_NUMBER;
        i = end;
      }
      this.ve[k] = i;
      i = skipWs(text, i, e);
      if (i >= e) throw new JsonLineError("the object is not closed");
      const sep = text.charCodeAt(i);
      if (sep === 44) {
        i = skipWs(text, i + 1, e);
        continue;
      }
      if (sep === 125) {
        this.#end(text, i + 1, e);
        return;
      }
      throw new JsonLineError(`expected ',' or '}' after the value of key '${key}'`);
    }
  }

  #end(text: string, i: number, e: number): void {
    if (skipWs(text, i, e) !== e) throw new JsonLineError("unexpected text after the object");
  }
}

function skipWs(text: string, i: number, e: number): number {
  while (i < e) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13 && c !== 10) break;
    i++;
  }
  return i;
}

/** Index of the closing quote of the string opening at `i`. */
function stringEnd(text: string, i: number, e: number): number {
  let j = i + 1;
  for (;;) {
    const q = text.indexOf('"', j);
    if (q < 0 || q >= e) throw new JsonLineError("a string is never closed");
    let b = q - 1;
    while (b > i && text.charCodeAt(b) === 92) b--;
    if ((q - 1 - b) % 2 === 0) return q;
    j = q + 1;
  }
}

function decodeString(text: string, open: number, close: number): string {
  const raw = text.slice(open + 1, close);
  if (raw.indexOf("\\") < 0) return raw;
  try {
    return JSON.parse(text.slice(open, close + 1)) as string;
  } catch {
    throw new JsonLineError("a string holds an invalid escape");
  }
}

/** Index just past the object or array opening at `i`. */
function nestedEnd(text: string, i: number, e: number): number {
  let depth = 0;
  let j = i;
  while (j < e) {
    const c = text.charCodeAt(j);
    if (c === 34) {
      j = stringEnd(text, j, e) + 1;
      continue;
    }
    if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      depth--;
      if (depth === 0) return j + 1;
    }
    j++;
  }
  throw new JsonLineError("a nested value is never closed");
}

/** Index just past a number token at `i` (`i` itself when there is none). */
function numberEnd(text: string, i: number, e: number): number {
  if (text.startsWith("NaN", i)) return i + 3;
  if (text.startsWith("Infinity", i)) return i + 8;
  if (text.startsWith("-Infinity", i)) return i + 9;
  let j = i;
  if (j < e && text.charCodeAt(j) === 45) j++;
  const intStart = j;
  while (j < e && isDigit(text.charCodeAt(j))) j++;
  const intDigits = j - intStart;
  if (intDigits === 0) return i;
  if (intDigits > 1 && text.charCodeAt(intStart) === 48) return i;
  if (j < e && text.charCodeAt(j) === 46) {
    const f = ++j;
    while (j < e && isDigit(text.charCodeAt(j))) j++;
    if (j === f) return i;
  }
  if (j < e && (text.charCodeAt(j) | 32) === 101) {
    j++;
    if (j < e && (text.charCodeAt(j) === 43 || text.charCodeAt(j) === 45)) j++;
    const x = j;
    while (j < e && isDigit(text.charCodeAt(j))) j++;
    if (j === x) return i;
  }
  return j;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
