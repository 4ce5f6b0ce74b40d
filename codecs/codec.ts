/**
 * The one codec interface: two async functions on bytes, keyed by a stable id.
 *
 * A codec is one file in `codecs/` exporting one object that satisfies `Codec`,
 * plus one line in `codecs/registry.ts`. Ids and wire codes are written into
 * archives: never rename or reuse one.
 *
 * @module
 */

/** A lossless byte compressor. */
export interface Codec {
  /** Stable name written into archive headers (`zstd`, `lzma2`, `zpaq`). */
  readonly id: string;
  /** Stable one-byte wire code (`0x01` zstd, `0x02` lzma2, `0x03` zpaq). */
  readonly code: number;
  /**
   * The system program the codec runs, when it runs one (`zpaq`; the Debian package of
   * the same name installs it): without it the codec fails with `BINARY_MISSING`, and
   * its tests skip on machines that lack it.
   */
  readonly binary?: string;
  /** Compresses `data`. */
  encode(data: Uint8Array): Promise<Uint8Array>;
  /**
   * Decompresses `data`, which must expand to exactly `rawLength` bytes.
   * Throws `CodecError` (`DECODE_FAILED` or `LENGTH_MISMATCH`) otherwise.
   */
  decode(data: Uint8Array, rawLength: number): Promise<Uint8Array>;
}
