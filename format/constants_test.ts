/**
 * Pins the constants that archives on disk depend on. Never edit this test:
 * a change here means archives written today stop opening.
 */
import assert from "node:assert/strict";
import * as C from "./constants.ts";

Deno.test("constants never change", () => {
  assert.deepEqual([...C.MAGIC], [0x50, 0x46, 0x52, 0x5a, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.equal(C.VERSION_MAJOR, 1);
  assert.equal(C.VERSION_MINOR, 3);
  assert.equal(C.VERSION_MINOR_ENCRYPTED, 4);
  assert.equal(C.VERSION_MINOR_TYPES, 5);
  assert.equal(C.VERSION_MINOR_FLOAT_TYPES, 7);
  assert.equal(C.VERSION_MINOR_EVOLVED, 8);
  assert.equal(C.PREAMBLE_SIZE, 16);
  assert.equal(C.HASH_SIZE, 32);
  assert.equal(C.TAIL_SIZE, 48);
  assert.equal(C.MIN_ARCHIVE_SIZE, 96);
  assert.equal(C.MAX_HEADER_SIZE, 64 * 1024 * 1024);
  assert.equal(C.MAX_FOOTER_SIZE, 256 * 1024 * 1024);
  assert.equal(C.DEFAULT_CHUNK_ROWS, 50_000);
  assert.equal(C.FOOTER_FLAG_ZSTD, 1);
});
