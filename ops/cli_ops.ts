/**
 * CLI pieces of the dataset operations, for `main.ts` to wire in: the `append`
 * and `diff` commands (each a whole command returning its exit code), the
 * extra flags of `thaw` (`--where`, `--split-sheets`, `--require-encryption`) and `freeze`
 * (`--partition-by`), and the text that reports them.
 *
 * Same conventions as `main.ts`: data to stdout, messages and progress to
 * stderr; exit 0 on success, 1 on a failure, 2 on a usage error (including an
 * `OpsError` BAD_OPTION such as a bad `--where`).
 *
 * @module
 */
import { ConfigError, parseArgs } from "../internal/config.ts";
import { PermafrostError } from "../internal/errors.ts";
import { formatBytes, formatCount, ProgressBar } from "../internal/progress.ts";
import type { ColumnType, TimeUnit } from "../format/column.ts";
import type { ForcedType, SourceFormat } from "../io/types.ts";
import { append } from "./append.ts";
import { diff, formatDiff } from "./diff.ts";
import { OpsError } from "./errors.ts";
import type { ThawOptions, ThawSummary } from "./thaw.ts";

/** Where a command writes (default: the process's stdout and stderr). */
export interface CliIo {
  /** Data (stdout). */
  out(text: string): void;
  /** Messages (stderr). */
  err(text: string): void;
}

const encoder = new TextEncoder();
const line = (text: string) => encoder.encode(text.endsWith("\n") ? text : text + "\n");

/** The process's stdout and stderr. */
export const PROCESS_IO: CliIo = Object.freeze({
  out: (text: string) => void Deno.stdout.writeSync(line(text)),
  err: (text: string) => void Deno.stderr.writeSync(line(text)),
});

/** Value flags `thaw` gains (for `parseArgs`'s `string`). */
export const THAW_STRING_FLAGS: readonly string[] = ["where"];
/** Boolean flags `thaw` gains (for `parseArgs`'s `boolean`). */
export const THAW_BOOLEAN_FLAGS: readonly string[] = ["split-sheets", "require-encryption"];
/** Value flags `freeze` gains (for `parseArgs`'s `string`). */
export const FREEZE_STRING_FLAGS: readonly string[] = ["partition-by", "types"];

/**
 * The `thaw` options the extra flags set.
 *
 * @param flags `parseArgs(...).flags` of a `thaw` command line.
 * @returns `where`, `splitSheets` and `requireEncryption`.
 * @throws {OpsError} BAD_OPTION for an empty `--where`.
 */
export function thawFlagOptions(
  flags: Record<string, string | boolean>,
): Pick<ThawOptions, "where" | "splitSheets" | "requireEncryption"> {
  const out: Pick<ThawOptions, "where" | "splitSheets" | "requireEncryption"> = {};
  if (flags.where !== undefined) {
    const where = String(flags.where);
    if (where.trim() === "") {
      throw new OpsError("BAD_OPTION", `--where needs a condition, e.g. --where "delay > 60"`);
    }
    out.where = where;
  }
  if (flags["split-sheets"] === true) out.splitSheets = true;
  if (flags["require-encryption"] === true) out.requireEncryption = true;
  return out;
}

/**
 * The partition columns `--partition-by a,b` names, or undefined without the flag.
 *
 * @param flags `parseArgs(...).flags` of a `freeze` command line.
 * @returns Column names.
 * @throws {OpsError} BAD_OPTION for an empty list.
 */
export function partitionByFlag(flags: Record<string, string | boolean>): string[] | undefined {
  const raw = flags["partition-by"];
  if (raw === undefined) return undefined;
  const cols = String(raw).split(",").map((c) => c.trim()).filter((c) => c !== "");
  if (cols.length === 0) {
    throw new OpsError(
      "BAD_OPTION",
      `--partition-by needs column names, e.g. --partition-by country,year`,
    );
  }
  return cols;
}

const TYPE_SPEC =
  /^(int64|float64|bool|date|timestamp|string|json)$|^(time|duration)(?:\((s|ms|us|ns)\))?$|^decimal\((\d+),\s*(\d+)\)$/;

/**
 * The forced column types `--types a=json,b=decimal(18,2),c=time(ms)` names, or
 * undefined without the flag. A column whose type has no exact column type (a
 * Parquet LIST, an Arrow struct) can be stored as `json` or `string` this way.
 *
 * @param flags `parseArgs(...).flags` of a `freeze` command line.
 * @returns Types by column name.
 * @throws {OpsError} BAD_OPTION naming a malformed entry.
 */
export function typesFlag(
  flags: Record<string, string | boolean>,
): Record<string, ForcedType> | undefined {
  const raw = flags.types;
  if (raw === undefined) return undefined;
  const out: Record<string, ForcedType> = {};
  for (const entry of String(raw).split(/,(?![^(]*\))/)) {
    const at = entry.lastIndexOf("=");
    const name = entry.slice(0, at).trim();
    const spec = entry.slice(at + 1).trim();
    const m = TYPE_SPEC.exec(spec);
    if (at <= 0 || m === null) {
      throw new OpsError(
        "BAD_OPTION",
        `--types entry '${entry}' is not COLUMN=TYPE with TYPE one of int64, float64, bool, date, timestamp, string, json, time(UNIT), duration(UNIT), decimal(P,S), e.g. --types tags=json,price=decimal(18,2)`,
      );
    }
    if (m[1] !== undefined) out[name] = m[1] as ColumnType;
    else if (m[2] !== undefined) {
      out[name] = { type: m[2] as "time" | "duration", unit: (m[3] ?? "us") as TimeUnit };
    } else out[name] = { type: "decimal", precision: Number(m[4]), scale: Number(m[5]) };
  }
  return out;
}

