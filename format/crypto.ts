/**
 * Encryption at rest: AES-256-GCM over each stored column block, after the codec.
 * Implements FORMAT.md §4.4 (encrypted blocks) and the `encryption` member of §3.
 *
 * An encrypted block is `nonce (12 B) · ciphertext · tag (16 B)`. The nonce is random
 * per block; the additional authenticated data ({@link blockAad}) binds the block to
 * the header fields that decide how it decodes ({@link headerBinding}: schema, codec,
 * chunk rows, plans, lossy columns, primary key, partition, algorithm, key check) and
 * to its place and meaning — first row of its chunk, row count, column index, raw
 * length and predictor id. So a block moved to another chunk, column or archive, a
 * footer entry edited to decode it with another predictor, or a header edited to read
 * it as another type, fails authentication instead of decoding to wrong values. The
 * key fields (`key_provider`, `key_id`, `edek`), `metadata` and `auto_reason` are
 * left out on purpose: re-wrapping the data key under a new key (rotation) or editing
 * a description rewrites the header without touching a block. SHA-256 hashes of
 * blocks, chunks and the payload stay over the stored (encrypted) bytes, so `verify`
 * needs no key.
 *
 * The footer of an encrypted archive keeps each chunk's null counts but not its
 * min/max ({@link sealChunk} blanks them): they would be column values in plain text.
 *
 * `key_check` lets a reader tell a wrong key from tampering before it reads a block:
 * it is the GCM tag of an empty message under the data key with a fixed AAD
 * (`nonce · tag`, base64), which only the right key reproduces.
 *
 * Pure: Web Crypto and SHA-256 only, no I/O, no globals; callable from the block
 * pool's Workers (`chunk.ts`), the writer's callers and the reader.
 *
 * @module
 */
import {
  KEY_SIZE,
  MAGIC,
  NONCE_SIZE,
  TAG_SIZE,
  VERSION_MAJOR,
  VERSION_MINOR_ENCRYPTED,
} from "./constants.ts";
import { FormatError } from "./errors.ts";
import { sha256 } from "./_hash.ts";
import { strictBase64 } from "../internal/base64.ts";
import { type ArchiveHeader, archiveVersion, type EncryptionHeader } from "./header.ts";
import type { EncodedChunk } from "./writer.ts";

/** The one block cipher of encrypted archives, as the header names it. */
export const ENCRYPTION_ALGORITHM = "AES-256-GCM";

/** What a block's additional authenticated data binds it to (FORMAT.md §4.4). */
export interface BlockContext {
  /** {@link headerBinding} of the archive's header (64 hex digits). */
  headerBinding: string;
  /** First row (archive-wide, 0-based) of the block's chunk. */
  rowStart: number;
  /** Rows in the chunk. */
  rows: number;
  /** Column index in the schema. */
  column: number;
  /** Length before the codec (`raw_length` in the footer). */
  rawLength: number;
  /** Predictor id (`predictor` in the footer). */
  predictor: string;
}

/** What `sealChunk` and `encodeChunk` need to encrypt one chunk. */
export interface ChunkEncryption {
  /** The archive's 32-byte data key (raw bytes, so it can cross to a Worker). */
  dataKey: Uint8Array;
  /** {@link headerBinding} of the archive's header, bound into every block. */
  headerBinding: string;
  /** First row (archive-wide, 0-based) of the chunk. */
  rowStart: number;
}

/** Where a block sits, for error messages. */
export interface SealedBlockLocation {
  /** Chunk index. */
  chunk: number;
  /** Column name. */
  column: string;
  /** Byte offset of the block in the file. */
  offset: number;
}

const AAD_PREFIX = 8;
const KEY_CHECK_AAD = new TextEncoder().encode("PFRZ key check v1");
const KEY_ID_PREFIX = "sha256:";
const encoder = new TextEncoder();

/**
 * The additional authenticated data of one block:
 * `"PFRZ" · u8 major · u8 minor (4) · u16 0 · header binding (32 B) · u64 row_start ·
 * u32 rows · u32 column · u64 raw_length · predictor id (UTF-8)`, integers little-endian.
 *
 * @param ctx The block's place and meaning.
 * @returns The AAD bytes.
 * @throws {FormatError} BAD_ARGUMENT when a number does not fit its field.
 */
