/**
 * Writes the golden archives of the current format version. Run once per new
 * minor version (`deno run --allow-read --allow-write tests/golden/make_golden.ts`)
 * and commit the result; never regenerate an existing version's file.
 *
 * @module
 */
import type { Batch, Schema } from "../../format/column.ts";
import { writeTestArchive } from "../../format/_test_utils.ts";

/** The rows of `tiny_v1_3.pf`. */
export const TINY_SCHEMA: Schema = [
  { name: "id", type: "int64", nullable: false },
  { name: "name", type: "string", nullable: true },
];

/** Three rows: a big int, a null and an emoji. */
export function tinyBatch(): Batch {
  return {
    schema: TINY_SCHEMA,
    columns: [
      { type: "int64", values: BigInt64Array.from([1n, 9007199254740993n, -3n]), validity: null },
      { type: "string", values: ["ice", "", "🧊"], validity: Uint8Array.from([1, 0, 1]) },
    ],
    length: 3,
  };
}

if (import.meta.main) {
  const path = new URL("./tiny_v1_3.pf", import.meta.url).pathname;
  const written = await writeTestArchive(path, tinyBatch(), { codec: "zstd", chunkRows: 2 });
  Deno.stdout.writeSync(
    new TextEncoder().encode(`${path}: ${written.bytes} B, payload ${written.payload_sha256}\n`),
  );
}
