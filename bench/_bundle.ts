/**
 * A bundled form of a checkout's `permafrost` command, for `start_bench.ts`: what a
 * quick command costs when the CLI is one bundled image rather than the ~70
 * TypeScript modules `deno run main.ts` loads (each with Deno's emitted JS, whose
 * inline source map is twice the code). Users do not run this form (README installs
 * `main.ts`); the bench measures it so that the decision to ship a build step rests
 * on figures anyone can reproduce.
 *
 * How it is built, on a copy of the checkout's runtime modules:
 * 1. Every import of one of our modules by a computed specifier (how the CLI keeps a
 *    quick command from loading the servers, and Deno from reading every predictor) is
 *    made literal, so the bundler follows it into a chunk of its own.
 * 2. Every other `import.meta.url` becomes the module's URL in the checkout, so Worker
 *    scripts, WebAssembly files and spawned processes come from the checkout as before.
 * 3. `deno bundle --code-splitting`, with npm and Node modules left to the import map.
 * 4. The chunks' literal dynamic imports become computed again: Deno reads every module
 *    a literal `import()` names when it loads the importer.
 *
 * The build refuses (throws) rather than guess: a computed import of ours it cannot
 * make literal would load a second copy of a module beside the bundled one.
 *
 * @module
 */
import { dirname, join, relative } from "node:path";
import { pathToFileURL } from "node:url";

/** Folders that hold no module the CLI runs. */
const SKIPPED = new Set([".git", ".ci", ".tmp", "bench", "tests", "node_modules", "dist"]);

/** `import(new URL("./x.ts", import.meta.url).href)`, on one line or several. */
const INLINE_URL_IMPORT =
  /import\(\s*new URL\(\s*("[^"]+"),\s*import\.meta\.url,?\s*\)\.href,?\s*\)/g;

/** `const NAME = new URL("./x.ts", import.meta.url);`, later `import(NAME.href)`. */
const NAMED_URL = /const (\w+) = new URL\(\s*("[^"]+"),\s*import\.meta\.url,?\s*\);/g;

/** `cli/lazy.ts`'s loader, which looks its module up in a table of paths. */
const LAZY_LOADER = "  const url = new URL(PATHS[name], import.meta.url);\n" +
  "  return await import(url.href) as LazyModules[K];";

async function* runtimeModules(root: string, dir = root): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory && !SKIPPED.has(entry.name)) yield* runtimeModules(root, path);
    else if (entry.isFile && /(?<!_test|\.d)\.ts$/.test(entry.name)) yield relative(root, path);
  }
}

/** `cli/lazy.ts` with its table of paths turned into a table of literal imports. */
function literalLazyLoader(text: string): string {
  const tables = text.slice(0, text.indexOf("const LOADED_ELSEWHERE"));
  const entries = [...tables.matchAll(/^ {2}(\w+): ("\.\.?\/[^"]+\.ts"),$/gm)];
  if (entries.length === 0 || !text.includes(LAZY_LOADER)) {
    throw new Error("cli/lazy.ts: its loader is not the form bench/_bundle.ts rewrites");
  }
  const loaders = entries.map(([, name, path]) => `  ${name}: () => import(${path}),\n`);
  return text.replace(
    LAZY_LOADER,
    "  return await LOADERS[name]() as LazyModules[K];",
  ) + `\nconst LOADERS: Record<string, () => Promise<unknown>> = {\n${loaders.join("")}};\n`;
}

/**
 * One module's text made bundleable: our computed imports literal, every other
 * `import.meta.url` its URL in the checkout.
 */
export function bundleable(text: string, path: string, checkout: string): string {
  let out = path === join("cli", "lazy.ts") ? literalLazyLoader(text) : text;
  out = out.replace(INLINE_URL_IMPORT, "import($1)");
  for (const [, name, specifier] of out.matchAll(NAMED_URL)) {
    out = out.replaceAll(
      new RegExp(`import\\(\\s*${name}\\.href\\s*\\)`, "g"),
      `import(${specifier})`,
    );
  }
  // `typeof import(…)` is a type, not a load.
  const computed = [...out.matchAll(/(?<!typeof )\bimport\(\s*([^"'\s)][^)\n]*)/g)]
    .map((m) => m[1]!);
  if (computed.length > 0) {
    throw new Error(`${path}: computed import(${computed.join(", ")}) left; make it literal here`);
  }
  const url = JSON.stringify(pathToFileURL(join(checkout, path)).href);
  return out.replaceAll("import.meta.url", url);
}

/** The names the import map gives, each kept out of the bundle with its subpaths. */
async function importMapNames(checkout: string): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(join(checkout, "deno.json"))) as {
    imports?: Record<string, string>;
  };
  return Object.keys(config.imports ?? {}).flatMap((name) => [name, `${name}/*`]);
}

/**
 * Builds the bundled CLI of `checkout` into `outDir` (emptied first).
 *
 * @param checkout A checkout of Permafrost (its `main.ts` and `deno.json`).
 * @param outDir Where the bundle goes.
 * @returns The bundle's entry, to run as `deno run --config <checkout>/deno.json <entry>`.
 */
export async function bundleCli(checkout: string, outDir: string): Promise<string> {
  const stage = await Deno.makeTempDir({ prefix: "permafrost-bundle-" });
  try {
    for await (const path of runtimeModules(checkout)) {
      const text = await Deno.readTextFile(join(checkout, path));
      await Deno.mkdir(join(stage, dirname(path)), { recursive: true });
      await Deno.writeTextFile(join(stage, path), bundleable(text, path, checkout));
    }
    for (const file of ["deno.json", "deno.lock"]) {
      await Deno.copyFile(join(checkout, file), join(stage, file));
    }
    await Deno.remove(outDir, { recursive: true }).catch(() => {});
    const external = ["npm:*", "node:*", ...await importMapNames(checkout)];
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", "-q", "--code-splitting", "--platform", "deno"]
        .concat(external.flatMap((name) => ["--external", name]))
        .concat(["--outdir", outDir, "main.ts"]),
      cwd: stage,
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      throw new Error(`deno bundle failed: ${new TextDecoder().decode(out.stderr).trim()}`);
    }
  } finally {
    await Deno.remove(stage, { recursive: true });
  }
  for await (const entry of Deno.readDir(outDir)) {
    if (!entry.name.endsWith(".js")) continue;
    const file = join(outDir, entry.name);
    const text = await Deno.readTextFile(file);
    await Deno.writeTextFile(
      file,
      text.replace(
        /\bimport\(("\.\/[^"]+\.js")\)/g,
        "import(new URL($1, import.meta.url).href)",
      ),
    );
  }
  return join(outDir, "main.js");
}
