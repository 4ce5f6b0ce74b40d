/**
 * `deno task compile`: builds the standalone `permafrost` binary with `deno compile`
 * (the CLI with its permissions baked in; the release workflow runs it for Linux
 * x64/arm64, macOS x64/arm64 and Windows x64). `deno compile` downloads the Deno
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
import { STORAGE_ENV } from "../storage/env.ts";
import { lazyModules } from "./lazy.ts";

/** The permissions the binary runs with: `deno task cli`'s. */
export const COMPILED_PERMISSIONS: readonly string[] = Object.freeze([
  "--allow-read",
  "--allow-write",
  `--allow-env=${["PERMAFROST_*", ...STORAGE_ENV].join(",")}`,
  "--allow-ffi",
  "--allow-net",
  "--allow-run=zpaq",
]);

if (import.meta.main) {
  const { flags } = parseArgs(Deno.args, { string: ["target", "output"] });
  const target = typeof flags.target === "string" ? flags.target : undefined;
  const output = typeof flags.output === "string"
    ? flags.output
    : `dist/permafrost${target ? `-${target}` : ""}${target?.includes("windows") ? ".exe" : ""}`;
  const args = [
    "compile",
    "--frozen",
    ...COMPILED_PERMISSIONS,
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
