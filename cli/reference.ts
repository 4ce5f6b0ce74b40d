/**
 * The command reference, `cli/REFERENCE.md`, written from the commands' own
 * declarations (the same ones `--help` prints), so it cannot drift from the code:
 * `deno task docs` rewrites it and a test fails when it is stale.
 *
 * @module
 */
import { allFlags, type Command } from "./command.ts";
import { allCommands } from "./run.ts";

/** Where the reference lives, beside the code. */
export const REFERENCE_FILE = new URL("./REFERENCE.md", import.meta.url);

/** Text for a table cell: pipes escaped, and `<`, which markdown would take for HTML. */
function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("<", "&lt;").replaceAll("\n", " ");
}

/** Code for a table cell (backticks keep `<` literal; pipes still need escaping). */
function code(text: string): string {
  return `\`${text.replaceAll("|", "\\|")}\``;
}

function showDefault(v: unknown): string {
  if (v === "" || v === null) return "none";
  if (typeof v === "object") {
    return Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}=${String(x)}`)
      .join(",");
  }
  return String(v);
}

function commandSection(command: Command): string[] {
  const lines = [
    `### \`permafrost ${command.name}${command.usage ? ` ${command.usage}` : ""}\``,
    "",
    cell(command.summary),
  ];
  if (command.details) lines.push("", cell(command.details));
  lines.push("", "| flag | variable | default | meaning |", "| --- | --- | --- | --- |");
  const settings = Object.values(command.settings ?? {});
  for (const s of settings) {
    const value = s.parse.boolean ? "" : ` <${s.parse.describe}>`;
    const def = s.default === undefined ? "required" : code(showDefault(s.default));
    lines.push(
      `| ${code(s.flag + value)} | \`${s.env}\` | ${def} | ${cell(s.description)} |`,
    );
  }
  const fromSettings = new Set(settings.map((s) => s.flag.slice(2)));
  for (const f of allFlags(command)) {
    if (fromSettings.has(f.name) || f.name === "help") continue;
    const value = f.type === "boolean" ? "" : ` <${f.value ?? "VALUE"}>`;
    lines.push(`| ${code(`--${f.name}${value}`)} | | | ${cell(f.help)} |`);
  }
  lines.push("", "```sh", ...command.examples, "```");
  return lines;
}

/**
 * The reference as markdown: every command, by family, with every flag, its
 * `PERMAFROST_*` variable and default, and examples.
 *
 * @returns The text of `cli/REFERENCE.md`.
 */
export async function referenceMarkdown(): Promise<string> {
  const lines = [
    "# Command reference",
    "",
    "Written by `deno task docs` from the commands' declarations in `cli/` (what",
    "`permafrost <command> --help` prints); do not edit by hand. Settings come from a flag, then",
    "its `PERMAFROST_*` variable, then the default. Exit codes: 0 success, 1 failure, 2 usage error.",
  ];
  for (const { title, commands } of await allCommands()) {
    lines.push("", `## ${title}`);
    for (const c of commands) lines.push("", ...commandSection(c));
  }
  return lines.join("\n") + "\n";
}

if (import.meta.main) {
  await Deno.writeTextFile(REFERENCE_FILE, await referenceMarkdown());
}
