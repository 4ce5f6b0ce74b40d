/**
 * The `permafrost` command line: parses arguments and calls `mod.ts` (and the
 * servers' entry points). No logic of its own beyond presentation: data goes
 * to stdout, progress and messages to stderr.
 *
 * Exit codes: 0 success, 1 failure (message on stderr), 2 usage error.
 *
 * @module
 */
import { ConfigError, loadConfig, parseArgs, processEnv } from "./internal/config.ts";
import { PermafrostError } from "./internal/errors.ts";
import { formatBytes, formatCount, ProgressBar } from "./internal/progress.ts";
import { FREEZE_SETTINGS } from "./ops/settings.ts";
import { audit, formatTable, freeze, peek, thaw, verify } from "./mod.ts";
import type { Quantization } from "./mod.ts";
import { OpsError } from "./ops/errors.ts";
import { runCatalogServe } from "./catalog/cli.ts";
import { thaw as thawArchive } from "./ops/thaw.ts";
import { CLUSTER_USAGE, runCluster, runMaster, runStart, runWorker } from "./cluster/cli.ts";
import {
  ENCRYPTION_FLAGS,
  freezeEncryption,
  runUserCommand,
  thawKeys,
  unusedKeyWarning,
  USER_COMMANDS,
  USER_USAGE,
} from "./ops/cli_security.ts";
import { freezePartitioned, type PartitionedSummary } from "./ops/partition.ts";
import {
  FREEZE_STRING_FLAGS,
  partitionByFlag,
  runAppend,
  runDiff,
  THAW_BOOLEAN_FLAGS,
  THAW_STRING_FLAGS,
  thawFlagOptions,
  thawStatsText,
  typesFlag,
} from "./ops/cli_ops.ts";

const USAGE = `Usage: permafrost <command> [options]

Commands:
  freeze <source> <archive> [--codec zstd|lzma2|zpaq|auto] [--chunk-rows N] [--threads N]
         [--quantize QUANT_HIGH|QUANT_MEDIUM|QUANT_LOW] [--primary-key COL] [--format F]
         [--partition-by a,b]   (then <archive> is a directory: one archive per partition)
         [--types a=json,b=decimal(18,2)]   force column types (json/string store nested values)
         [--key-file F | --kms local:PATH|aws-kms:KEY|gcp-kms:RESOURCE]   encrypt (AES-256-GCM)
  thaw <archive|dir> <output> [--rows START:END] [--columns a,b] [--where "expr"]
         [--format csv|jsonl|parquet|arrow|xlsx] [--split-sheets] [--key-file F | --kms URI]
         [--require-encryption]   refuse an archive that is not encrypted
         (<output> '-' is stdout, CSV unless --format; a FIFO or device is written in place)
  append <source> <archive> [--format F] [--threads N]   new chunks, same schema, atomic
  diff <a.pf> <b.pf> [--json] [--exit-code]   chunks unchanged, changed, added, removed
  audit <archive>              JSON on stdout; reads header and footer only
  verify <archive>             checks every hash; exit 1 naming the first bad chunk
  peek <archive> [--rows N] [--columns a,b] [--json] [--key-file F | --kms URI]
  master [--host H] [--port 8700] [--data-dir D] ...   the cluster master (master --help)
  worker --master URL [--host H] [--port 8801] [--worker-id ID]   a cluster worker
  cluster submit <source> <destination> [--codec C] [--chunk-rows N] [--wait] [--master URL]
  cluster health|jobs|workers|status <job_id>|wait <job_id>|cancel <job_id> [--master URL]
         (--token T or PERMAFROST_TOKEN when the master has auth on; 'cluster help' for more)
  cluster add-user|list-users|remove-user ...   users and tokens (PERMAFROST_USERS_DB, PERMAFROST_JWT_SECRET)
  catalog serve --db <catalog.db> [--host H] [--port 8800] [--log-level info]
  start [--workers N] [--data-dir D] [--catalog-port P]   master + N workers + catalog here, to try it
  help                         this text

Exit codes: 0 success, 1 failure, 2 usage error.`;

/** A usage error: exit code 2. */
class UsageError extends Error {
  override name = "UsageError";
}

const encoder = new TextEncoder();
function out(text: string): void {
  Deno.stdout.writeSync(encoder.encode(text.endsWith("\n") ? text : text + "\n"));
}
function err(text: string): void {
  Deno.stderr.writeSync(encoder.encode(text.endsWith("\n") ? text : text + "\n"));
}