export function blockAad(ctx: BlockContext): Uint8Array {
  const id = encoder.encode(ctx.predictor);
  if (typeof ctx.headerBinding !== "string" || !/^[0-9a-f]{64}$/.test(ctx.headerBinding)) {
    throw new FormatError(
      "BAD_ARGUMENT",
      "Cannot encrypt a block: headerBinding is not a SHA-256 hex digest",
    );
  }
  for (
    const [name, v, max] of [
      ["rowStart", ctx.rowStart, Number.MAX_SAFE_INTEGER],
      ["rows", ctx.rows, 0xffff_ffff],
      ["column", ctx.column, 0xffff_ffff],
      ["rawLength", ctx.rawLength, Number.MAX_SAFE_INTEGER],
    ] as const
  ) {
    if (!Number.isSafeInteger(v) || v < 0 || v > max) {
      throw new FormatError("BAD_ARGUMENT", `Cannot encrypt a block: ${name} is ${v}`);
    }
  }
  const aad = new Uint8Array(AAD_PREFIX + 32 + 8 + 4 + 4 + 8 + id.length);
  const view = new DataView(aad.buffer);
  aad.set(MAGIC.subarray(0, 4), 0);
  view.setUint8(4, VERSION_MAJOR);
  view.setUint8(5, VERSION_MINOR_ENCRYPTED);
  view.setUint16(6, 0, true);
  aad.set(hexBytes(ctx.headerBinding), 8);
  view.setBigUint64(40, BigInt(ctx.rowStart), true);
  view.setUint32(48, ctx.rows, true);
  view.setUint32(52, ctx.column, true);
  view.setBigUint64(56, BigInt(ctx.rawLength), true);
  aad.set(id, 64);
  return aad;
}

/**
 * Imports a 32-byte data key for AES-256-GCM.
 *
 * @param bytes The raw key.
 * @returns A non-extractable Web Crypto key.
 * @throws {FormatError} BAD_ARGUMENT when the key is not 32 bytes.
 */
export async function importDataKey(bytes: Uint8Array): Promise<CryptoKey> {
  checkKeyBytes(bytes, "data key");
  return await crypto.subtle.importKey("raw", own(bytes), { name: "AES-GCM" }, false, [
    "encrypt",
    "decrypt",
  ]);
}

/**
 * Checks that key material is exactly {@link KEY_SIZE} bytes.
 *
 * @param bytes The key.
 * @param what What the key is, for the message.
 * @throws {FormatError} BAD_ARGUMENT otherwise.
 */
export function checkKeyBytes(bytes: Uint8Array, what: string): void {
  if (!(bytes instanceof Uint8Array) || bytes.length !== KEY_SIZE) {
    throw new FormatError(
      "BAD_ARGUMENT",
      `Cannot use the ${what}: it is ${bytes?.length ?? 0} bytes, AES-256 needs ${KEY_SIZE}`,
    );
  }
}

/**
 * A fresh random 32-byte data key (one per archive).
 *
 * @returns The key bytes.
 */
export function randomDataKey(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(KEY_SIZE));
}

/**
 * Encrypts one stored block.
 *
 * @param key The data key.
 * @param plain The codec's output.
 * @param aad {@link blockAad} of the block.
 * @param options `nonce` to use instead of a random one (known-answer tests only).
 * @returns `nonce · ciphertext · tag`.
 */
export async function sealBlock(
  key: CryptoKey,
  plain: Uint8Array,
  aad: Uint8Array,
  options: { nonce?: Uint8Array } = {},
): Promise<Uint8Array> {
  const nonce = options.nonce ?? crypto.getRandomValues(new Uint8Array(NONCE_SIZE));
  if (nonce.length !== NONCE_SIZE) {
    throw new FormatError("BAD_ARGUMENT", `A nonce is ${NONCE_SIZE} bytes, got ${nonce.length}`);
  }
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv: own(nonce), additionalData: own(aad), tagLength: TAG_SIZE * 8 },
      key,
      own(plain),
    ),
  );
  const out = new Uint8Array(NONCE_SIZE + sealed.length);
  out.set(nonce, 0);
  out.set(sealed, NONCE_SIZE);
  return out;
}

