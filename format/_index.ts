/**
 * Opening an archive's index: header and footer, checked in the vortex validation
 * order (size, magic, version, lengths, hashes, then parse; FORMAT.md §2 and §8),
 * never allocating more than the file's own size for a length it read. A file that
 * is not an archive at all is named for what it is (`foreign.ts`). The reader
 * (`reader.ts`) opens every archive through here.
 *
 * @module
 */
import { foreignFile } from "./foreign.ts";
import type { Schema } from "./column.ts";
import {
  FOOTER_FLAG_ZSTD,
  HASH_SIZE,
  MAGIC,
  MAX_FOOTER_SIZE,
  MAX_HEADER_SIZE,
  MIXED_CODEC,
  PREAMBLE_SIZE,
  TAIL_SIZE,
  VERSION_MAJOR,
  VERSION_MINOR_COLUMN_CODECS,
  VERSION_MINOR_ENCRYPTED,
  VERSION_MINOR_EVOLVED,
  VERSION_MINOR_FLOAT_TYPES,
  VERSION_MINOR_READ,
  VERSION_MINOR_TYPES,
} from "./constants.ts";
import { FormatError } from "./errors.ts";
import type { ArchiveFooter, ArchiveHeader } from "./header.ts";
import { archiveMinor, decodeFooter, decodeHeader, isEvolved, usesFloatTypes } from "./header.ts";
import { sha256HexAsync } from "./_hash.ts";
import { zstdDecode } from "../codecs/_zstd_decode.ts";
import { type ByteSource, readExact } from "./byte_source.ts";

/** Everything an archive says about itself, read from header and footer only. */
export interface ArchiveIndex {
  /** The archive's path. */
  path: string;
  /** Size of the file in bytes. */
  file_bytes: number;
  /** `major.minor` of the file. */
  version: string;
  /** The parsed header. */
  header: ArchiveHeader;
  /** The schema the header describes. */
  schema: Schema;
  /** The parsed footer (the sparse index). */
  footer: ArchiveFooter;
  /** SHA-256 (hex) of the header bytes. */
  header_sha256: string;
}

/**
 * Reads and checks header and footer from an open archive file.
 *
 * @param source The archive's bytes.
 * @param path Its path or URI, for messages.
 * @returns The index.
 * @throws {FormatError} BAD_MAGIC (or a foreign file named), UNSUPPORTED_VERSION,
 * TRUNCATED, HASH_MISMATCH, CORRUPT.
 */
