/**
 * The one config loader. Each process declares a typed table of its settings (key,
 * flag, `PERMAFROST_*` env name, default, parser); {@link loadConfig} resolves each one
 * with the precedence flag > environment variable > default and returns a frozen
 * object. A bad value throws {@link ConfigError} naming both the flag and the env
 * var, so a process fails at startup, not halfway through its work.
 *
 * Also holds the small argv parser ({@link parseArgs}: `--k v`, `--k=v`, booleans,
 * `--no-k`, `--`), because `@std/cli` lives on JSR, which we cannot reach.
 *
 * Nothing else in the project reads `Deno.args` or `Deno.env`: the caller passes
 * `args` and `env` in. {@link processEnv} is the one reader of the environment. It
 * reads only the variables a table names, one `Deno.env.get` each, because Deno 2
 * grants `--allow-env=PERMAFROST_*` (a prefix wildcard) for `Deno.env.get` but
 * `Deno.env.toObject()` needs the bare `--allow-env`.
 *
 * Leaf module: imports nothing from the project but `errors.ts`.
 *
 * @module
 */
import { PermafrostError } from "./errors.ts";
import { LOG_FORMATS, LOG_LEVELS, type LogFormatChoice, type LogLevel } from "./log.ts";

/** Closed list of config error codes. Never rename or reuse one. */
export type ConfigErrorCode = "BAD_CONFIG" | "UNKNOWN_FLAG";

/**
 * A bad command line or configuration value: an unknown flag, a missing value, a
 * value its parser refuses. CLIs exit with code 2 on it.
 *
 * @example Check the code of a config error
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConfigError } from "./config.ts";
 * assert.equal(new ConfigError("UNKNOWN_FLAG", "Unknown flag '--prot'").code, "UNKNOWN_FLAG");
 * ```
 */
export class ConfigError extends PermafrostError<ConfigErrorCode> {
  /** Always `"ConfigError"`. */
  override name = "ConfigError";
}

// ---------------------------------------------------------------------------
// argv

/** Options of {@link parseArgs}. */
export interface ParseArgsOptions {
  /** Flags (without `--`) that take no value; `--no-NAME` sets them false. */
  boolean?: readonly string[];
  /** Flags (without `--`) that take a value (`--k v` or `--k=v`). */
  string?: readonly string[];
  /** One-letter aliases, e.g. `{ h: "help" }` makes `-h` mean `--help`. */
  alias?: Readonly<Record<string, string>>;
}

/** What {@link parseArgs} returns. */
export interface ParsedArgs {
  /** Positional arguments, in order (everything after `--` included). */
  _: string[];
  /** Flags by name (without `--`): `true`/`false` for booleans, the last value for strings. */
  flags: Record<string, string | boolean>;
}

/**
 * Parses a command line. Strict: a flag not declared in `boolean` or `string` is an
 * error, so a typo never passes silently.
 *
 * Accepts `--k v`, `--k=v`, boolean `--k`, `--k=true|false`, `--no-k`, one-letter
 * aliases (`-h`), and `--` (everything after it is positional). A string flag
 * repeated keeps its last value.
 *
 * @param argv The arguments (e.g. the part of `Deno.args` after a subcommand).
 * @param options Which flags exist and what they take.
 * @returns Positionals and flags.
 * @throws {ConfigError} UNKNOWN_FLAG for an undeclared flag; BAD_CONFIG for a string
 * flag without a value or a boolean given a value other than true/false.
 *
 * @example Parse flags and positionals
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseArgs } from "./config.ts";
 * const parsed = parseArgs(["serve", "--port", "0", "--verbose", "--", "--x"], {
 *   boolean: ["verbose"],
 *   string: ["port"],
 * });
 * assert.deepEqual(parsed, { _: ["serve", "--x"], flags: { port: "0", verbose: true } });
 * ```
 */
