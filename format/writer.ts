/**
 * `ArchiveWriter`: lays out an archive on disk — preamble, header, header hash,
 * chunks in row order, compressed footer, tail — into a temp file beside the
 * destination, then fsyncs and renames it, so no half-written archive ever has
 * the final name. Implements FORMAT.md §2 (layout).
 *
 * The writer takes chunks already encoded (`EncodedChunk`), so a local freeze, an
 * append and the cluster's master all lay out bytes the same way.
 *
 * Only a regular file (or a new path) is replaced; a symbolic link to one is followed
 * (the file replaced, the link kept), and anything else (`/dev/stdout`, a FIFO, a
 * directory) is refused rather than renamed over.
 *
 * Leftovers: the temp file is `.<name>.pf.tmp-<random>` beside the destination, locked
 * (`flock`) while the writer is alive. A process killed mid-write leaves it behind;
 * the next writer of the same destination removes it once it is a regular file
 * untouched for a minute whose lock nobody holds (`internal/temp_files.ts` has the
 * exact rule), and never touches any other file.
 *
 * @module
 */
import { zstd, ZSTD_LEVEL } from "../codecs/zstd.ts";
import type { EncodedBlock } from "./block.ts";
import {
  FOOTER_FLAG_ZSTD,
  HASH_SIZE,
  MAGIC,
  PREAMBLE_SIZE,
  TAIL_SIZE,
  VERSION_MAJOR,
} from "./constants.ts";
import { FormatError } from "./errors.ts";
import type { ArchiveFooter, ArchiveHeader, ChunkEntry, ColumnStats } from "./header.ts";
import { archiveMinor, archiveVersion, encodeHeader } from "./header.ts";
import { sha256, sha256Bytes, sha256Hex } from "./_hash.ts";
import { encodeUtf8 } from "./_bytes.ts";
import { commitTemp, createTempBeside, pathExists, renameTarget } from "../internal/temp_files.ts";

/** One chunk ready to be laid out: its row count, one block per column and stats. */
export interface EncodedChunk {
  rows: number;
  blocks: EncodedBlock[];
  stats: ColumnStats[];
}

/**
 * A chunk as the writer lays it out: a null block for each column the chunk lacks
 * (one whose plan starts at a later chunk, `since_chunk`, FORMAT.md §6.1). Only an
 * append copying chunks written before a column was added has any.
 */
export interface ChunkLayout {
  rows: number;
  blocks: (EncodedBlock | null)[];
  stats: ColumnStats[];
}

/** What `finish()` reports. */
export interface WrittenArchive {
  path: string;
  rows: number;
  chunks: number;
  bytes: number;
  payload_sha256: string;
  header_sha256: string;
}

/**
 * A second place the archive's bytes go as they are written, in order (an upload to
 * object storage): `finish` once the archive is complete and in place, `abort` when
 * it is not. The writer never seeks, so the bytes arrive exactly as in the file.
 */
export interface ByteSink {
  /** Takes the next bytes. */
  write(bytes: Uint8Array): Promise<void>;
  /** The archive is complete: make it visible there. */
  finish(): Promise<void>;
  /** The archive was abandoned: drop what was sent. */
  abort(): Promise<void>;
}

/** Writes one archive; call `writeChunk` in row order, then `finish` (or `abort`). */
export class ArchiveWriter {
  #file: Deno.FsFile;
  #path: string;
  #temp: string;
  #offset: number;
  #payloadOffset: number;
  #payloadHash = sha256();
  #chunks: ChunkEntry[] = [];
  #rows = 0;
  #raw = 0;
  #headerSha: string;
  #columns: number;
  /** Per column, the first chunk that holds it (0 but for columns added by an evolving append). */
  #since: number[];
  #minor: number;
  #encrypted: boolean;
  #replace: boolean;
  /** The footer's zstd level, when not `footerLevel(size)` (`quickFooter`). */
  #footerLevel: number | null = null;
  #closed = false;
  #mirror: ByteSink | null = null;
  /** Bytes laid out but not yet written: small blocks go to the file in batches. */
  #batch: Uint8Array | null = null;
  #batched = 0;

  private constructor(
    file: Deno.FsFile,
    path: string,
    temp: string,
    headerSize: number,
    headerSha: string,
    since: number[],
    minor: number,
    encrypted: boolean,
    replace: boolean,
  ) {
    this.#file = file;
    this.#path = path;
    this.#temp = temp;
    this.#offset = 0;
    this.#payloadOffset = headerSize;
    this.#headerSha = headerSha;
    this.#columns = since.length;
    this.#since = since;
    this.#minor = minor;
    this.#encrypted = encrypted;
    this.#replace = replace;
  }

