/**
 * `catalog thaw NAME OUT`: a registered dataset's rows, from the catalog's
 * `GET /datasets/{name}/rows`, into a file (CSV, JSON lines or Arrow IPC, from its
 * extension or `--format`) or stdout (`-`, CSV). The machine needs no access to the
 * archive itself, only to the catalog (`--catalog`, `PERMAFROST_CATALOG_URL`) and a token
 * with `can_thaw` (`PERMAFROST_TOKEN`). A file is written beside its name and renamed
 * into place once the last byte is in: a body the catalog cut short (a damaged chunk)
 * leaves nothing; an existing file is refused without `--force`.
 *
 * @module
 */
import { nodePath } from "../internal/node_builtin.ts";
import { setting, urlParser } from "../internal/config.ts";
import { tokenSetting } from "./cluster.ts";
import { PermafrostError } from "../internal/errors.ts";
import { formatBytes } from "../internal/progress.ts";
import { command } from "./command.ts";
import { UsageError } from "./errors.ts";

const FORMATS = ["csv", "jsonl", "arrow"] as const;
type Format = typeof FORMATS[number];

const BY_EXTENSION: Readonly<Record<string, Format>> = {
  ".csv": "csv",
  ".jsonl": "jsonl",
  ".ndjson": "jsonl",
  ".arrow": "arrow",
  ".arrows": "arrow",
};

/** Settings of the catalog client commands. */
const CATALOG_CLIENT_CONFIG = Object.freeze({
  catalog: setting({
    flag: "--catalog",
    env: "PERMAFROST_CATALOG_URL",
    default: "http://127.0.0.1:8800",
    parse: urlParser(),
    description: "The catalog's URL",
  }),
  token: tokenSetting(
    "Bearer token (with can_thaw) sent to the catalog when it has auth on; prefer the variable: flags show in ps",
  ),
});

function formatOf(out: string, given: unknown): Format {
  if (typeof given === "string") {
    if (!(FORMATS as readonly string[]).includes(given)) {
      throw new UsageError(`--format '${given}' is not one of ${FORMATS.join(", ")}`);
    }
    return given as Format;
  }
  if (out === "-") return "csv";
  const format = BY_EXTENSION[nodePath().extname(out).toLowerCase()];
  if (!format) {
    throw new UsageError(
      `Cannot tell the format of '${out}': name it .csv, .jsonl or .arrow, or pass --format (the catalog serves ${
        FORMATS.join(", ")
      }; thaw to Parquet or xlsx from the archive itself)`,
    );
  }
  return format;
}

/** `catalog thaw NAME OUT`. */
export const catalogThawCommand = command({
  name: "catalog thaw",
  summary:
    "Thaws a dataset registered in a catalog, through the catalog (no access to the archive needed).",
  usage: "<name> <output>",
  args: { min: 2, max: 2 },
  settings: CATALOG_CLIENT_CONFIG,
  flags: [
    { name: "version", type: "string", value: "V", help: "The version (default: the latest)" },
    { name: "rows", type: "string", value: "START:END", help: "Only rows START:END (0-based)" },
    { name: "columns", type: "string", value: "a,b", help: "Only these columns, in this order" },
    {
      name: "where",
      type: "string",
      value: "EXPR",
      help: "Only rows matching (the --where language)",
    },
    {
      name: "format",
      type: "string",
      value: "F",
      help: "csv, jsonl or arrow (default: from the extension)",
    },
    { name: "force", type: "boolean", help: "Replace an existing output file" },
  ],
  examples: [
    "permafrost catalog thaw flights flights.csv --catalog http://catalog:8800",
    "PERMAFROST_TOKEN=… permafrost catalog thaw flights - --version 2001-h1 --where \"origin = 'SEA'\"",
  ],
  async run({ args, flags, settings }, io) {
    const [name, out] = args as [string, string];
    const format = formatOf(out, flags.format);
    const query = new URLSearchParams({ format });
    for (const key of ["version", "rows", "columns", "where"] as const) {
      if (typeof flags[key] === "string") query.set(key, flags[key] as string);
    }
    if (typeof flags.rows === "string" && !/^\d+:\d+$/.test(flags.rows)) {
      throw new UsageError(`--rows '${flags.rows}' is not START:END, e.g. --rows 0:1000`);
    }
    if (out !== "-" && flags.force !== true && await exists(out)) {
      io.err(`error: '${out}' already exists; pass --force to replace it [DESTINATION_EXISTS]`);
      return 1;
    }
    const url = `${settings.catalog.replace(/\/+$/, "")}/datasets/${
      encodeURIComponent(name)
    }/rows?${query}`;
    const headers: Record<string, string> = {};
    if (settings.token) headers.authorization = `Bearer ${settings.token}`;
    let res: Response;
    try {
      res = await (io.fetch ?? fetch)(url, { headers });
    } catch (cause) {
      io.err(
        `error: Cannot reach the catalog at ${settings.catalog}: ${
          cause instanceof Error ? cause.message : String(cause)
        } [UNREACHABLE]\nIs it running? Start one with 'permafrost catalog serve', or pass --catalog URL.`,
      );
      return 1;
    }
    if (!res.ok) {
      const body = await res.json().catch(() => null) as
        | { error?: { code?: string; message?: string } }
        | null;
      const code = body?.error?.code ?? `HTTP_${res.status}`;
      const hint = res.status === 401
        ? "\nthe catalog has auth on: set PERMAFROST_TOKEN to a token with can_thaw"
        : res.status === 403
        ? "\nyour token lacks can_thaw or this dataset's namespace"
        : "";
      io.err(`error: ${body?.error?.message ?? res.statusText} [${code}]${hint}`);
      return 1;
    }
    const bytes = out === "-"
      ? await copy(res.body!, Deno.stdout.writable, false)
      : await toFile(res.body!, out);
    const version = typeof flags.version === "string" ? ` ${flags.version}` : "";
    io.err(
      `thawed ${name}${version} from ${settings.catalog} to ${
        out === "-" ? "stdout" : out
      } (${format}, ${formatBytes(bytes)})`,
    );
    return 0;
  },
});

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

/** Copies a body into a stream; returns the bytes. A cut body rejects. */
async function copy(
  body: ReadableStream<Uint8Array>,
  to: WritableStream<Uint8Array>,
  close: boolean,
): Promise<number> {
  let bytes = 0;
  const counted = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.length;
        controller.enqueue(chunk);
      },
    }),
  );
  await counted.pipeTo(to, { preventClose: !close });
  return bytes;
}

/** Writes a body beside `out`, then renames it into place; nothing is left on failure. */
async function toFile(body: ReadableStream<Uint8Array>, out: string): Promise<number> {
  const { basename, dirname, join } = nodePath();
  const temp = join(dirname(out), `.${basename(out)}.catalog-${crypto.randomUUID().slice(0, 8)}`);
  const file = await Deno.open(temp, { write: true, createNew: true });
  try {
    const bytes = await copy(body, file.writable, true);
    await Deno.rename(temp, out);
    return bytes;
  } catch (err) {
    await Deno.remove(temp).catch(() => {});
    throw new PermafrostError(
      "INCOMPLETE",
      `The catalog's answer was cut short (${
        err instanceof Error ? err.message : String(err)
      }): nothing was written to '${out}'`,
      { cause: err, path: out },
    );
  }
}

/** The catalog client commands. */
export const CATALOG_CLIENT_COMMANDS = [catalogThawCommand];
