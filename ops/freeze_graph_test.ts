/**
 * What loading `ops/freeze.ts` evaluates before a freeze can start its Worker pool:
 * its static graph (`deno info --json`; literal dynamic imports and type-only imports
 * left out, as `deno run` evaluates neither with the module). A CSV freeze never uses
 * apache-arrow, DuckDB's binding or `codecs/auto.ts` (lzma2, `node:zlib`), ~45 ms of
 * the main thread's CPU to load, so they load where an Arrow table, a Parquet file or
 * a comparing profile asks for them. Likewise a freeze Worker (`_freeze_worker.ts`)
 * loads DuckDB's Parquet reader with its first Parquet job only. Timings live in
 * `bench/profile_bench.ts`.
 */
import assert from "node:assert/strict";

interface GraphModule {
  specifier: string;
  dependencies?: { specifier: string; code?: { specifier: string }; isDynamic?: boolean }[];
}

/** Every module evaluated with `entry`, by specifier, and who first imported it. */
async function evaluatedGraph(entry: URL): Promise<Map<string, string>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry.pathname],
    cwd: new URL("../", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as { modules: GraphModule[] };
  const modules = new Map(graph.modules.map((m) => [m.specifier, m]));
  const importer = new Map<string, string>([[entry.href, ""]]);
  const queue = [entry.href];
  while (queue.length > 0) {
    const at = queue.shift()!;
    for (const dep of modules.get(at)?.dependencies ?? []) {
      const next = dep.code?.specifier;
      if (next === undefined || dep.isDynamic || importer.has(next)) continue;
      importer.set(next, at);
      queue.push(next);
    }
  }
  return importer;
}

Deno.test("loading ops/freeze.ts evaluates no Arrow, DuckDB or codec comparison", async () => {
  const graph = await evaluatedGraph(new URL("./freeze.ts", import.meta.url));
  assert.ok(
    [...graph.keys()].some((s) => s.endsWith("/io/csv.ts")),
    "the graph was read (the CSV reader is in it)",
  );
  const unwanted = [
    "apache-arrow",
    "@duckdb/node-api",
    "/io/_duckdb.ts",
    "/io/arrow.ts",
    "/io/arrow_table.ts",
    "/io/parquet.ts",
    "/codecs/auto.ts",
    "/codecs/lzma2.ts",
  ];
  const found = [...graph].filter(([s]) => unwanted.some((u) => s.includes(u)))
    .map(([s, by]) => `${s} (imported by ${by})`);
  assert.deepEqual(found, []);
});

Deno.test("a freeze Worker loads DuckDB's Parquet reader only with a Parquet job", async () => {
  const graph = await evaluatedGraph(new URL("./_freeze_worker.ts", import.meta.url));
  assert.ok(
    [...graph.keys()].some((s) => s.endsWith("/ops/_csv_chunks.ts")),
    "the graph was read (the CSV chunk reader is in it)",
  );
  const unwanted = ["@duckdb/node-api", "/io/_duckdb.ts", "/io/parquet.ts"];
  const found = [...graph].filter(([s]) => unwanted.some((u) => s.includes(u)))
    .map(([s, by]) => `${s} (imported by ${by})`);
  assert.deepEqual(found, []);
});