  /**
   * Creates the temp file and writes the preamble, header and header hash.
   *
   * The version is the lowest that describes the file (`archiveVersion`): 1.3 for a
   * plain archive of the 1.3 types (byte for byte as ever), 1.4 when encrypted (only
   * encrypted chunks then), 1.5 when a column has a type added in 1.5.
   *
   * @param path Final archive path.
   * @param header The header (`version` must be `archiveVersion(header)`).
   * @param options `replace: false` refuses a destination that exists, at once and
   * again (atomically) when the archive is put in place; default true. `mirror`: a
   * {@link ByteSink} that gets every byte as it is written (finished after the archive
   * is in place, aborted with it). `quickFooter`: the footer at zstd
   * {@link QUICK_FOOTER_LEVEL} instead of `footerLevel(size)` (`freeze --profile
   * max_speed`, whose footer is serial time after the last chunk).
   * @returns A writer positioned at the payload.
   * @throws {FormatError} WRITE_FAILED when the temp file cannot be created; BAD_ARGUMENT
   * when `version` does not match `encryption`; DESTINATION_EXISTS (with `replace: false`).
   */
  static async create(
    path: string,
    header: ArchiveHeader,
    options: { replace?: boolean; mirror?: ByteSink; quickFooter?: boolean } = {},
  ): Promise<ArchiveWriter> {
    const replace = options.replace ?? true;
    const version = archiveVersion(header);
    if (header.version !== version) {
      throw new FormatError(
        "BAD_ARGUMENT",
        `Cannot write archive '${path}': header version is "${header.version}", this schema and encryption make it "${version}"`,
        { path },
      );
    }
    const minor = archiveMinor(header);
    const headerBytes = encodeHeader(header);
    const preamble = new Uint8Array(PREAMBLE_SIZE);
    preamble.set(MAGIC, 0);
    const view = new DataView(preamble.buffer);
    view.setUint8(8, VERSION_MAJOR);
    view.setUint8(9, minor);
    view.setUint16(10, 0, true);
    view.setUint32(12, headerBytes.length, true);
    const headerSha = sha256Bytes(headerBytes);
    let target: string | null;
    let file: Deno.FsFile;
    let temp: string;
    try {
      target = await renameTarget(path);
      if (target === null) {
        throw new FormatError(
          "WRITE_FAILED",
          `Cannot write archive '${path}': it is not a regular file (a directory, a device, a FIFO, or a link to one or to nothing), which the archive's rename would replace; give a file path`,
          { path },
        );
      }
      if (!replace && await pathExists(target)) throw destinationExists(path);
      ({ file, path: temp } = await createTempBeside(target));
    } catch (cause) {
      if (cause instanceof FormatError) throw cause;
      throw writeFailed(path, cause);
    }
    const writer = new ArchiveWriter(
      file,
      target,
      temp,
      PREAMBLE_SIZE + headerBytes.length + HASH_SIZE,
      hex(headerSha),
      header.schema.fields.map((f) => header.columns[f.name]?.since_chunk ?? 0),
      minor,
      header.encryption !== null,
      replace,
    );
    writer.#mirror = options.mirror ?? null;
    if (options.quickFooter) writer.#footerLevel = QUICK_FOOTER_LEVEL;
    await writer.#write(preamble);
    await writer.#write(headerBytes);
    await writer.#write(headerSha);
    // The header goes to the file at once: a temp file is never empty once created
    // (what a process killed mid-write leaves behind is recognisably an archive's start).
    await writer.#flush();
    return writer;
  }

  /** Rows written so far. */
  get rows(): number {
    return this.#rows;
  }

