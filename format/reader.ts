/**
 * `ArchiveReader`: opens an archive in the vortex validation order (size, magic,
 * version, lengths, hashes, then parse), and reads rows selectively — only the
 * chunks that overlap the row range and only the blocks of the requested columns
 * (plus the columns they are conditioned on), checking each block's SHA-256
 * before decoding it. Implements FORMAT.md §2, §7 (reading) and §8 (errors).
 *
 * Every failure on file bytes is a `FormatError`; the reader never returns
 * wrong data, never throws a `RangeError`, and never allocates more than the
 * file's own size for a length it read.
 *
 * Encrypted archives (1.4, FORMAT.md §4.4) open without a key: header, footer and
 * `verify` (hashes over the stored bytes) need none. Reading rows needs the key
 * ring: the data key is unlocked and checked against `key_check` when the reader
 * opens (`WRONG_KEY` before any block is read), and each block is authenticated
 * after its SHA-256 and before the codec (`DECRYPT_FAILED`).
 *
 * A chunk written before `append --evolve` added a column has no block for it (1.8,
 * FORMAT.md §6.1): the reader returns that column as all null, here and only here,
 * so every caller (thaw, slices, `--where`, SQL, lookups) sees one shape of chunk.
 *
 * @module
 */
import { codecById } from "../codecs/registry.ts";
import { MIXED_CODEC } from "./constants.ts";
import type { Codec } from "../codecs/codec.ts";
import { type ChunkDecodeJob, type DecodeBlockJob, decodeChunkJob } from "./chunk_decode.ts";
import { predictorById } from "./predictors/registry.ts";
import type { KeyRing } from "./key_provider.ts";
import type { Batch, Schema } from "./column.ts";
import { sliceBatch } from "./column.ts";
import { FormatError } from "./errors.ts";
import { type ErrorDetails, PermafrostError } from "../internal/errors.ts";
import type { ChunkEntry } from "./header.ts";
import { sha256, sha256Hex, sha256HexAsync } from "./_hash.ts";
import { type ArchiveIndex, readIndex } from "./_index.ts";
import { type ByteSource, openFileSource, readExact } from "./byte_source.ts";

export type { ArchiveIndex } from "./_index.ts";

/** A row range, 0-based, half-open. */
export interface RowRange {
  /** First row (inclusive). */
  start: number;
  /** Row after the last one (exclusive). */
  end: number;
}

/** Options of `ArchiveReader.read`. */
export interface ReadOptions {
  /** Rows to read (default: all). Clamped to the archive. */
  rows?: RowRange;
  /** Columns to read, in output order (default: all, in schema order). */
  columns?: readonly string[];
  /** Chunk indexes to skip entirely (pruned by the caller from footer stats). */
  skipChunk?: (chunk: ChunkEntry, index: number) => boolean;
}

/** One chunk of a read, to decode (see {@link ArchiveReader.chunkJobs}). */
export interface ChunkRead {
  /** The chunk's blocks, ready for `decodeChunkJob`. */
  job: ChunkDecodeJob;
  /** First row of the chunk in the range (0-based within the chunk). */
  from: number;
  /** Row after the last one in the range (within the chunk). */
  to: number;
  /** The columns the job's `wanted` decode to. */
  schema: Schema;
}

/** Options of `ArchiveReader.open`. */
export interface OpenOptions {
  /** Keys for an encrypted archive (unused for a plain one). */
  keys?: KeyRing;
  /**
   * Fail at open with `KEY_REQUIRED` when the archive is encrypted and `keys` is
   * missing (default false: header, footer and `verify` need no key). Thaw sets it,
   * so a missing key fails before any output is created.
   */
  requireKey?: boolean;
}

/** What `verify` found. */
export interface VerifyReport {
  /** True when every hash matched. */
  ok: boolean;
  /** The file this concerns. */
  path: string;
  /** Chunks. */
  chunks: number;
  /** Payload bytes read and hashed. */
  bytes_checked: number;
  /** SHA-256 (hex) of the header. */
  header_sha256: string;
  /** SHA-256 (hex) of the payload. */
  payload_sha256: string;
  /** First chunk whose bytes do not match the footer, or null. */
  first_bad_chunk: number | null;
  /** Every mismatch found, in file order. */
  errors: { chunk: number | null; code: string; message: string }[];
  /**
   * Columns an evolving append added after the first chunk, with the first chunk that
   * holds each (earlier chunks have no block to check and read it as null; 1.8).
   */
  columns_since: Record<string, number>;
}

