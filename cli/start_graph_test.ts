/**
 * What a quick command makes Deno read before its first line runs: the module graph
 * `deno info --json` shows (static imports and literal dynamic ones, which Deno
 * resolves ahead of time; type-only imports excluded, as `deno run` skips them).
 * `--help` and the archive commands must not pull in npm packages (DuckDB, Hono, zod,
 * exceljs, Arrow, ...) again, and every module loaded by a computed specifier must be
 * in the list `deno compile` includes. Timings live in `bench/start_bench.ts`.
 */
import assert from "node:assert/strict";
import { relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { type FamilyModules, familyModules, lazyModules, loadedElsewhereModules } from "./lazy.ts";
import * as archive from "./archive.ts";
import * as query from "./query.ts";
import * as storage from "./storage.ts";
import * as servers from "./servers.ts";
import * as catalog from "./catalog.ts";
import * as start from "./start.ts";
import * as cluster from "./cluster.ts";
import * as users from "./users.ts";

// Type-checked: every family module has what cli/lazy.ts says the router reads of it.
const FAMILIES: FamilyModules = {
  archiveCommands: archive,
  queryCommands: query,
  storageCommands: storage,
  serverCommands: servers,
  catalogCommands: catalog,
  startCommand: start,
  clusterCommands: cluster,
  userCommands: users,
};

const ROOT = new URL("../", import.meta.url);

interface GraphModule {
  specifier: string;
  dependencies?: { specifier: string; code?: { specifier: string }; isDynamic?: boolean }[];
}

/**
 * Every module loaded with `entries` at run time, and who first imported it. With
 * `evaluated`, only what is evaluated before the first line runs: a literal dynamic
 * import is in the graph Deno builds (so its npm packages are resolved), but its
 * module is compiled and run only when the import runs.
 */
async function runtimeGraph(
  entries: readonly URL[],
  { evaluated = false } = {},
): Promise<Map<string, string>> {
  const importer = new Map<string, string>();
  for (const entry of entries) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", fromFileUrl(entry)],
      cwd: fromFileUrl(ROOT),
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      roots: string[];
      modules: GraphModule[];
    };
    const bySpecifier = new Map(graph.modules.map((m) => [m.specifier, m]));
    const stack = [graph.roots[0]!];
    importer.set(graph.roots[0]!, importer.get(graph.roots[0]!) ?? "(entry)");
    while (stack.length > 0) {
      const at = stack.pop()!;
      for (const dep of bySpecifier.get(at)?.dependencies ?? []) {
        const code = dep.code?.specifier;
        if (code === undefined || importer.has(code) || (evaluated && dep.isDynamic)) continue;
        importer.set(code, at);
        stack.push(code);
      }
    }
  }
  return importer;
}

/** The npm packages in a graph, each with the module that imports it. */
function npmIn(graph: Map<string, string>): string[] {
  return [...graph].filter(([s]) => s.startsWith("npm:")).map(([s, by]) =>
    `${s} (imported by ${by.replace(ROOT.href, "")})`
  );
}

const MAIN = new URL("main.ts", ROOT);
const FAMILY_MODULES = familyModules();
const ARCHIVE_FAMILY = FAMILY_MODULES.find((u) => u.pathname.endsWith("/cli/archive.ts"))!;

Deno.test("cli/lazy.ts names every command family's module", () => {
  assert.equal(FAMILY_MODULES.length, Object.keys(FAMILIES).length);
});

Deno.test("--help loads main.ts and every command family without any npm package", async () => {
  const graph = await runtimeGraph([MAIN, ...FAMILY_MODULES]);
  assert.deepEqual(npmIn(graph), [], "load these through cli/lazy.ts at the point of use");
  // The router itself loads no command family: audit does not pay for the servers'.
  const router = await runtimeGraph([MAIN]);
  for (const family of FAMILY_MODULES) assert.ok(!router.has(family.href), family.href);
});

Deno.test("audit, peek and verify load no npm package", async () => {
  const graph = await runtimeGraph([MAIN, ARCHIVE_FAMILY, new URL("ops/inspect.ts", ROOT)]);
  assert.deepEqual(npmIn(graph), []);
});

