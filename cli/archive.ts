/**
 * The archive commands: `freeze`, `thaw`, `audit`, `verify`, `peek`, `append` and
 * `diff`. Each parses its flags (the `freeze` settings follow flag > `PERMAFROST_*`
 * variable > default), calls the library (`mod.ts`'s operations, loaded when the
 * command runs, so `--help` stays quick) and reports: data to stdout, the summary,
 * warnings and progress to stderr.
 *
 * @module
 */
import { CODEC_CHOICES } from "../codecs/ids.ts";
import { DEFAULT_CHUNK_ROWS, MAX_CHUNK_ROWS } from "../format/constants.ts";
import { defaultThreads } from "../internal/cores.ts";
import { enumParser, intParser, type Parser, setting } from "../internal/config.ts";
import type { CodecProfile } from "../format/new_archive.ts";
import { formatBytes, formatCount, formatRate, ProgressBar } from "../internal/progress.ts";
import type { FreezeProgress } from "../ops/freeze.ts";
import type { ColumnType, TimeUnit } from "../format/column.ts";
import type { ForcedType, SourceFormat } from "../io/types.ts";
import type { Quantization } from "../format/predictors/predictor.ts";
import { MAX_THREADS_PER_CORE, maxThreads } from "../ops/threads.ts";
import type { ThawSummary } from "../ops/thaw.ts";
import { type Command, command, type Flag, type FlagValue, type Parsed } from "./command.ts";
import { UsageError } from "./errors.ts";
import type { CliIo } from "./io.ts";
import { ENCRYPTION_SETTINGS, freezeEncryption, thawKeys, unusedKeyWarning } from "./keys.ts";
import { loadModule } from "./lazy.ts";

/** `--threads`: 0 (one per core) up to {@link maxThreads}; the refusal names this machine's limit. */
function threadsParser(): Parser<number> {
  const describe = `a thread count (0 = one per core; at most ${MAX_THREADS_PER_CORE} per core)`;
  return {
    describe,
    parse(raw) {
      const max = maxThreads();
      try {
        return intParser({ min: 0, max }).parse(raw);
      } catch {
        throw new Error(
          `expected ${describe}: 0..${max} on this machine, which has ${defaultThreads()} cores`,
        );
      }
    },
  };
}

/** Settings of `freeze` (and `--threads` of `append`). */
export const FREEZE_SETTINGS = Object.freeze({
  codec: setting({
    flag: "--codec",
    env: "PERMAFROST_CODEC",
    default: "zstd",
    parse: enumParser(CODEC_CHOICES),
    description: "Codec of every block; auto samples 1,000 rows and picks the smallest",
  }),
  profile: setting({
    flag: "--profile",
    env: "PERMAFROST_PROFILE",
    default: "",
    parse: enumParser(["", "max_speed", "balanced", "auto", "max_compression"]),
    description:
      "Codec of each column by a rule instead of one --codec: max_speed (zstd level 3), balanced (zstd 19), auto (zstd or lzma2 per column), max_compression (zstd, lzma2 or zpaqwasm per column)",
  }),
  chunkRows: setting({
    flag: "--chunk-rows",
    env: "PERMAFROST_DEFAULT_CHUNK",
    default: DEFAULT_CHUNK_ROWS,
    parse: intParser({ min: 1, max: MAX_CHUNK_ROWS }),
    description:
      "Rows per chunk (the unit of selective reads and of cluster tasks); left at its default, --profile balanced and max_compression use 500,000",
  }),
  threads: setting({
    flag: "--threads",
    env: "PERMAFROST_THREADS",
    default: 0,
    parse: threadsParser(),
    description:
      "Worker threads (freeze: they parse CSV and Parquet sources and encode; thaw: they decode chunks and render the output)",
  }),
});

const FORCE: Flag = {
  name: "force",
  type: "boolean",
  help: "Replace the destination when it exists (without it, an existing file is refused)",
};