/**
 * `crypto.ts`, imported when an encrypted archive is opened: a plain archive's reader
 * (every quick command, a slice) does not load it nor the key providers.
 */
type Crypto = typeof import("./crypto.ts");

/**
 * By computed specifiers: Deno reads and parses every module a literal
 * `import("./x.ts")` names when it loads the importer (`cli/lazy.ts` lists them for
 * `deno compile`).
 */
const CRYPTO = new URL("./crypto.ts", import.meta.url);
const KEY_PROVIDER = new URL("./key_provider.ts", import.meta.url);

/** What an encrypted archive's reader needs to open its blocks. */
interface Sealed {
  crypto: Crypto;
  /** The data key as a Web Crypto key (null when it was not unlocked). */
  key: Promise<CryptoKey> | null;
  /** The header binding every block's additional data starts with. */
  binding: string;
}

/** Reads one archive. Close it when done. */
export class ArchiveReader {
  /** Header and footer. */
  readonly index: ArchiveIndex;
  #source: ByteSource;
  /** Each column's codec, in schema order (one for all but in a mixed archive). */
  #codecs: Codec[];
  #bytesRead = 0;
  #chunksRead = 0;
  #dataKey: Uint8Array | null;
  /** Null for a plain archive. */
  #sealed: Sealed | null;

  private constructor(
    source: ByteSource,
    index: ArchiveIndex,
    codecs: Codec[],
    dataKey: Uint8Array | null,
    crypto: Crypto | null,
  ) {
    this.#source = source;
    this.index = index;
    this.#codecs = codecs;
    this.#dataKey = dataKey;
    this.#sealed = crypto && index.header.encryption
      ? {
        crypto,
        key: dataKey ? crypto.importDataKey(dataKey) : null,
        binding: crypto.headerBinding(index.header),
      }
      : null;
  }

  /** True when the blocks are encrypted (FORMAT.md §4.4). */
  get encrypted(): boolean {
    return this.index.header.encryption !== null;
  }

  /**
   * The unlocked 32-byte data key of an encrypted archive (null when plain or not
   * unlocked), for callers that write more chunks under it (append, the cluster).
   *
   * @returns A copy of the key.
   */
  dataKey(): Uint8Array | null {
    return this.#dataKey ? this.#dataKey.slice() : null;
  }

  /** Payload bytes read so far by `read` (blocks only). */
  get bytesRead(): number {
    return this.#bytesRead;
  }

  /** Chunks touched so far by `read`. */
  get chunksRead(): number {
    return this.#chunksRead;
  }

  /**
   * Opens and validates an archive (header and footer; the payload is checked as it is read).
   *
   * @param path Archive path.
   * @param options Keys of an encrypted archive; `requireKey`.
   * @returns An open reader.
   * @throws {FormatError} BAD_MAGIC, UNSUPPORTED_VERSION, TRUNCATED, HASH_MISMATCH, CORRUPT,
   * UNKNOWN_CODEC; KEY_REQUIRED, WRONG_KEY, KEY_PROVIDER_FAILED for an encrypted archive.
   */
  static async open(path: string, options: OpenOptions = {}): Promise<ArchiveReader> {
    return await ArchiveReader.openSource(await openFileSource(path), options);
  }

  /**
   * Opens and validates an archive read from any {@link ByteSource} (an object in a
   * store, read by ranges); closes the source when it fails.
   *
   * @param source The archive's bytes.
   * @param options Keys of an encrypted archive; `requireKey`.
   * @returns An open reader (closing it closes the source).
   * @throws {FormatError} as {@link ArchiveReader.open}.
   */
  static async openSource(source: ByteSource, options: OpenOptions = {}): Promise<ArchiveReader> {
    const path = source.name;
    try {
      const index = await readIndex(source, path);
      const codecs = index.schema.map((f) => {
        const id = index.header.codec === MIXED_CODEC
          ? index.header.columns[f.name]!.codec!
          : index.header.codec;
        try {
          return codecById(id);
        } catch (cause) {
          throw new FormatError(
            "UNKNOWN_CODEC",
            `Cannot read archive '${path}': unknown codec "${id}"${
              index.header.codec === MIXED_CODEC ? ` (column "${f.name}")` : ""
            }`,
            { path, cause },
          );
        }
      });
      const encryption = index.header.encryption;
      let dataKey: Uint8Array | null = null;
      let crypto: Crypto | null = null;
      if (encryption) {
        crypto = (await import(CRYPTO.href)) as Crypto;
        if (options.keys || options.requireKey) {
          const { unlockDataKey } =
            (await import(KEY_PROVIDER.href)) as typeof import("./key_provider.ts");
          dataKey = await unlockDataKey(encryption, options.keys, path);
        }
      }
      return new ArchiveReader(source, index, codecs, dataKey, crypto);
    } catch (err) {
      source.close();
      throw err;
    }
  }