Deno.test("audit, peek and verify load no predictor until a block names it", async () => {
  const graph = await runtimeGraph([MAIN, ARCHIVE_FAMILY, new URL("ops/inspect.ts", ROOT)], {
    evaluated: true,
  });
  const predictors = new URL("format/predictors/", ROOT).href;
  const loaded = [...graph.keys()].filter((s) => s.startsWith(predictors))
    .map((s) => s.slice(predictors.length));
  // The registry, and the interface module for the quantization names the header checks.
  assert.deepEqual(loaded.sort(), ["predictor.ts", "registry.ts"]);
});

Deno.test("opening an archive reads no predictor's module until a block names it", async () => {
  // Not even to analyse it: Deno reads every module a literal import() names when it
  // loads the importer, and the predictors with their helpers are ~250 kB (~2-4 ms of
  // a 10-row slice). The registry imports each by a computed specifier.
  const graph = await runtimeGraph([MAIN, ARCHIVE_FAMILY, new URL("ops/thaw.ts", ROOT)]);
  const predictors = new URL("format/predictors/", ROOT).href;
  const read = [...graph.keys()].filter((s) => s.startsWith(predictors))
    .map((s) => s.slice(predictors.length));
  assert.deepEqual(read.sort(), ["predictor.ts", "registry.ts"]);
});

Deno.test("audit, peek and verify load neither node:zlib nor node:crypto up front", async () => {
  // Each costs ~20 ms of CPU to load: zstd decodes a footer and small blocks in
  // TypeScript and SHA-256 starts in TypeScript until a process has hashed a megabyte.
  const graph = await runtimeGraph([MAIN, ARCHIVE_FAMILY, new URL("ops/inspect.ts", ROOT)], {
    evaluated: true,
  });
  const heavy = [...graph].filter(([s]) => s === "node:zlib" || s === "node:crypto")
    .map(([s, by]) => `${s} (imported by ${by.replace(ROOT.href, "")})`);
  assert.deepEqual(heavy, []);
});

Deno.test("--help, audit, peek and verify load no Node module up front", async () => {
  // Any one of them makes the process bootstrap Node compatibility before its first
  // line runs, ~6 ms of CPU: they load where used (internal/node_builtin.ts, the storage
  // registry's scopes, cli/command.ts's parseArgs for what its own parse leaves;
  // cli/spawn.ts reads its file URL without node:url).
  const graph = await runtimeGraph([MAIN, ...FAMILY_MODULES, new URL("ops/inspect.ts", ROOT)], {
    evaluated: true,
  });
  const node = [...graph].filter(([s]) => s.startsWith("node:"))
    .map(([s, by]) => `${s} (imported by ${by.replace(ROOT.href, "")})`);
  assert.deepEqual(node, []);
});

Deno.test("thaw loads no Node module up front", async () => {
  // A 10-row slice's whole work is ~20 ms: Node compatibility's ~6 ms bootstrap would
  // be a third of it (paths go through internal/node_builtin.ts where used).
  const graph = await runtimeGraph([MAIN, ARCHIVE_FAMILY, new URL("ops/thaw.ts", ROOT)], {
    evaluated: true,
  });
  const node = [...graph].filter(([s]) => s.startsWith("node:"))
    .map(([s, by]) => `${s} (imported by ${by.replace(ROOT.href, "")})`);
  assert.deepEqual(node, []);
});

Deno.test("thaw loads no npm package until it writes Arrow or Parquet", async () => {
  const graph = await runtimeGraph([MAIN, ARCHIVE_FAMILY, new URL("ops/thaw.ts", ROOT)]);
  assert.deepEqual(npmIn(graph), []);
});