  /**
   * Appends one chunk.
   *
   * @param chunk The encoded chunk (one block per column, in schema order; null exactly
   * for the columns whose `since_chunk` is after this chunk).
   */
  async writeChunk(chunk: ChunkLayout): Promise<void> {
    if (chunk.blocks.length !== this.#columns) {
      throw new FormatError(
        "BAD_ARGUMENT",
        `Cannot write chunk: it has ${chunk.blocks.length} blocks, the schema has ${this.#columns} columns`,
      );
    }
    if (chunk.rows <= 0) throw new FormatError("BAD_ARGUMENT", "Cannot write an empty chunk");
    const index = this.#chunks.length;
    const misplaced = chunk.blocks.findIndex((b, j) => (b === null) !== (index < this.#since[j]!));
    if (misplaced >= 0) {
      throw new FormatError(
        "BAD_ARGUMENT",
        `Cannot write chunk ${index}: column ${misplaced} starts at chunk ${
          this.#since[misplaced]
        }, and the chunk ${chunk.blocks[misplaced] === null ? "lacks" : "holds"} its block`,
      );
    }
    const encrypted = this.#encrypted;
    // Never let a plaintext block into an encrypted archive (or the reverse).
    const odd = chunk.blocks.findIndex((b) => b !== null && (b.sealed === true) !== encrypted);
    if (odd >= 0) {
      throw new FormatError(
        "BAD_ARGUMENT",
        `Cannot write chunk: block ${odd} is ${encrypted ? "not " : ""}encrypted, the archive is ${
          encrypted ? "" : "not "
        }encrypted`,
      );
    }
    const chunkHash = sha256();
    const start = this.#offset;
    const blocks: ChunkEntry["blocks"] = [];
    const stats = chunk.stats.slice();
    for (const [j, block] of chunk.blocks.entries()) {
      if (block === null) {
        // What the reader returns for a column the chunk lacks (FORMAT.md §6.1).
        blocks.push(null);
        stats[j] = { min: null, max: null, null_count: chunk.rows };
        continue;
      }
      blocks.push({
        offset: this.#offset,
        length: block.bytes.length,
        raw_length: block.raw_length,
        predictor: block.predictor,
        sha256: sha256Hex(block.bytes),
      });
      chunkHash.update(block.bytes);
      this.#payloadHash.update(block.bytes);
      this.#raw += block.raw_length;
      await this.#write(block.bytes);
    }
    this.#chunks.push({
      row_start: this.#rows,
      row_end: this.#rows + chunk.rows,
      offset: start,
      length: this.#offset - start,
      sha256: chunkHash.digest("hex"),
      blocks,
      stats,
    });
    this.#rows += chunk.rows;
  }

