/**
 * Settings of the local CLI operations, declared once for the config loader
 * (flag > `PERMAFROST_*` env > default) and the README's tables.
 *
 * @module
 */
import { enumParser, intParser, type Parser, setting } from "../internal/config.ts";
import { DEFAULT_CHUNK_ROWS } from "../format/constants.ts";
import { defaultThreads } from "../format/pool.ts";

/** Most threads per logical core a freeze or append may run: more only adds scheduling and memory. */
export const MAX_THREADS_PER_CORE = 4;

/**
 * The most threads a freeze or append may run here: {@link MAX_THREADS_PER_CORE} per core.
 *
 * @returns The cap.
 */
export function maxThreads(): number {
  return MAX_THREADS_PER_CORE * defaultThreads();
}

/** `--threads`: 0 (one per core) up to {@link maxThreads}. */
function threadsParser(): Parser<number> {
  const max = maxThreads();
  const describe =
    `a thread count 0..${max} (0 = one per core; at most ${MAX_THREADS_PER_CORE} per core, and this machine has ${defaultThreads()})`;
  const int = intParser({ min: 0, max });
  return {
    describe,
    parse(raw) {
      try {
        return int.parse(raw);
      } catch {
        throw new Error(`expected ${describe}`);
      }
    },
  };
}

/** Settings of `freeze`. */
export const FREEZE_SETTINGS = Object.freeze({
  codec: setting({
    flag: "--codec",
    env: "PERMAFROST_CODEC",
    default: "zstd" as "zstd" | "lzma2" | "zpaq" | "auto",
    parse: enumParser(["zstd", "lzma2", "zpaq", "auto"] as const),
    description: "Codec of every block; auto samples 1,000 rows and picks the smallest",
  }),
  chunkRows: setting({
    flag: "--chunk-rows",
    env: "PERMAFROST_DEFAULT_CHUNK",
    default: DEFAULT_CHUNK_ROWS,
    parse: intParser({ min: 1, max: 100_000_000 }),
    description: "Rows per chunk (the unit of selective reads and of cluster tasks)",
  }),
  threads: setting({
    flag: "--threads",
    env: "PERMAFROST_THREADS",
    default: 0,
    parse: threadsParser(),
    description:
      "Worker threads (they encode, and decode Parquet sources); 0 = one per core; at most 4 per core",
  }),
});
