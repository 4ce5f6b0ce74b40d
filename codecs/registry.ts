/**
 * The codec registry: every codec an archive may name, by id and by wire code, and
 * the module that implements it, loaded the first time a block is encoded or decoded
 * with it.
 *
 * A codec is registered by one entry in `ENTRIES` (its id, wire code, levels, the
 * program it runs if any, and a dynamic import of its file, its decoder's too where
 * that is a module of its own) and its name in
 * `ids.ts` (checked here at load, so they cannot drift), nothing else: no
 * self-registration on import, no mutable global but the cache of loaded modules.
 * Lookups are synchronous and return the registered `Codec`, whose `encode` and
 * `decode` load the codec's module on first call and check that it is the codec the
 * entry describes (a decoder of its own loads alone). So reading a zstd archive never
 * loads lzma2 (and the `node:zlib` it imports), the zpaq codecs or the zstd encoder;
 * a literal `import("./x.ts")` is in the module graph Deno builds (and reads) before
 * the first line runs (`deno compile` includes it), but its module runs only when the
 * import does; the others are computed (`cli/lazy.ts` lists them for `deno compile`). The list is frozen when the module loads. An id or
 * code that is not here is a `CodecError` `UNKNOWN_CODEC` naming the known ones; the
 * format layer reports it as its `FormatError` `UNKNOWN_CODEC` (codecs/ may not import
 * format/).
 *
 * @module
 */
import type { Codec, CodecLevels } from "./codec.ts";
import { CodecError } from "./errors.ts";
import { AUTO_CODEC, CODEC_CHOICES, CODEC_IDS } from "./ids.ts";

/** One registered codec: what lookups answer without loading it, and how to load it. */
interface Entry {
  readonly id: string;
  readonly code: number;
  readonly levels: CodecLevels;
  readonly binary?: string;
  readonly load: () => Promise<Codec>;
  /**
   * The decoder alone, where it lives in a module of its own: a read then never loads
   * the encoder (zstd's is most of `zstd.ts`).
   */
  readonly loadDecode?: () => Promise<Codec["decode"]>;
}

/**
 * The modules of the codecs a plain zstd archive does not need, by computed specifiers:
 * Deno reads and parses every module a literal `import("./x.ts")` names when it loads
 * the importer, so literal ones would cost every command that reads an archive
 * (`cli/lazy.ts` lists these for `deno compile`, `mod.ts` names them for a library
 * user's graph).
 */
const LZMA2 = new URL("./lzma2.ts", import.meta.url);
/** The zstd encoder: by a computed specifier, so that a read does not make Deno read it. */
const ZSTD = new URL("./zstd.ts", import.meta.url);
const ZPAQ = new URL("./zpaq.ts", import.meta.url);
const ZPAQ_WASM = new URL("./zpaq_wasm.ts", import.meta.url);

/** Every registered codec, in wire-code order. */
const ENTRIES: readonly Entry[] = [
  {
    id: "zstd",
    code: 0x01,
    levels: { min: 1, max: 19, default: 19 },
    load: async () => ((await import(ZSTD.href)) as typeof import("./zstd.ts")).zstd,
    loadDecode: async () => (await import("./_zstd_decode.ts")).zstdDecode,
  },
  {
    id: "lzma2",
    code: 0x02,
    levels: { min: 0, max: 6, default: 6 },
    load: async () => ((await import(LZMA2.href)) as typeof import("./lzma2.ts")).lzma2,
  },
  {
    id: "zpaq",
    code: 0x03,
    binary: "zpaq",
    levels: { min: 1, max: 5, default: 5 },
    load: async () => ((await import(ZPAQ.href)) as typeof import("./zpaq.ts")).zpaq,
  },
  {
    id: "zpaqwasm",
    code: 0x04,
    levels: { min: 1, max: 5, default: 5 },
    load: async () => ((await import(ZPAQ_WASM.href)) as typeof import("./zpaq_wasm.ts")).zpaqWasm,
  },
];

/**
 * The codec of a registry entry: its module loads on the first encode or decode (its
 * decoder's module alone on a decode, where it has one).
 */
function lazyCodec(entry: Entry): Codec {
  let loaded: Promise<Codec> | null = null;
  const codec = (): Promise<Codec> =>
    loaded ??= entry.load().then((impl) => {
      // A programmer error (an entry that disagrees with its module), not a bad file.
      const { id, code, levels, binary } = impl;
      if (
        id !== entry.id || code !== entry.code || binary !== entry.binary ||
        levels.min !== entry.levels.min || levels.max !== entry.levels.max ||
        levels.default !== entry.levels.default
      ) {
        throw new TypeError(`The registry entry of codec '${entry.id}' disagrees with its module`);
      }
      return impl;
    });
  const loadDecode = entry.loadDecode;
  let decoder: Promise<Codec["decode"]> | null = null;
  return Object.freeze({
    id: entry.id,
    code: entry.code,
    ...(entry.binary === undefined ? {} : { binary: entry.binary }),
    levels: Object.freeze({ ...entry.levels }),
    encode: async (data: Uint8Array, level?: number) => (await codec()).encode(data, level),
    decode: loadDecode
      ? async (data: Uint8Array, rawLength: number) =>
        (await (decoder ??= loadDecode()))(data, rawLength)
      : async (data: Uint8Array, rawLength: number) => (await codec()).decode(data, rawLength),
  });
}

/** Every registered codec, in wire-code order. Frozen. */
export const CODECS: readonly Codec[] = Object.freeze(ENTRIES.map(lazyCodec));

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
