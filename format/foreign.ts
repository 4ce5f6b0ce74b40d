/**
 * Naming the kind of a file that is not an archive, from its first bytes, so that
 * `audit data.parquet` says "this is a Parquet file, not a Permafrost archive" instead
 * of a magic-number mismatch. Only signatures are looked at; a text file is called
 * CSV or JSON lines from its first character.
 *
 * @module
 */

/** Known signatures at the start of a file, and what they mean. */
const SIGNATURES: readonly { bytes: readonly number[]; at: number; kind: string }[] = [
  { bytes: [0x50, 0x41, 0x52, 0x31], at: 0, kind: "a Parquet file" },
  { bytes: [0x41, 0x52, 0x52, 0x4f, 0x57, 0x31], at: 0, kind: "an Arrow IPC file" },
  { bytes: [0xff, 0xff, 0xff, 0xff], at: 0, kind: "an Arrow IPC stream" },
  { bytes: [0x1f, 0x8b], at: 0, kind: "a gzip file" },
  { bytes: [0x28, 0xb5, 0x2f, 0xfd], at: 0, kind: "a zstd file" },
  { bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], at: 0, kind: "an xz file" },
  { bytes: [0x37, 0x6b, 0x53, 0x74, 0xa0, 0x31, 0x83, 0xd3], at: 0, kind: "a zpaq archive" },
  { bytes: [0x50, 0x4b, 0x03, 0x04], at: 0, kind: "a zip file (an xlsx workbook?)" },
  { bytes: [...new TextEncoder().encode("SQLite format 3")], at: 0, kind: "an SQLite database" },
  { bytes: [0x44, 0x55, 0x43, 0x4b], at: 8, kind: "a DuckDB database" },
];

/** What to do with each kind of source, when it is one we read. */
const HINTS: Readonly<Record<string, string>> = {
  "a Parquet file": "freeze it first: permafrost freeze <file> <archive.pf>",
  "an Arrow IPC file": "freeze it first: permafrost freeze <file> <archive.pf>",
  "an Arrow IPC stream": "freeze it first: permafrost freeze <file> <archive.pf>",
  "a CSV file": "freeze it first: permafrost freeze <file> <archive.pf>",
  "a JSON-lines file": "freeze it first: permafrost freeze <file> <archive.pf>",
};

/**
 * The kind of a file that is not an archive, and what to do about it.
 *
 * @param head The file's first bytes (16 are enough).
 * @param path The file, for the suggested command.
 * @returns E.g. `a Parquet file, not a Permafrost archive; freeze it first: …`, or null
 * when the bytes match nothing known.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { foreignFile } from "./foreign.ts";
 * assert.match(foreignFile(new TextEncoder().encode("PAR1xxxx"))!, /^a Parquet file, not/);
 * assert.match(foreignFile(new TextEncoder().encode("id,name\n1,a\n"))!, /^a CSV file/);
 * assert.equal(foreignFile(Uint8Array.of(0, 1, 2, 3)), null);
 * ```
 */
export function foreignFile(head: Uint8Array, path = "<file>"): string | null {
  const kind = signatureKind(head) ?? textKind(head);
  if (kind === null) return null;
  const hint = HINTS[kind]?.replace("<file>", path);
  return `${kind}, not a Permafrost archive${hint ? `; ${hint}` : ""}`;
}

function signatureKind(head: Uint8Array): string | null {
  for (const s of SIGNATURES) {
    if (head.length >= s.at + s.bytes.length && s.bytes.every((b, i) => head[s.at + i] === b)) {
      return s.kind;
    }
  }
  return null;
}

function textKind(head: Uint8Array): string | null {
  if (head.length === 0) return null;
  let text: string;
  try {
    // A multi-byte character cut at the end is fine: only whole ones are checked.
    text = new TextDecoder("utf-8", { fatal: true }).decode(trimPartial(head));
  } catch {
    return null;
  }
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x09 || (c > 0x0d && c < 0x20)) return null; // control bytes: binary
  }
  const first = text.replace(/^\ufeff/, "").trimStart()[0];
  if (first === "{" || first === "[") return "a JSON-lines file";
  return "a CSV file";
}

/** `bytes` without a UTF-8 sequence cut short at its end. */
function trimPartial(bytes: Uint8Array): Uint8Array {
  let end = bytes.length;
  for (let back = 1; back <= 3 && end - back >= 0; back++) {
    const b = bytes[end - back]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    if (need > back) end -= back;
    break;
  }
  return bytes.subarray(0, end);
}
