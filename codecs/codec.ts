/**
 * The one codec interface: two async functions on bytes, keyed by a stable id.
 *
 * A codec is one file in `codecs/` exporting one object that satisfies `Codec`,
 * plus one line in `codecs/registry.ts`. Ids and wire codes are written into
 * archives: never rename or reuse one.
 *
 * @module
 */

/** The levels of a codec. */
export interface CodecLevels {
  /** Fastest. */
  readonly min: number;
  /** Smallest output. */
  readonly max: number;
  /** What `encode` uses when given no level. */
  readonly default: number;
}

/**
 * Checks a level against a codec's range.
 *
 * @param codec The codec.
 * @param level The level asked for.
 * @returns The level to use (the default for none).
 * @throws {RangeError} For a level outside `codec.levels`.
 */
export function levelFor(codec: Codec, level: number | undefined): number {
  if (level === undefined) return codec.levels.default;
  const { min, max } = codec.levels;
  if (!Number.isInteger(level) || level < min || level > max) {
    throw new RangeError(`${codec.id} takes levels ${min}..${max}, not ${level}`);
  }
  return level;
}

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
  /**
   * The levels `encode` takes, `min` (fastest) to `max` (smallest), and the one it
   * uses when given none. A level changes only how hard the encoder works: every
   * level decodes the same way, so archives do not record it to be read.
   */
  readonly levels: CodecLevels;
  /** Compresses `data`, at `level` (default `levels.default`). */
  encode(data: Uint8Array, level?: number): Promise<Uint8Array>;
  /**
   * Decompresses `data`, which must expand to exactly `rawLength` bytes.
   * Throws `CodecError` (`DECODE_FAILED` or `LENGTH_MISMATCH`) otherwise.
   */
  decode(data: Uint8Array, rawLength: number): Promise<Uint8Array>;
}