  /**
   * Writes footer and tail, fsyncs, and renames the temp file to the final path.
   *
   * @returns What was written.
   */
  async finish(): Promise<WrittenArchive> {
    const footer: ArchiveFooter = {
      rows: this.#rows,
      payload_offset: this.#payloadOffset,
      payload_length: this.#offset - this.#payloadOffset,
      payload_sha256: this.#payloadHash.digest("hex"),
      raw_bytes: this.#raw,
      chunks: this.#chunks,
    };
    const footerJson = encodeUtf8(JSON.stringify(footer));
    const footerBytes = await zstd.encode(
      footerJson,
      this.#footerLevel ?? footerLevel(footerJson.length),
    );
    const tail = new Uint8Array(TAIL_SIZE);
    tail.set(sha256Bytes(footerBytes), 0);
    const view = new DataView(tail.buffer);
    view.setUint32(32, footerBytes.length, true);
    view.setUint8(36, VERSION_MAJOR);
    view.setUint8(37, this.#minor);
    view.setUint16(38, FOOTER_FLAG_ZSTD, true);
    tail.set(MAGIC, 40);
    await this.#write(footerBytes);
    await this.#write(tail);
    await this.#flush();
    try {
      await this.#file.sync();
      this.#file.close();
      this.#closed = true;
      await commitTemp(this.#temp, this.#path, this.#replace);
    } catch (cause) {
      await this.abort();
      if (cause instanceof Deno.errors.AlreadyExists) throw destinationExists(this.#path);
      throw writeFailed(this.#path, cause);
    }
    if (this.#mirror) {
      const mirror = this.#mirror;
      this.#mirror = null;
      await mirror.finish();
    }
    return {
      path: this.#path,
      rows: this.#rows,
      chunks: this.#chunks.length,
      bytes: this.#offset,
      payload_sha256: footer.payload_sha256,
      header_sha256: this.#headerSha,
    };
  }

  /** Closes and deletes the temp file; the destination is left untouched. */
  async abort(): Promise<void> {
    this.#batch = null;
    this.#batched = 0;
    if (this.#mirror) {
      const mirror = this.#mirror;
      this.#mirror = null;
      await mirror.abort().catch(() => {});
    }
    if (!this.#closed) {
      this.#closed = true;
      try {
        this.#file.close();
      } catch { /* already closed */ }
    }
    await Deno.remove(this.#temp).catch(() => {});
  }

  /**
   * Lays out the next bytes. Bytes are copied into a batch of up to
   * {@link WRITE_BATCH_BYTES} that goes to the file (and the mirror) in one write: an
   * archive of many small chunks (a cluster job of 100-row chunks: 3,000 blocks of a
   * few hundred bytes) would otherwise wait on one file write per block. Larger bytes
   * are written as they are, after the batch. The file's bytes are the same either way.
   */
  async #write(bytes: Uint8Array): Promise<void> {
    if (bytes.length >= WRITE_BATCH_BYTES) {
      await this.#flush();
      await this.#put(bytes);
    } else {
      const need = this.#batched + bytes.length;
      if (need > WRITE_BATCH_BYTES) await this.#flush();
      // A fresh buffer per batch (the mirror may hold on to the one it was given),
      // small at first, so that a small archive does not allocate the whole limit.
      let batch = this.#batch;
      if (batch === null || this.#batched + bytes.length > batch.length) {
        let size = batch?.length ?? 64 << 10;
        while (size < this.#batched + bytes.length) size *= 2;
        const grown = new Uint8Array(Math.min(size, WRITE_BATCH_BYTES));
        if (batch !== null) grown.set(batch.subarray(0, this.#batched));
        this.#batch = batch = grown;
      }
      batch.set(bytes, this.#batched);
      this.#batched += bytes.length;
    }
    this.#offset += bytes.length;
  }

  /** Writes the batch laid out so far. */
  async #flush(): Promise<void> {
    const batch = this.#batch;
    const n = this.#batched;
    this.#batch = null;
    this.#batched = 0;
    if (batch !== null && n > 0) await this.#put(batch.subarray(0, n));
  }

  /** Writes bytes to the file and the mirror; on failure the archive is abandoned. */
  async #put(bytes: Uint8Array): Promise<void> {
    try {
      let at = 0;
      while (at < bytes.length) at += await this.#file.write(bytes.subarray(at));
    } catch (cause) {
      await this.abort();
      throw writeFailed(this.#path, cause);
    }
    if (this.#mirror) {
      try {
        await this.#mirror.write(bytes);
      } catch (err) {
        // The mirror's own error (a failed upload) says what happened there.
        await this.abort();
        throw err;
      }
    }
  }
}

/** Bytes the writer gathers before one file write (see `#write`). */
const WRITE_BATCH_BYTES = 1 << 20;

/**
 * Footers up to this size (JSON bytes) are compressed at zstd 19 (`ZSTD_LEVEL`), as
 * ever: every archive of up to ~100 chunks of a few columns (flights-3m in 50,000-row
 * chunks: 70 kB) keeps its bytes, and level 19 costs at most ~80 ms here.
 */
export const FOOTER_LEVEL_19_MAX_BYTES = 128 * 1024;

/**
 * The zstd level of a footer of `jsonBytes` bytes. Level 19 costs ~0.6 µs per byte: a
 * job of 1,000 small chunks (a 730 kB footer) spent 0.45-0.75 s on it, most of its
 * assembly. Above {@link FOOTER_LEVEL_19_MAX_BYTES}, level 9 (~30 MB/s): a footer ~12%
 * larger (it is mostly SHA-256 hex, which no level packs below half), 0.2% of such an
 * archive of normal chunks (flights-3m in 5,000-row chunks: +20 kB of 11.1 MB). Any
 * level is a plain zstd frame with its content size: every reader decodes it the same.
 */
export function footerLevel(jsonBytes: number): number {
  return jsonBytes <= FOOTER_LEVEL_19_MAX_BYTES ? ZSTD_LEVEL : 9;
}

/**
 * The footer's zstd level under `quickFooter` (`freeze --profile max_speed`): flights-3m's
 * 70 kB footer JSON takes ~1 ms instead of level 19's ~35 ms, all of it serial after the
 * last chunk, for a footer ~1.9 kB larger. Still a plain zstd frame with its content
 * size (FORMAT.md §6 pins no level): every reader decodes it the same.
 */
export const QUICK_FOOTER_LEVEL = 3;

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function destinationExists(path: string): FormatError {
  return new FormatError(
    "DESTINATION_EXISTS",
    `Cannot write archive '${path}': it already exists; remove it or allow replacing it (--force)`,
    { path },
  );
}

function writeFailed(path: string, cause: unknown): FormatError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new FormatError("WRITE_FAILED", `Cannot write archive '${path}': ${why}`, { path, cause });
}