function positionals(args: string[], count: number, names: string): string[] {
  if (args.length !== count) {
    throw new UsageError(
      `Expected ${names}, got ${
        args.length === 0 ? "nothing" : args.map((a) => `'${a}'`).join(" ")
      }`,
    );
  }
  return args;
}

function parseRows(text: string): { start: number; end: number } {
  const m = /^(\d+):(\d+)$/.exec(text);
  if (!m) throw new UsageError(`--rows must be START:END (0-based, half-open), got '${text}'`);
  const start = Number(m[1]);
  const end = Number(m[2]);
  if (end < start) throw new UsageError(`--rows ${text}: END must be >= START`);
  return { start, end };
}

async function cmdFreeze(argv: string[]): Promise<number> {
  const flagNames = Object.values(FREEZE_SETTINGS).map((s) => s.flag.slice(2));
  const parsed = parseArgs(argv, {
    string: [
      ...flagNames,
      "quantize",
      "primary-key",
      "format",
      ...FREEZE_STRING_FLAGS,
      ...ENCRYPTION_FLAGS,
    ],
  });
  const [source, archive] = positionals(parsed._, 2, "<source> <archive>");
  const partitionBy = partitionByFlag(parsed.flags);
  const settingArgs = flagNames.flatMap((name) =>
    parsed.flags[name] === undefined ? [] : [`--${name}=${String(parsed.flags[name])}`]
  );
  const config = loadConfig(FREEZE_SETTINGS, {
    args: settingArgs,
    env: processEnv(FREEZE_SETTINGS),
  });
  const bar = new ProgressBar("freeze");
  const options = {
    codec: config.codec,
    chunkRows: config.chunkRows,
    threads: config.threads === 0 ? undefined : config.threads,
    quantization: parsed.flags.quantize as Quantization | undefined,
    primaryKey: parsed.flags["primary-key"] as string | undefined,
    format: parsed.flags.format as "csv" | undefined,
    types: typesFlag(parsed.flags),
    encryption: await freezeEncryption(parsed.flags),
    onProgress: (p: { rows: number; raw_bytes: number; seconds: number }) =>
      bar.update(
        null,
        `${formatCount(p.rows)} rows  ${
          (p.raw_bytes / 1e6 / Math.max(p.seconds, 1e-3)).toFixed(1)
        } MB/s`,
      ),
    onWarning: (w: { message: string }) => {
      bar.done();
      err(`warning: ${w.message}`);
    },
  } satisfies Parameters<typeof freeze>[2];
  const summary = partitionBy
    ? await freezePartitioned(source!, archive!, { ...options, partitionBy })
    : await freeze(source!, archive!, options);
  bar.done();
  if (partitionBy) {
    const { partitions } = summary as PartitionedSummary;
    err(`wrote ${partitions.length} partition(s) under ${archive}/ (manifest: _manifest.json)`);
  }
  for (const c of summary.widened_columns) {
    err(
      `note: column "${c}" held values beyond the type sample that did not fit; stored as text (JSON text for JSON lines)`,
    );
  }
  const ratio = summary.ratio === null ? "" : ` (${summary.ratio.toFixed(2)}x)`;
  err(
    `froze ${formatCount(summary.rows)} rows: ${
      summary.input_bytes === null ? "?" : formatBytes(summary.input_bytes)
    } -> ${formatBytes(summary.archive_bytes)}${ratio} in ${
      summary.seconds.toFixed(2)
    } s, codec ${summary.codec}${summary.auto_reason ? ` (${summary.auto_reason})` : ""}`,
  );
  return 0;
}

async function cmdThaw(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv, {
    string: ["rows", "columns", "format", "delimiter", ...THAW_STRING_FLAGS, ...ENCRYPTION_FLAGS],
    boolean: [...THAW_BOOLEAN_FLAGS],
  });
  const [archive, output] = positionals(parsed._, 2, "<archive> <output>");
  const keys = await thawKeys(parsed.flags);
  const summary = await thaw(archive!, output!, {
    rows: parsed.flags.rows === undefined ? undefined : parseRows(String(parsed.flags.rows)),
    columns: parsed.flags.columns === undefined
      ? undefined
      : String(parsed.flags.columns).split(","),
    format: parsed.flags.format as "csv" | "xlsx" | undefined,
    delimiter: parsed.flags.delimiter as string | undefined,
    keys,
    ...thawFlagOptions(parsed.flags),
  });
  const warning = unusedKeyWarning(archive!, keys, summary.encrypted);
  if (warning !== null) err(warning);
  err(
    `thawed ${formatCount(summary.rows)} rows to ${
      summary.path === "-" ? "stdout" : summary.path
    } (${formatBytes(summary.output_bytes)}) in ${
      summary.seconds.toFixed(2)
    } s, ${summary.chunks_read} chunk(s) read; ${thawStatsText(summary)}`,
  );
  return 0;
}

