/**
 * Bounded memory, with real processes: the peak resident set of a freeze of a
 * 450 MB CSV stays within 1.5x that of a 150 MB one (both past the runtime's
 * warm-up, where the heap settles). `bench/memory_bench.ts` runs the same
 * measurement on 200 MB vs 2 GB, freeze and thaw.
 */
import assert from "node:assert/strict";
import { generateCsv, measure } from "../../bench/memory_bench.ts";

const TMP = ".tmp/e2e_memory";
await Deno.mkdir(TMP, { recursive: true });

Deno.test("freeze() peak memory stays flat as the source grows 3x", async () => {
  try {
    const runs = [];
    for (const mb of [150, 450]) {
      await generateCsv(`${TMP}/src_${mb}.csv`, mb * 1e6);
      runs.push(await measure("freeze", `${TMP}/src_${mb}.csv`, `${TMP}/src_${mb}.pf`));
    }
    const [small, big] = runs as [typeof runs[0], typeof runs[0]];
    assert.ok(big.rows > 2.5 * small.rows);
    assert.ok(
      big.peak_rss <= 1.5 * small.peak_rss,
      `peak RSS ${big.peak_rss} for 450 MB vs ${small.peak_rss} for 150 MB`,
    );
  } finally {
    await Deno.remove(TMP, { recursive: true });
  }
});