export function parseArgs(argv: readonly string[], options: ParseArgsOptions = {}): ParsedArgs {
  const booleans = new Set(options.boolean ?? []);
  const strings = new Set(options.string ?? []);
  const alias = options.alias ?? {};
  const result: ParsedArgs = { _: [], flags: {} };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      result._.push(...argv.slice(i + 1));
      break;
    }
    let name: string;
    let inline: string | undefined;
    if (arg.startsWith("--") && arg.length > 2) {
      const eq = arg.indexOf("=");
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq === -1 ? undefined : arg.slice(eq + 1);
    } else if (/^-[A-Za-z]$/.test(arg)) {
      const long = alias[arg.slice(1)];
      if (long === undefined) throw unknownFlag(arg, booleans, strings);
      name = long;
    } else {
      result._.push(arg);
      continue;
    }
    if (booleans.has(name)) {
      if (inline === undefined) result.flags[name] = true;
      else if (inline === "true" || inline === "false") result.flags[name] = inline === "true";
      else {
        throw new ConfigError(
          "BAD_CONFIG",
          `Invalid value for --${name}: expected true or false, got '${inline}'`,
        );
      }
    } else if (strings.has(name)) {
      if (inline !== undefined) {
        result.flags[name] = inline;
        continue;
      }
      const next = argv[i + 1];
      if (next === undefined || next.startsWith("--")) {
        throw new ConfigError("BAD_CONFIG", `Missing value for --${name}`);
      }
      result.flags[name] = next;
      i++;
    } else if (name.startsWith("no-") && booleans.has(name.slice(3)) && inline === undefined) {
      result.flags[name.slice(3)] = false;
    } else {
      throw unknownFlag(`--${name}`, booleans, strings);
    }
  }
  return result;
}

function unknownFlag(flag: string, booleans: Set<string>, strings: Set<string>): ConfigError {
  const known = [...booleans, ...strings].sort().map((f) => `--${f}`);
  return new ConfigError(
    "UNKNOWN_FLAG",
    `Unknown flag '${flag}'${known.length > 0 ? `; known flags: ${known.join(", ")}` : ""}`,
  );
}

// ---------------------------------------------------------------------------
// parsers

/** Turns one raw string (from a flag or an env var) into a typed value, or throws. */
export interface Parser<T> {
  /** What the parser accepts, for messages and help text (e.g. `integer 0..65535`). */
  readonly describe: string;
  /** True for switches: the flag takes no value on the command line. */
  readonly boolean?: boolean;
  /** True for secrets (keys, JWT secrets): an error never repeats the value. */
  readonly secret?: boolean;
  /**
   * Parses a raw value.
   *
   * @throws {Error} any error; the loader rewraps it as a `ConfigError` naming flag and env var.
   */
  parse(raw: string): T;
}

/**
 * An integer parser, optionally bounded.
 *
 * @param options Inclusive `min` and `max` (default: any safe integer).
 * @returns The parser.
 */
export function intParser(options: { min?: number; max?: number } = {}): Parser<number> {
  const min = options.min ?? Number.MIN_SAFE_INTEGER;
  const max = options.max ?? Number.MAX_SAFE_INTEGER;
  const describe = options.min === undefined && options.max === undefined
    ? "an integer"
    : `an integer ${options.min ?? ""}..${options.max ?? ""}`;
  return {
    describe,
    parse(raw) {
      const s = raw.trim().replaceAll("_", "");
      if (!/^[+-]?\d+$/.test(s)) throw new Error(`expected ${describe}`);
      const n = Number(s);
      if (!Number.isSafeInteger(n) || n < min || n > max) throw new Error(`expected ${describe}`);
      return n;
    },
  };
}

/**
 * A number parser (decimals allowed), optionally bounded.
 *
 * @param options Inclusive `min` and `max`.
 * @returns The parser.
 */
export function numberParser(options: { min?: number; max?: number } = {}): Parser<number> {
  const describe = options.min === undefined && options.max === undefined
    ? "a number"
    : `a number ${options.min ?? ""}..${options.max ?? ""}`;
  return {
    describe,
    parse(raw) {
      const s = raw.trim();
      const n = s === "" ? NaN : Number(s);
      if (!Number.isFinite(n)) throw new Error(`expected ${describe}`);
      if (options.min !== undefined && n < options.min) throw new Error(`expected ${describe}`);
      if (options.max !== undefined && n > options.max) throw new Error(`expected ${describe}`);
      return n;
    },
  };
}

/**
 * A TCP port parser: 0..65535, where 0 asks the OS for a free port.
 *
 * @returns The parser.
 */
export function portParser(): Parser<number> {
  const int = intParser({ min: 0, max: 65535 });
  return { describe: "a port 0..65535", parse: (raw) => int.parse(raw) };
}

/**
 * An absolute http(s) URL parser; the value keeps its text form without a trailing slash.
 *
 * @returns The parser.
 */