const STORAGE_CLASS: Flag = {
  name: "storage-class",
  type: "string",
  value: "CLASS",
  help:
    "Storage class of a destination in object storage (S3: STANDARD, STANDARD_IA, GLACIER_IR, DEEP_ARCHIVE, …)",
};

const SOURCE_FORMAT: Flag = {
  name: "format",
  type: "string",
  value: "csv|jsonl|parquet|arrow",
  help: "Source format (default: by extension; .tsv, .tab and .psv are CSV)",
};

const SOURCE_DELIMITER: Flag = {
  name: "delimiter",
  type: "string",
  value: "CHAR",
  help: "CSV field delimiter (default: told from the first lines among , ; tab |); 'tab' for a tab",
};

/**
 * `--column-codec a=lzma2,b=zstd:3` as a map (the codecs are checked by `freeze`).
 *
 * @param raw The flag's value, or undefined.
 * @returns Codec text by column, or undefined.
 * @throws {UsageError} For a pair that is not `column=codec`.
 */
function parseColumnCodecs(raw: FlagValue | undefined): Record<string, string> | undefined {
  if (typeof raw !== "string") return undefined;
  const out: Record<string, string> = {};
  for (const part of raw.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
    const at = part.lastIndexOf("=");
    if (at <= 0 || at === part.length - 1) {
      throw new UsageError(`--column-codec takes column=codec[:level] pairs, got '${part}'`);
    }
    out[part.slice(0, at)] = part.slice(at + 1);
  }
  return out;
}

/** `--delimiter` as given, with `tab` (or `\t`) for a tab character. */
function delimiterFlag(raw: FlagValue): string | undefined {
  if (typeof raw !== "string") return undefined;
  return raw === "tab" || raw === "\\t" ? "\t" : raw;
}

/** How the summary names a CSV dialect: `CSV delimiter ';' (detected)`. */
function dialectText(d: { delimiter: string; sniffed: boolean } | null): string {
  if (d === null) return "";
  const shown = d.delimiter === "\t" ? "tab" : `'${d.delimiter}'`;
  return `; CSV delimiter ${shown} (${
    d.sniffed ? "told from the first lines" : "given or default"
  })`;
}

const TYPE_SPEC =
  /^(int64|float64|float32|float16|bool|date|timestamp|string|json)$|^(time|duration)(?:\((s|ms|us|ns)\))?$|^decimal\((\d+),\s*(\d+)\)$/;

/**
 * The forced column types `--types a=json,b=decimal(18,2),c=time(ms)` names. A column
 * whose type has no exact column type (a Parquet LIST, an Arrow struct) can be stored
 * as `json` or `string` this way.
 *
 * @param raw The flag's value, or undefined.
 * @returns Types by column name, or undefined.
 * @throws {UsageError} naming a malformed entry.
 */
export function parseTypes(raw: string | undefined): Record<string, ForcedType> | undefined {
  if (raw === undefined) return undefined;
  const out: Record<string, ForcedType> = {};
  for (const entry of raw.split(/,(?![^(]*\))/)) {
    const at = entry.lastIndexOf("=");
    const name = entry.slice(0, at).trim();
    const spec = entry.slice(at + 1).trim();
    const m = TYPE_SPEC.exec(spec);
    if (at <= 0 || m === null) {
      throw new UsageError(
        `--types entry '${entry}' is not COLUMN=TYPE with TYPE one of int64, float64, float32, float16, bool, date, timestamp, string, json, time(UNIT), duration(UNIT), decimal(P,S), e.g. --types tags=json,price=decimal(18,2)`,
      );
    }
    if (m[1] !== undefined) out[name] = m[1] as ColumnType;
    else if (m[2] !== undefined) {
      out[name] = { type: m[2] as "time" | "duration", unit: (m[3] ?? "us") as TimeUnit };
    } else out[name] = { type: "decimal", precision: Number(m[4]), scale: Number(m[5]) };
  }
  return out;
}

