/**
 * `append`: adds rows to an existing archive as new chunks, encoded with the
 * archive's own header — its schema, per-column plans (predictor conditioning,
 * quantization) and codec — so the new payload is exactly what a freeze of the
 * same rows with that header would write.
 *
 * Crash safety: the archive is never modified in place. The new file is built
 * in a temp file beside it (`ArchiveWriter`): header, then every existing chunk
 * copied block by block after its SHA-256 is checked (so a damaged archive is
 * refused, never carried forward), then the new chunks, then a fresh footer
 * with every hash; then fsync and `rename` over the archive. A crash at any
 * point before the rename leaves the old archive untouched (and a stray
 * `.<name>.pf.tmp-*` file, which the next write to the archive removes once it is
 * stale, see `format/writer.ts`); after it, the new one. A reader
 * never sees a half-written archive. The cost is one copy of the archive per
 * append. If the archive changes while the append runs (another append won
 * the race), the append aborts with CONCURRENT_CHANGE instead of losing rows.
 *
 * The last existing chunk is not refilled: new rows start a new chunk, so
 * existing chunks keep their bytes and hashes (and `diff` shows them unchanged).
 *
 * With `evolve`, the source may add nullable columns and leave out nullable ones
 * (`append_schema.ts` has the rule): existing chunks are still copied as they are, with
 * no block for an added column (format 1.8: they read it as null), and the new chunks
 * hold every column.
 *
 * @module
 */
import { fromSource, isRemote, objectTag, uploadFile } from "./_remote.ts";
import { encodeChunk } from "../format/chunk.ts";
import type { Batch, Column, Field, Schema } from "../format/column.ts";
import { cellValue, emptyColumn } from "../format/column.ts";
import { fitsPrecision, formatDecimal, pow10 } from "../format/decimal_value.ts";
import type { ChunkEntry } from "../format/header.ts";
import { BlockPool } from "../format/pool.ts";
import type { FormatWarning } from "../format/predictors/predictor.ts";
import { ArchiveReader } from "../format/reader.ts";
import { compareStat } from "../format/stats.ts";
import { ArchiveWriter, type ChunkLayout, type EncodedChunk } from "../format/writer.ts";
import { IoError } from "../io/errors.ts";
import type { SourceFormat } from "../io/types.ts";
import { evolvedHeader, openForAppend, typeName } from "./append_schema.ts";
import { OpsError } from "./errors.ts";
import type { FreezeSource } from "./freeze.ts";
import { checkThreads } from "./threads.ts";
import { PrimaryKeyCheck } from "./primary_key.ts";
import { rechunk } from "../io/chunk_window.ts";

/** Options of `append`. */
export interface AppendOptions {
  /** Source format, instead of guessing from the extension. */
  format?: SourceFormat;
  /** CSV field delimiter (default: told from the first lines among `,` tab `;` `|`). */
  delimiter?: string;
  /** Worker threads encoding blocks (default: one per core; 0 encodes on the calling thread; at most 4 per core). */
  threads?: number;
  /** Called after each new chunk is written to the temp file. */
  onProgress?: (progress: { rows_added: number; chunks_added: number }) => void;
  /** Called with each predictor warning. */
  onWarning?: (warning: FormatWarning) => void;
  /**
   * Let the source add nullable columns (stored chunks read them as null without being
   * rewritten; format 1.8) and leave out nullable ones (nulls in the new chunks).
   * Default false: the source must hold exactly the archive's columns.
   */
  evolve?: boolean;
}

/** What `append` did. */
export interface AppendSummary {
  /** The archive. */
  path: string;
  /** Rows before the append. */
  rows_before: number;
  /** Rows added. */
  rows_added: number;
  /** Rows now. */
  rows: number;
  /** Chunks before the append. */
  chunks_before: number;
  /** Chunks added. */
  chunks_added: number;
  /** Columns the append added to the schema (with `evolve`), in order. */
  columns_added: string[];
  /** Archive columns the source lacked, stored as nulls in the new chunks (with `evolve`). */
  columns_filled: string[];
  /** Size of the archive file now. */
  archive_bytes: number;
  /** SHA-256 (hex) of the new payload. */
  payload_sha256: string;
  /** Wall-clock seconds. */
  seconds: number;
}