export function urlParser(): Parser<string> {
  return {
    describe: "an http(s) URL",
    parse(raw) {
      let url: URL;
      try {
        url = new URL(raw.trim());
      } catch {
        throw new Error("expected an http(s) URL");
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw new Error("expected an http(s) URL");
      }
      return url.href.replace(/\/+$/, "");
    },
  };
}

/**
 * A parser that accepts one of a fixed list of words.
 *
 * @param values The accepted values.
 * @returns The parser.
 */
export function enumParser<const T extends string>(values: readonly T[]): Parser<T> {
  const describe = `one of ${values.join(", ")}`;
  return {
    describe,
    parse(raw) {
      const v = raw.trim() as T;
      if (!values.includes(v)) throw new Error(`expected ${describe}`);
      return v;
    },
  };
}

/**
 * A string parser.
 *
 * @param options `nonEmpty` (default true) refuses an empty string.
 * @returns The parser.
 */
export function stringParser(options: { nonEmpty?: boolean } = {}): Parser<string> {
  const nonEmpty = options.nonEmpty ?? true;
  return {
    describe: nonEmpty ? "a non-empty string" : "a string",
    parse(raw) {
      if (nonEmpty && raw.trim() === "") throw new Error("expected a non-empty string");
      return raw;
    },
  };
}

/**
 * A boolean parser: `true/false`, `1/0`, `yes/no`, `on/off`. As a flag it is a
 * switch (`--x`, `--no-x`).
 *
 * @returns The parser.
 */
export function boolParser(): Parser<boolean> {
  return {
    describe: "true or false",
    boolean: true,
    parse(raw) {
      const v = raw.trim().toLowerCase();
      if (["true", "1", "yes", "on"].includes(v)) return true;
      if (["false", "0", "no", "off"].includes(v)) return false;
      throw new Error("expected true or false");
    },
  };
}

/**
 * A file path parser: a non-empty string, kept as given (resolved by whoever opens it).
 *
 * @returns The parser.
 */
export function pathParser(): Parser<string> {
  return {
    describe: "a file path",
    parse(raw) {
      if (raw.trim() === "" || raw.includes("\0")) throw new Error("expected a file path");
      return raw;
    },
  };
}

// ---------------------------------------------------------------------------
// tables

/** One setting of a process. */
export interface Setting<T> {
  /** Command-line flag, with its dashes (e.g. `--port`). */
  readonly flag: `--${string}`;
  /** Environment variable (e.g. `PERMAFROST_CATALOG_PORT`). */
  readonly env: `PERMAFROST_${string}`;
  /** Value when neither flag nor env var is set; omit to make the setting required. */
  readonly default?: T;
  /** Parser of the raw string. */
  readonly parse: Parser<T>;
  /** One line for help text and the README table. */
  readonly description: string;
}

/** A process's settings by key. */
export type ConfigTable = Readonly<Record<string, Setting<unknown>>>;

/** The frozen object {@link loadConfig} returns for a table. */
export type ConfigOf<T extends ConfigTable> = {
  readonly [K in keyof T]: T[K] extends Setting<infer V> ? V : never;
};

/**
 * Declares one setting with its type inferred from the parser (an identity helper).
 *
 * @param s The setting.
 * @returns The same setting.
 */
export function setting<T>(s: Setting<T>): Setting<T> {
  return s;
}