/** `--rows START:END` (0-based, half-open). */
export function parseRows(text: string | undefined): { start: number; end: number } | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d+):(\d+)$/.exec(text);
  if (!m) throw new UsageError(`--rows must be START:END (0-based, half-open), got '${text}'`);
  const start = Number(m[1]);
  const end = Number(m[2]);
  if (end < start) throw new UsageError(`--rows ${text}: END must be >= START`);
  return { start, end };
}

function columnList(raw: FlagValue): string[] | undefined {
  return typeof raw === "string" ? raw.split(",").map((c) => c.trim()).filter((c) => c) : undefined;
}

function count(flag: string, raw: FlagValue, dflt: number): number {
  if (raw === undefined) return dflt;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new UsageError(`--${flag} must be a count, got '${raw}'`);
  }
  return n;
}

/**
 * What the freeze bar says after the bar: rows, rows/s, and the source's MB/s when its
 * share read is known (so it agrees with the summary's size over time).
 *
 * @param p A progress report.
 * @returns E.g. `1,200,000 rows  410,000 rows/s  21.9 MB/s`.
 */
export function freezeProgressText(p: FreezeProgress): string {
  const seconds = Math.max(p.seconds, 1e-3);
  const parts = [
    `${formatCount(p.rows)} rows`,
    `${formatCount(Math.round(p.rows / seconds))} rows/s`,
  ];
  if (p.fraction !== null && p.input_bytes !== null) {
    parts.push(formatRate(p.fraction * p.input_bytes, seconds));
  }
  return parts.join("  ");
}

/** The settings `freeze` resolves: the freeze table and the key flags. */
const FREEZE_FLAGS_SETTINGS = Object.freeze({ ...FREEZE_SETTINGS, ...ENCRYPTION_SETTINGS });

/** `freeze <source> <archive>`. */
export const freezeCommand = command({
  name: "freeze",
  summary:
    "Freezes a table (CSV, JSON lines, Parquet, Arrow IPC) into a checksummed archive; either may be an s3:// URI.",
  usage: "<source> <archive>",
  args: { min: 2, max: 2 },
  settings: FREEZE_FLAGS_SETTINGS,
  flags: [
    SOURCE_FORMAT,
    SOURCE_DELIMITER,
    FORCE,
    STORAGE_CLASS,
    {
      name: "quantize",
      type: "string",
      value: "QUANT_HIGH|QUANT_MEDIUM|QUANT_LOW",
      help: "Store every float column lossily at this level (audit lists it in lossy_columns)",
    },
    {
      name: "primary-key",
      type: "string",
      value: "COL",
      help: "A column whose values must be unique and non-null",
    },
    {
      name: "partition-by",
      type: "string",
      value: "a,b",
      help: "Write one archive per distinct value into <archive>/ as a directory",
    },
    {
      name: "types",
      type: "string",
      value: "a=json,b=decimal(18,2)",
      help: "Force column types (json or string store nested values on purpose)",
    },
    {
      name: "column-codec",
      type: "string",
      value: "a=lzma2,b=zstd:3",
      help: "Codec (and level) of named columns, over --codec or --profile",
    },
  ],
  examples: [
    "permafrost freeze flights.parquet flights.pf --codec lzma2",
    "permafrost freeze events.csv out/ --partition-by country,year",
    "permafrost freeze logs.parquet logs.pf --types tags=json",
    "permafrost freeze flights.csv flights.pf --profile auto --column-codec notes=lzma2",
  ],
  run: runFreeze,
});

