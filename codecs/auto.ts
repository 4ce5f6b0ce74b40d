/**
 * The `auto` codec selector: compresses a sample with each candidate codec and
 * picks the one whose output is smallest, recording why.
 *
 * Selection lives here and only here; codecs never choose themselves. The
 * sample is what the master reads once per job to detect the schema, so one
 * choice holds for every chunk of the job. The reason string goes into the
 * archive header (`auto_reason`), so a user can see later why a codec won.
 *
 * Default candidates are `zstd` and `lzma2`. `zpaq` competes only when the
 * caller passes it: it is ten to a hundred times slower each way and needs an
 * external binary, and a job should not start depending on one by surprise.
 * On equal sizes the faster codec wins (zstd, then lzma2, then zpaq), because
 * bytes saved are the only reason to pay for a slower codec.
 *
 * @module
 */
import type { Codec } from "./codec.ts";
import { lzma2 } from "./lzma2.ts";
import { zstd } from "./zstd.ts";

/** The candidates of {@linkcode chooseCodec} when none are given. Frozen. */
export const AUTO_CANDIDATES: readonly Codec[] = Object.freeze([zstd, lzma2]);

/** Codec ids from fastest to slowest (to decode and encode); ties go to the earlier. */
const SPEED_ORDER: readonly string[] = ["zstd", "lzma2", "zpaq"];

/** The outcome of {@linkcode chooseCodec}. */
export interface CodecChoice {
  /** The codec with the smallest total output (the faster one on a tie). */
  readonly codec: Codec;
  /** One line saying why, e.g. `lzma2: 10234 B vs zstd 11021 B on a 1000-row sample`. */
  readonly reason: string;
  /** Total compressed bytes of the sample, by codec id. */
  readonly sizes: Record<string, number>;
}

/** Options of {@linkcode chooseCodec}. */
export interface ChooseCodecOptions {
  /** Rows the sample holds, used in `reason` (`on a 1000-row sample`). */
  readonly rows?: number;
}

/**
 * Compresses every sample block with every candidate and returns the codec
 * with the smallest total, plus the reason and each candidate's total.
 *
 * @param samples Sample blocks (for instance, one per column of the sample rows).
 * @param candidates Codecs to compare. Default {@linkcode AUTO_CANDIDATES} (zstd, lzma2).
 * @param options `rows`: the sample's row count, for the reason.
 * @returns The winner, a one-line reason and the total size per codec id.
 * @throws {RangeError} If `candidates` is empty or names one id twice.
 * @throws {CodecError} Whatever a candidate's `encode` throws (say, `BINARY_MISSING` for zpaq).
 *
 * @example Text-like data favours lzma2
 * ```ts
 * import assert from "node:assert/strict";
 * import { chooseCodec } from "./auto.ts";
 * const rows = Array.from({ length: 1000 }, (_, i) => `${i},sensor-${i % 7},${(i * 0.37).toFixed(2)}\n`);
 * const sample = new TextEncoder().encode(rows.join(""));
 * const choice = await chooseCodec([sample], undefined, { rows: 1000 });
 * assert.ok(choice.reason.endsWith("on a 1000-row sample"));
 * assert.equal(choice.sizes[choice.codec.id], Math.min(...Object.values(choice.sizes)));
 * ```
 */
export async function chooseCodec(
  samples: readonly Uint8Array[],
  candidates: readonly Codec[] = AUTO_CANDIDATES,
  options: ChooseCodecOptions = {},
): Promise<CodecChoice> {
  if (candidates.length === 0) {
    throw new RangeError("Cannot choose a codec: the candidate list is empty");
  }
  const ids = new Set(candidates.map((codec) => codec.id));
  if (ids.size !== candidates.length) {
    throw new RangeError(
      `Cannot choose a codec: candidates repeat an id (${candidates.map((c) => c.id).join(", ")})`,
    );
  }
  const sizes: Record<string, number> = {};
  for (const codec of candidates) {
    let total = 0;
    for (const sample of samples) total += (await codec.encode(sample)).length;
    sizes[codec.id] = total;
  }
  const ranked = [...candidates].sort((a, b) =>
    (sizes[a.id] ?? 0) - (sizes[b.id] ?? 0) || speedRank(a, candidates) - speedRank(b, candidates)
  );
  const [winner, ...others] = ranked as [Codec, ...Codec[]];
  const best = sizes[winner.id] ?? 0;
  const vs = others.length === 0
    ? " (only candidate)"
    : ` vs ${others.map((c) => `${c.id} ${sizes[c.id]} B`).join(", ")}`;
  const tie = others.some((c) => sizes[c.id] === best) ? " (tie: the faster codec wins)" : "";
  const reason = `${winner.id}: ${best} B${vs} on ${describeSample(samples, options)}${tie}`;
  return { codec: winner, reason, sizes };
}

/** Position of a codec in {@linkcode SPEED_ORDER}; unknown ids keep candidate order after those. */
function speedRank(codec: Codec, candidates: readonly Codec[]): number {
  const rank = SPEED_ORDER.indexOf(codec.id);
  return rank >= 0 ? rank : SPEED_ORDER.length + candidates.indexOf(codec);
}

function describeSample(samples: readonly Uint8Array[], options: ChooseCodecOptions): string {
  if (options.rows !== undefined) return `a ${options.rows}-row sample`;
  const bytes = samples.reduce((sum, sample) => sum + sample.length, 0);
  const blocks = samples.length === 1 ? "1 block" : `${samples.length} blocks`;
  return `a sample of ${blocks} (${bytes} B)`;
}
