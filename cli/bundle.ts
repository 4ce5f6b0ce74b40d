/**
 * `deno task install`: builds the `permafrost` command as one bundled image and
 * installs it with `deno install`. From source, `deno run main.ts` loads ~70
 * TypeScript modules, each as Deno's emitted JS with an inline source map twice the
 * size of its code; bundled, a 10-row slice loads ~50 chunks of plain JS (342 kB), and
 * its work beyond start falls from ~26–31 ms to ~18–23 (`bench/start_bench.ts`
 * measures both forms). `deno task cli` keeps running the working tree's source.
 *
 *   deno task install [--root DIR] [--name permafrost] [--dist DIR]
 *
 * A build is a folder of its own, `dist/cli-<time>/` (`--dist` for another place than the
 * checkout's `dist/`), so a failed build leaves the installed command as it was. Older
 * builds are kept (a server started from one still loads modules from it) and listed. A
 * build holds:
 * - `source/`: a copy of the checkout's runtime files, which the bundle's Worker
 *   scripts, WebAssembly files, spawned processes and `deno.json` (import map, lock)
 *   come from, so a later `git pull` changes nothing until the next install;
 * - `main.js` and its chunks: the bundle, built from the checkout's modules in four steps.
 *   1. Every import of one of our modules by a computed specifier (how the CLI keeps a
 *      quick command from loading the servers, and Deno from reading every predictor)
 *      is made literal, so the bundler follows it into a chunk.
 *   2. Every other `import.meta.url` becomes the module's URL in `source/`.
 *   3. `deno bundle --code-splitting`, npm and Node modules left to the import map.
 *   4. The chunks' literal dynamic imports become computed again: Deno reads every
 *      module a literal `import()` names when it loads the importer.
 *
 * The build refuses (throws) rather than guess: a computed import of ours it cannot
 * make literal would load a second copy of a module beside the bundled one, and a
 * chunk other than `main.js` that checks `import.meta.main` would not know it is not
 * the program.
 *
 * @module
 */
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "../internal/config.ts";
import { cliTaskFlags } from "./compile.ts";

/** Folders that hold nothing the CLI runs (and every folder whose name starts with a dot). */
const SKIPPED = new Set(["bench", "tests", "node_modules", "dist", "coverage"]);

/**
 * The checkout's own files at its top (a user's data may sit beside them, e.g. the
 * README tour's `flights.pf`, and is not copied).
 */
const TOP_FILES = /^(?:[\w.-]+\.(?:ts|md)|deno\.json|deno\.lock)$/;

/** The build tools beside the CLI: `main.ts` never loads them, so they are not bundled. */
const BUILD_TOOLS = new Set([join("cli", "bundle.ts"), join("cli", "compile.ts")]);

/** `import(new URL(<literal>, import.meta.url).href)`, on one line or several. */
const INLINE_URL_IMPORT =
  /import\(\s*new URL\(\s*("[^"]+"),\s*import\.meta\.url,?\s*\)\.href,?\s*\)/g;

/** `const NAME = new URL(<literal>, import.meta.url);`, later `import(NAME.href)`. */
const NAMED_URL = /const (\w+) = new URL\(\s*("[^"]+"),\s*import\.meta\.url,?\s*\);/g;

/** `cli/lazy.ts`'s loader, which looks its module up in a table of paths. */
const LAZY_LOADER = "  const url = new URL(PATHS[name], import.meta.url);\n" +
  "  return await import(url.href) as LazyModules[K];";

/** A build: where its bundle starts and the `deno.json` to run it with. */
export interface Bundle {
  /** The bundle's entry (`main.js`). */
  entry: string;
  /** The copied `deno.json` (import map and lock for the npm modules). */
  config: string;
}

/** The checkout's runtime files (paths relative to it): no tests, benches or builds. */
async function* runtimeFiles(root: string, dir = root): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) {
      if (!SKIPPED.has(entry.name) && !entry.name.startsWith(".")) {
        yield* runtimeFiles(root, path);
      }
    } else if (entry.isFile && !entry.name.endsWith("_test.ts")) {
      if (dir !== root || TOP_FILES.test(entry.name)) yield relative(root, path);
    }
  }
}