/**
 * The thaw report's pruning part: chunks and partitions skipped, bytes read of the payload.
 *
 * @param s What `thaw` returned.
 * @returns E.g. `19 of 20 chunks skipped by min/max; read 12.3 kB of 1.2 MB payload (1.0%)`.
 */
export function thawStatsText(s: ThawSummary): string {
  const parts: string[] = [];
  if (s.partitions_total !== null) {
    parts.push(`${s.partitions_read} of ${s.partitions_total} partitions opened`);
  }
  if (s.chunks_skipped > 0) {
    parts.push(`${s.chunks_skipped} of ${s.chunks_total} chunks skipped by min/max`);
  }
  const pct = s.payload_bytes === 0 ? 0 : (100 * s.bytes_read) / s.payload_bytes;
  parts.push(
    `read ${formatBytes(s.bytes_read)} of ${formatBytes(s.payload_bytes)} payload (${
      pct.toFixed(1)
    }%)`,
  );
  return parts.join("; ");
}

/**
 * Maps an error to the CLI's exit code, printing it the way `main.ts` does.
 *
 * @param e What was thrown.
 * @param io Where to print.
 * @returns 2 for usage errors (bad flags, BAD_OPTION), 1 otherwise.
 */
export function reportError(e: unknown, io: CliIo): number {
  if (e instanceof ConfigError || (e instanceof OpsError && e.code === "BAD_OPTION")) {
    io.err(`error: ${e.message}\n(run 'permafrost help' for usage)`);
    return 2;
  }
  if (e instanceof PermafrostError) {
    io.err(`error: ${e.name} ${e.code}: ${e.message}`);
    return 1;
  }
  io.err(`error: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
  return 1;
}

function twoPositionals(args: string[], names: string): [string, string] {
  if (args.length !== 2) {
    throw new OpsError(
      "BAD_OPTION",
      `Expected ${names}, got ${
        args.length === 0 ? "nothing" : args.map((a) => `'${a}'`).join(" ")
      }`,
    );
  }
  return [args[0]!, args[1]!];
}

/**
 * `permafrost append <source> <archive> [--format F] [--threads N]`: adds the
 * source's rows to the archive as new chunks (atomically).
 *
 * @param argv Arguments after `append`.
 * @param io Where to write (default the process's stdout/stderr).
 * @returns The exit code.
 */
export async function runAppend(argv: string[], io: CliIo = PROCESS_IO): Promise<number> {
  try {
    const parsed = parseArgs(argv, { string: ["format", "threads"] });
    const [source, archive] = twoPositionals(parsed._, "<source> <archive>");
    let threads: number | undefined;
    if (parsed.flags.threads !== undefined) {
      threads = Number(parsed.flags.threads);
      if (!Number.isSafeInteger(threads) || threads < 0) {
        throw new OpsError(
          "BAD_OPTION",
          `--threads must be a count, got '${parsed.flags.threads}'`,
        );
      }
      if (threads === 0) threads = undefined;
    }
    const bar = new ProgressBar("append");
    const s = await append(source, archive, {
      format: parsed.flags.format as SourceFormat | undefined,
      threads,
      onProgress: (p) => bar.update(null, `${formatCount(p.rows_added)} rows`),
      onWarning: (w) => {
        bar.done();
        io.err(`warning: ${w.message}`);
      },
    });
    bar.done();
    io.err(
      s.rows_added === 0
        ? `nothing to append: ${source} has no rows; ${archive} is unchanged`
        : `appended ${
          formatCount(s.rows_added)
        } rows in ${s.chunks_added} chunk(s) to ${archive}: ${formatCount(s.rows_before)} -> ${
          formatCount(s.rows)
        } rows, ${formatBytes(s.archive_bytes)} in ${s.seconds.toFixed(2)} s`,
    );
    return 0;
  } catch (e) {
    return reportError(e, io);
  }
}

/**
 * `permafrost diff <a> <b> [--json] [--exit-code]`: chunk-level differences
 * from the footers' hashes. Exit 0; with `--exit-code`, 1 when they differ.
 *
 * @param argv Arguments after `diff`.
 * @param io Where to write (default the process's stdout/stderr).
 * @returns The exit code.
 */
export async function runDiff(argv: string[], io: CliIo = PROCESS_IO): Promise<number> {
  try {
    const parsed = parseArgs(argv, { boolean: ["json", "exit-code"] });
    const [a, b] = twoPositionals(parsed._, "<a.pf> <b.pf>");
    const report = await diff(a, b);
    io.out(parsed.flags.json ? JSON.stringify(report, null, 2) : formatDiff(report));
    return parsed.flags["exit-code"] && !report.identical ? 1 : 0;
  } catch (e) {
    return reportError(e, io);
  }
}