Deno.test("a thaw slice to stdout evaluates no module it does not use", async () => {
  // `thaw x.pf - --rows A:B` evaluated ~6 ms of modules it never ran: the --where
  // compiler, the xlsx writer (for one constant), the stores' registry and transfers,
  // schema evolution, temp files; and the text scanners of io/_parse.ts (16 kB, for
  // three time constants and a date function, now in io/_time.ts), storage/uri.ts and
  // its StorageError (for one regex). Each now loads where used.
  const graph = await runtimeGraph([MAIN, ARCHIVE_FAMILY, new URL("ops/thaw.ts", ROOT)], {
    evaluated: true,
  });
  const unused = [
    "ops/where.ts",
    "ops/_where_syntax.ts",
    "io/xlsx.ts",
    "io/cell_text.ts",
    "io/_parse.ts",
    "ops/evolve.ts",
    "ops/schema_diff.ts",
    "internal/temp_files.ts",
    "storage/registry.ts",
    "storage/journal.ts",
    "storage/range_reader.ts",
    "storage/transfer.ts",
    "storage/uri.ts",
  ];
  const loaded = unused.filter((path) => graph.has(new URL(path, ROOT).href))
    .map((path) =>
      `${path} (imported by ${graph.get(new URL(path, ROOT).href)!.replace(ROOT.href, "")})`
    );
  assert.deepEqual(loaded, [], "load these where they are used");
  // Still evaluated: what the slice runs (a guard against a renamed or moved module).
  for (const path of ["ops/_scan.ts", "io/output.ts", "io/_write_text.ts", "format/reader.ts"]) {
    assert.ok(graph.has(new URL(path, ROOT).href), path);
  }
});

Deno.test("a thaw of a local archive does not read the zstd encoder, the stores or datasets", async () => {
  // Not even to analyse them: a read decodes zstd through codecs/_zstd_decode.ts (the
  // encoder, its kept libzstd contexts and their self check are most of codecs/zstd.ts),
  // opens a local file without ops/_remote.ts and its stores' modules, and loads
  // ops/partition_read.ts only for a directory. Each is imported by a computed specifier
  // where it is needed.
  const graph = await runtimeGraph([MAIN, ARCHIVE_FAMILY, new URL("ops/thaw.ts", ROOT)]);
  const unread = [
    "codecs/zstd.ts",
    "ops/_remote.ts",
    "ops/partition_read.ts",
    "storage/registry.ts",
    "storage/range_reader.ts",
  ];
  const read = unread.filter((path) => graph.has(new URL(path, ROOT).href))
    .map((path) =>
      `${path} (imported by ${graph.get(new URL(path, ROOT).href)!.replace(ROOT.href, "")})`
    );
  assert.deepEqual(read, [], "load these by a computed specifier where they are used");
  // What a slice decodes with (a guard against a renamed or moved module).
  assert.ok(graph.has(new URL("codecs/_zstd_decode.ts", ROOT).href));
});

Deno.test("every module loaded by a computed specifier is in deno compile's --include list", async () => {
  // deno compile embeds an included module's graph too: format/predictors/_all.ts
  // brings the predictors the registry imports one by one.
  const predictors = new URL("format/predictors/_all.ts", ROOT);
  assert.ok(lazyModules().some((u) => u.href === predictors.href));
  const included = new Set([
    ...lazyModules().map((u) => u.href),
    ...(await runtimeGraph([predictors])).keys(),
  ]);
  const computedImport = /(?<!typeof )\bimport\((?!["'`])/;
  const urlLiteral = /new URL\("(\.{1,2}\/[^"]+\.ts)", import\.meta\.url\)/g;
  const missing: string[] = [];
  const walk = async (dir: URL): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
      if (entry.isDirectory) {
        if (!["tests", "bench", "dist"].includes(entry.name)) await walk(url);
        continue;
      }
      if (!entry.name.endsWith(".ts") || entry.name.endsWith("_test.ts")) continue;
      const text = await Deno.readTextFile(url);
      const code = text.split("\n").filter((l) => !/^\s*(\*|\/\/)/.test(l));
      if (!code.some((l) => computedImport.test(l))) continue;
      for (const [, path] of text.matchAll(urlLiteral)) {
        const target = new URL(path!, url).href;
        if (!included.has(target)) {
          missing.push(`${relative(fromFileUrl(ROOT), fromFileUrl(url))}: ${path}`);
        }
      }
    }
  };
  await walk(ROOT);
  assert.deepEqual(missing, [], "add these to LOADED_ELSEWHERE in cli/lazy.ts");
});

Deno.test("a script importing mod.ts has every module loaded by a computed specifier in its graph", async () => {
  // So that `deno compile` of a library user's script embeds them and a narrow
  // --allow-read (which a computed import of a file would need) is enough.
  const graph = await runtimeGraph([new URL("mod.ts", ROOT)]);
  const missing = loadedElsewhereModules().filter((u) => !graph.has(u.href)).map((u) => u.href);
  assert.deepEqual(missing, [], "name these in mod.ts");
});