/**
 * Appends rows to an archive, atomically (temp file + rename).
 *
 * @param source A file path (`.csv`, `.jsonl`, `.parquet`, `.arrow`), an Arrow table, or `{schema, batches}`.
 * @param archive The archive to extend.
 * @param options Format, threads, callbacks.
 * @returns Rows and chunks before and after.
 * @throws {OpsError} SCHEMA_MISMATCH listing the differing columns (with `evolve`: a
 * type change, a new column that is not nullable, a missing one that is not), or
 * naming a value that does not fit the archive's type of its column; PRIMARY_KEY for a
 * null or repeated key (also against the keys already stored); BAD_OPTION for an
 * encrypted archive; CONCURRENT_CHANGE when the archive changed meanwhile.
 * {FormatError} when the archive is damaged (nothing is written).
 *
 * @example Append rows, then read them all back
 * ```ts
 * import assert from "node:assert/strict";
 * import { tableFromArrays } from "apache-arrow";
 * import { append } from "./append.ts";
 * import { freeze } from "./freeze.ts";
 * import { thawTable } from "./thaw.ts";
 * const dir = await Deno.makeTempDir();
 * await freeze(tableFromArrays({ n: Float64Array.of(1, 2) }), `${dir}/t.pf`, { threads: 0 });
 * const s = await append(tableFromArrays({ n: Float64Array.of(3) }), `${dir}/t.pf`, { threads: 0 });
 * assert.equal(s.rows, 3);
 * assert.deepEqual([...(await thawTable(`${dir}/t.pf`)).getChild("n")!.toArray()], [1, 2, 3]);
 * await Deno.remove(dir, { recursive: true });
 * ``` *
 * @example Add a column: rows stored before read it as null
 * ```ts
 * import assert from "node:assert/strict";
 * import { tableFromArrays } from "apache-arrow";
 * import { append } from "./append.ts";
 * import { freeze } from "./freeze.ts";
 * import { thawTable } from "./thaw.ts";
 * const dir = await Deno.makeTempDir();
 * await freeze(tableFromArrays({ n: Float64Array.of(1, 2) }), `${dir}/t.pf`, { threads: 0 });
 * const more = tableFromArrays({ n: Float64Array.of(3), tag: ["new"] });
 * const s = await append(more, `${dir}/t.pf`, { evolve: true, threads: 0 });
 * assert.deepEqual(s.columns_added, ["tag"]);
 * assert.deepEqual([...(await thawTable(`${dir}/t.pf`)).getChild("tag")!.toArray()], [null, null, "new"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function append(
  source: FreezeSource,
  archive: string,
  options: AppendOptions = {},
): Promise<AppendSummary> {
  if (isRemote(archive)) {
    // A copy is appended to and uploaded over the object, unless the object changed
    // meanwhile (its ETag): then nothing is uploaded.
    const tag = await objectTag(archive);
    return await fromSource(archive, async (local) => {
      const summary = await append(source, local, options);
      if ((await objectTag(archive)) !== tag) {
        throw new OpsError(
          "CONCURRENT_CHANGE",
          `'${archive}' changed while rows were appended to it; nothing was uploaded, append again`,
          { path: archive },
        );
      }
      await uploadFile(local, archive);
      return { ...summary, path: archive };
    });
  }
  const started = performance.now();
  const threads = checkThreads(options.threads);
  const before = await Deno.stat(archive).catch(() => null);
  const reader = await ArchiveReader.open(archive);
  let writer: ArchiveWriter | undefined;
  const pool = threads > 0 ? new BlockPool(threads) : undefined;
  try {
    const { header, schema, footer } = reader.index;
    if (header.encryption !== null) {
      throw new OpsError(
        "BAD_OPTION",
        `Cannot append to '${archive}': it is encrypted, and append does not encrypt yet`,
      );
    }
    const { opened, schema: newSchema, added, filled } = await openForAppend(
      source,
      archive,
      schema,
      {
        format: options.format,
        delimiter: options.delimiter,
        chunkRows: header.chunk_rows,
        evolve: options.evolve === true,
      },
    );
    const newHeader = evolvedHeader(header, added, footer.chunks.length);
    const columnsAdded = added.map((f) => f.name);
    try {
      const keys = header.primary_key === null
        ? null
        : new StoredKeys(reader, schema, header.primary_key);
      const warn = (w: FormatWarning) => options.onWarning?.(w);
      const inflight: Promise<EncodedChunk>[] = [];
      const window = pool?.capacity ?? 2;
      let added = 0;
      let chunksAdded = 0;
      const start = async () => {
        writer = await ArchiveWriter.create(archive, newHeader);
        for (let c = 0; c < footer.chunks.length; c++) {
          await writer.writeChunk(
            storedChunk(footer.chunks[c]!, await reader.readChunkBytes(c), newSchema.length),
          );
        }
      };
      const drainOne = async () => {
        const chunk = await inflight.shift()!;
        await writer!.writeChunk(chunk);
        chunksAdded++;
        options.onProgress?.({ rows_added: writer!.rows - footer.rows, chunks_added: chunksAdded });
      };
      // Cut in the source's own column order: conform puts them in the archive's.
      const rows = rechunk(
        opened.schema,
        fromArchiveTypes(opened.batches, source, archive, schema),
        header.chunk_rows,
      );
      for await (const raw of rows) {
        const batch = conform(raw, newSchema, archive);
        if (keys) await keys.check(batch, footer.rows + added);
        added += batch.length;
        if (!writer) await start();
        const pending = encodeChunk(batch, {
          plans: newHeader.columns,
          codec: newHeader.codec,
          encoder: pool,
          warn,
        });
        pending.catch(() => {});
        inflight.push(pending);
        if (inflight.length >= window) await drainOne();
      }
      while (inflight.length > 0) await drainOne();
      if (!writer) {
        return {
          path: archive,
          rows_before: footer.rows,
          rows_added: 0,
          rows: footer.rows,
          chunks_before: footer.chunks.length,
          chunks_added: 0,
          columns_added: [],
          columns_filled: [],
          archive_bytes: reader.index.file_bytes,
          payload_sha256: footer.payload_sha256,
          seconds: (performance.now() - started) / 1000,
        };
      }
      const now = await Deno.stat(archive).catch(() => null);
      if (
        before === null || now === null || now.size !== before.size ||
        now.mtime?.getTime() !== before.mtime?.getTime() || now.ino !== before.ino
      ) {
        throw new OpsError(
          "CONCURRENT_CHANGE",
          `Cannot append to '${archive}': it changed while the append ran (another writer?); nothing was written, run the append again`,
          { path: archive },
        );
      }
      const written = await writer.finish();
      writer = undefined;
      return {
        path: archive,
        rows_before: footer.rows,
        rows_added: added,
        rows: written.rows,
        chunks_before: footer.chunks.length,
        chunks_added: chunksAdded,
        columns_added: columnsAdded,
        columns_filled: filled,
        archive_bytes: written.bytes,
        payload_sha256: written.payload_sha256,
        seconds: (performance.now() - started) / 1000,
      };
    } finally {
      await opened.close();
    }
  } finally {
    await writer?.abort();
    pool?.close();
    reader.close();
  }
}

/**
 * Passes the source's batches through, rephrasing a value that does not fit its
 * column: the type comes from the archive, so the message says so (a reader alone
 * would blame its type sample).
 */