async function cmdAudit(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv, {});
  const [archive] = positionals(parsed._, 1, "<archive>");
  out(JSON.stringify(await audit(archive!), null, 2));
  return 0;
}

async function cmdVerify(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv, { boolean: ["json"] });
  const [archive] = positionals(parsed._, 1, "<archive>");
  const bar = new ProgressBar("verify");
  const report = await verify(archive!, {
    onProgress: (n, total) => bar.update(total === 0 ? 1 : n / total, formatBytes(n)),
  });
  bar.done();
  if (parsed.flags.json) out(JSON.stringify(report, null, 2));
  if (report.ok) {
    err(
      `ok: ${archive}: header, payload and ${report.chunks} chunk hashes match (${
        formatBytes(report.bytes_checked)
      })`,
    );
    return 0;
  }
  for (const e of report.errors) err(`error: ${e.message}`);
  err(
    `FAILED: ${archive}: ${
      report.first_bad_chunk === null
        ? "payload hash mismatch"
        : `first bad chunk is ${report.first_bad_chunk}`
    }`,
  );
  return 1;
}

async function cmdPeek(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv, {
    string: ["rows", "columns", ...ENCRYPTION_FLAGS],
    boolean: ["json"],
  });
  const [archive] = positionals(parsed._, 1, "<archive>");
  const rows = parsed.flags.rows === undefined ? 10 : Number(parsed.flags.rows);
  if (!Number.isSafeInteger(rows) || rows < 0) {
    throw new UsageError(`--rows must be a count, got '${parsed.flags.rows}'`);
  }
  const result = await peek(archive!, {
    rows,
    keys: await thawKeys(parsed.flags),
    columns: parsed.flags.columns === undefined
      ? undefined
      : String(parsed.flags.columns).split(","),
  });
  out(parsed.flags.json ? JSON.stringify(result) : formatTable(result));
  if (!parsed.flags.json) err(`(${result.rows.length} of ${formatCount(result.total_rows)} rows)`);
  return 0;
}

function cmdCatalog(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "serve") {
    throw new UsageError(`Expected 'catalog serve', got 'catalog ${sub ?? ""}'`);
  }
  return runCatalogServe(rest, { thaw: thawArchive });
}

function cmdCluster(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub && USER_COMMANDS.includes(sub)) return runUserCommand(sub, rest);
  if (sub === undefined || sub === "help" || sub === "--help" || sub === "-h") {
    (sub === undefined ? err : out)(`${CLUSTER_USAGE}\n\n${USER_USAGE}`);
    return Promise.resolve(sub === undefined ? 2 : 0);
  }
  return runCluster(argv);
}

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  master: (argv) => runMaster(argv),
  worker: (argv) => runWorker(argv),
  cluster: cmdCluster,
  start: (argv) => runStart(argv),
  catalog: cmdCatalog,
  freeze: cmdFreeze,
  thaw: cmdThaw,
  append: (argv) => runAppend(argv),
  diff: (argv) => runDiff(argv),
  audit: cmdAudit,
  verify: cmdVerify,
  peek: cmdPeek,
};

/**
 * Runs one CLI invocation.
 *
 * @param args The arguments (without the program name).
 * @returns The exit code.
 */
export async function run(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    (command === undefined ? err : out)(USAGE);
    return command === undefined ? 2 : 0;
  }
  const handler = COMMANDS[command];
  if (!handler) {
    err(`error: unknown command '${command}'\n\n${USAGE}`);
    return 2;
  }
  try {
    return await handler(rest);
  } catch (e) {
    if (
      e instanceof UsageError || e instanceof ConfigError ||
      (e instanceof OpsError && e.code === "BAD_OPTION")
    ) {
      err(`error: ${e.message}\n(run 'permafrost help' for usage)`);
      return 2;
    }
    if (e instanceof PermafrostError) {
      err(`error: ${e.name} ${e.code}: ${e.message}`);
      return 1;
    }
    err(`error: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
    return 1;
  }
}

if (import.meta.main) {
  Deno.exit(await run(Deno.args));
}
