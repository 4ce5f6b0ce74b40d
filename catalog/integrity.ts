/**
 * The integrity check of one registered version: every chunk re-read and re-hashed
 * against the catalog's records and the file's own footer, and the whole payload
 * against its recorded SHA-256. Reads through the catalog's archive backend, so a
 * file that changed size, lost its footer or holds a flipped bit is reported as a
 * problem, never as an exception. `Catalog.integrityCheck` runs it.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { PermafrostError } from "../internal/errors.ts";
import type { ArchiveBackend, ArchiveIndex } from "./backend.ts";
import { describeReadError } from "./_read_errors.ts";
import type { DatasetDetail, IntegrityProblem, IntegrityReport } from "./types.ts";

/** One chunk as the catalog recorded it. */
export interface RecordedChunk {
  /** Chunk index. */
  chunk: number;
  /** Byte offset in the archive. */
  byte_offset: number;
  /** Stored length. */
  byte_length: number;
  /** SHA-256 (hex) recorded at registration. */
  sha256: string;
}

/**
 * Re-hashes a version's chunks and compares them with the catalog's records and the
 * file's own footer.
 *
 * @param name Dataset name.
 * @param record The version's record.
 * @param chunks Its chunks as recorded, in order.
 * @param backend Where the archive is read.
 * @param checkedAt When the check runs.
 * @returns Every problem found; `ok` when there is none.
 */
export async function checkIntegrity(
  name: string,
  record: DatasetDetail,
  chunks: readonly RecordedChunk[],
  backend: ArchiveBackend,
  checkedAt: Date,
): Promise<IntegrityReport> {
  const problems: IntegrityProblem[] = [];
  const report = (p: IntegrityProblem) => problems.push(p);
  let checked = 0;
  let bytes = 0;
  let size: number | null | undefined;
  try {
    size = await backend.size(record.path);
  } catch (err) {
    report({
      kind: "UNREADABLE",
      chunk: null,
      expected: null,
      actual: err instanceof PermafrostError ? err.code : null,
      message: `Cannot read archive '${record.path}': ${describeReadError(record.path, err)}`,
    });
  }
  if (size === undefined) {
    // Reported above.
  } else if (size === null) {
    report({
      kind: "MISSING_FILE",
      chunk: null,
      expected: record.file_bytes,
      actual: null,
      message: `Archive '${record.path}' is missing`,
    });
  } else {
    if (size !== record.file_bytes) {
      report({
        kind: "FILE_SIZE",
        chunk: null,
        expected: record.file_bytes,
        actual: size,
        message:
          `Archive '${record.path}' is ${size} bytes, the catalog recorded ${record.file_bytes}`,
      });
    }
    let footer: ArchiveIndex | undefined;
    try {
      footer = await backend.readIndex(record.path);
    } catch (err) {
      report({
        kind: "UNREADABLE",
        chunk: null,
        expected: null,
        actual: err instanceof PermafrostError ? err.code : null,
        message: `Cannot read the header and footer of archive '${record.path}'${
          err instanceof PermafrostError ? ` (${err.code})` : ""
        }: ${describeReadError(record.path, err)}`,
      });
    }
    if (footer) {
      if (footer.header_sha256 !== record.header_sha256) {
        report({
          kind: "HEADER_HASH",
          chunk: null,
          expected: record.header_sha256,
          actual: footer.header_sha256,
          message: "The header differs from the one registered",
        });
      }
      if (footer.footer.chunks.length !== chunks.length) {
        report({
          kind: "FOOTER_MISMATCH",
          chunk: null,
          expected: chunks.length,
          actual: footer.footer.chunks.length,
          message:
            `The file's footer lists ${footer.footer.chunks.length} chunks, the catalog ${chunks.length}`,
        });
      }
    }
    const payload = createHash("sha256");
    let handle: Awaited<ReturnType<ArchiveBackend["open"]>> | undefined;
    try {
      handle = await backend.open(record.path);
      for (const row of chunks) {
        const i = Number(row.chunk);
        const expected = String(row.sha256);
        const inFooter = footer?.footer.chunks[i];
        if (
          footer && inFooter &&
          (inFooter.sha256 !== expected || inFooter.offset !== Number(row.byte_offset) ||
            inFooter.length !== Number(row.byte_length))
        ) {
          report({
            kind: "FOOTER_MISMATCH",
            chunk: i,
            expected,
            actual: inFooter.sha256,
            message: `Chunk ${i} in the file's footer differs from the catalog's record`,
          });
        }
        let data: Uint8Array;
        try {
          data = await handle.read(Number(row.byte_offset), Number(row.byte_length));
        } catch (err) {
          report({
            kind: "READ_FAILED",
            chunk: i,
            expected,
            actual: null,
            message: `Cannot read chunk ${i} of archive '${record.path}': ${
              describeReadError(record.path, err)
            }`,
          });
          continue;
        }
        const actual = createHash("sha256").update(data).digest("hex");
        payload.update(data);
        checked++;
        bytes += data.length;
        if (actual !== expected) {
          report({
            kind: "CHUNK_HASH",
            chunk: i,
            expected,
            actual,
            message: `Chunk ${i} hashes to ${actual.slice(0, 12)}…, the catalog recorded ${
              expected.slice(0, 12)
            }…`,
          });
        }
      }
    } catch (err) {
      report({
        kind: "READ_FAILED",
        chunk: null,
        expected: null,
        actual: null,
        message: `Cannot open archive '${record.path}': ${describeReadError(record.path, err)}`,
      });
    } finally {
      handle?.close();
    }
    if (checked === chunks.length && chunks.length > 0) {
      const actual = payload.digest("hex");
      if (actual !== record.payload_sha256) {
        report({
          kind: "PAYLOAD_HASH",
          chunk: null,
          expected: record.payload_sha256,
          actual,
          message: "The payload hashes to another SHA-256 than the one registered",
        });
      }
    }
  }
  const result: IntegrityReport = {
    name,
    version: record.version,
    path: record.path,
    ok: problems.length === 0,
    chunks_checked: checked,
    bytes_checked: bytes,
    problems,
    checked_at: checkedAt.toISOString(),
  };
  return result;
}
