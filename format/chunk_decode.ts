/**
 * A chunk's read as one self-contained job: the blocks it needs (the wanted columns
 * and those they are conditioned on), already hash-checked and decrypted by the
 * reader, and {@link decodeChunkJob}, which turns them into columns. The reader runs
 * the job on its own thread; a thaw hands it to a pool Worker instead (`ops/`), so
 * that codecs and predictors of several chunks run on every core while the reading
 * thread only reads. Either way the same function decodes, so the rows are the same.
 *
 * Columns cross back from a Worker through {@link packColumns}: typed arrays are
 * moved, not copied, a string column with dictionary codes travels as its codes (a
 * Worker that only posts columns on decodes them as codes, `codes`), and any other
 * as one joined string.
 *
 * @module
 */
import { codecById } from "../codecs/registry.ts";
import { decodeBlock } from "./block.ts";
import { predictorById } from "./predictors/registry.ts";
import type { Column, Field, StringColumn } from "./column.ts";
import { emptyColumn, sliceColumn } from "./column.ts";
import { FormatError } from "./errors.ts";
import { movable } from "../internal/transfer.ts";
import {
  type CodedColumn,
  codedColumn,
  type CodedStrings,
  codesOf,
  type DecodedColumn,
} from "./coded_strings.ts";

/** One block of a {@link ChunkDecodeJob}. */
export interface DecodeBlockJob {
  /** The column's field. */
  field: Field;
  /** The block's plain bytes (hash checked, decrypted); null when the chunk lacks the column. */
  bytes: Uint8Array | null;
  /** The block's raw length (before the codec). */
  rawLength: number;
  /** The block's predictor id. */
  predictor: string;
  /** The column's codec id. */
  codec: string;
  /** Indexes into {@link ChunkDecodeJob.blocks} of the columns this one is conditioned on. */
  deps: number[];
  /** The block's offset in the archive, for error messages. */
  offset: number;
}

/** Everything needed to decode a chunk's wanted columns, with no file or key at hand. */
export interface ChunkDecodeJob {
  /** The chunk's index in the archive. */
  chunk: number;
  /** Rows in the chunk. */
  rows: number;
  /** The blocks read: wanted columns and their dependencies. */
  blocks: DecodeBlockJob[];
  /** Indexes into `blocks` of the columns to return, in output order. */
  wanted: number[];
}

/** Options of {@link decodeChunkJob}. */
export interface ChunkDecodeOptions {
  /**
   * Decode only the chunk's rows `[0, prefix)` (a read that ends inside the chunk, e.g.
   * a 10-row slice): predictors that can stop there do (`DecodeContext.prefix`), and
   * every column returned has `prefix` rows. A column others are conditioned on is
   * decoded that far only when each of them reads no further (`Predictor.prefixDeps`),
   * else whole, as a predictor that ignores `prefix` needs its deps whole.
   */
  prefix?: number;
  /**
   * String columns may come back as codes alone ({@link CodedColumn}: no string per
   * row), for a caller that only posts them on (`packColumns`): those a dictionary
   * predictor decodes (`decodeCoded`) and that no block needs as rows (every block
   * conditioned on one declares `codedDeps`). Whole decodes only (no `prefix`).
   */
  codes?: boolean;
}

/**
 * Decodes a chunk job's wanted columns (each dependency once, before what needs it).
 *
 * @param job The job built by the reader.
 * @param options `prefix`: the rows needed, from the chunk's first (default all);
 * `codes`: string columns may come as codes.
 * @returns The wanted columns, in the job's order.
 * @throws {FormatError} CORRUPT for a dependency cycle or bytes a codec or predictor rejects.
 */