async function* fromArchiveTypes(
  batches: AsyncIterable<Batch> | Iterable<Batch>,
  source: FreezeSource,
  archive: string,
  schema: Schema,
): AsyncGenerator<Batch> {
  try {
    yield* batches;
  } catch (err) {
    const field = err instanceof IoError && err.code === "SCHEMA_MISMATCH"
      ? schema.find((f) => f.name === err.column)
      : undefined;
    if (field === undefined) throw err;
    const label = typeof source === "string" ? `'${source}'` : "the rows";
    throw new OpsError(
      "SCHEMA_MISMATCH",
      `Cannot append ${label} to '${archive}': column "${field.name}" is ${
        typeName(field)
      } in the archive, and the source holds a value that is not: ${(err as IoError).message}`,
      { path: archive, column: field.name, cause: err },
    );
  }
}

/**
 * A stored chunk as the writer takes it: its blocks' bytes, sliced by the footer, and
 * no block for each column it lacks (added later, here or by an earlier append).
 */
function storedChunk(entry: ChunkEntry, bytes: Uint8Array, columns: number): ChunkLayout {
  const rows = entry.row_end - entry.row_start;
  const blocks: ChunkLayout["blocks"] = entry.blocks.map((b) =>
    b === null ? null : {
      bytes: bytes.subarray(b.offset - entry.offset, b.offset - entry.offset + b.length),
      raw_length: b.raw_length,
      predictor: b.predictor,
    }
  );
  const stats = entry.stats.slice();
  while (blocks.length < columns) {
    blocks.push(null);
    stats.push({ min: null, max: null, null_count: rows });
  }
  return { rows, blocks, stats };
}

