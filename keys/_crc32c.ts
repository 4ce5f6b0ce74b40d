/**
 * CRC32C (Castagnoli), which Cloud KMS uses to check requests and answers end to end
 * (`plaintextCrc32c`, `ciphertextCrc32c`, as decimal strings of the unsigned value).
 *
 * Private to `keys/`. Pure.
 *
 * @module
 */

const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/**
 * CRC32C of bytes.
 *
 * @param bytes The bytes.
 * @returns The unsigned 32-bit checksum.
 */
export function crc32c(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