/** `cli/lazy.ts` with its table of paths turned into a table of literal imports. */
function literalLazyLoader(text: string): string {
  const tables = text.slice(0, text.indexOf("const LOADED_ELSEWHERE"));
  const entries = [...tables.matchAll(/^ {2}(\w+): ("\.\.?\/[^"]+\.ts"),$/gm)];
  if (entries.length === 0 || !text.includes(LAZY_LOADER)) {
    throw new Error("cli/lazy.ts: its loader is not the form cli/bundle.ts rewrites");
  }
  const loaders = entries.map(([, name, path]) => `  ${name}: () => import(${path}),\n`);
  return text.replace(LAZY_LOADER, "  return await LOADERS[name]() as LazyModules[K];") +
    `\nconst LOADERS: Record<string, () => Promise<unknown>> = {\n${loaders.join("")}};\n`;
}

/**
 * One module's text made bundleable: our computed imports literal, every other
 * `import.meta.url` the module's URL under `sourceRoot`.
 *
 * @param text The module's TypeScript.
 * @param path Its path relative to the checkout.
 * @param sourceRoot Where the build's copy of the checkout's runtime files is.
 * @returns The text to bundle.
 * @throws {Error} where a computed import is left that this cannot make literal.
 */
export function bundleable(text: string, path: string, sourceRoot: string): string {
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
    throw new Error(`${path}: computed import(${computed.join(", ")}) left; make it literal`);
  }
  const url = JSON.stringify(pathToFileURL(join(sourceRoot, path)).href);
  return out.replaceAll("import.meta.url", url);
}

/** The names the import map gives, each kept out of the bundle with its subpaths. */
async function importMapNames(config: string): Promise<string[]> {
  const json = JSON.parse(await Deno.readTextFile(config)) as {
    imports?: Record<string, string>;
  };
  return Object.keys(json.imports ?? {}).flatMap((name) => [name, `${name}/*`]);
}

/**
 * Builds the bundled CLI of `checkout` into `outDir`, which must not exist yet.
 *
 * @param checkout A checkout of Permafrost (its `main.ts` and `deno.json`).
 * @param outDir Where the build goes.
 * @returns Its entry and the `deno.json` to run it with.
 * @throws {Error} where the build cannot be made as described above.
 */
export async function bundleCli(checkout: string, outDir: string): Promise<Bundle> {
  const source = join(outDir, "source");
  const stage = await Deno.makeTempDir({ prefix: "permafrost-bundle-" });
  try {
    await Deno.mkdir(outDir, { recursive: false });
    for await (const path of runtimeFiles(checkout)) {
      await Deno.mkdir(join(source, dirname(path)), { recursive: true });
      if (!path.endsWith(".ts") || path.endsWith(".d.ts") || BUILD_TOOLS.has(path)) {
        await Deno.copyFile(join(checkout, path), join(source, path));
        continue;
      }
      const text = await Deno.readTextFile(join(checkout, path));
      await Deno.writeTextFile(join(source, path), text);
      await Deno.mkdir(join(stage, dirname(path)), { recursive: true });
      await Deno.writeTextFile(join(stage, path), bundleable(text, path, source));
    }
    for (const file of ["deno.json", "deno.lock"]) {
      await Deno.copyFile(join(checkout, file), join(stage, file));
    }
    const external = ["npm:*", "node:*", ...await importMapNames(join(checkout, "deno.json"))];
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
    if (!entry.isFile || !entry.name.endsWith(".js")) continue;
    const file = join(outDir, entry.name);
    const text = await Deno.readTextFile(file);
    // Code that asks whether its module is the program runs only from main.ts.
    if (entry.name !== "main.js" && text.includes("import.meta.main")) {
      throw new Error(`${entry.name}: bundles code that checks import.meta.main`);
    }
    await Deno.writeTextFile(
      file,
      text.replace(/\bimport\(("\.\/[^"]+\.js")\)/g, "import(new URL($1, import.meta.url).href)"),
    );
  }
  return { entry: join(outDir, "main.js"), config: join(source, "deno.json") };
}

/**
 * The flags the installed command runs with: `deno task cli`'s, less `INIT_CWD` in
 * `--allow-env` (the task runner sets it; the installed command works where it is typed).
 *
 * @param denoJson The text of the checkout's `deno.json`.
 * @returns The flags, for `deno install`.
 */
export function installFlags(denoJson: string): string[] {
  const env = "--allow-env=";
  return cliTaskFlags(denoJson).map((flag) =>
    flag.startsWith(env)
      ? env + flag.slice(env.length).split(",").filter((name) => name !== "INIT_CWD").join(",")
      : flag
  );
}

/** A build folder's name: its time, so that builds sort and never collide. */
function buildName(): string {
  return `cli-${new Date().toISOString().replace(/[-:.]/g, "").slice(0, 17)}`;
}

if (import.meta.main) {
  const { flags } = parseArgs(Deno.args, { string: ["root", "name", "dist"] });
  const checkout = fileURLToPath(new URL("..", import.meta.url));
  const dist = typeof flags.dist === "string" ? resolve(flags.dist) : join(checkout, "dist");
  await Deno.mkdir(dist, { recursive: true });
  const current = buildName();
  const build = join(dist, current);
  const name = typeof flags.name === "string" ? flags.name : "permafrost";
  const root = typeof flags.root === "string" ? ["--root", flags.root] : [];
  let installed = false;
  try {
    const bundle = await bundleCli(checkout, build);
    const install = await new Deno.Command(Deno.execPath(), {
      args: ["install", "-g", "-f", "-n", name, ...root, "--config", bundle.config]
        .concat(installFlags(await Deno.readTextFile(join(checkout, "deno.json"))))
        .concat([bundle.entry]),
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    installed = install.success;
    if (!installed) Deno.exitCode = install.code;
  } finally {
    if (!installed) await Deno.remove(build, { recursive: true }).catch(() => {});
  }
  if (installed) {
    // Older builds stay: a server or a long thaw started from one still loads its modules
    // (and Worker scripts) from it.
    const older: string[] = [];
    for await (const entry of Deno.readDir(dist)) {
      if (entry.isDirectory && /^cli-\d/.test(entry.name) && entry.name !== current) {
        older.push(join(dist, entry.name));
      }
    }
    const note = older.length === 0
      ? ""
      : `; ${older.length} older build(s) in ${dist} can go once no permafrost process started ` +
        "before this install runs";
    Deno.stderr.writeSync(new TextEncoder().encode(`${name} runs ${build}${note}\n`));
  }
}