const TICKS: Record<string, bigint> = { s: 1n, ms: 1_000n, us: 1_000_000n, ns: 1_000_000_000n };

/**
 * Puts a batch's columns in the archive's order and converts timestamp units; a column
 * the source lacks (only with `evolve`, and only a nullable one) is all null.
 */
function conform(batch: Batch, schema: Schema, archive: string): Batch {
  const columns = schema.map((f): Column => {
    const i = batch.schema.findIndex((g) => g.name === f.name);
    if (i < 0) {
      return { ...emptyColumn(f, batch.length), validity: new Uint8Array(batch.length) } as Column;
    }
    const g = batch.schema[i]!;
    const c = batch.columns[i]!;
    if (!f.nullable && c.validity?.includes(0)) {
      throw new OpsError(
        "SCHEMA_MISMATCH",
        `Cannot append to '${archive}': column "${f.name}" holds nulls, the archive declares it not nullable`,
        { column: f.name },
      );
    }
    if (g.type !== f.type) {
      throw new OpsError(
        "SCHEMA_MISMATCH",
        `Cannot append to '${archive}': column "${f.name}" is ${typeName(f)} in the archive, ${
          typeName(g)
        } in the source`,
        { column: f.name },
      );
    }
    if (f.type === "decimal") return conformDecimal(c, g, f, archive);
    const timed = f.type === "timestamp" || f.type === "time" || f.type === "duration";
    if (!timed || (g.unit ?? "us") === (f.unit ?? "us")) return c;
    const from = TICKS[g.unit ?? "us"]!;
    const to = TICKS[f.unit ?? "us"]!;
    const values = new BigInt64Array(c.values.length);
    const src = c.values as BigInt64Array;
    for (let r = 0; r < values.length; r++) {
      if (c.validity && c.validity[r] === 0) continue;
      const scaled = src[r]! * to;
      if (scaled % from !== 0n) {
        throw new OpsError(
          "SCHEMA_MISMATCH",
          `Cannot append to '${archive}': column "${f.name}" holds a value finer than the archive's unit ${f.unit} (row ${r} of a batch)`,
          { column: f.name },
        );
      }
      values[r] = scaled / from;
    }
    return { type: f.type, values, validity: c.validity } as Column;
  });
  return { schema, columns, length: batch.length };
}

