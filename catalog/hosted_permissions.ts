/**
 * What the hosted catalog (`hosted.ts`) may read, printed for `deno serve
 * --allow-read=…`: its own modules (the checkout, for `deno.json`'s version) and
 * duckdb-wasm's `.wasm` files in Deno's module cache — nothing else. `deno task
 * catalog:hosted` and the tests build the flag from it.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { wasmAssetsDir } from "../ops/_duckdb_wasm.ts";

/**
 * The directories the hosted catalog reads.
 *
 * @returns The checkout and duckdb-wasm's directory.
 */
export function hostedReadPaths(): string[] {
  return [fileURLToPath(new URL("../", import.meta.url)), wasmAssetsDir()];
}

if (import.meta.main) {
  await Deno.stdout.write(new TextEncoder().encode(hostedReadPaths().join(",") + "\n"));
}
