/**
 * `deno task compile`: builds the standalone `permafrost` binary with `deno compile`
 * (the CLI with `deno task cli`'s permissions and V8 flags baked in; the release
 * workflow runs it for Linux x64/arm64, macOS x64/arm64 and Windows x64). `deno compile` downloads the Deno
 * runtime for the target from dl.deno.land; where that host cannot be reached (our
 * build machines) this says so in one line and exits 1, instead of a stack of causes.
 * Any other failure is passed on as `deno compile` printed it. The modules the CLI loads
 * lazily (`cli/lazy.ts`) are hidden from the module graph on purpose, so each is named
 * with `--include`.
 *
 *   deno task compile [--target x86_64-unknown-linux-gnu] [--output dist/permafrost]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "../internal/config.ts";
import { lazyModules } from "./lazy.ts";

/**
 * The flags `deno task cli` runs `main.ts` with (permissions and V8 flags), from a
 * `deno.json`'s text, split as a shell would (single quotes only): the compiled binary
 * bakes in the same, and the benches run the CLI with them.
 *
 * @param denoJson The text of a `deno.json` whose `cli` task is `deno run -q … main.ts`.
 * @returns The flags between `deno run -q` and `main.ts`.
 * @throws {Error} when the task has another shape.
 */
export function cliTaskFlags(denoJson: string): string[] {
  const task = (JSON.parse(denoJson) as { tasks?: Record<string, unknown> }).tasks?.cli;
  const line = typeof task === "string"
    ? task
    : String((task as { command?: unknown } | undefined)?.command ?? "");
  const words = shellWords(line);
  if (words.slice(0, 3).join(" ") !== "deno run -q" || words.at(-1) !== "main.ts") {
    throw new Error(`deno task cli is not 'deno run -q … main.ts': ${line}`);
  }
  return words.slice(3, -1);
}

/**
 * The words of a command line as a shell splits it, for the lines `deno.json` and the
 * shims `deno install` writes hold: on whitespace, single quotes kept together and removed.
 *
 * @param line The command line.
 * @returns Its words.
 */
export function shellWords(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

if (import.meta.main) {
  const { flags } = parseArgs(Deno.args, { string: ["target", "output"] });
  const target = typeof flags.target === "string" ? flags.target : undefined;
  const output = typeof flags.output === "string"
    ? flags.output
    : `dist/permafrost${target ? `-${target}` : ""}${target?.includes("windows") ? ".exe" : ""}`;
  const args = [
    "compile",
    "--frozen",
    ...cliTaskFlags(await Deno.readTextFile(new URL("../deno.json", import.meta.url))),
    ...(target ? ["--target", target] : []),
    ...lazyModules().flatMap((url) => ["--include", fileURLToPath(url)]),
    // The zpaqwasm codec reads its WebAssembly module from beside its source file.
    "--include",
    fileURLToPath(new URL("../codecs/zpaq_wasm/zpaq.wasm", import.meta.url)),
    "--output",
    output,
    "main.ts",
  ];
  const out = await new Deno.Command(Deno.execPath(), { args, stdout: "inherit", stderr: "piped" })
    .output();
  const err = new TextDecoder().decode(out.stderr);
  if (out.code === 0) {
    Deno.stderr.writeSync(new TextEncoder().encode(`compiled ${output}\n`));
    Deno.exit(0);
  }
  const runtime = /(https:\/\/dl\.deno\.land\/\S+)/.exec(err);
  if (runtime && /error sending request|dns error|Connect/.test(err)) {
    Deno.stderr.writeSync(
      new TextEncoder().encode(
        `deno task compile: cannot download the Deno runtime (${
          runtime[1]
        }) from this machine; run it where dl.deno.land is reachable (the release workflow does)\n`,
      ),
    );
  } else {
    Deno.stderr.writeSync(new TextEncoder().encode(err));
  }
  Deno.exit(1);
}
