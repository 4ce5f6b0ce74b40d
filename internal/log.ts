/**
 * The one logger: levels `debug` < `info` < `warn` < `error`, one JSON object per
 * line (`ts`, `level`, `component`, `msg`, then any extra fields) written to stderr
 * by default, or the same record as one line of text for people (`format: "text"`:
 * `12:03:04 warn  master: msg key=value`). The sink is swappable so tests can read the
 * lines.
 *
 * Never logs secrets: a field whose name says it holds one (`token`,
 * `authorization`, `password`, `secret`, `key`, `api_key`, `*_token`, `*_secret`,
 * ...) is written as `"[redacted]"`, and so is any string value that starts with
 * `Bearer `. Errors become `{name, code?, message}` (no stack unless asked), bigints
 * become decimal strings.
 *
 * Leaf module: imports nothing from the project.
 *
 * @module
 */

/** The log levels, least severe first. */
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;

/** One log level. */
export type LogLevel = typeof LOG_LEVELS[number];

/** Receives one finished line (JSON, no trailing newline). */
export type LogSink = (line: string) => void;

/** Extra fields of a log line (`job_id`, `request_id`, `path`, `err`, ...). */
export type LogFields = Readonly<Record<string, unknown>>;

/** A logger bound to one component. */
export interface Logger {
  /** The component written in every line. */
  readonly component: string;
  /** The least severe level written. */
  readonly level: LogLevel;
  /** Logs at `debug`. */
  debug(msg: string, fields?: LogFields): void;
  /** Logs at `info`. */
  info(msg: string, fields?: LogFields): void;
  /** Logs at `warn`. */
  warn(msg: string, fields?: LogFields): void;
  /** Logs at `error`. */
  error(msg: string, fields?: LogFields): void;
  /** True when a line at `level` would be written (to skip building costly fields). */
  enabled(level: LogLevel): boolean;
  /**
   * A logger that adds `fields` to every line (e.g. a request id).
   *
   * @param fields Fields to add.
   * @returns The child logger, sharing level and sink.
   */
  child(fields: LogFields): Logger;
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Component name written in every line (e.g. `catalog`). */
  component: string;
  /** Least severe level written (default `info`). */
  level?: LogLevel;
  /** Where lines go (default: stderr, one line per write). */
  sink?: LogSink;
  /** Clock for `ts` (default `Date.now`). */
  now?: () => number;
  /** `json` (default): one JSON object per line; `text`: one readable line. */
  format?: LogFormat;
}

/** How a log line is written. */
export type LogFormat = "json" | "text";

/** The formats a `--log-format` may name; `auto` is text on a terminal, JSON elsewhere. */
export const LOG_FORMATS = ["auto", "json", "text"] as const;

/** A `--log-format` value. */
export type LogFormatChoice = typeof LOG_FORMATS[number];

const RANK: Readonly<Record<LogLevel, number>> = { debug: 0, info: 1, warn: 2, error: 3 };

const SECRET_NAMES = new Set([
  "token",
  "authorization",
  "password",
  "passwd",
  "secret",
  "key",
  "api_key",
  "apikey",
  "jwt",
  "cookie",
  "set-cookie",
  "edek",
  "private_key",
  "secret_key",
  "access_key",
  "credentials",
]);
const SECRET_SUFFIX = /[_-](token|secret|password|apikey|api_key|key_material)$/i;
const REDACTED = "[redacted]";

/**
 * True when a field name says it holds a secret.
 *
 * @param name A field name.
 * @returns Whether the logger redacts it.
 */
export function isSecretField(name: string): boolean {
  return SECRET_NAMES.has(name.toLowerCase()) || SECRET_SUFFIX.test(name);
}

/**
 * Parses a level name.
 *
 * @param raw `debug`, `info`, `warn` or `error` (any case).
 * @returns The level.
 * @throws {RangeError} for any other word.
 */
export function parseLogLevel(raw: string): LogLevel {
  const v = raw.trim().toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(v)) return v as LogLevel;
  throw new RangeError(`Unknown log level '${raw}': expected one of ${LOG_LEVELS.join(", ")}`);
}

const encoder = new TextEncoder();

/**
 * The default sink: writes the line and a newline to stderr synchronously, so lines
 * never interleave and nothing is lost on exit.
 *
 * @param line One JSON line.
 */
export function stderrSink(line: string): void {
  const bytes = encoder.encode(line + "\n");
  let written = 0;
  while (written < bytes.length) written += Deno.stderr.writeSync(bytes.subarray(written));
}

