/**
 * The codec registry: every codec an archive may name, by id and by wire code.
 *
 * A codec is registered by one import and one entry in `CODECS`, and its name in
 * `ids.ts` (checked here at load, so they cannot drift), nothing else:
 * no self-registration on import, no mutable global. The list is frozen when
 * the module loads. An id or code that is not here is a `CodecError`
 * `UNKNOWN_CODEC` naming the known ones; the format layer reports it as its
 * `FormatError` `UNKNOWN_CODEC` (codecs/ may not import format/).
 *
 * @module
 */
import type { Codec } from "./codec.ts";
import { CodecError } from "./errors.ts";
import { lzma2 } from "./lzma2.ts";
import { zpaq } from "./zpaq.ts";
import { zpaqWasm } from "./zpaq_wasm.ts";
import { zstd } from "./zstd.ts";
import { AUTO_CODEC, CODEC_CHOICES, CODEC_IDS } from "./ids.ts";

/** Every registered codec, in wire-code order. Frozen. */
export const CODECS: readonly Codec[] = Object.freeze([zstd, lzma2, zpaq, zpaqWasm]);

// One list of names (`ids.ts`, which the CLI loads without the codecs): the codecs
// registered here must be exactly those, in that order.
if (CODECS.map((c) => c.id).join() !== CODEC_IDS.join()) {
  throw new Error(
    `codecs/ids.ts lists ${CODEC_IDS.join(", ")} but the registry has ${
      CODECS.map((c) => c.id).join(", ")
    }`,
  );
}

export { AUTO_CODEC, CODEC_CHOICES, CODEC_IDS };

const BY_ID: ReadonlyMap<string, Codec> = new Map(CODECS.map((codec) => [codec.id, codec]));
const BY_CODE: ReadonlyMap<number, Codec> = new Map(CODECS.map((codec) => [codec.code, codec]));

/**
 * Looks a codec up by its id, as written in archive headers and CLI flags.
 *
 * @param id A codec id such as `zstd`.
 * @returns The registered codec.
 * @throws {CodecError} `UNKNOWN_CODEC` if no codec has this id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { codecById } from "./registry.ts";
 * assert.equal(codecById("lzma2").code, 0x02);
 * assert.throws(() => codecById("brotli"), { code: "UNKNOWN_CODEC" });
 * ```
 */
export function codecById(id: string): Codec {
  const codec = BY_ID.get(id);
  if (codec === undefined) {
    throw new CodecError(
      "UNKNOWN_CODEC",
      `Cannot find codec '${id}': known codecs are ${
        CODEC_IDS.map((known) => `'${known}'`).join(", ")
      }`,
    );
  }
  return codec;
}

/**
 * Looks a codec up by its one-byte wire code.
 *
 * @param code A wire code such as `0x01`.
 * @returns The registered codec.
 * @throws {CodecError} `UNKNOWN_CODEC` if no codec has this code.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { codecByCode } from "./registry.ts";
 * assert.equal(codecByCode(0x01).id, "zstd");
 * assert.throws(() => codecByCode(0x7f), { code: "UNKNOWN_CODEC" });
 * ```
 */
export function codecByCode(code: number): Codec {
  const codec = BY_CODE.get(code);
  if (codec === undefined) {
    const known = CODECS.map((c) => `'${c.id}' (${hex(c.code)})`).join(", ");
    throw new CodecError(
      "UNKNOWN_CODEC",
      `Cannot find codec with wire code ${hex(code)}: known codecs are ${known}`,
    );
  }
  return codec;
}

function hex(code: number): string {
  return Number.isInteger(code) && code >= 0
    ? `0x${code.toString(16).padStart(2, "0")}`
    : `'${code}'`;
}