/**
 * Decrypts and authenticates one stored block.
 *
 * @param key The data key.
 * @param stored `nonce · ciphertext · tag` as read from the file.
 * @param aad {@link blockAad} of the block, rebuilt from the footer.
 * @param at Where the block is, for the message.
 * @returns The codec's input bytes.
 * @throws {FormatError} DECRYPT_FAILED when the block fails authentication (tampered
 * bytes, a moved block, an edited footer entry); CORRUPT when it is too short.
 */
export async function openBlock(
  key: CryptoKey,
  stored: Uint8Array,
  aad: Uint8Array,
  at: SealedBlockLocation,
): Promise<Uint8Array> {
  const where = `chunk ${at.chunk} column "${at.column}"`;
  if (stored.length < NONCE_SIZE + TAG_SIZE) {
    throw new FormatError(
      "CORRUPT",
      `Cannot decrypt ${where}: the block is ${stored.length} bytes, an encrypted block is at least ${
        NONCE_SIZE + TAG_SIZE
      }`,
      { chunk: at.chunk, column: at.column, offset: at.offset },
    );
  }
  try {
    return new Uint8Array(
      await crypto.subtle.decrypt(
        {
          name: "AES-GCM",
          iv: own(stored.subarray(0, NONCE_SIZE)),
          additionalData: own(aad),
          tagLength: TAG_SIZE * 8,
        },
        key,
        own(stored.subarray(NONCE_SIZE)),
      ),
    );
  } catch (cause) {
    throw new FormatError(
      "DECRYPT_FAILED",
      `Cannot decrypt ${where}: AES-GCM authentication failed at bytes ${at.offset}..${
        at.offset + stored.length
      } (the block or its footer entry was altered)`,
      { cause, chunk: at.chunk, column: at.column, offset: at.offset },
    );
  }
}

/**
 * Encrypts every block of an encoded chunk and blanks its min/max statistics (they
 * are plain values; null counts stay). For callers that encode without a key and
 * encrypt afterwards (a cluster master that keeps the key from its workers);
 * `encodeChunk({encryption})` does the same inside the encoder.
 *
 * @param chunk The encoded chunk (blocks not yet encrypted).
 * @param encryption Data key and the chunk's first row.
 * @returns The same chunk with sealed blocks.
 * @throws {FormatError} BAD_ARGUMENT when a block is already encrypted or the key is not 32 bytes.
 */
export async function sealChunk(
  chunk: EncodedChunk,
  encryption: ChunkEncryption,
): Promise<EncodedChunk> {
  const key = await importDataKey(encryption.dataKey);
  const blocks = [];
  for (let column = 0; column < chunk.blocks.length; column++) {
    const block = chunk.blocks[column]!;
    if (block.sealed) {
      throw new FormatError("BAD_ARGUMENT", `Cannot encrypt column ${column}: already encrypted`);
    }
    const aad = blockAad({
      headerBinding: encryption.headerBinding,
      rowStart: encryption.rowStart,
      rows: chunk.rows,
      column,
      rawLength: block.raw_length,
      predictor: block.predictor,
    });
    blocks.push({ ...block, bytes: await sealBlock(key, block.bytes, aad), sealed: true });
  }
  const stats = chunk.stats.map((st) => ({ min: null, max: null, null_count: st.null_count }));
  return { ...chunk, blocks, stats };
}

/**
 * The `key_check` of a data key: `nonce · tag` (base64) of an empty message.
 *
 * @param key The data key.
 * @returns The key check text for the header.
 */
export async function makeKeyCheck(key: CryptoKey): Promise<string> {
  return encodeBase64(await sealBlock(key, new Uint8Array(0), KEY_CHECK_AAD));
}

/**
 * Tells whether a data key is the one a `key_check` was made with.
 *
 * @param key The candidate data key.
 * @param keyCheck The header's `key_check`.
 * @returns True for the right key.
 * @throws {FormatError} CORRUPT when `key_check` is not base64 of 28 bytes.
 */