export async function readIndex(source: ByteSource, path: string): Promise<ArchiveIndex> {
  const size = source.size;
  const fail = (
    code: ConstructorParameters<typeof FormatError>[0],
    message: string,
    offset?: number,
  ) => new FormatError(code, `Cannot read archive '${path}': ${message}`, { path, offset });
  // 1. Magic first when there are enough bytes for it: a CSV given by mistake
  // should say "not an archive", not "truncated".
  const head = await readExact(source, 0, Math.min(size, PREAMBLE_SIZE));
  if (head.length < MAGIC.length || !startsWith(head, MAGIC)) {
    if (head.length < MAGIC.length && startsWith(MAGIC, head)) {
      throw fail(
        "TRUNCATED",
        `file is ${size} bytes, an archive is at least ${PREAMBLE_SIZE + HASH_SIZE + TAIL_SIZE}`,
      );
    }
    const foreign = foreignFile(head, path);
    throw fail(
      "BAD_MAGIC",
      foreign === null
        ? `it is not a Permafrost archive (expected magic ${hexOf(MAGIC)}, found ${
          hexOf(head.subarray(0, MAGIC.length))
        })`
        : `this is ${foreign}`,
      0,
    );
  }
  if (size < PREAMBLE_SIZE + HASH_SIZE + TAIL_SIZE) {
    throw fail(
      "TRUNCATED",
      `file is ${size} bytes, an archive is at least ${PREAMBLE_SIZE + HASH_SIZE + TAIL_SIZE}`,
    );
  }
  // 2. Version.
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const major = view.getUint8(8);
  const minor = view.getUint8(9);
  if (major !== VERSION_MAJOR) {
    throw fail(
      "UNSUPPORTED_VERSION",
      `format version ${major}.${minor} is not supported (this reader reads ${VERSION_MAJOR}.x)`,
      8,
    );
  }
  // Reserved preamble flags are zero up to this minor version; a later minor may use them.
  if (minor <= VERSION_MINOR_READ && view.getUint16(10, true) !== 0) {
    throw fail(
      "CORRUPT",
      `reserved preamble flags are 0x${view.getUint16(10, true).toString(16)}, expected 0`,
      10,
    );
  }
  // 3. Tail: a missing end magic means the file was cut short (or overwritten).
  const tail = await readExact(source, size - TAIL_SIZE, TAIL_SIZE);
  if (!startsWith(tail.subarray(40), MAGIC)) {
    throw fail(
      "TRUNCATED",
      `the end magic is missing (file is ${size} bytes): the archive was cut short or damaged`,
      size - 8,
    );
  }
  const tailView = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  if (tailView.getUint8(36) !== major || tailView.getUint8(37) !== minor) {
    throw fail(
      "CORRUPT",
      `tail version ${tailView.getUint8(36)}.${
        tailView.getUint8(37)
      } differs from ${major}.${minor}`,
      size - 12,
    );
  }
  // 4. Lengths must fit in what is there before anything is allocated.
  const headerLength = view.getUint32(12, true);
  const footerLength = tailView.getUint32(32, true);
  const footerFlags = tailView.getUint16(38, true);
  const headerEnd = PREAMBLE_SIZE + headerLength + HASH_SIZE;
  if (headerLength > MAX_HEADER_SIZE || headerEnd > size - TAIL_SIZE) {
    throw fail(
      "TRUNCATED",
      `header length ${headerLength} does not fit in a ${size}-byte file`,
      12,
    );
  }
  if (footerLength > MAX_FOOTER_SIZE || headerEnd + footerLength > size - TAIL_SIZE) {
    throw fail(
      "TRUNCATED",
      `footer length ${footerLength} does not fit in a ${size}-byte file`,
      size - 16,
    );
  }
  if ((footerFlags & ~FOOTER_FLAG_ZSTD) !== 0) {
    throw fail("CORRUPT", `unknown footer flags 0x${footerFlags.toString(16)}`, size - 10);
  }
  // 5. Hashes, then parse.
  const headerBytes = await readExact(source, PREAMBLE_SIZE, headerLength + HASH_SIZE);
  const headerJson = headerBytes.subarray(0, headerLength);
  const headerSha = await sha256HexAsync(headerJson);
  if (headerSha !== hexOf(headerBytes.subarray(headerLength), "")) {
    throw fail("HASH_MISMATCH", "the header does not match its SHA-256", PREAMBLE_SIZE);
  }
  const footerStart = size - TAIL_SIZE - footerLength;
  const footerStored = await readExact(source, footerStart, footerLength);
  if (await sha256HexAsync(footerStored) !== hexOf(tail.subarray(0, HASH_SIZE), "")) {
    throw fail("HASH_MISMATCH", "the footer index does not match its SHA-256", footerStart);
  }
  let footerJson = footerStored;
  if (footerFlags & FOOTER_FLAG_ZSTD) {
    try {
      footerJson = await zstdDecode(footerStored, declaredZstdSize(footerStored, path));
    } catch (cause) {
      if (cause instanceof FormatError) throw cause;
      throw new FormatError(
        "CORRUPT",
        `Cannot read archive '${path}': the footer does not decompress`,
        {
          path,
          cause,
          offset: footerStart,
        },
      );
    }
  }
  const { header, schema } = parseOfMinor(
    () => decodeHeader(headerJson),
    minor,
    fail,
    PREAMBLE_SIZE,
  );
  if (header.encryption !== null && minor < VERSION_MINOR_ENCRYPTED) {
    throw fail(
      "CORRUPT",
      `a ${major}.${minor} archive cannot be encrypted (encryption is 1.${VERSION_MINOR_ENCRYPTED})`,
    );
  }
  if (header.codec === MIXED_CODEC && minor < VERSION_MINOR_COLUMN_CODECS) {
    throw fail(
      "CORRUPT",
      `a ${major}.${minor} archive cannot have a codec per column (that is 1.${VERSION_MINOR_COLUMN_CODECS})`,
    );
  }
  if (
    minor < VERSION_MINOR_TYPES &&
    archiveMinor({ schema: header.schema, encryption: null }) === VERSION_MINOR_TYPES
  ) {
    throw fail(
      "CORRUPT",
      `a ${major}.${minor} archive cannot hold decimal, time, duration or json columns (they are 1.${VERSION_MINOR_TYPES})`,
    );
  }
  if (minor < VERSION_MINOR_FLOAT_TYPES && usesFloatTypes({ schema: header.schema })) {
    throw fail(
      "CORRUPT",
      `a ${major}.${minor} archive cannot hold float32 or float16 columns (they are 1.${VERSION_MINOR_FLOAT_TYPES})`,
    );
  }
  if (minor < VERSION_MINOR_EVOLVED && isEvolved(header)) {
    throw fail(
      "CORRUPT",
      `a ${major}.${minor} archive cannot have chunks that lack a column (that is 1.${VERSION_MINOR_EVOLVED})`,
    );
  }
  const sinceChunks = schema.map((f) => header.columns[f.name]!.since_chunk ?? 0);
  const footer = parseOfMinor(
    () => decodeFooter(footerJson, schema.length, footerStart, sinceChunks),
    minor,
    fail,
    footerStart,
  );
  if (footer.payload_offset !== headerEnd) {
    throw fail(
      "CORRUPT",
      `the payload starts at byte ${footer.payload_offset}, the header ends at ${headerEnd}`,
    );
  }
  return {
    path,
    file_bytes: size,
    version: `${major}.${minor}`,
    header,
    schema,
    footer,
    header_sha256: headerSha,
  };
}