/** Where {@link loadConfig} reads raw values from. */
export interface ConfigSources {
  /** Command-line arguments (flags only; a positional argument is an error). */
  args?: readonly string[];
  /** Environment variables (see {@link processEnv}). */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Resolves every setting of a table: flag > environment variable > default.
 *
 * @param table The process's settings.
 * @param sources Raw arguments and environment.
 * @returns A frozen object with one typed value per key.
 * @throws {ConfigError} UNKNOWN_FLAG for a flag the table lacks; BAD_CONFIG for a
 * value its parser refuses, a required setting left unset, or a positional argument.
 *
 * @example Flag beats env var, env var beats default
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig, portParser, setting, stringParser } from "./config.ts";
 * const TABLE = {
 *   host: setting({ flag: "--host", env: "PERMAFROST_X_HOST", default: "127.0.0.1", parse: stringParser(), description: "Host" }),
 *   port: setting({ flag: "--port", env: "PERMAFROST_X_PORT", default: 8800, parse: portParser(), description: "Port" }),
 * };
 * const config = loadConfig(TABLE, { args: ["--port", "9000"], env: { PERMAFROST_X_PORT: "9100", PERMAFROST_X_HOST: "0.0.0.0" } });
 * assert.deepEqual(config, { host: "0.0.0.0", port: 9000 });
 * assert.ok(Object.isFrozen(config));
 * ```
 */
export function loadConfig<T extends ConfigTable>(
  table: T,
  sources: ConfigSources = {},
): ConfigOf<T> {
  const booleans: string[] = [];
  const strings: string[] = [];
  for (const s of Object.values(table)) {
    (s.parse.boolean ? booleans : strings).push(s.flag.slice(2));
  }
  const parsed = parseArgs(sources.args ?? [], { boolean: booleans, string: strings });
  if (parsed._.length > 0) {
    throw new ConfigError("BAD_CONFIG", `Unexpected argument '${parsed._[0]}'`);
  }
  const env = sources.env ?? {};
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(table)) {
    const flagValue = parsed.flags[s.flag.slice(2)];
    const envValue = env[s.env];
    if (flagValue !== undefined) {
      out[key] = typeof flagValue === "boolean" ? flagValue : parseOne(s, flagValue, s.flag);
    } else if (envValue !== undefined && envValue !== "") {
      out[key] = parseOne(s, envValue, s.env);
    } else if ("default" in s && s.default !== undefined) {
      out[key] = s.default;
    } else {
      throw new ConfigError(
        "BAD_CONFIG",
        `Missing required setting: pass ${s.flag} or set ${s.env} (${s.description})`,
      );
    }
  }
  return Object.freeze(out) as ConfigOf<T>;
}

function parseOne(s: Setting<unknown>, raw: string, from: string): unknown {
  try {
    return s.parse.parse(raw);
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause);
    const shown = s.parse.secret ? "[redacted]" : `'${raw}'`;
    throw new ConfigError(
      "BAD_CONFIG",
      `Invalid value ${shown} from ${from} for ${s.flag} / ${s.env}: ${why}`,
      { cause },
    );
  }
}

/**
 * Reads the environment variables a table names (and only those) from the process.
 * A variable the process may not read (no `--allow-env` grant for it) counts as
 * unset: the permission state is queried first, so this never prompts.
 *
 * @param tables The tables whose `env` names to read.
 * @returns The variables that are set, by name.
 */
export function processEnv(...tables: ConfigTable[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const table of tables) {
    for (const s of Object.values(table)) {
      const state = Deno.permissions.querySync({ name: "env", variable: s.env }).state;
      if (state !== "granted") continue;
      const v = Deno.env.get(s.env);
      if (v !== undefined) out[s.env] = v;
    }
  }
  return out;
}

/**
 * Renders a table as a markdown table (flag, env var, default, accepts, meaning),
 * the form the README uses.
 *
 * @param table The settings.
 * @returns Markdown text.
 */
export function configMarkdown(table: ConfigTable): string {
  const lines = [
    "| flag | env | default | accepts | meaning |",
    "|---|---|---|---|---|",
  ];
  for (const s of Object.values(table)) {
    const def = s.default === undefined
      ? "(required)"
      : s.default === ""
      ? "(none)"
      : `\`${showDefault(s.default)}\``;
    lines.push(
      `| \`${s.flag}\` | \`${s.env}\` | ${def} | ${s.parse.describe} | ${s.description} |`,
    );
  }
  return lines.join("\n");
}

function showDefault(v: unknown): string {
  if (v !== null && typeof v === "object") {
    return Object.entries(v).map(([k, x]) => `${k}=${String(x)}`).join(",");
  }
  return String(v);
}

/**
 * `--log-level` / `PERMAFROST_LOG_LEVEL`, the same setting on every server (master,
 * workers, catalog).
 */
export const LOG_LEVEL_SETTING: Setting<LogLevel> = setting({
  flag: "--log-level",
  env: "PERMAFROST_LOG_LEVEL",
  default: "info" as LogLevel,
  parse: enumParser(LOG_LEVELS),
  description: "Least severe log level written (on stderr)",
});

/**
 * `--log-format` / `PERMAFROST_LOG_FORMAT`, the same setting on every server: `auto`
 * writes readable lines on a terminal and JSON lines elsewhere (files, pipes, log
 * collectors).
 */
export const LOG_FORMAT_SETTING: Setting<LogFormatChoice> = setting({
  flag: "--log-format",
  env: "PERMAFROST_LOG_FORMAT",
  default: "auto" as LogFormatChoice,
  parse: enumParser(LOG_FORMATS),
  description: "Log lines as text for people or JSON (auto: text on a terminal, else JSON)",
});