  /**
   * Reads rows, one batch per chunk touched, trimmed to the requested range.
   *
   * @param options Row range, columns and chunk pruning.
   * @returns Batches in row order holding only the requested columns.
   * @throws {FormatError} BAD_ARGUMENT for an unknown column; HASH_MISMATCH or CORRUPT on bad bytes.
   */
  async *read(options: ReadOptions = {}): AsyncGenerator<Batch> {
    try {
      yield* this.#read(options);
    } catch (err) {
      throw namingArchive(err, this.index.path);
    }
  }

  async *#read(options: ReadOptions): AsyncGenerator<Batch> {
    for await (const { job, from, to, schema } of this.#jobs(options, true)) {
      // A read that ends inside the chunk decodes its rows up to there only.
      const columns = await decodeChunkJob(job, to < job.rows ? { prefix: to } : {});
      const batch: Batch = { schema, columns, length: to };
      yield from === 0 && to === job.rows ? batch : sliceBatch(batch, from, to);
    }
  }

  /**
   * Reads rows as chunk jobs, for a caller that decodes them elsewhere (a pool of
   * Workers): each holds the blocks of one chunk, already hash-checked and
   * decrypted, and the rows of it in the range. `decodeChunkJob(job)` then sliced to
   * `[from, to)` is what {@link ArchiveReader.read} yields.
   *
   * @param options As {@link ArchiveReader.read}.
   * @returns One job per chunk touched, in row order.
   * @throws {FormatError} as {@link ArchiveReader.read}.
   */
  async *chunkJobs(options: ReadOptions = {}): AsyncGenerator<ChunkRead> {
    try {
      yield* this.#jobs(options);
    } catch (err) {
      throw namingArchive(err, this.index.path);
    }
  }

  /** With `decodeHere`, the jobs are decoded on this thread (not handed to Workers). */
  async *#jobs(options: ReadOptions, decodeHere = false): AsyncGenerator<ChunkRead> {
    const { schema, footer } = this.index;
    const names = options.columns ?? schema.map((f) => f.name);
    const wanted = names.map((name) => {
      const i = schema.findIndex((f) => f.name === name);
      if (i < 0) {
        throw new FormatError(
          "BAD_ARGUMENT",
          `Cannot read column "${name}": the archive has ${
            schema.map((f) => `"${f.name}"`).join(", ")
          }`,
          { column: name },
        );
      }
      return i;
    });
    const outSchema: Schema = wanted.map((i) => schema[i]!);
    const start = Math.max(0, options.rows?.start ?? 0);
    const end = Math.min(footer.rows, options.rows?.end ?? footer.rows);
    if (end <= start) return;
    const needed = this.#needed(wanted);
    for (let c = 0; c < footer.chunks.length; c++) {
      const chunk = footer.chunks[c]!;
      if (chunk.row_end <= start || chunk.row_start >= end) continue;
      if (options.skipChunk?.(chunk, c)) continue;
      this.#chunksRead++;
      if (this.#source.prefetch) await this.#prefetch(chunk, needed);
      // Decoded here, the predictors' modules start loading now, while the blocks are
      // read and hashed (the hashes run off this thread); decoding awaits the same
      // promises, and reports an unknown predictor itself.
      for (const i of decodeHere ? needed : []) {
        const predictor = chunk.blocks[i]?.predictor;
        if (predictor !== undefined) predictorById(predictor).catch(() => {});
      }
      const blocks = await Promise.all(
        needed.map((i) => this.#blockJob(c, chunk, i, needed)),
      );
      yield {
        job: {
          chunk: c,
          rows: chunk.row_end - chunk.row_start,
          blocks,
          wanted: wanted.map((i) => needed.indexOf(i)),
        },
        from: Math.max(start, chunk.row_start) - chunk.row_start,
        to: Math.min(end, chunk.row_end) - chunk.row_start,
        schema: outSchema,
      };
    }
  }

  /** The columns a read of `wanted` decodes: those and every column they are conditioned on. */
  #needed(wanted: readonly number[]): number[] {
    const { schema, header } = this.index;
    const needed: number[] = [];
    const visit = (i: number) => {
      if (needed.includes(i)) return;
      if (i < 0) {
        throw new FormatError(
          "CORRUPT",
          `Cannot read archive: a column is conditioned on a column it does not have`,
        );
      }
      needed.push(i);
      for (const d of header.columns[schema[i]!.name]?.deps ?? []) {
        visit(schema.findIndex((f) => f.name === d));
      }
    };
    for (const i of wanted) visit(i);
    return needed;
  }

  /**
   * Asks a remote source for the span of the blocks a chunk's read needs in one
   * request, instead of one per block.
   */
  async #prefetch(chunk: ChunkEntry, needed: readonly number[]): Promise<void> {
    let from = Infinity;
    let to = -Infinity;
    for (const i of needed) {
      const block = chunk.blocks[i];
      if (!block) continue;
      from = Math.min(from, block.offset);
      to = Math.max(to, block.offset + block.length);
    }
    if (to > from) await this.#source.prefetch!(from, to - from);
  }

  /** Reads a byte range (the source serializes what must be). */
  #readAt(offset: number, length: number): Promise<Uint8Array> {
    return readExact(this.#source, offset, length);
  }

  /** Reads, checks and decrypts one block of a chunk job. */
  async #blockJob(
    c: number,
    chunk: ChunkEntry,
    i: number,
    needed: readonly number[],
  ): Promise<DecodeBlockJob> {
    const field = this.index.schema[i]!;
    const job = {
      field,
      rawLength: 0,
      predictor: "",
      codec: this.#codecs[i]!.id,
      deps: this.index.header.columns[field.name]!.deps.map((d) =>
        needed.findIndex((n) => this.index.schema[n]!.name === d)
      ),
      offset: 0,
    };
    const block = chunk.blocks[i];
    if (block === null || block === undefined) return { ...job, bytes: null };
    const stored = await this.#readAt(block.offset, block.length);
    this.#bytesRead += block.length;
    if (await sha256HexAsync(stored) !== block.sha256) {
      throw new FormatError(
        "HASH_MISMATCH",
        `Chunk ${c} column "${field.name}" does not match its SHA-256: the archive is damaged at bytes ${block.offset}..${
          block.offset + block.length
        }`,
        { chunk: c, column: field.name, offset: block.offset, path: this.index.path },
      );
    }
    const sealed = this.#sealed;
    const bytes = sealed
      ? await sealed.crypto.openBlock(
        await this.#requireKey(sealed),
        stored,
        sealed.crypto.blockAad({
          headerBinding: sealed.binding,
          rowStart: chunk.row_start,
          rows: chunk.row_end - chunk.row_start,
          column: i,
          rawLength: block.raw_length,
          predictor: block.predictor,
        }),
        { chunk: c, column: field.name, offset: block.offset },
      )
      : stored;
    return {
      ...job,
      bytes,
      rawLength: block.raw_length,
      predictor: block.predictor,
      offset: block.offset,
    };
  }

  #requireKey(sealed: Sealed): Promise<CryptoKey> {
    if (sealed.key) return sealed.key;
    const e = this.index.header.encryption!;
    return Promise.reject(
      new FormatError(
        "KEY_REQUIRED",
        `Cannot read rows of '${this.index.path}': it is encrypted (${e.key_provider}${
          e.key_id ? ` key '${e.key_id}'` : ""
        }); open it with a key`,
        { path: this.index.path },
      ),
    );
  }

  /**
   * Checks the payload hash and every chunk's hash against the footer.
   *
   * @param onProgress Called with bytes checked so far.
   * @returns A report naming the first bad chunk, if any.
   */
  async verify(onProgress?: (bytes: number) => void): Promise<VerifyReport> {
    const { footer, path } = this.index;
    const payload = sha256();
    const errors: VerifyReport["errors"] = [];
    let bytes = 0;
    for (let c = 0; c < footer.chunks.length; c++) {
      const chunk = footer.chunks[c]!;
      const stored = await this.#readAt(chunk.offset, chunk.length);
      payload.update(stored);
      bytes += stored.length;
      onProgress?.(bytes);
      if (sha256Hex(stored) !== chunk.sha256) {
        const bad = chunk.blocks.findIndex((b) =>
          b !== null && sha256Hex(
              stored.subarray(b.offset - chunk.offset, b.offset - chunk.offset + b.length),
            ) !== b.sha256
        );
        const column = bad >= 0 ? ` (column "${this.index.schema[bad]!.name}")` : "";
        errors.push({
          chunk: c,
          code: "HASH_MISMATCH",
          message: `Chunk ${c} (rows ${chunk.row_start}..${chunk.row_end}, bytes ${chunk.offset}..${
            chunk.offset + chunk.length
          })${column} does not match its SHA-256`,
        });
      }
    }
    const payloadSha = payload.digest("hex");
    if (payloadSha !== footer.payload_sha256) {
      errors.push({
        chunk: null,
        code: "HASH_MISMATCH",
        message: `Payload SHA-256 is ${payloadSha}, the footer records ${footer.payload_sha256}`,
      });
    }
    return {
      ok: errors.length === 0,
      path,
      chunks: footer.chunks.length,
      bytes_checked: bytes,
      header_sha256: this.index.header_sha256,
      payload_sha256: footer.payload_sha256,
      first_bad_chunk: errors.find((e) => e.chunk !== null)?.chunk ?? null,
      errors,
      columns_since: Object.fromEntries(
        this.index.schema.flatMap((f) => {
          const since = this.index.header.columns[f.name]!.since_chunk ?? 0;
          return since > 0 ? [[f.name, since]] : [];
        }),
      ),
    };
  }

  /** Reads the stored bytes of one chunk (hash-checked). Used by append and the cluster. */
  async readChunkBytes(c: number): Promise<Uint8Array> {
    try {
      return await this.#readChunkBytes(c);
    } catch (err) {
      throw namingArchive(err, this.index.path);
    }
  }

  async #readChunkBytes(c: number): Promise<Uint8Array> {
    const chunk = this.index.footer.chunks[c];
    if (!chunk) {
      throw new FormatError(
        "BAD_ARGUMENT",
        `Cannot read chunk ${c}: the archive has ${this.index.footer.chunks.length}`,
      );
    }
    const stored = await this.#readAt(chunk.offset, chunk.length);
    if (sha256Hex(stored) !== chunk.sha256) {
      throw new FormatError("HASH_MISMATCH", `Chunk ${c} does not match its SHA-256`, {
        chunk: c,
        path: this.index.path,
      });
    }
    return stored;
  }

  /** Closes the file. */
  close(): void {
    try {
      this.#source.close();
    } catch { /* already closed */ }
  }
}