/** Runs `freeze` (from `-`, stdin, through a spooled file). */
async function runFreeze(parsed: Parsed<typeof FREEZE_FLAGS_SETTINGS>, io: CliIo): Promise<number> {
  const { args, flags, settings } = parsed;
  const [given, archive] = args as [string, string];
  if (given === "-") {
    // Spooled to a file first; the format is CSV unless --format says otherwise.
    return await fromStdin(
      io,
      (path) =>
        runFreeze(
          {
            args: [path, archive],
            flags: { ...flags, format: flags.format ?? "csv" },
            settings,
          },
          io,
        ),
    );
  }
  // A local CSV or Parquet file is read in the freeze's Worker pool: started before the
  // freeze's modules load, its Workers load theirs meanwhile (ops/_freeze_pool.ts).
  const pools = flags["partition-by"] === undefined ? await loadModule("freezePool") : null;
  pools?.startFreezePool(given, {
    format: flags.format as SourceFormat | undefined,
    primaryKey: flags["primary-key"] as string | undefined,
    threads: settings.threads === 0 ? undefined : settings.threads,
  });
  try {
    return await freezeSource(given, archive, parsed, io);
  } finally {
    await pools?.stopStartedPool();
  }
}

/** Runs `freeze` of a file or URI. */
async function freezeSource(
  source: string,
  archive: string,
  { flags, settings }: Parsed<typeof FREEZE_FLAGS_SETTINGS>,
  io: CliIo,
): Promise<number> {
  const { freeze } = await loadModule("freeze");
  const partitionBy = columnList(flags["partition-by"]);
  if (flags["partition-by"] !== undefined && !partitionBy?.length) {
    throw new UsageError("--partition-by needs column names, e.g. --partition-by country,year");
  }
  const bar = new ProgressBar("freeze", io.progress);
  const profile = settings.profile === "" ? undefined : settings.profile as CodecProfile;
  const options = {
    // A profile picks every column's codec: --codec then only counts when changed from
    // its default (the library refuses a codec and a profile together).
    codec: profile && settings.codec === "zstd" ? undefined : settings.codec,
    profile,
    columnCodecs: parseColumnCodecs(flags["column-codec"]),
    // Likewise a profile's own chunk size (max_compression's) when --chunk-rows is left at its default.
    chunkRows: profile && settings.chunkRows === DEFAULT_CHUNK_ROWS
      ? undefined
      : settings.chunkRows,
    threads: settings.threads === 0 ? undefined : settings.threads,
    quantization: flags.quantize as Quantization | undefined,
    primaryKey: flags["primary-key"] as string | undefined,
    format: flags.format as SourceFormat | undefined,
    delimiter: delimiterFlag(flags.delimiter),
    types: parseTypes(flags.types as string | undefined),
    encryption: await freezeEncryption(flags, { env: io.env }),
    overwrite: flags.force === true,
    storageClass: flags["storage-class"] as string | undefined,
    onProgress: (p: FreezeProgress) => bar.update(p.fraction, freezeProgressText(p)),
    onWarning: (w: { message: string }) => {
      bar.done();
      io.err(`warning: ${w.message}`);
    },
  };
  let summary;
  if (partitionBy) {
    const { freezePartitioned } = await loadModule("partition");
    summary = await freezePartitioned(source, archive, { ...options, partitionBy });
    bar.done();
    io.err(
      `wrote ${summary.partitions.length} partition(s) under ${
        archive.replace(/\/+$/, "")
      }/ (manifest: _manifest.json)`,
    );
  } else {
    summary = await freeze(source, archive, options);
    bar.done();
  }
  for (const c of summary.widened_columns) {
    io.err(
      `note: column "${c}" held values beyond the type sample that did not fit; stored as text (JSON text for JSON lines)`,
    );
  }
  const ratio = summary.ratio === null ? "" : ` (${summary.ratio.toFixed(2)}x)`;
  io.err(
    `froze ${formatCount(summary.rows)} rows: ${
      summary.input_bytes === null ? "?" : formatBytes(summary.input_bytes)
    } -> ${formatBytes(summary.archive_bytes)}${ratio} in ${
      summary.seconds.toFixed(2)
    } s, codec ${summary.codec}${summary.auto_reason ? ` (${summary.auto_reason})` : ""}${
      dialectText(summary.csv_dialect)
    }`,
  );
  return 0;
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
  const pct = s.payload_bytes > 0 ? (100 * s.bytes_read) / s.payload_bytes : 0;
  parts.push(
    `read ${formatBytes(s.bytes_read)} of ${formatBytes(s.payload_bytes)} payload (${
      pct.toFixed(1)
    }%)`,
  );
  return parts.join("; ");
}