export async function keyMatches(key: CryptoKey, keyCheck: string): Promise<boolean> {
  const bytes = decodeBase64(keyCheck, "key_check");
  if (bytes.length !== NONCE_SIZE + TAG_SIZE) {
    throw new FormatError(
      "CORRUPT",
      `Cannot read archive: key_check is ${bytes.length} bytes, expected ${NONCE_SIZE + TAG_SIZE}`,
    );
  }
  try {
    await crypto.subtle.decrypt(
      {
        name: "AES-GCM",
        iv: own(bytes.subarray(0, NONCE_SIZE)),
        additionalData: own(KEY_CHECK_AAD),
        tagLength: TAG_SIZE * 8,
      },
      key,
      own(bytes.subarray(NONCE_SIZE)),
    );
    return true;
  } catch {
    return false;
  }
}

/**
 * A key's public fingerprint, `sha256:` + 32 hex digits of SHA-256 over a fixed label
 * and the key. Recorded as `key_id` for `raw` and `local` keys, so an error can say
 * which key an archive wants; it reveals nothing usable about the key.
 *
 * @param key The key bytes.
 * @returns The fingerprint.
 */
export function keyFingerprint(key: Uint8Array): string {
  const hash = sha256().update("permafrost key id\n").update(key).digest("hex");
  return KEY_ID_PREFIX + hash.slice(0, 32);
}

/**
 * The header binding every block's AAD carries: SHA-256 (hex) of
 * `"PFRZ header binding v1\n"` and the JSON array `[schema, codec, chunk_rows, columns,
 * lossy_columns, primary_key, partition, encryption.algorithm, encryption.key_check]`
 * (`JSON.stringify` of the values as the header holds them).
 *
 * @param header An encrypted archive's header.
 * @returns 64 hex digits.
 * @throws {FormatError} BAD_ARGUMENT for a header without `encryption`.
 */
export function headerBinding(header: ArchiveHeader): string {
  const e = header.encryption;
  if (!e) throw new FormatError("BAD_ARGUMENT", "Cannot bind blocks to an unencrypted header");
  const bound = [
    header.schema,
    header.codec,
    header.chunk_rows,
    header.columns,
    header.lossy_columns,
    header.primary_key,
    header.partition,
    e.algorithm,
    e.key_check,
  ];
  return sha256().update("PFRZ header binding v1\n").update(JSON.stringify(bound))
    .digest("hex");
}

/**
 * The header of an encrypted archive: `encryption` set and the version raised to 1.4
 * (1.5 stays 1.5). Plain headers keep their version.
 *
 * @param header A header built for a plain archive.
 * @param encryption The encryption member, or null.
 * @returns The header to write.
 */
export function withEncryption(
  header: ArchiveHeader,
  encryption: EncryptionHeader | null,
): ArchiveHeader {
  const version = archiveVersion({
    schema: header.schema,
    encryption,
    codec: header.codec,
    columns: header.columns,
  });
  return { ...header, version, encryption };
}

/**
 * Standard base64 (RFC 4648 §4, with padding).
 *
 * @param bytes Bytes.
 * @returns The text.
 */
export function encodeBase64(bytes: Uint8Array): string {
  // `btoa` over a binary string, built in pieces (an argument list has a limit): no
  // `node:buffer`, which would load Node compatibility (~6 ms of CPU) for a quick command.
  let binary = "";
  for (let at = 0; at < bytes.length; at += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  }
  return btoa(binary);
}

/**
 * The bytes of hex digit pairs, up to the first pair that is not one (as
 * `Buffer.from(text, "hex")` reads them).
 */
function hexBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length >> 1);
  for (let i = 0; i < out.length; i++) {
    const pair = text.slice(2 * i, 2 * i + 2);
    if (!/^[0-9a-fA-F]{2}$/.test(pair)) return out.subarray(0, i);
    out[i] = parseInt(pair, 16);
  }
  return out;
}

/**
 * Strict standard base64: padding required, no whitespace, no other alphabet.
 *
 * @param text The text.
 * @param what What it is, for the message.
 * @returns The bytes.
 * @throws {FormatError} CORRUPT when `text` is not strict base64.
 */
export function decodeBase64(text: string, what: string): Uint8Array {
  const bytes = strictBase64(text);
  if (bytes === null) throw new FormatError("CORRUPT", `Cannot read ${what}: not standard base64`);
  return bytes;
}

/** Web Crypto wants an ArrayBuffer-backed view; copy only when the input is not one. */
function own(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes.buffer instanceof ArrayBuffer
    ? bytes as Uint8Array<ArrayBuffer>
    : new Uint8Array(bytes);
}
