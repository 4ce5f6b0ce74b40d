/**
 * Object storage against local disk, on a real S3 server (`s3rver`, a process on
 * this machine, so the network is loopback and the figures are the code's own cost):
 * the freeze of flights-3m to `s3://` vs to a local file (median of 3 alternating
 * runs), and what a 10-row slice of that archive fetches (requests and bytes against
 * the footer and one chunk). `deno task bench` puts them in `RESULTS.md`; run alone
 * (`deno run -A bench/storage_bench.ts path/to/flights-3m.csv`) it prints them.
 *
 * @module
 */
import { join } from "node:path";
import { freeze } from "../mod.ts";
import { ArchiveReader } from "../format/reader.ts";
import { openRangeReader } from "../storage/range_reader.ts";
import { formatBytes } from "../internal/progress.ts";
import { startS3rver } from "../tests/_s3rver.ts";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * Measures and describes object storage against local disk.
 *
 * @param csv The source (flights-3m as CSV).
 * @param name Its name, for the lines.
 * @returns Markdown list items.
 */
export async function storageFigures(csv: string, name: string): Promise<string[]> {
  const server = await startS3rver("bench");
  const work = await Deno.makeTempDir({ prefix: "permafrost-storage-bench-" });
  try {
    const local: number[] = [];
    const remote: number[] = [];
    let sameHash = true;
    for (let round = 0; round < 3; round++) {
      let t = performance.now();
      const a = await freeze(csv, join(work, `f${round}.pf`), { codec: "zstd" });
      local.push((performance.now() - t) / 1000);
      t = performance.now();
      const b = await freeze(csv, `s3://bench/f${round}.pf`, { codec: "zstd" });
      remote.push((performance.now() - t) / 1000);
      sameHash &&= a.payload_sha256 === b.payload_sha256;
      await Deno.remove(join(work, `f${round}.pf`));
    }
    const source = await openRangeReader("s3://bench/f0.pf");
    const reader = await ArchiveReader.openSource(source);
    const start = Math.floor(reader.index.footer.rows / 2);
    let rows = 0;
    for await (const batch of reader.read({ rows: { start, end: start + 10 } })) {
      rows += batch.length;
    }
    const chunk = reader.index.footer.chunks.find((c) => c.row_end > start)!;
    const footerAndChunk = reader.index.file_bytes - reader.index.footer.payload_offset -
      reader.index.footer.payload_length + chunk.length;
    reader.close();
    const list = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(", ");
    return [
      `- Freeze of ${name} (zstd) to \`s3://\` on a local s3rver vs to a local file, median of 3 ` +
      `alternating runs: ${median(remote).toFixed(1)} s (${list(remote)}) vs ${
        median(local).toFixed(1)
      } s (${list(local)}): **${(median(remote) / median(local)).toFixed(2)}×** ` +
      `(the archive goes up in 8 MiB parts while it is written). Payloads equal: ${sameHash}.`,
      `- A 10-row slice (${rows} rows) of that archive in S3: **${source.requests} requests**, ` +
      `${
        formatBytes(source.bytesFetched)
      } fetched (the preamble, header, tail and footer come with ` +
      `the first 16 kB and the last 32 kB; footer and one chunk alone are ${
        formatBytes(footerAndChunk)
      }).`,
    ];
  } finally {
    await server.stop();
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const csv = Deno.args[0] ?? "bench/.cache/flights-3m.csv";
  for (const line of await storageFigures(csv, "flights-3m")) {
    Deno.stdout.writeSync(new TextEncoder().encode(line + "\n"));
  }
}