/** `thaw <archive|dir> <output>`. */
export const thawCommand = command({
  name: "thaw",
  summary:
    "Thaws an archive (or a partitioned dataset) to CSV, JSON lines, Parquet, Arrow IPC or xlsx; '-' is stdout; either may be an s3:// URI.",
  usage: "<archive> <output>",
  args: { min: 2, max: 2 },
  settings: { ...ENCRYPTION_SETTINGS, threads: FREEZE_SETTINGS.threads },
  flags: [
    {
      name: "rows",
      type: "string",
      value: "START:END",
      help: "Only these rows (0-based, half-open)",
    },
    { name: "columns", type: "string", value: "a,b", help: "Only these columns" },
    {
      name: "where",
      type: "string",
      value: "EXPR",
      help: "Only rows matching, e.g. \"delay > 60 and origin = 'SFO'\" (chunks pruned by min/max)",
    },
    {
      name: "format",
      type: "string",
      value: "csv|jsonl|json|parquet|arrow|xlsx",
      help: "Output format (default: by extension; csv for '-')",
    },
    {
      name: "delimiter",
      type: "string",
      value: "CHAR",
      help: "CSV field delimiter of the output (default ,; 'tab' for a tab)",
    },
    {
      name: "split-sheets",
      type: "boolean",
      help: "xlsx: continue past 1,048,575 rows on Sheet2, Sheet3, …",
    },
    {
      name: "require-encryption",
      type: "boolean",
      help: "Refuse an archive that is not encrypted",
    },
    {
      name: "schema",
      type: "string",
      value: "FILE",
      help:
        "Give the rows in this schema (JSON fields, or audit's stored_schema): new columns null, dropped ones gone, exact casts only",
    },
    FORCE,
    STORAGE_CLASS,
  ],
  examples: [
    "permafrost thaw flights.pf back.csv",
    "permafrost thaw flights.pf v2.csv --schema flights-v2.schema.json",
    "permafrost thaw flights.pf some.jsonl --rows 1500000:1500010 --columns date,delay",
    'permafrost thaw trips.pf - --where "delay > 60" | head',
  ],
  async run({ args, flags, settings }, io) {
    const [archive, output] = args as [string, string];
    const { thaw } = await loadModule("thaw");
    const where = flags.where as string | undefined;
    if (where !== undefined && where.trim() === "") {
      throw new UsageError(`--where needs a condition, e.g. --where "delay > 60"`);
    }
    const keys = await thawKeys(flags, { env: io.env });
    const schemaFile = flags.schema as string | undefined;
    let schema;
    if (schemaFile !== undefined) {
      const { parseSchemaJson } = await loadModule("evolve");
      let text: string;
      try {
        text = await Deno.readTextFile(schemaFile);
      } catch (cause) {
        throw new UsageError(
          `Cannot read --schema ${schemaFile}: ${cause instanceof Error ? cause.message : cause}`,
        );
      }
      schema = parseSchemaJson(text, schemaFile);
    }
    let summary;
    try {
      summary = await thaw(archive, output, {
        ...(schema ? { schema } : {}),
        rows: parseRows(flags.rows as string | undefined),
        columns: columnList(flags.columns),
        format: flags.format as "csv" | "xlsx" | undefined,
        delimiter: delimiterFlag(flags.delimiter),
        where,
        splitSheets: flags["split-sheets"] === true,
        requireEncryption: flags["require-encryption"] === true,
        overwrite: flags.force === true,
        storageClass: flags["storage-class"] as string | undefined,
        threads: settings.threads === 0 ? undefined : settings.threads,
        keys,
      });
    } catch (err) {
      // `thaw x.pf - | head`: the reader had enough; that is not a failure.
      if (output === "-" && brokenPipe(err)) return 0;
      throw err;
    }
    const warning = unusedKeyWarning(archive, keys, summary.encrypted);
    if (warning !== null) io.err(warning);
    io.err(
      `thawed ${formatCount(summary.rows)} rows to ${
        summary.path === "-" ? "stdout" : summary.path
      } (${formatBytes(summary.output_bytes)}) in ${
        summary.seconds.toFixed(2)
      } s, ${summary.chunks_read} chunk(s) read; ${thawStatsText(summary)}`,
    );
    return 0;
  },
});

