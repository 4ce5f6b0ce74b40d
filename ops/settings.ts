/**
 * Settings of the local CLI operations, declared once for the config loader
 * (flag > `PERMAFROST_*` env > default) and the README's tables.
 *
 * @module
 */
import { enumParser, intParser, setting } from "../internal/config.ts";
import { DEFAULT_CHUNK_ROWS } from "../format/constants.ts";

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
    parse: intParser({ min: 0, max: 1024 }),
    description: "Worker threads (they encode, and decode Parquet sources); 0 = one per core",
  }),
});
