/**
 * How a command is declared and its command line parsed, in one place for every
 * command: a {@link Command} names its arguments, every flag it takes (with the
 * `PERMAFROST_*` settings behind some of them) and an example; {@link parseCommand}
 * parses with `node:util`'s `parseArgs` (strict: an unknown flag is a usage error
 * with a "did you mean"); {@link helpText} prints all of it for `--help` and
 * `permafrost help <command>`.
 *
 * A command line of long flags, values and positionals only (what nearly every command
 * line is) is parsed here without `node:util`, to the same result; anything else (a
 * short or `--no-` flag, an unknown flag, a missing or doubtful value) goes to
 * `parseArgs`, loaded then, which parses it or says what is wrong. Importing `node:util`
 * up front would make every command bootstrap Node compatibility, ~6 ms of CPU.
 *
 * @module
 */
import { type ConfigTable, loadConfig, processEnv } from "../internal/config.ts";
import type { CliIo } from "./io.ts";
import { UsageError } from "./errors.ts";
import { requireNodeBuiltin } from "../internal/node_builtin.ts";

/** A flag of a command that no `PERMAFROST_*` setting backs. */
export interface Flag {
  /** Name without `--`. */
  readonly name: string;
  /** `string` takes a value, `boolean` does not. */
  readonly type: "string" | "boolean";
  /** What the value looks like in help (`N`, `START:END`, `a,b`). */
  readonly value?: string;
  /** One line of help. */
  readonly help: string;
  /** A one-letter alias (`h`). */
  readonly short?: string;
  /** May be given more than once (`--register a=x --register b=y`): its value is a list. */
  readonly multiple?: boolean;
}

/** A flag's value as parsed. */
export type FlagValue = string | boolean | string[] | undefined;

/** What a command's `run` gets: its positionals, flags and the settings resolved. */
export interface Parsed<S extends ConfigTable = ConfigTable> {
  /** Positional arguments. */
  readonly args: string[];
  /** Flags by name: strings, `true`/`false` for booleans, lists for `multiple`; absent when not given. */
  readonly flags: Readonly<Record<string, FlagValue>>;
  /** The settings table resolved (flag > environment variable > default). */
  readonly settings: ReturnType<typeof loadConfig<S>>;
}

/** One command (`freeze`) or subcommand (`cluster submit`). */
export interface Command<S extends ConfigTable = ConfigTable> {
  /** Its words, e.g. `freeze` or `cluster submit`. */
  readonly name: string;
  /** One line: what it does. */
  readonly summary: string;
  /** Its arguments, e.g. `<source> <archive>`. */
  readonly usage: string;
  /** How many positional arguments it takes. */
  readonly args: { readonly min: number; readonly max: number };
  /** Flags backed by `PERMAFROST_*` settings. */
  readonly settings?: S;
  /** Flags that are not settings. */
  readonly flags?: readonly Flag[];
  /** Longer help after the summary. */
  readonly details?: string;
  /** Example command lines (at least one). */
  readonly examples: readonly string[];
  /** Runs it; returns the exit code. */
  run(parsed: Parsed<S>, io: CliIo): Promise<number>;
}

/**
 * Declares a command (keeps its settings type for `run`).
 *
 * @param command The command.
 * @returns The same command.
 */
export function command<S extends ConfigTable>(command: Command<S>): Command<S> {
  return command;
}

/** Every flag a command accepts, settings included, plus `--help`. */
export function allFlags(command: Command): Flag[] {
  const fromSettings = Object.values(command.settings ?? {}).map((s): Flag => ({
    name: s.flag.slice(2),
    type: s.parse.boolean ? "boolean" : "string",
    value: s.parse.describe,
    help: s.description,
  }));
  return [
    ...fromSettings,
    ...(command.flags ?? []),
    { name: "help", type: "boolean", short: "h", help: "Show this help" },
  ];
}

/**
 * The edit distance of two short strings, counting a swap of two neighbours as one
 * edit (optimal string alignment), so `--prot` is one edit from `--port`.
 *
 * @param a One.
 * @param b The other.
 * @returns Insertions, deletions, substitutions and adjacent swaps from one to the other.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from(
    { length: a.length + 1 },
    (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The closest of `choices` to a mistyped word, when it is close enough to be a typo.
 *
 * @param word What was typed.
 * @param choices What exists.
 * @returns The suggestion, or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { didYouMean } from "./command.ts";
 * assert.equal(didYouMean("fraeze", ["freeze", "thaw"]), "freeze");
 * assert.equal(didYouMean("xyz", ["freeze", "thaw"]), undefined);
 * ```
 */
