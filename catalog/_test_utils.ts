/**
 * Test helpers of `catalog/`: archive indexes described in memory (no file needed),
 * real archives frozen from small CSVs into `.tmp/`, and a log sink tests can wait on.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { join, resolve } from "node:path";
import type { ArchiveIndex } from "../format/reader.ts";
import type { ArchiveHeader, ChunkEntry } from "../format/header.ts";
import type { Field } from "../format/column.ts";
import { freeze } from "../ops/freeze.ts";

/** Repo-local temp root of the catalog tests (gitignored). */
export const TMP_ROOT = resolve(".tmp/catalog");

/**
 * A fresh empty directory under `.tmp/catalog/`.
 *
 * @param label Prefix of the directory name.
 * @returns Its absolute path.
 */
export async function tempDir(label: string): Promise<string> {
  await Deno.mkdir(TMP_ROOT, { recursive: true });
  return await Deno.makeTempDir({ dir: TMP_ROOT, prefix: `${label}-` });
}

function hex(s: string): string {
  return createHash("sha256").update(s).digest("hex");
}

/** Options of {@link fakeIndex}. */
export interface FakeIndexOptions {
  /** Archive path (default `/data/<name>.pf`). */
  path?: string;
  /** Rows per chunk (default 100). */
  chunkRows?: number;
  /** Total rows (default 250). */
  rows?: number;
  /** Codec (default `zstd`). */
  codec?: string;
  /** Extra column names after `ts` and `value`. */
  columns?: string[];
  /** Seed of the hashes: another seed is other content. */
  seed?: string;
  /** Header metadata. */
  metadata?: Record<string, string>;
}

/**
 * An archive index described in memory: columns `ts` (timestamp), `value` (float64)
 * and any extra string columns, chunks of `chunkRows` rows.
 *
 * @param name Used in the default path and the hashes.
 * @param options Shape and content.
 * @returns The index.
 */
export function fakeIndex(name: string, options: FakeIndexOptions = {}): ArchiveIndex {
  const rows = options.rows ?? 250;
  const chunkRows = options.chunkRows ?? 100;
  const seed = `${name}/${options.seed ?? "0"}`;
  const schema: Field[] = [
    { name: "ts", type: "timestamp", nullable: false, unit: "us" },
    { name: "value", type: "float64", nullable: true },
    ...(options.columns ?? []).map((c): Field => ({ name: c, type: "string", nullable: true })),
  ];
  const chunks: ChunkEntry[] = [];
  let offset = 1000;
  for (let start = 0, i = 0; start < rows; start += chunkRows, i++) {
    const end = Math.min(rows, start + chunkRows);
    const blocks = schema.map((_, j) => ({
      offset: offset + j * 10,
      length: 10,
      raw_length: (end - start) * 8,
      predictor: "raw",
      sha256: hex(`${seed}/${i}/${j}`),
    }));
    chunks.push({
      row_start: start,
      row_end: end,
      offset,
      length: schema.length * 10,
      sha256: hex(`${seed}/${i}`),
      blocks,
      stats: schema.map((f) =>
        f.type === "timestamp"
          ? { min: String(start * 1000), max: String((end - 1) * 1000), null_count: 0 }
          : f.type === "float64"
          ? { min: start / 2, max: (end - 1) / 2, null_count: 1 }
          : { min: "a", max: "z", null_count: 0 }
      ),
    });
    offset += schema.length * 10;
  }
  const header: ArchiveHeader = {
    format: "permafrost",
    version: "1.3",
    schema: { fields: [] },
    codec: options.codec ?? "zstd",
    auto_reason: null,
    chunk_rows: chunkRows,
    columns: {},
    lossy_columns: [],
    primary_key: null,
    partition: null,
    encryption: null,
    metadata: options.metadata ?? {},
  };
  const payload = offset - 1000;
  return {
    path: options.path ?? `/data/${name}.pf`,
    file_bytes: offset + 200,
    version: "1.3",
    header,
    schema,
    footer: {
      rows,
      payload_offset: 1000,
      payload_length: payload,
      payload_sha256: hex(`${seed}/payload`),
      raw_bytes: chunks.reduce((s, c) => s + c.blocks.reduce((t, b) => t + b!.raw_length, 0), 0),
      chunks,
    },
    header_sha256: hex(`${seed}/header`),
  };
}

/**
 * Freezes a small CSV (`ts,sensor,reading`) into a real archive.
 *
 * @param dir Directory to write into.
 * @param name File name without extension.
 * @param rows Rows to write (default 300).
 * @param chunkRows Rows per chunk (default 100).
 * @returns The archive path.
 */
export async function makeArchive(
  dir: string,
  name: string,
  rows = 300,
  chunkRows = 100,
): Promise<string> {
  const csv = join(dir, `${name}.csv`);
  const lines = ["ts,sensor,reading"];
  for (let i = 0; i < rows; i++) {
    lines.push(
      `2024-01-01 00:${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${
        String(i % 60).padStart(2, "0")
      },s${i % 4},${i * 1.5}`,
    );
  }
  await Deno.writeTextFile(csv, lines.join("\n") + "\n");
  const archive = join(dir, `${name}.pf`);
  await freeze(csv, archive, { chunkRows, threads: 0 });
  await Deno.remove(csv);
  return archive;
}

/**
 * A query DuckDB notices an interrupt in only after its one long function call
 * ends (a few seconds): what a time limit must answer without waiting for.
 */
export const UNINTERRUPTIBLE_SQL = "select list_reduce(range(3000000), (a, b) -> a + b) as n";

/**
 * {@link UNINTERRUPTIBLE_SQL} over 10,000,000 numbers (~10 s on an idle machine): for a
 * time limit of seconds, which the shorter one can finish within (2.6 s seen in CI).
 */
export const LONG_UNINTERRUPTIBLE_SQL = "select list_reduce(range(10000000), (a, b) -> a + b) as n";

/** A log sink that tests can wait on. */
export interface LogWatch {
  /** The sink to give `createLogger`. */
  sink: (line: string) => void;
  /** Lines so far. */
  readonly lines: readonly string[];
  /**
   * Resolves when a line after the first `from` lines matches `pattern`.
   *
   * @param pattern What to wait for.
   * @param from Lines to skip (default 0; pass `lines.length` before acting).
   * @param ms Bound (default 30 s), after which it rejects naming the pattern.
   */
  until(pattern: RegExp, from?: number, ms?: number): Promise<void>;
}

/**
 * Creates a {@link LogWatch}.
 *
 * @returns The watch.
 */
export function logWatch(): LogWatch {
  const lines: string[] = [];
  const waiting = new Set<{ pattern: RegExp; done: () => void }>();
  return {
    lines,
    sink(line) {
      lines.push(line);
      for (const w of waiting) {
        if (w.pattern.test(line)) {
          waiting.delete(w);
          w.done();
        }
      }
    },
    until(pattern, from = 0, ms = 30_000) {
      if (lines.slice(from).some((l) => pattern.test(l))) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const w = {
          pattern,
          done: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        const timer = setTimeout(() => {
          waiting.delete(w);
          reject(new Error(`gave up after ${ms} ms waiting for a log line matching ${pattern}`));
        }, ms);
        waiting.add(w);
      });
    },
  };
}