/**
 * Creates a logger.
 *
 * @param options Component, level (default `info`), sink (default stderr), clock.
 * @returns The logger.
 *
 * @example Capture lines in a test
 * ```ts
 * import assert from "node:assert/strict";
 * import { createLogger } from "./log.ts";
 * const lines: string[] = [];
 * const log = createLogger({ component: "catalog", level: "info", sink: (l) => lines.push(l), now: () => 0 });
 * log.debug("hidden");
 * log.info("registered", { name: "flights", token: "abc" });
 * assert.deepEqual(JSON.parse(lines[0]!), {
 *   ts: "1970-01-01T00:00:00.000Z", level: "info", component: "catalog", msg: "registered",
 *   name: "flights", token: "[redacted]",
 * });
 * assert.equal(lines.length, 1);
 * ```
 */
export function createLogger(options: LoggerOptions): Logger {
  const level = options.level ?? "info";
  if (!(level in RANK)) throw new RangeError(`Unknown log level '${level}'`);
  const sink = options.sink ?? stderrSink;
  return makeLogger(
    options.component,
    level,
    options.format === "text" ? (line) => sink(textLine(line)) : sink,
    options.now ?? Date.now,
    {},
  );
}

/**
 * The format `auto` means here: text when stderr is a terminal, JSON otherwise.
 *
 * @param format What was asked for.
 * @returns `json` or `text`.
 */
export function resolveLogFormat(format: LogFormatChoice): LogFormat {
  if (format !== "auto") return format;
  try {
    return Deno.stderr.isTerminal() ? "text" : "json";
  } catch {
    return "json";
  }
}

/**
 * One JSON log line as a line of text: `HH:MM:SS level component: msg key=value …`.
 *
 * @param json A line the logger wrote.
 * @returns The text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { textLine } from "./log.ts";
 * const line = JSON.stringify({ ts: "2026-01-02T03:04:05.000Z", level: "warn", component: "master", msg: "slow", ms: 12 });
 * assert.equal(textLine(line), "03:04:05 warn  master: slow ms=12");
 * ```
 */
export function textLine(json: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json);
  } catch {
    return json;
  }
  const { ts, level, component, msg, ...rest } = record;
  const time = typeof ts === "string" ? ts.slice(11, 19) : "";
  const extra = Object.entries(rest).map(([k, v]) =>
    `${k}=${typeof v === "string" && !/\s/.test(v) ? v : JSON.stringify(v)}`
  );
  return [`${time} ${String(level).padEnd(5)} ${component}: ${msg}`, ...extra].join(" ");
}

function makeLogger(
  component: string,
  level: LogLevel,
  sink: LogSink,
  now: () => number,
  base: LogFields,
): Logger {
  const min = RANK[level];
  function write(at: LogLevel, msg: string, fields?: LogFields): void {
    if (RANK[at] < min) return;
    const record: Record<string, unknown> = {
      ts: new Date(now()).toISOString(),
      level: at,
      component,
      msg,
    };
    for (const source of [base, fields ?? {}]) {
      for (const [k, v] of Object.entries(source)) {
        if (k === "ts" || k === "level" || k === "component" || k === "msg") continue;
        record[k] = isSecretField(k) ? REDACTED : clean(v, 0);
      }
    }
    let line: string;
    try {
      line = JSON.stringify(record);
    } catch {
      line = JSON.stringify({
        ts: record.ts,
        level: at,
        component,
        msg,
        log_error: "unserializable fields",
      });
    }
    try {
      sink(line);
    } catch {
      // A broken sink (closed stderr) must never take the process down.
    }
  }
  return {
    component,
    level,
    debug: (msg, fields) => write("debug", msg, fields),
    info: (msg, fields) => write("info", msg, fields),
    warn: (msg, fields) => write("warn", msg, fields),
    error: (msg, fields) => write("error", msg, fields),
    enabled: (at) => RANK[at] >= min,
    child: (fields) => makeLogger(component, level, sink, now, { ...base, ...fields }),
  };
}

/** Makes a value JSON-safe and secret-free, to a bounded depth. */
function clean(v: unknown, depth: number): unknown {
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number") return Number.isFinite(v) ? v : String(v);
  if (typeof v === "string") return /^bearer\s/i.test(v) ? REDACTED : v;
  if (v === null || typeof v !== "object") return v === undefined ? null : v;
  if (v instanceof Error) {
    const e: Record<string, unknown> = { name: v.name, message: v.message };
    const code = (v as { code?: unknown }).code;
    if (typeof code === "string") e.code = code;
    return e;
  }
  if (v instanceof Date) return v.toISOString();
  if (depth >= 4) return "[…]";
  if (Array.isArray(v)) return v.slice(0, 100).map((x) => clean(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    out[k] = isSecretField(k) ? REDACTED : clean(x, depth + 1);
  }
  return out;
}