export function didYouMean(word: string, choices: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of choices) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}

/**
 * Parses a command's arguments: `--help` (returned as `help: true`, nothing else
 * checked), every flag declared, the positional count, then the settings (flag >
 * `PERMAFROST_*` variable > default).
 *
 * @param command The command.
 * @param argv Its arguments.
 * @param io For the environment the settings read.
 * @returns The parse, or `{ help: true }`.
 * @throws {UsageError} for an unknown flag (with a suggestion), a missing value, a
 * wrong number of arguments; {ConfigError} for a bad setting.
 */
export function parseCommand<S extends ConfigTable>(
  command: Command<S>,
  argv: readonly string[],
  io: Pick<CliIo, "env">,
): Parsed<S> | { help: true } {
  const flags = allFlags(command as unknown as Command);
  const options = Object.fromEntries(
    flags.map((f) => [f.name, {
      type: f.type,
      ...(f.short ? { short: f.short } : {}),
      ...(f.multiple ? { multiple: true } : {}),
    }]),
  );
  const args = joinNegativeValues(argv, flags);
  let { values, positionals } = plainParse(args, flags) ?? { values: null, positionals: [] };
  if (values === null) {
    try {
      ({ values, positionals } = nodeUtil().parseArgs({
        args,
        options,
        strict: true,
        allowPositionals: true,
        allowNegative: true,
      }) as { values: Record<string, FlagValue>; positionals: string[] });
    } catch (err) {
      throw usageFromNode(err, command as unknown as Command, flags);
    }
  }
  if (values.help === true) return { help: true };
  const { min, max } = command.args;
  if (positionals.length < min || positionals.length > max) {
    const got = positionals.length === 0 ? "nothing" : positionals.map((a) => `'${a}'`).join(" ");
    throw new UsageError(`'${command.name}' takes ${command.usage || "no arguments"}, got ${got}`);
  }
  const table = command.settings ?? ({} as S);
  const settingArgs = Object.values(table).flatMap((s) => {
    const v = values[s.flag.slice(2)];
    return v === undefined ? [] : v === true ? [s.flag] : [`${s.flag}=${String(v)}`];
  });
  const settings = loadConfig(table, { args: settingArgs, env: io.env ?? processEnv(table) });
  return { args: positionals, flags: values, settings };
}

/** `node:util`, loaded the first time a command line needs its `parseArgs`. */
function nodeUtil(): typeof import("node:util") {
  return requireNodeBuiltin<typeof import("node:util")>("node:util");
}

/**
 * What `parseArgs` (strict, positionals and `--no-` allowed) returns for `args`, when
 * they are only positionals, `--` and declared long flags (`--name`, `--name=value`,
 * `--name value` with a value that does not start with `-`); null for anything else,
 * which `parseArgs` then parses or refuses with its own message. Values come in a
 * null-prototype object, as `parseArgs` gives them. Exported for its test.
 *
 * @param args The arguments (after {@link joinNegativeValues}).
 * @param flags The command's flags.
 * @returns The flags' values and the positionals, or null.
 */
export function plainParse(
  args: readonly string[],
  flags: readonly Flag[],
): { values: Record<string, FlagValue>; positionals: string[] } | null {
  const byName = new Map(flags.map((f) => [f.name, f]));
  const values = Object.create(null) as Record<string, FlagValue>;
  const positionals: string[] = [];
  const store = (flag: Flag, value: string | boolean) => {
    if (!flag.multiple) values[flag.name] = value;
    else ((values[flag.name] ??= []) as (string | boolean)[]).push(value);
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    if (!arg.startsWith("--")) return null;
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const flag = byName.get(name);
    if (flag === undefined || name.startsWith("no-")) return null;
    if (flag.type === "boolean") {
      if (eq >= 0) return null;
      store(flag, true);
    } else if (eq >= 0) {
      store(flag, arg.slice(eq + 1));
    } else {
      const next = args[i + 1];
      if (next === undefined || next.startsWith("-")) return null;
      store(flag, next);
      i++;
    }
  }
  return { values, positionals };
}

/**
 * `--rows -5` as `--rows=-5`: `parseArgs` takes a value that starts with a dash for a
 * flag only in the `=` form, and a negative number is plainly a value (which the
 * flag's own check then judges).
 */
