/**
 * node-liblzma's WebAssembly build, re-exported so that `lzma2.ts` can load it by a
 * computed specifier, only when an lzma2 block is encoded or decoded.
 *
 * @module
 */
export * from "node-liblzma/wasm";