/**
 * A source's decimals at the archive's precision and scale, exactly: a value that
 * would need rounding or more digits is refused naming its row.
 */
function conformDecimal(c: Column, g: Field, f: Field, archive: string): Column {
  const from = g.scale ?? 0;
  const to = f.scale ?? 0;
  if (from === to && g.precision === f.precision) return c;
  const out = emptyColumn(f, c.values.length);
  const values = out.values as BigInt64Array | bigint[];
  for (let r = 0; r < values.length; r++) {
    if (c.validity && c.validity[r] === 0) continue;
    const v = c.values[r] as bigint;
    const scaled = to >= from ? v * pow10(to - from) : v / pow10(from - to);
    if (
      (to < from && scaled * pow10(from - to) !== v) || !fitsPrecision(scaled, f.precision ?? 0)
    ) {
      throw new OpsError(
        "SCHEMA_MISMATCH",
        `Cannot append to '${archive}': column "${f.name}" holds ${
          formatDecimal(v, from)
        } (row ${r} of a batch), which ${typeName(f)} cannot hold exactly`,
        { column: f.name },
      );
    }
    values[r] = scaled;
  }
  return { type: "decimal", values, validity: c.validity };
}

/**
 * Primary-key checks of appended rows: no null or repeated key among them, and
 * none equal to a stored key. Stored keys are read only from the chunks whose
 * min/max range overlaps the new keys' range, so appending keys above all
 * stored ones (the usual case) reads nothing.
 */
class StoredKeys {
  readonly #reader: ArchiveReader;
  readonly #name: string;
  readonly #index: number;
  readonly #type: Field["type"];
  readonly #fresh: PrimaryKeyCheck;
  readonly #loaded = new Set<number>();
  readonly #stored = new Set<unknown>();

  constructor(reader: ArchiveReader, schema: Schema, name: string) {
    this.#reader = reader;
    this.#name = name;
    this.#index = schema.findIndex((f) => f.name === name);
    this.#type = schema[this.#index]!.type;
    this.#fresh = new PrimaryKeyCheck(schema, name);
  }

  async check(batch: Batch, firstRow: number): Promise<void> {
    this.#fresh.add(batch, firstRow);
    const column = batch.columns[this.#index]!;
    type Key = bigint | number | boolean | string;
    let lo: Key | null = null;
    let hi: Key | null = null;
    for (let r = 0; r < batch.length; r++) {
      const v = cellValue(column, r) as Key;
      if (lo === null || v < lo) lo = v;
      if (hi === null || v > hi) hi = v;
    }
    if (lo === null || hi === null) return;
    const asStat = (v: bigint | number | boolean | string) => typeof v === "bigint" ? String(v) : v;
    const chunks = this.#reader.index.footer.chunks;
    for (let c = 0; c < chunks.length; c++) {
      if (this.#loaded.has(c)) continue;
      const s = chunks[c]!.stats[this.#index]!;
      const overlaps = s.min === null || s.max === null ||
        (compareStat(this.#type, s.min, asStat(hi)) <= 0 &&
          compareStat(this.#type, s.max, asStat(lo)) >= 0);
      if (!overlaps) continue;
      this.#loaded.add(c);
      const rows = { start: chunks[c]!.row_start, end: chunks[c]!.row_end };
      for await (const b of this.#reader.read({ rows, columns: [this.#name] })) {
        for (let r = 0; r < b.length; r++) this.#stored.add(cellValue(b.columns[0]!, r));
      }
    }
    for (let r = 0; r < batch.length; r++) {
      const v = cellValue(column, r);
      if (this.#stored.has(v)) {
        throw new OpsError(
          "PRIMARY_KEY",
          `Primary key "${this.#name}" value ${JSON.stringify(String(v))} at appended row ${
            firstRow + r
          } is already in the archive`,
          { column: this.#name },
        );
      }
    }
  }
}