function joinNegativeValues(argv: readonly string[], flags: readonly Flag[]): string[] {
  const takesValue = new Set(flags.filter((f) => f.type === "string").map((f) => `--${f.name}`));
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (takesValue.has(arg) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

function usageFromNode(err: unknown, command: Command, flags: readonly Flag[]): Error {
  const code = (err as { code?: string })?.code;
  const text = err instanceof Error ? err.message : String(err);
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const typed = /'(-[^']*)'/.exec(text)?.[1] ?? "";
    const name = typed.replace(/^-+/, "").split("=")[0]!;
    const hint = didYouMean(name, flags.map((f) => f.name));
    return new UsageError(
      `'${command.name}' has no flag '${typed}'${
        hint ? `; did you mean --${hint}?` : `; see 'permafrost ${command.name} --help'`
      }`,
    );
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const flag = /'(--?[A-Za-z0-9-]+)/.exec(text)?.[1] ?? "";
    const f = flags.find((x) => `--${x.name}` === flag || `-${x.short}` === flag);
    if (f?.type === "boolean") {
      return new UsageError(
        `${flag} takes no value (it is on when given; --no-${f.name} turns it off)`,
      );
    }
    return new UsageError(
      /ambiguous/.test(text)
        ? `${flag} is followed by something that looks like a flag; if it is the value, write ${flag}=VALUE`
        : `${flag} needs a value${f?.value ? ` (${f.value})` : ""}`,
    );
  }
  return err instanceof Error ? err : new UsageError(text);
}

/**
 * The help of a command: usage, what it does, every flag it takes (with the setting's
 * environment variable and default), and examples.
 *
 * @param command The command.
 * @returns The text.
 */
export function helpText(command: Command): string {
  const rows: { flag: string; lines: string[] }[] = [];
  for (const s of Object.values(command.settings ?? {})) {
    const placeholder = settingPlaceholder(s.parse.describe);
    const accepts = s.parse.boolean || !SAYS_MORE.has(placeholder) ||
        /^an? (non-empty )?string$/.test(s.parse.describe)
      ? ""
      : `: ${s.parse.describe}`;
    const def = s.default === undefined ? "required" : `default ${showDefault(s.default)}`;
    rows.push({
      flag: s.parse.boolean ? s.flag : `${s.flag} <${placeholder}>`,
      lines: [`${s.description}${accepts}`, `[${s.env}; ${def}]`],
    });
  }
  for (const f of command.flags ?? []) {
    rows.push({
      flag: f.type === "boolean" ? `--${f.name}` : `--${f.name} <${f.value ?? "VALUE"}>`,
      lines: [f.help],
    });
  }
  rows.push({ flag: "-h, --help", lines: ["Show this help"] });
  const lines = [
    `Usage: permafrost ${command.name}${command.usage ? ` ${command.usage}` : ""} [options]`,
    "",
    command.summary,
  ];
  if (command.details) lines.push("", ...wrap(command.details, 88));
  lines.push("", "Options:");
  for (const row of rows) {
    lines.push(`  ${row.flag}`, ...row.lines.flatMap((l) => wrap(l, 82)).map((l) => `      ${l}`));
  }
  lines.push("", "Examples:", ...command.examples.map((e) => `  ${e}`));
  return lines.join("\n");
}

/** Placeholders whose parser's description says more than the placeholder does. */
const SAYS_MORE: ReadonlySet<string> = new Set(["N", "VALUE", "DURATION"]);

/** The short placeholder of a setting's value: `zstd|lzma2`, `N`, `PORT`, `URL`, `PATH`. */
function settingPlaceholder(describe: string): string {
  const choices = /^one of (.+)$/.exec(describe);
  if (choices) return choices[1]!.split(", ").join("|");
  if (/^an? (integer|number|thread count)/.test(describe)) return "N";
  if (/^a port/.test(describe)) return "PORT";
  if (/URL/.test(describe)) return "URL";
  if (/path/.test(describe)) return "PATH";
  if (/^seconds/.test(describe)) return "DURATION";
  return "VALUE";
}

/** Splits text into lines of at most `width` characters, at spaces. */
function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line !== "" && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") out.push(line);
  return out;
}

function showDefault(v: unknown): string {
  if (v === "" || v === null) return "none";
  if (typeof v === "object") {
    return Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}=${String(x)}`)
      .join(",");
  }
  return String(v);
}
