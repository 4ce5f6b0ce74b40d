/**
 * `sql`: one `SELECT` over archives named with `--register alias=archive.pf`,
 * answered by DuckDB (`ops/sql.ts`: only the columns the query names are thawed, and
 * its `WHERE` skips chunks by their min/max). The answer goes to stdout (a table on a
 * terminal, CSV otherwise, or `--format`) or to `--output`; what was read of each
 * archive goes to stderr.
 *
 * @module
 */
import { formatBytes, formatCount } from "../internal/progress.ts";
import type { OutputFormat } from "../io/output.ts";
import { command } from "./command.ts";
import { UsageError } from "./errors.ts";
import { ENCRYPTION_SETTINGS, thawKeys } from "./keys.ts";
import { enumParser, setting } from "../internal/config.ts";
import { QUERY_BACKENDS, type QueryBackend } from "../ops/query_backends.ts";
import { loadModule } from "./lazy.ts";

const FORMATS = ["table", "csv", "jsonl", "json", "arrow", "parquet"] as const;

/** `--register alias=path`, each. */
function registrations(raw: unknown): [string, string][] {
  const list = Array.isArray(raw) ? raw as string[] : typeof raw === "string" ? [raw] : [];
  return list.map((r) => {
    const at = r.indexOf("=");
    if (at <= 0 || at === r.length - 1) {
      throw new UsageError(
        `--register '${r}' is not ALIAS=ARCHIVE, e.g. --register flights=data/flights.pf`,
      );
    }
    return [r.slice(0, at), r.slice(at + 1)];
  });
}

/** Settings of `sql`: the keys of encrypted archives, and the engine. */
const SQL_SETTINGS = Object.freeze({
  ...ENCRYPTION_SETTINGS,
  queryBackend: setting({
    flag: "--query-backend",
    env: "PERMAFROST_QUERY_BACKEND",
    default: "duckdb" as QueryBackend,
    parse: enumParser(QUERY_BACKENDS),
    description:
      "The engine: duckdb (native) or duckdb-wasm (WebAssembly, where native code may not load)",
  }),
});

/** `sql "SELECT …"`. */
export const sqlCommand = command({
  name: "sql",
  summary: "Answers one SELECT over archives (DuckDB), thawing only the columns it names.",
  usage: "<query>",
  args: { min: 1, max: 1 },
  settings: SQL_SETTINGS,
  flags: [
    {
      name: "register",
      type: "string",
      multiple: true,
      value: "ALIAS=ARCHIVE",
      help: "Name an archive (or partitioned dataset) for the query; repeat for more",
    },
    {
      name: "format",
      type: "string",
      value: FORMATS.join("|"),
      help: "Answer format (default: a table on a terminal, CSV otherwise)",
    },
    {
      name: "output",
      type: "string",
      value: "FILE",
      help: "Write the answer here instead of stdout (format by extension unless --format)",
    },
    { name: "force", type: "boolean", help: "Replace --output when it exists" },
  ],
  details:
    "Only one SELECT (or WITH … SELECT) runs; file functions, COPY, ATTACH, INSTALL and SET are refused. A WHERE on integer, decimal, date, timestamp, time or boolean columns of a one-table query skips the chunks whose min/max cannot match (on duckdb; duckdb-wasm has no parser tree, so it loads the columns the query names and filters them all).",
  examples: [
    `permafrost sql "SELECT origin, count(*), avg(delay) FROM flights GROUP BY 1" --register flights=flights.pf`,
    `permafrost sql "SELECT * FROM t WHERE day = '2024-03-01'" --register t=trips.pf --format jsonl`,
  ],
  async run({ args, flags, settings }, io) {
    const format = flags.format as (typeof FORMATS)[number] | undefined;
    if (format !== undefined && !(FORMATS as readonly string[]).includes(format)) {
      throw new UsageError(`--format must be one of ${FORMATS.join(", ")}, got '${format}'`);
    }
    const regs = registrations(flags.register);
    if (regs.length === 0) {
      throw new UsageError(
        "name at least one archive for the query: --register ALIAS=ARCHIVE (e.g. --register flights=flights.pf)",
      );
    }
    const [{ SqlSession }, { writeOutput }, { formatTable }] = await Promise.all([
      loadModule("sql"),
      loadModule("output"),
      loadModule("inspect"),
    ]);
    const keys = await thawKeys(flags, { env: io.env });
    const session = new SqlSession({ backend: settings.queryBackend });
    for (const [alias, path] of regs) await session.register(alias, path, { keys });
    const output = typeof flags.output === "string" ? flags.output : "-";
    const table = format === "table" ||
      (format === undefined && output === "-" && io.stdoutIsTerminal === true);
    const started = performance.now();
    const { value: rows, scans } = await session.execute(args[0]!, async ({ schema, batches }) => {
      if (table) {
        const { cellText } = await loadModule("cellText");
        const cells: (string | null)[][] = [];
        for await (const b of batches) {
          for (let r = 0; r < b.length; r++) {
            cells.push(b.columns.map((c, i) => cellText(c, r, schema[i]!)));
          }
        }
        io.out(formatTable({
          columns: schema.map((f) => f.name),
          types: schema.map((f) => f.type),
          rows: cells,
          total_rows: cells.length,
        }));
        return cells.length;
      }
      const written = await writeOutput(output, schema, batches, {
        ...(format !== undefined ? { format: format as OutputFormat } : {}),
        replace: flags.force === true,
      });
      return written.rows;
    });
    const seconds = (performance.now() - started) / 1000;
    for (const s of scans) {
      io.err(
        `${s.alias}: ${s.columns.length} column(s) thawed, ${s.chunks_read} of ${s.chunks_total} chunks read${
          s.chunks_pruned > 0 ? ` (${s.chunks_pruned} skipped by ${s.pruned_by})` : ""
        }, ${formatBytes(s.bytes_read)} of ${formatBytes(s.payload_bytes)} payload, ${
          formatCount(s.rows_loaded)
        } rows loaded`,
      );
    }
    io.err(`${formatCount(rows)} row(s) in ${seconds.toFixed(2)} s`);
    return 0;
  },
});
