/**
 * The codec names, as a leaf the command line's help and parsers load without the
 * codecs themselves (the LZMA2 codec pulls in a WebAssembly package at import).
 * `registry.ts` checks at load that its codecs are exactly these, in this order, so
 * the two lists cannot drift.
 *
 * @module
 */

/** Ids of the registered codecs, in wire-code order. Frozen. */
export const CODEC_IDS: readonly string[] = Object.freeze(["zstd", "lzma2", "zpaq", "zpaqwasm"]);

/** What `auto` is called where a user names a codec: pick one from a sample. */
export const AUTO_CODEC = "auto";

/**
 * The codec choices a user may name (`--codec`, a job's `codec`, a zod enum): every
 * registered codec, then {@linkcode AUTO_CODEC}. Frozen; the one list every parser derives from.
 */
export const CODEC_CHOICES: readonly string[] = Object.freeze([...CODEC_IDS, AUTO_CODEC]);