export function decodeChunkJob(
  job: ChunkDecodeJob,
  options?: ChunkDecodeOptions & { codes?: false },
): Promise<Column[]>;
export function decodeChunkJob(
  job: ChunkDecodeJob,
  options: ChunkDecodeOptions,
): Promise<DecodedColumn[]>;
export async function decodeChunkJob(
  job: ChunkDecodeJob,
  options: ChunkDecodeOptions = {},
): Promise<DecodedColumn[]> {
  const rows = options.prefix === undefined ? job.rows : Math.min(job.rows, options.prefix);
  const whole = rows < job.rows ? await decodedWhole(job) : new Set<number>();
  const coded = options.codes && rows === job.rows ? await decodedAsCodes(job) : new Set<number>();
  const decoded = new Map<number, Promise<DecodedColumn>>();
  const decode = (i: number, trail: readonly number[]): Promise<DecodedColumn> => {
    const known = decoded.get(i);
    if (known) return known;
    if (trail.includes(i)) {
      return Promise.reject(
        new FormatError("CORRUPT", `Cannot read archive: column dependencies form a cycle`, {
          chunk: job.chunk,
        }),
      );
    }
    const block = job.blocks[i]!;
    const prefix = rows < job.rows && !whole.has(i) ? rows : undefined;
    const promise = Promise.all(block.deps.map((d) => decode(d, [...trail, i]))).then((deps) =>
      block.bytes === null
        ? nullColumn(block.field, prefix ?? job.rows)
        : decodeBlock(block.bytes, {
          rows: job.rows,
          rawLength: block.rawLength,
          field: block.field,
          predictor: block.predictor,
          codec: codecById(block.codec),
          deps,
          at: { chunk: job.chunk, column: block.field.name, offset: block.offset },
          prefix,
          codes: coded.has(i),
        })
    );
    decoded.set(i, promise);
    return promise;
  };
  const columns = await Promise.all(job.wanted.map((i) => decode(i, [])));
  return rows < job.rows
    ? (columns as Column[]).map((c) => c.values.length > rows ? sliceColumn(c, 0, rows) : c)
    : columns;
}

/**
 * The blocks a decode that takes codes ({@link ChunkDecodeOptions.codes}) decodes as
 * codes: string columns whose predictor has `decodeCoded`, unless a block conditioned
 * on one reads its dependencies as rows (no `codedDeps`).
 */
async function decodedAsCodes(job: ChunkDecodeJob): Promise<Set<number>> {
  const predictors = await Promise.all(
    job.blocks.map((b) => b.bytes === null ? null : predictorById(b.predictor)),
  );
  const asCodes = new Set<number>();
  for (const [i, block] of job.blocks.entries()) {
    if (block.field.type === "string" && predictors[i]?.decodeCoded) asCodes.add(i);
  }
  for (const [i, block] of job.blocks.entries()) {
    if (predictors[i]?.codedDeps === true) continue;
    for (const d of block.deps) asCodes.delete(d);
  }
  return asCodes;
}

/**
 * The blocks of a prefix decode that must still be decoded whole: those some block
 * decoded whole, or one whose predictor does not declare `prefixDeps`, is
 * conditioned on.
 */
async function decodedWhole(job: ChunkDecodeJob): Promise<Set<number>> {
  const prefixDeps = await Promise.all(
    job.blocks.map((b) =>
      b.deps.length === 0 || b.bytes === null
        ? true
        : predictorById(b.predictor).then((p) => p.prefixDeps === true)
    ),
  );
  const whole = new Set<number>();
  for (let grew = true; grew;) {
    grew = false;
    for (const [i, block] of job.blocks.entries()) {
      if (prefixDeps[i] && !whole.has(i)) continue;
      for (const d of block.deps) {
        if (!whole.has(d)) {
          whole.add(d);
          grew = true;
        }
      }
    }
  }
  return whole;
}

/** A column a chunk lacks, as it reads: every row null (the type's zero under validity 0). */
export function nullColumn(field: Field, rows: number): Column {
  return { ...emptyColumn(field, rows), validity: new Uint8Array(rows) } as Column;
}

