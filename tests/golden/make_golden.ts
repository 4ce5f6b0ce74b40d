/**
 * Writes the golden archives of the current format version. Run once per new
 * minor version (`deno run --allow-read --allow-write tests/golden/make_golden.ts`,
 * with `1.4` for the encrypted one) and commit the result; never regenerate an
 * existing version's file.
 *
 * @module
 */
import type { Batch, Schema } from "../../format/column.ts";
import { localKeyProvider } from "../../format/keys/local.ts";
import type { WrittenArchive } from "../../format/writer.ts";
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

/** The key-encrypting key of `tiny_v1_4_encrypted.pf` (a test key, committed on purpose). */
export const TINY_V1_4_KEY = new URL("./testdata/tiny_v1_4.key", import.meta.url).pathname;

/**
 * Writes the rows of `tiny_v1_3.pf` as a 1.4 archive encrypted under the `local`
 * provider with {@link TINY_V1_4_KEY} (nonces and data key are random, so each run
 * gives other bytes; the golden test pins the committed file).
 *
 * @param path Destination.
 * @returns What was written.
 */
export async function writeTinyEncrypted(path: string): Promise<WrittenArchive> {
  const kek = await Deno.readFile(TINY_V1_4_KEY);
  return await writeTestArchive(path, tinyBatch(), {
    codec: "zstd",
    chunkRows: 2,
    encryption: { provider: localKeyProvider(kek) },
  });
}

if (import.meta.main) {
  // `make_golden.ts` writes 1.3; `make_golden.ts 1.4` writes the encrypted 1.4 file.
  const v14 = Deno.args[0] === "1.4";
  const path = new URL(v14 ? "./tiny_v1_4_encrypted.pf" : "./tiny_v1_3.pf", import.meta.url)
    .pathname;
  const written = v14
    ? await writeTinyEncrypted(path)
    : await writeTestArchive(path, tinyBatch(), { codec: "zstd", chunkRows: 2 });
  Deno.stdout.writeSync(
    new TextEncoder().encode(`${path}: ${written.bytes} B, payload ${written.payload_sha256}\n`),
  );
}
