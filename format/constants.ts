/**
 * Constants of the archive format that never change once written to disk.
 *
 * `constants_test.ts` pins every value here. Do not edit that test: an archive
 * written today must open in ten years. Implements FORMAT.md §1 and §5.
 *
 * @module
 */

/** First 8 bytes of every archive, and last 8 bytes. `PFRZ` + CR LF SUB LF catches text-mode damage. */
export const MAGIC: Uint8Array = Uint8Array.of(0x50, 0x46, 0x52, 0x5a, 0x0d, 0x0a, 0x1a, 0x0a);

/** Major version this code writes; a reader refuses any other major. */
export const VERSION_MAJOR = 1;

/**
 * Minor version of the archives this code writes without encryption; a reader reads
 * every minor of its major. Plain archives stay 1.3 byte for byte (FORMAT.md §9).
 */
export const VERSION_MINOR = 3;

/** Minor version of encrypted archives (AES-256-GCM blocks, FORMAT.md §4.4). */
export const VERSION_MINOR_ENCRYPTED = 4;

/**
 * Minor version of archives whose schema holds a column type added in 1.5 (`decimal`,
 * `time`, `duration`, `json`; FORMAT.md §3), encrypted or not. Older readers refuse
 * such a file on its schema rather than misread it.
 */
export const VERSION_MINOR_TYPES = 5;

/**
 * Minor version of archives whose columns use different codecs (header `codec`
 * `"mixed"`, each column's in its plan; FORMAT.md §3). Older readers refuse such a
 * file on its codec (`UNKNOWN_CODEC`) rather than decode a block with the wrong one.
 */
export const VERSION_MINOR_COLUMN_CODECS = 6;

/**
 * Minor version of archives with a `float32` or `float16` column (FORMAT.md §3), or
 * with a column quantized to `QUANT_MEDIUM`/`QUANT_LOW`, whose blocks are stored as
 * float32/float16 bit patterns (FORMAT.md §4). Older readers refuse such a file on
 * its version rather than misread it.
 */
export const VERSION_MINOR_FLOAT_TYPES = 7;

/**
 * Minor version of archives in which some chunks lack a column that later chunks hold
 * (`append --evolve` added it; FORMAT.md §6.1): such a chunk reads the column as all
 * null. Older readers refuse such a file (an earlier one on its footer's empty block
 * entries, a later one on its version) rather than misread it.
 */
export const VERSION_MINOR_EVOLVED = 8;

/** The header `codec` of an archive whose columns use different codecs. */
export const MIXED_CODEC = "mixed";

/** Newest minor version this reader knows: reserved fields of minors up to it are checked. */
export const VERSION_MINOR_READ = 8;

/** Preamble: magic (8) + major (1) + minor (1) + flags (2) + header length (4). */
export const PREAMBLE_SIZE = 16;

/** SHA-256 digest length. */
export const HASH_SIZE = 32;

/** Tail: footer SHA-256 (32) + footer length (4) + major (1) + minor (1) + flags (2) + magic (8). */
export const TAIL_SIZE = 48;

/** Smallest possible archive: preamble, empty header hash, tail. */
export const MIN_ARCHIVE_SIZE = PREAMBLE_SIZE + HASH_SIZE + TAIL_SIZE;

/** Upper bound on the header JSON, so a corrupt length cannot make a reader allocate gigabytes. */
export const MAX_HEADER_SIZE = 64 * 1024 * 1024;

/** Upper bound on the compressed footer. */
export const MAX_FOOTER_SIZE = 256 * 1024 * 1024;

/** Default rows per chunk. */
export const DEFAULT_CHUNK_ROWS = 50_000;

/**
 * Most rows a writer puts in one chunk, for a local freeze and a cluster job alike: a
 * chunk is the unit a freeze holds in memory, a worker sends in one request and a slice
 * reads. A writer's limit, not a reader's: a reader takes any count the footer proves.
 */
export const MAX_CHUNK_ROWS = 10_000_000;

/** Footer encoding flag in the tail: bit 0 set = footer JSON is zstd-compressed. */
export const FOOTER_FLAG_ZSTD = 1;

/** AES-256 key length: the data key and every key that wraps one locally. */
export const KEY_SIZE = 32;

/** AES-GCM nonce length, at the start of every encrypted block. */
export const NONCE_SIZE = 12;

/** AES-GCM tag length, at the end of every encrypted block. */
export const TAG_SIZE = 16;

/** Upper bound on a wrapped data key (EDEK) in the header, decoded. */
export const MAX_EDEK_SIZE = 8192;