/**
 * Runs `use` on a temp file holding all of stdin: the readers need a file they can
 * sample and read again (and the cluster a file it can cut into ranges), so `-` as a
 * source is spooled to disk first (never held in memory) and removed afterwards.
 */
async function fromStdin(io: CliIo, use: (path: string) => Promise<number>): Promise<number> {
  const path = await Deno.makeTempFile({ prefix: "permafrost-stdin-" });
  try {
    const file = await Deno.open(path, { write: true });
    await (io.stdin ?? Deno.stdin.readable).pipeTo(file.writable);
    return await use(path);
  } finally {
    await Deno.remove(path).catch(() => {});
  }
}

/** Whether `err` (or an error it wraps) is a write to a pipe whose reader has gone. */
function brokenPipe(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof Deno.errors.BrokenPipe) return true;
  }
  return false;
}

/** `audit <archive>`. */
export const auditCommand = command({
  name: "audit",
  summary:
    "Describes an archive from its header and footer only: a table per column on a terminal, JSON otherwise.",
  usage: "<archive>",
  args: { min: 1, max: 1 },
  flags: [
    { name: "json", type: "boolean", help: "JSON (the default when stdout is not a terminal)" },
    { name: "table", type: "boolean", help: "The table (the default on a terminal)" },
  ],
  examples: ["permafrost audit flights.pf", "permafrost audit flights.pf --json | jq .columns"],
  async run({ args, flags }, io) {
    if (flags.json && flags.table) throw new UsageError("give --json or --table, not both");
    const { audit, formatAudit } = await loadModule("inspect");
    const report = await audit(args[0]!);
    const table = flags.table === true || (flags.json !== true && io.stdoutIsTerminal === true);
    io.out(table ? formatAudit(report) : JSON.stringify(report, null, 2));
    return 0;
  },
});

/** `verify <archive>`. */
export const verifyCommand = command({
  name: "verify",
  summary: "Checks every hash of an archive; exit 1 naming the first bad chunk.",
  usage: "<archive>",
  args: { min: 1, max: 1 },
  flags: [{ name: "json", type: "boolean", help: "Also print the report as JSON on stdout" }],
  examples: ["permafrost verify flights.pf"],
  async run({ args, flags }, io) {
    const archive = args[0]!;
    const { verify } = await loadModule("inspect");
    const bar = new ProgressBar("verify", io.progress);
    const report = await verify(archive, {
      onProgress: (n, total) => bar.update(total === 0 ? 1 : n / total, formatBytes(n)),
    });
    bar.done();
    if (flags.json) io.out(JSON.stringify(report, null, 2));
    if (report.ok) {
      io.err(
        `ok: ${archive}: header, payload and ${report.chunks} chunk hashes match (${
          formatBytes(report.bytes_checked)
        })`,
      );
      const late = Object.entries(report.columns_since);
      if (late.length > 0) {
        io.err(
          `columns added by an append (earlier chunks hold no block and read them as null): ${
            late.map(([name, since]) => `${name} from chunk ${since}`).join(", ")
          }`,
        );
      }
      return 0;
    }
    for (const e of report.errors) io.err(`error: ${e.message}`);
    io.err(
      `FAILED: ${archive}: ${
        report.first_bad_chunk === null
          ? "payload hash mismatch"
          : `first bad chunk is ${report.first_bad_chunk}`
      }`,
    );
    return 1;
  },
});

