/**
 * The router of the `permafrost` command: finds the command the words name (`freeze`,
 * `cluster submit`), parses its flags, runs it and turns a failure into one line and
 * an exit code (0 success, 1 failure, 2 usage error). `--version`, `help`,
 * `help <command>`, `<command> --help` and "did you mean" for a mistyped command live
 * here. A family's module is loaded (`lazy.ts`) only when one of its commands runs, so a
 * quick command does not pay for the servers' imports.
 *
 * @module
 */
import { version } from "../internal/version.ts";
import { type Command, didYouMean, helpText, parseCommand } from "./command.ts";
import { describeFailure, UsageError } from "./errors.ts";
import { type CliIo, processIo } from "./io.ts";
import { loadModule } from "./lazy.ts";

/** A group of commands, loaded together. */
interface Family {
  /** Heading in the top-level help. */
  readonly title: string;
  /** The first words of its commands. */
  readonly words: readonly string[];
  /** Its commands. */
  load(): Promise<readonly Command[]>;
}

const FAMILIES: readonly Family[] = [
  {
    title: "Archives",
    words: ["freeze", "thaw", "audit", "verify", "peek", "append", "diff"],
    load: async () => (await loadModule("archiveCommands")).ARCHIVE_COMMANDS,
  },
  {
    title: "Queries",
    words: ["sql"],
    load: async () => [(await loadModule("queryCommands")).sqlCommand],
  },
  {
    title: "Object storage",
    words: ["storage"],
    load: async () => (await loadModule("storageCommands")).STORAGE_COMMANDS,
  },
  {
    title: "Servers",
    words: ["master", "worker", "catalog"],
    load: async () => (await loadModule("serverCommands")).SERVER_COMMANDS,
  },
  {
    title: "Catalog client",
    words: ["catalog"],
    load: async () => (await loadModule("catalogCommands")).CATALOG_CLIENT_COMMANDS,
  },
  {
    title: "Try it on this machine",
    words: ["start"],
    load: async () => [(await loadModule("startCommand")).startCommand],
  },
  {
    title: "Cluster client",
    words: ["cluster"],
    load: async () => (await loadModule("clusterCommands")).CLUSTER_COMMANDS,
  },
  {
    title: "Users and tokens",
    words: ["cluster"],
    load: async () => (await loadModule("userCommands")).USER_COMMANDS,
  },
];

const TOP_WORDS = [...new Set(FAMILIES.flatMap((f) => f.words))];
const HELP_FLAGS = new Set(["--help", "-h"]);
const VERSION_FLAGS = new Set(["--version", "-V", "version"]);

/** Every command whose first word is `word`. */
async function commandsOf(word: string): Promise<Command[]> {
  const families = FAMILIES.filter((f) => f.words.includes(word));
  const lists = await Promise.all(families.map((f) => f.load()));
  return lists.flat().filter((c) => c.name.split(" ")[0] === word);
}

/**
 * Every command, family by family, in the order of the top-level help.
 *
 * @returns The commands with the title of their family.
 */
export async function allCommands(): Promise<{ title: string; commands: readonly Command[] }[]> {
  return await Promise.all(
    FAMILIES.map(async (f) => ({ title: f.title, commands: await f.load() })),
  );
}

/** The top-level help: every command with its summary, by family. */
async function topHelp(): Promise<string> {
  const lines = [
    `permafrost ${version()}: freezes tables into small checksummed archives and thaws them back.`,
    "",
    "Usage: permafrost <command> [options]",
    "       permafrost <command> --help     its arguments, every flag and examples",
    "       permafrost --version",
  ];
  for (const { title, commands } of await allCommands()) {
    const width = Math.max(...commands.map((c) => c.name.length));
    lines.push("", `${title}:`);
    for (const c of commands) lines.push(`  ${c.name.padEnd(width)}  ${c.summary}`);
  }
  lines.push(
    "",
    "Settings come from flags, then PERMAFROST_* variables, then defaults.",
    "Exit codes: 0 success, 1 failure, 2 usage error.",
  );
  return lines.join("\n");
}

/** The help of a family with subcommands (`cluster`, `catalog`). */
function familyHelp(word: string, commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `Usage: permafrost ${word} <command> [options]`,
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    `See 'permafrost ${word} <command> --help' for a command's flags.`,
  ].join("\n");
}

/**
 * Finds the command `words` name.
 *
 * @returns The command and the arguments after its name, or a help text to print
 * (`exit` 0 when help was asked for, 2 when the command was incomplete).
 * @throws {UsageError} for an unknown command, with a suggestion.
 */
async function resolve(
  words: readonly string[],
): Promise<{ command: Command; rest: string[] } | { help: string; exit: number }> {
  const [first, ...rest] = words;
  if (first === undefined) return { help: await topHelp(), exit: 2 };
  const commands = await commandsOf(first);
  if (commands.length === 0) {
    const hint = didYouMean(first, TOP_WORDS);
    throw new UsageError(
      `unknown command '${first}'${
        hint ? `; did you mean '${hint}'?` : ""
      } (see 'permafrost help' for every command)`,
    );
  }
  const single = commands.find((c) => c.name === first);
  if (single) return { command: single, rest };
  const [second, ...more] = rest;
  if (second === undefined || HELP_FLAGS.has(second) || second === "help") {
    return { help: familyHelp(first, commands), exit: second === undefined ? 2 : 0 };
  }
  const found = commands.find((c) => c.name === `${first} ${second}`);
  if (found) return { command: found, rest: more };
  const hint = didYouMean(second, commands.map((c) => c.name.split(" ")[1]!));
  throw new UsageError(
    `'${first}' has no command '${second}'${
      hint ? `; did you mean '${first} ${hint}'?` : ""
    } (see 'permafrost ${first} --help')`,
  );
}

/**
 * Runs one `permafrost` invocation.
 *
 * @param args The arguments, without the program name.
 * @param io Where output goes and what the commands read (default: the process's).
 * @returns The exit code: 0 success, 1 failure, 2 usage error.
 */
export async function run(args: readonly string[], io: CliIo = processIo()): Promise<number> {
  const [first] = args;
  if (first !== undefined && VERSION_FLAGS.has(first) && args.length === 1) {
    io.out(`permafrost ${version()}`);
    return 0;
  }
  let name = "";
  try {
    if (first === "help" || (first !== undefined && HELP_FLAGS.has(first))) {
      const asked = args.slice(1);
      if (asked.length === 0) {
        io.out(await topHelp());
        return 0;
      }
      const found = await resolve(asked);
      io.out("help" in found ? found.help : helpText(found.command));
      return 0;
    }
    const found = await resolve(args);
    if ("help" in found) {
      (found.exit === 0 ? io.out : io.err)(found.help);
      return found.exit;
    }
    const { command, rest } = found;
    name = command.name;
    const parsed = parseCommand(command, rest, io);
    if ("help" in parsed) {
      io.out(helpText(command));
      return 0;
    }
    return await command.run(parsed, io);
  } catch (err) {
    const failure = describeFailure(err, name);
    io.err(failure.text);
    return failure.code;
  }
}
