/**
 * Catalog read throughput: `GET /datasets/{name}` under 32 concurrent connections
 * with 1,000 datasets registered. Target: at least 1,000 req/s with p99 at
 * most 50 ms on this machine.
 *
 * Two rows: the latest version as served (records are cached in memory once read,
 * and the latest of each name is preloaded when the catalog opens), and the
 * uncached path (`?version=v1`, first read of each name, one DuckDB query each).
 *
 * The catalog is filled in-process (1,000 versions described in memory), then served
 * by a real `main.ts catalog serve` process, so the load generator (this process: 32
 * `fetch` loops over keep-alive connections) does not share the server's event
 * loop. A warm-up precedes the measured run. Prints one markdown table row.
 *
 * ```sh
 * deno run --allow-read --allow-write=.tmp --allow-env --allow-ffi --allow-net=127.0.0.1 \
 *   --allow-run bench/catalog_bench.ts [--requests 20000] [--concurrency 32] [--datasets 1000]
 * ```
 *
 * @module
 */
import { join, resolve } from "node:path";
import { parseArgs } from "../internal/config.ts";
import { Catalog } from "../catalog/catalog.ts";
import { fakeIndex } from "../catalog/_test_utils.ts";

const args = parseArgs(Deno.args, { string: ["requests", "concurrency", "datasets"] }).flags;
const REQUESTS = Number(args.requests ?? 20_000);
const CONCURRENCY = Number(args.concurrency ?? 32);
const DATASETS = Number(args.datasets ?? 1_000);

const tmp = resolve(".tmp/bench_catalog");
await Deno.mkdir(tmp, { recursive: true });
const dir = await Deno.makeTempDir({ dir: tmp });
const db = join(dir, "catalog.db");

const fill = await Catalog.open(db);
for (let i = 0; i < DATASETS; i++) {
  await fill.registerIndex(
    fakeIndex(`ds${i}`, { columns: ["origin", "dest"], rows: 5_000, chunkRows: 500 }),
  );
}
await fill.close();

const child = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "--allow-net=127.0.0.1",
    "--allow-read",
    `--allow-write=${dir}`,
    "--allow-ffi",
    "--allow-env=PERMAFROST_*",
    "main.ts",
    "catalog",
    "serve",
    "--db",
    db,
    "--port",
    "0",
    "--log-level",
    "warn",
  ],
  stdout: "null",
  stderr: "piped",
}).spawn();

let log = "";
const url = await (async () => {
  for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
    log += chunk;
    const m = /Catalog serving at (http:\/\/\S+)/.exec(log);
    if (m) return m[1]!;
  }
  throw new Error(`server did not start: ${log}`);
})();

async function run(
  total: number,
  query = "",
): Promise<{ seconds: number; latencies: Float64Array; errors: number }> {
  const latencies = new Float64Array(total);
  let next = 0;
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (true) {
        const i = next++;
        if (i >= total) return;
        const t0 = performance.now();
        const res = await fetch(`${url}/datasets/ds${i % DATASETS}${query}`);
        await res.arrayBuffer();
        latencies[i] = performance.now() - t0;
        if (res.status !== 200) errors++;
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, latencies, errors };
}

function row(
  label: string,
  total: number,
  r: Awaited<ReturnType<typeof run>>,
  judged = true,
): string {
  const sorted = r.latencies.slice().sort();
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
  const rps = total / r.seconds;
  const p99 = pct(0.99);
  const verdict = !judged
    ? "(reference)"
    : rps >= 1000 && p99 <= 50 && r.errors === 0
    ? "pass"
    : "FAIL";
  return `| GET /datasets/{name}, ${label} | ${DATASETS} datasets | ${CONCURRENCY} | ${total} | ${
    Math.round(rps)
  } req/s | ${pct(0.5).toFixed(1)} ms | ${p99.toFixed(1)} ms | ${
    sorted[sorted.length - 1]!.toFixed(1)
  } ms | ${r.errors} | ${verdict} |`;
}

try {
  // `?version=v1` is not preloaded at open: the first read of each name is a DuckDB query.
  const cold = await run(DATASETS, "?version=v1");
  await run(Math.min(2_000, REQUESTS));
  const warm = await run(REQUESTS);
  const out = [
    "| endpoint | catalog | connections | requests | throughput | p50 | p99 | max | errors | target (≥1,000 req/s, p99 ≤ 50 ms) |",
    "|---|---|---|---|---|---|---|---|---|---|",
    row("uncached (first ?version=v1 read of each name: a DuckDB query)", DATASETS, cold, false),
    row("latest version, as served (records cached)", REQUESTS, warm),
  ].join("\n");
  await Deno.stdout.write(new TextEncoder().encode(out + "\n"));
} finally {
  child.kill("SIGTERM");
  await child.status;
  await Deno.remove(dir, { recursive: true });
}