/** `peek <archive>`. */
export const peekCommand = command({
  name: "peek",
  summary: "Shows the first rows of an archive as a table.",
  usage: "<archive>",
  args: { min: 1, max: 1 },
  settings: ENCRYPTION_SETTINGS,
  flags: [
    { name: "rows", type: "string", value: "N", help: "Rows to show (default 10)" },
    { name: "columns", type: "string", value: "a,b", help: "Only these columns" },
    { name: "json", type: "boolean", help: "JSON instead of a table" },
  ],
  examples: ["permafrost peek flights.pf --rows 5"],
  async run({ args, flags }, io) {
    const { formatTable, peek } = await loadModule("inspect");
    const result = await peek(args[0]!, {
      rows: count("rows", flags.rows, 10),
      keys: await thawKeys(flags, { env: io.env }),
      columns: columnList(flags.columns),
    });
    io.out(flags.json ? JSON.stringify(result) : formatTable(result));
    if (!flags.json) io.err(`(${result.rows.length} of ${formatCount(result.total_rows)} rows)`);
    return 0;
  },
});

/** `append <source> <archive>`. */
export const appendCommand = command({
  name: "append",
  summary: "Adds a source's rows to an archive as new chunks, atomically, with its own schema.",
  usage: "<source> <archive>",
  args: { min: 2, max: 2 },
  settings: { threads: FREEZE_SETTINGS.threads },
  flags: [
    SOURCE_FORMAT,
    SOURCE_DELIMITER,
    {
      name: "evolve",
      type: "boolean",
      help:
        "Let the source add nullable columns (stored chunks read them as null, unrewritten; format 1.8) and leave out nullable ones (stored as nulls)",
    },
  ],
  examples: [
    "permafrost append more.csv trips.pf",
    "permafrost append with_tip.csv trips.pf --evolve",
  ],
  async run({ args, flags, settings }, io) {
    const [source, archive] = args as [string, string];
    const { append } = await loadModule("append");
    const bar = new ProgressBar("append", io.progress);
    const s = await append(source, archive, {
      format: flags.format as SourceFormat | undefined,
      delimiter: delimiterFlag(flags.delimiter),
      threads: settings.threads === 0 ? undefined : settings.threads,
      evolve: flags.evolve === true,
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
    if (s.columns_added.length > 0) {
      io.err(
        `added column(s) ${
          s.columns_added.join(", ")
        }: the ${s.chunks_before} chunk(s) stored before read them as null`,
      );
    }
    if (s.columns_filled.length > 0) {
      io.err(`stored as nulls (not in the source): ${s.columns_filled.join(", ")}`);
    }
    return 0;
  },
});

/** `diff <a> <b>`. */
export const diffCommand = command({
  name: "diff",
  summary: "Compares two archives chunk by chunk from their footers' hashes (no payload read).",
  usage: "<a.pf> <b.pf>",
  args: { min: 2, max: 2 },
  flags: [
    { name: "json", type: "boolean", help: "JSON instead of text" },
    { name: "exit-code", type: "boolean", help: "Exit 1 when they differ" },
  ],
  examples: ["permafrost diff old.pf new.pf --exit-code"],
  async run({ args, flags }, io: CliIo) {
    const { diff, formatDiff } = await loadModule("diff");
    const report = await diff(args[0]!, args[1]!);
    io.out(flags.json ? JSON.stringify(report, null, 2) : formatDiff(report));
    return flags["exit-code"] && !report.identical ? 1 : 0;
  },
});

/** Every archive command. */
export const ARCHIVE_COMMANDS: readonly Command[] = Object.freeze([
  freezeCommand,
  thawCommand,
  auditCommand,
  verifyCommand,
  peekCommand,
  appendCommand,
  diffCommand,
] as Command[]);
