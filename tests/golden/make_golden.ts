/**
 * Writes the golden archives of the current format version. Run once per new
 * minor version (`deno run --allow-read --allow-write tests/golden/make_golden.ts`,
 * with `1.4` for the encrypted one) and commit the result; never regenerate an
 * existing version's file.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type Batch, type Schema, sliceBatch } from "../../format/column.ts";
import { sha256Hex } from "../../format/_hash.ts";
import type { ColumnPlan } from "../../format/header.ts";
import { planColumns } from "../../format/plan.ts";
import { localKeyProvider } from "../../format/local_key.ts";
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

/** The columns of `tiny_v1_5_types.pf`: one of each type added in 1.5. */
export const TYPES_SCHEMA: Schema = [
  { name: "price", type: "decimal", nullable: true, precision: 10, scale: 2 },
  { name: "total", type: "decimal", nullable: false, precision: 38, scale: 10 },
  { name: "at", type: "time", nullable: false, unit: "ms" },
  { name: "took", type: "duration", nullable: true, unit: "ns" },
  { name: "doc", type: "json", nullable: true },
];

/** Three rows: decimals inside and beyond 64 bits, a null of each nullable type, JSON of every kind. */
export function typesBatch(): Batch {
  return {
    schema: TYPES_SCHEMA,
    columns: [
      {
        type: "decimal",
        values: BigInt64Array.of(123n, 0n, -99999n),
        validity: Uint8Array.of(1, 0, 1),
      },
      {
        type: "decimal",
        values: [12345678901234567890123456789n, -1n, 10n ** 37n],
        validity: null,
      },
      { type: "time", values: BigInt64Array.of(0n, 3723456n, 86399999n), validity: null },
      {
        type: "duration",
        values: BigInt64Array.of(-1n, 5400000000000n, 0n),
        validity: Uint8Array.of(1, 1, 0),
      },
      {
        type: "json",
        values: ['{"a":[1,2,{"b":null}]}', '"\\ud800"', "1e400"],
        validity: null,
      },
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

/**
 * The plans of `tiny_v1_6_mixed.pf`: the rows of `tiny_v1_3.pf`, `id` in lzma2 at
 * level 2 and `name` in zstd, so the header's codec is `mixed` (1.6).
 *
 * @returns The plans by column.
 */
export function mixedPlans(): Record<string, ColumnPlan> {
  const plans = planColumns(sliceBatch(tinyBatch(), 0, 2));
  return {
    id: { ...plans.id!, codec: "lzma2", level: 2 },
    name: { ...plans.name!, codec: "zstd" },
  };
}

/**
 * Writes `tiny_v1_6_mixed.pf`'s rows with its per-column codecs.
 *
 * @param path Destination.
 * @returns What was written.
 */
export async function writeTinyMixed(path: string): Promise<WrittenArchive> {
  return await writeTestArchive(path, tinyBatch(), {
    codec: "mixed",
    chunkRows: 2,
    plans: mixedPlans(),
  });
}

/** The columns of `tiny_v1_7_float.pf`: float32 and float16, and float64 quantized into them. */
export const FLOAT_SCHEMA: Schema = [
  { name: "f32", type: "float32", nullable: true },
  { name: "f16", type: "float16", nullable: false },
  { name: "medium", type: "float64", nullable: false },
  { name: "low", type: "float64", nullable: true },
];

/** The float32 bit patterns of `tiny_v1_7_float.pf`: 0.1, a NaN with a payload, -0, the least subnormal. */
export const FLOAT32_BITS: readonly number[] = [0x3dcccccd, 0x7fa12345, 0x80000000, 0x00000001];

/** The float16 bit patterns of `tiny_v1_7_float.pf`: 1.5, a signalling NaN, -Infinity, the least subnormal. */
export const FLOAT16_BITS: readonly number[] = [0x3e00, 0x7c01, 0xfc00, 0x0001];

/** Four rows of {@link FLOAT_SCHEMA}: specials, a null, values the quantizers round. */
export function floatBatch(): Batch {
  return {
    schema: FLOAT_SCHEMA,
    columns: [
      {
        type: "float32",
        values: new Float32Array(Uint32Array.from(FLOAT32_BITS).buffer),
        validity: Uint8Array.of(1, 1, 1, 0),
      },
      { type: "float16", values: Uint16Array.from(FLOAT16_BITS), validity: null },
      { type: "float64", values: Float64Array.of(Math.PI, -1e6 / 3, 0.1, 2.5), validity: null },
      {
        type: "float64",
        values: Float64Array.of(1234.5678, 0, 98.76, -0.001),
        validity: Uint8Array.of(1, 0, 1, 1),
      },
    ],
    length: 4,
  };
}

/**
 * Writes `tiny_v1_7_float.pf`: {@link floatBatch} in two chunks of two rows, `medium`
 * at QUANT_MEDIUM (stored as float32) and `low` at QUANT_LOW (stored as float16).
 *
 * @param path Destination.
 * @returns What was written.
 */
export async function writeTinyFloat(path: string): Promise<WrittenArchive> {
  const batch = floatBatch();
  const plans = planColumns(sliceBatch(batch, 0, 2), {
    quantization: { medium: "QUANT_MEDIUM", low: "QUANT_LOW" },
  });
  return await writeTestArchive(path, batch, { codec: "zstd", chunkRows: 2, plans });
}

/** The rows `tiny_v1_8_evolved.pf` appends: no `name`, a new nullable `note`. */
export function evolvedBatch(): Batch {
  return {
    schema: [
      { name: "id", type: "int64", nullable: false },
      { name: "note", type: "string", nullable: true },
    ],
    columns: [
      { type: "int64", values: BigInt64Array.of(4n, 5n), validity: null },
      { type: "string", values: ["thawed", ""], validity: Uint8Array.of(1, 0) },
    ],
    length: 2,
  };
}

/**
 * Writes `tiny_v1_8_evolved.pf`: the rows of `tiny_v1_3.pf` (two chunks), then
 * {@link evolvedBatch} appended with `evolve`, so chunks 0 and 1 lack `note` (1.8) and
 * chunk 2 holds `name` as nulls.
 *
 * @param path Destination.
 * @returns What was written.
 */
export async function writeTinyEvolved(
  path: string,
): Promise<{ bytes: number; payload_sha256: string }> {
  await writeTestArchive(path, tinyBatch(), { codec: "zstd", chunkRows: 2 });
  const { append } = await import("../../ops/append.ts");
  const s = await append({ schema: evolvedBatch().schema, batches: [evolvedBatch()] }, path, {
    evolve: true,
    threads: 0,
  });
  return { bytes: s.archive_bytes, payload_sha256: s.payload_sha256 };
}

/** The columns of `tiny_v1_3_places.pf`: text inside other text, coordinates in DMS. */
export const PLACES_SCHEMA: Schema = [
  { name: "name", type: "string", nullable: false },
  { name: "city", type: "string", nullable: true },
  { name: "latitude", type: "float64", nullable: false },
];

/** Rows of `tiny_v1_3_places.pf`: six airports, cycled. */
const PLACES_ROWS = 48;
const PLACE_NAMES = [
  "Perry-Warsaw",
  "Livingston Municipal",
  "Meadow Lake",
  "Lambert-St Louis Intl",
  "Thigpen",
  "Zürich-Kloten",
];
const PLACE_CITIES = ["Perry", "Livingston", "Colorado Springs", "St Louis", "", "Zürich"];

/**
 * 48 airports: most cities are words of the name (one null), the latitudes thousandths
 * of an arcsecond printed to 8 decimals, as the FAA's are.
 */
export function placesBatch(): Batch {
  const at = (i: number) => i % PLACE_NAMES.length;
  return {
    schema: PLACES_SCHEMA,
    columns: [
      {
        type: "string",
        values: Array.from({ length: PLACES_ROWS }, (_, i) => PLACE_NAMES[at(i)]!),
        validity: null,
      },
      {
        type: "string",
        values: Array.from({ length: PLACES_ROWS }, (_, i) => PLACE_CITIES[at(i)]!),
        validity: Uint8Array.from({ length: PLACES_ROWS }, (_, i) => (at(i) === 4 ? 0 : 1)),
      },
      {
        type: "float64",
        values: Float64Array.from(
          { length: PLACES_ROWS },
          (_, i) =>
            Number(
              ((100_000_000 + (i * i * i * 7_919 + i * 104_729) % 200_000_000) / 3_600_000).toFixed(
                8,
              ),
            ),
        ),
        validity: null,
      },
    ],
    length: PLACES_ROWS,
  };
}

/**
 * Writes `tiny_v1_3_places.pf`: {@link placesBatch} in one zstd chunk with the plan the
 * writer chooses (`city` given `name`), so its blocks use `text_within` and
 * `decimal_dms`, predictors added within 1.3's format.
 *
 * @param path Destination.
 * @returns What was written.
 */
export async function writeTinyPlaces(path: string): Promise<WrittenArchive> {
  const batch = placesBatch();
  return await writeTestArchive(path, batch, {
    codec: "zstd",
    chunkRows: PLACES_ROWS,
    plans: planColumns(batch),
  });
}

/**
 * Asserts that a golden file still has its pinned SHA-256 and that `write`, today's
 * writer, produces exactly its bytes again (into `.tmp/golden/`).
 *
 * @param golden The committed golden file.
 * @param sha256 Its pinned SHA-256.
 * @param write Writes the same archive to the path it is given.
 * @param hint What a writer change means for this file, for the failure.
 */
export async function assertWriterReproduces(
  golden: string,
  sha256: string,
  write: (path: string) => Promise<unknown>,
  hint = "bump the minor version, update FORMAT.md and add a golden file",
): Promise<void> {
  assert.equal(sha256Hex(await Deno.readFile(golden)), sha256, "the committed golden file changed");
  await Deno.mkdir(".tmp/golden", { recursive: true });
  const again = `.tmp/golden/rewritten_${golden.split("/").pop()}`;
  await write(again);
  assert.equal(
    sha256Hex(await Deno.readFile(again)),
    sha256,
    `the writer's bytes changed: ${hint}`,
  );
}

if (import.meta.main) {
  // `make_golden.ts` writes 1.3; `make_golden.ts 1.4` the encrypted 1.4 file;
  // `make_golden.ts 1.5` the 1.5 file of the types added in 1.5; `make_golden.ts 1.6`
  // the 1.6 file whose columns have codecs of their own; `make_golden.ts 1.7` the 1.7
  // file of float32/float16 columns and quantizers storing into them; `make_golden.ts 1.8` the 1.8
  // file whose first chunks lack a column an append added; `make_golden.ts places` the
  // 1.3 file whose blocks use predictors added within the format (text_within, decimal_dms).
  const version = Deno.args[0] ?? "1.3";
  const file = {
    "1.3": "./tiny_v1_3.pf",
    "1.4": "./tiny_v1_4_encrypted.pf",
    "1.5": "./tiny_v1_5_types.pf",
    "1.6": "./tiny_v1_6_mixed.pf",
    "1.7": "./tiny_v1_7_float.pf",
    "1.8": "./tiny_v1_8_evolved.pf",
    places: "./tiny_v1_3_places.pf",
  }[version];
  if (file === undefined) throw new Error(`no golden file of version ${version}`);
  const path = new URL(file, import.meta.url).pathname;
  const written = version === "1.4"
    ? await writeTinyEncrypted(path)
    : version === "1.6"
    ? await writeTinyMixed(path)
    : version === "1.7"
    ? await writeTinyFloat(path)
    : version === "1.8"
    ? await writeTinyEvolved(path)
    : version === "places"
    ? await writeTinyPlaces(path)
    : await writeTestArchive(path, version === "1.5" ? typesBatch() : tinyBatch(), {
      codec: "zstd",
      chunkRows: 2,
    });
  Deno.stdout.writeSync(
    new TextEncoder().encode(`${path}: ${written.bytes} B, payload ${written.payload_sha256}\n`),
  );
}