/**
 * Parses a header or footer; one this reader cannot parse in a file of a newer minor
 * than it knows is `UNSUPPORTED_VERSION` (a type, member or layout added later, as
 * 1.8's null block entries are to a 1.7 reader), not `CORRUPT`.
 */
function parseOfMinor<T>(
  parse: () => T,
  minor: number,
  fail: (code: "UNSUPPORTED_VERSION", message: string, offset?: number) => FormatError,
  offset: number,
): T {
  try {
    return parse();
  } catch (cause) {
    if (minor <= VERSION_MINOR_READ || !(cause instanceof FormatError)) throw cause;
    throw fail(
      "UNSUPPORTED_VERSION",
      `format version ${VERSION_MAJOR}.${minor} is newer than this reader (it reads up to ${VERSION_MAJOR}.${VERSION_MINOR_READ}): ${cause.message}`,
      offset,
    );
  }
}

/** The content size a zstd frame declares (the writer always sets it), bounded. */
function declaredZstdSize(frame: Uint8Array, path: string): number {
  // Frame header: magic (4), descriptor (1), [window (1)], [dict id], content size.
  const bad = () =>
    new FormatError(
      "CORRUPT",
      `Cannot read archive '${path}': the footer frame has no content size`,
    );
  if (frame.length < 6) throw bad();
  const fhd = frame[4]!;
  const fcsFlag = fhd >> 6;
  const single = (fhd >> 5) & 1;
  const dictFlag = fhd & 3;
  const fcsSize = [single ? 1 : 0, 2, 4, 8][fcsFlag]!;
  if (fcsSize === 0) throw bad();
  const at = 5 + (single ? 0 : 1) + [0, 1, 2, 4][dictFlag]!;
  if (at + fcsSize > frame.length) throw bad();
  let value = 0;
  for (let i = fcsSize - 1; i >= 0; i--) value = value * 256 + frame[at + i]!;
  if (fcsSize === 2) value += 256;
  if (value > MAX_FOOTER_SIZE * 8) throw bad();
  return value;
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

function hexOf(bytes: Uint8Array, sep = " "): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(sep);
}
