/**
 * `storage gc`: aborts the uploads that killed processes left in object storage (parts
 * a store keeps, billed and invisible, until the upload is aborted), found in the upload
 * journal (`storage/journal.ts`). One line per upload on stderr, `--json` for scripts.
 *
 * @module
 */
import { type ConfigTable, pathParser, type Setting, setting } from "../internal/config.ts";
import { command } from "./command.ts";
import { UsageError } from "./errors.ts";
import { loadModule } from "./lazy.ts";

/** The settings of `storage gc`. */
export interface StorageSettings extends ConfigTable {
  /** `--state-dir` / `PERMAFROST_STATE_DIR`. */
  readonly stateDir: Setting<string>;
}

const STORAGE_SETTINGS: StorageSettings = Object.freeze({
  stateDir: setting({
    flag: "--state-dir",
    env: "PERMAFROST_STATE_DIR",
    default: "",
    parse: pathParser(),
    description:
      "Where uploads in flight are written down (default $XDG_STATE_HOME/permafrost or ~/.local/state/permafrost)",
  }),
});

const UNITS: Readonly<Record<string, number>> = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 };

/** `90s`, `30m`, `6h`, `2d` in ms. */
function duration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([smhd])$/.exec(text.trim());
  if (!m) throw new UsageError(`--older-than '${text}' is not a duration such as 30m, 6h or 2d`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

/** `storage gc [prefix]`. */
export const storageGcCommand = command({
  name: "storage gc",
  summary: "Aborts uploads to object storage that killed processes left unfinished.",
  usage: "[uri-prefix]",
  args: { min: 0, max: 1 },
  settings: STORAGE_SETTINGS,
  flags: [
    {
      name: "older-than",
      type: "string",
      value: "AGE",
      help:
        "Also abort uploads whose process still runs when they started this long ago (30m, 6h, 2d)",
    },
    { name: "dry-run", type: "boolean", help: "List what would be aborted; abort nothing" },
    { name: "json", type: "boolean", help: "Also print the report as JSON on stdout" },
  ],
  details: "Every upload in flight (an S3 multipart upload, a GCS resumable session) is written\n" +
    "down in the state directory and forgotten once it completes or is aborted. An upload\n" +
    "whose process is gone is aborted here; one whose process still runs is left alone\n" +
    "unless --older-than says it is stale. Azure keeps no uploads to abort: the service\n" +
    "drops uncommitted blocks within 7 days. Exit 1 when an abort failed (it stays\n" +
    "written down for the next run).",
  examples: [
    "permafrost storage gc",
    "permafrost storage gc s3://my-bucket/archive/ --dry-run",
    "permafrost storage gc --older-than 2d",
  ],
  async run({ args, flags, settings }, io) {
    const { collectUploads } = await loadModule("journal");
    const olderThan = flags["older-than"];
    const report = await collectUploads({
      prefix: args[0],
      stateDir: settings.stateDir || undefined,
      dryRun: flags["dry-run"] === true,
      ...(typeof olderThan === "string" ? { olderThanMs: duration(olderThan) } : {}),
    });
    if (flags.json) io.out(JSON.stringify(report, null, 2));
    const count = (state: string) => report.filter((u) => u.state === state).length;
    for (const u of report) {
      const what = `${u.uri} (started ${u.started} by process ${u.pid})`;
      if (u.state === "failed") io.err(`failed: ${what}: ${u.error}`);
      else io.err(`${u.state.replace("_", " ")}: ${what}`);
    }
    const summary = flags["dry-run"]
      ? `${count("orphaned")} to abort`
      : `${count("aborted")} aborted, ${count("failed")} failed`;
    io.err(`storage gc: ${summary}, ${count("in_progress")} in progress`);
    return count("failed") > 0 ? 1 : 0;
  },
});

/** The `storage` commands. */
export const STORAGE_COMMANDS = [storageGcCommand];