/**
 * A string column as it crosses between threads: the values joined into one string
 * and the end offset (UTF-16 code units) of each. Cloning one long string is a copy;
 * cloning a `string[]` of 50,000 values costs the receiving thread several
 * milliseconds per column.
 */
export interface PackedStrings {
  type: "string" | "json";
  packed: { joined: string; ends: Uint32Array };
  validity: Uint8Array | null;
}

/**
 * Packs one string column (see {@link PackedStrings}).
 *
 * @param column The column.
 * @returns The column as it crosses to another thread.
 */
export function packStrings(column: StringColumn): PackedStrings {
  const values = column.values;
  const ends = new Uint32Array(values.length);
  let at = 0;
  for (let i = 0; i < values.length; i++) {
    at += values[i]!.length;
    ends[i] = at;
  }
  return {
    type: column.type,
    packed: { joined: values.join(""), ends },
    validity: column.validity,
  };
}

/** A column ready to post: typed arrays as they are, strings packed or coded. */
export type PostedColumn =
  | Exclude<Column, { type: "string" | "json" }>
  | PackedStrings
  | CodedColumn;

/**
 * A string column's codes, when it has them and every row is its code's entry (as
 * `coded_strings.ts` asks a reader to check); else null.
 */
function checkedCodes(values: readonly string[]): CodedStrings | null {
  const coded = codesOf(values);
  if (coded === undefined || coded.dictionary.length > values.length) return null;
  const { codes, dictionary } = coded;
  for (let i = 0; i < values.length; i++) {
    if (values[i] !== dictionary[codes[i]!]) return null;
  }
  return coded;
}

/**
 * Packs columns to post to another thread, with the buffers to transfer (see
 * `internal/transfer.ts`).
 *
 * @param columns Columns the caller gives up.
 * @returns What to post, and the transfer list.
 */
export function packColumns(
  columns: readonly DecodedColumn[],
): { columns: PostedColumn[]; transfer: ArrayBuffer[] } {
  const transfer = new Set<ArrayBuffer>();
  const own = <T extends ArrayBufferView>(view: T): T => movable(view, transfer);
  const posted = columns.map((column): PostedColumn => {
    const validity = column.validity === null ? null : own(column.validity);
    if ("coded" in column) {
      const { codes, dictionary } = column.coded;
      return { type: "string", coded: { codes: own(codes), dictionary }, validity };
    }
    const coded = column.type === "string" ? checkedCodes(column.values) : null;
    if (coded !== null) {
      // The codes copied: the decoder's own may be a view its dictionary's caches share.
      const codes = coded.codes.slice();
      transfer.add(codes.buffer);
      return { type: "string", coded: { codes, dictionary: [...coded.dictionary] }, validity };
    }
    if (column.type === "string" || column.type === "json") {
      const packed = packStrings({ ...column, validity });
      transfer.add(packed.packed.ends.buffer as ArrayBuffer);
      return packed;
    }
    if (column.type === "decimal" && Array.isArray(column.values)) {
      return { ...column, validity } as PostedColumn;
    }
    return { ...column, values: own(column.values as ArrayBufferView), validity } as PostedColumn;
  });
  return { columns: posted, transfer: [...transfer] };
}

/**
 * Inverse of {@link packColumns}, on the receiving thread.
 *
 * @param posted Columns as posted.
 * @returns The columns.
 */
export function unpackColumns(posted: readonly PostedColumn[]): Column[] {
  return posted.map((column): Column => {
    if ("coded" in column) return codedColumn(column);
    if (!("packed" in column)) return column as Column;
    const { joined, ends } = column.packed;
    const values = new Array<string>(ends.length);
    let start = 0;
    for (let i = 0; i < ends.length; i++) {
      values[i] = joined.slice(start, ends[i]);
      start = ends[i]!;
    }
    return { type: column.type, values, validity: column.validity };
  });
}