/**
 * The same error, with the archive named in its message and `path`: a block or codec
 * failure deep in a read knows its chunk and column but not the file, and a user
 * reading several archives needs to know which one is damaged.
 *
 * @param err What a read of the archive threw (here or in a Worker decoding its chunks).
 * @param path The archive's path.
 * @returns The error to throw.
 */
export function namingArchive(err: unknown, path: string): unknown {
  if (!(err instanceof PermafrostError) || err.message.includes(`'${path}'`)) return err;
  const Class = err.constructor as new (
    code: string,
    message: string,
    details: ErrorDetails,
  ) => PermafrostError;
  return new Class(err.code, `${err.message} (archive '${path}')`, {
    cause: err,
    path,
    ...(err.chunk === undefined ? {} : { chunk: err.chunk }),
    ...(err.column === undefined ? {} : { column: err.column }),
    ...(err.offset === undefined ? {} : { offset: err.offset }),
  });
}

/**
 * Reads header and footer of an archive (no payload) and closes it.
 *
 * @param path Archive path.
 * @returns The archive index.
 * @throws {FormatError} As `ArchiveReader.open`.
 */
export async function readArchiveIndex(path: string): Promise<ArchiveIndex> {
  const reader = await ArchiveReader.open(path);
  reader.close();
  return reader.index;
}
