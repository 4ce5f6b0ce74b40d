/**
 * The cluster client commands: `cluster submit`, `health`, `jobs`, `workers`,
 * `status`, `wait` and `cancel`. They reach the master over HTTP with the client in
 * `client/` (`--master`, `PERMAFROST_MASTER_URL`), sending `Authorization: Bearer`
 * from `PERMAFROST_TOKEN` (or `--token`, which shows in `ps`) when set. Data (ids,
 * tables, JSON) goes to stdout; progress and the summary to stderr. A 401 or 403 exits
 * 1 with the master's reason and what to do about it.
 *
 * `submit` checks its codec, format and chunk size against the same lists the master
 * checks (`CODEC_CHOICES`, `SOURCE_FORMATS`, `MAX_CHUNK_ROWS`), so a typo stops here
 * with exit 2 instead of travelling. Relative paths are sent as typed with this
 * directory as `cwd`: a master without data roots resolves them against it, one with
 * data roots against its first root.
 *
 * @module
 */
import { CODEC_CHOICES } from "../codecs/ids.ts";
import { MAX_CHUNK_ROWS } from "../format/constants.ts";
import {
  enumParser,
  intParser,
  type Setting,
  setting,
  stringParser,
  urlParser,
} from "../internal/config.ts";
import { formatBytes, formatCount, ProgressBar, stderrSink } from "../internal/progress.ts";
import { SOURCE_FORMATS } from "../io/types.ts";
import type { ClusterClient } from "../client/cluster_client.ts";
import type { JobRecord, SubmitRequest } from "../client/types.ts";
import { type Command, command, type Flag, type Parsed } from "./command.ts";
import { UsageError } from "./errors.ts";
import type { CliIo } from "./io.ts";
import { loadModule } from "./lazy.ts";

/** Settings of every `cluster` client command. */
export const CLIENT_CONFIG = Object.freeze({
  master: setting({
    flag: "--master",
    env: "PERMAFROST_MASTER_URL",
    default: "http://127.0.0.1:8700",
    parse: urlParser(),
    description: "The master's URL",
  }),
  token: tokenSetting(
    "Bearer token sent to the master when it has auth on (cluster add-user prints one); prefer the variable: flags show in ps",
  ),
});

/**
 * `--token` / `PERMAFROST_TOKEN`: the bearer token a client command sends (a secret:
 * never printed).
 *
 * @param description What it is for, in the help.
 * @returns The setting.
 */
export function tokenSetting(description: string): Setting<string> {
  return setting({
    flag: "--token",
    env: "PERMAFROST_TOKEN",
    default: "",
    parse: { ...stringParser({ nonEmpty: false }), describe: "a JWT", secret: true },
    description,
  });
}

/** Settings of the commands that wait for a job. */
const WAIT_CONFIG = Object.freeze({
  ...CLIENT_CONFIG,
  pollMs: setting({
    flag: "--poll-ms",
    env: "PERMAFROST_POLL_MS",
    default: 500,
    parse: intParser({ min: 10, max: 60_000 }),
    description: "How often a wait asks the master, in milliseconds",
  }),
});

/** Settings of `cluster submit`. */
const SUBMIT_CONFIG = Object.freeze({
  ...WAIT_CONFIG,
  codec: setting({
    flag: "--codec",
    env: "PERMAFROST_CODEC",
    default: "",
    parse: enumParser(CODEC_CHOICES),
    description: "Codec of every block (default: the master's)",
  }),
  chunkRows: setting({
    flag: "--chunk-rows",
    env: "PERMAFROST_DEFAULT_CHUNK",
    default: 0,
    parse: intParser({ min: 1, max: MAX_CHUNK_ROWS }),
    description: "Rows per chunk (default: the master's)",
  }),
});

const JSON_FLAG: Flag = {
  name: "json",
  type: "boolean",
  help: "JSON on stdout instead of a table",
};

type ClientSettings = Parsed<typeof CLIENT_CONFIG>["settings"];

/**
 * Runs `use` with a client for the master the settings name; a 401 or 403 answer
 * becomes exit 1 with the master's reason and what to do.
 */
async function withClient(
  settings: ClientSettings,
  io: CliIo,
  use: (client: ClusterClient) => Promise<number>,
): Promise<number> {
  const [{ ClusterClient }, { JobError }] = await Promise.all([
    loadModule("clusterClient"),
    loadModule("clientErrors"),
  ]);
  const sentToken = settings.token !== "";
  const client = new ClusterClient(settings.master, {
    fetch: io.fetch,
    token: sentToken ? settings.token : undefined,
  });
  try {
    return await use(client);
  } catch (err) {
    if (err instanceof JobError && (err.status === 401 || err.status === 403)) {
      io.err(authFailure(err.status, err.message, sentToken));
      return 1;
    }
    if (err instanceof JobError && err.code === "UNREACHABLE") {
      io.err(
        `error: ${err.message} [UNREACHABLE]\nIs a master running there? Start one with 'permafrost master' (or everything on this machine with 'permafrost start'); if it runs elsewhere, pass --master URL or set PERMAFROST_MASTER_URL.`,
      );
      return 1;
    }
    throw err;
  }
}

/** The message of a 401 or 403 answer: the status, the master's reason, what to do. */
function authFailure(status: 401 | 403, message: string, sentToken: boolean): string {
  const hint = status === 403
    ? "your token lacks the right or namespace this needs (ask an operator: permafrost cluster add-user ... --can-freeze --namespace NS)"
    : sentToken
    ? "the token was refused (expired, revoked, or signed with another secret): get a new one with permafrost cluster token <user>"
    : "the master has auth on: set PERMAFROST_TOKEN to a token from permafrost cluster add-user (or pass --token)";
  return `error: ${status} ${status === 401 ? "Unauthorized" : "Forbidden"}: ${message}\n${hint}`;
}

/** A text table: a header row and left-aligned columns two spaces apart. */
function table(head: readonly string[], rows: readonly string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(head), ...rows.map(line)].join("\n");
}

/** Waits for a job with a progress bar; exit 0 when it is DONE, else 1. */
async function waitFor(
  client: ClusterClient,
  jobId: string,
  options: { json: boolean; pollMs: number; io: CliIo },
): Promise<number> {
  const { io } = options;
  const bar = new ProgressBar(`job ${jobId}`, io.progress ?? stderrSink());
  const started = performance.now();
  let job: JobRecord;
  try {
    job = await client.wait(jobId, {
      pollInterval: options.pollMs,
      onProgress: (j) =>
        bar.update(
          j.tasks_total === null ? null : j.progress,
          j.tasks_total === null
            ? `${j.phase}…`
            : `${j.tasks_done}/${j.tasks_total} tasks${
              j.total_rows === null ? "" : `  ${formatCount(j.total_rows)} rows`
            }  ${j.phase}`,
        ),
    });
  } finally {
    bar.done();
  }
  if (options.json) io.out(JSON.stringify(job, null, 2));
  const seconds = ((performance.now() - started) / 1000).toFixed(2);
  if (job.status !== "DONE") {
    io.err(`job ${jobId} ${job.status}${job.error ? `: ${job.error}` : ""}`);
    return 1;
  }
  io.err(
    `job ${jobId} DONE: ${formatCount(job.total_rows ?? 0)} rows in ${
      job.tasks_total ?? 0
    } tasks -> ${job.destination} (${formatBytes(job.archive_bytes ?? 0)}${
      job.ratio === null ? "" : `, ${job.ratio.toFixed(1)}x smaller`
    }), codec ${job.codec_used ?? job.codec}, ${
      job.rows_per_s === null ? "" : `${formatCount(Math.round(job.rows_per_s))} rows/s, `
    }waited ${seconds} s`,
  );
  for (const c of job.widened_columns) {
    io.err(
      `note: column "${c}" held values beyond the type sample that did not fit; stored as text (JSON text for JSON lines)`,
    );
  }
  return 0;
}

/** `cluster submit <source> <destination>`. */
export const submitCommand = command({
  name: "cluster submit",
  summary:
    "Submits a freeze job to the master; prints its id (with --wait, waits for it with a progress bar).",
  usage: "<source> <destination>",
  args: { min: 2, max: 2 },
  settings: SUBMIT_CONFIG,
  flags: [
    {
      name: "format",
      type: "string",
      value: SOURCE_FORMATS.join("|"),
      help: "Source format (default: by extension)",
    },
    { name: "wait", type: "boolean", help: "Wait for the job; exit 1 unless it is DONE" },
    { ...JSON_FLAG, help: "With --wait: print the finished job as JSON on stdout" },
  ],
  details:
    "The master (and its workers) must see the same paths. Relative paths resolve against this directory, or against the master's first data root when it has any.",
  examples: [
    "permafrost cluster submit /data/flights.csv /data/flights.pf --wait",
    "PERMAFROST_TOKEN=… permafrost cluster submit team-a/in.csv team-a/out.pf --codec lzma2",
  ],
  run({ args, flags, settings }, io) {
    const format = flags.format as string | undefined;
    if (format !== undefined && !(SOURCE_FORMATS as readonly string[]).includes(format)) {
      return Promise.reject(
        new UsageError(`--format must be one of ${SOURCE_FORMATS.join(", ")}, got '${format}'`),
      );
    }
    return withClient(settings, io, async (client) => {
      const request: SubmitRequest = { source: args[0]!, destination: args[1]!, cwd: Deno.cwd() };
      if (settings.codec !== "") request.codec = settings.codec;
      if (settings.chunkRows !== 0) request.chunk_rows = settings.chunkRows;
      if (format !== undefined) request.format = format as SubmitRequest["format"];
      const { job_id: jobId } = await client.submit(request);
      io.err(`submitted job ${jobId} to ${settings.master}`);
      if (!flags.wait) {
        io.out(jobId);
        return 0;
      }
      return await waitFor(client, jobId, {
        json: flags.json === true,
        pollMs: settings.pollMs,
        io,
      });
    });
  },
});

/** `cluster health`. */
export const healthCommand = command({
  name: "cluster health",
  summary: "The master's health: its version and worker counts (JSON).",
  usage: "",
  args: { min: 0, max: 0 },
  settings: CLIENT_CONFIG,
  examples: ["permafrost cluster health --master http://10.0.0.5:8700"],
  run: ({ settings }, io) =>
    withClient(settings, io, async (client) => {
      io.out(JSON.stringify(await client.health(), null, 2));
      return 0;
    }),
});

/** `cluster jobs`. */
export const jobsCommand = command({
  name: "cluster jobs",
  summary: "Every job the master knows, newest first.",
  usage: "",
  args: { min: 0, max: 0 },
  settings: CLIENT_CONFIG,
  flags: [JSON_FLAG],
  examples: ["permafrost cluster jobs", "permafrost cluster jobs --json | jq '.[0].status'"],
  run: ({ flags, settings }, io) =>
    withClient(settings, io, async (client) => {
      const jobs = await client.listJobs();
      io.out(
        flags.json ? JSON.stringify(jobs, null, 2) : table(
          [
            "job_id",
            "status",
            "progress",
            "tasks",
            "rows",
            "rows/s",
            "ratio",
            "codec",
            "destination",
          ],
          jobs.map((j) => [
            j.job_id,
            j.status,
            `${Math.round(j.progress * 100)}%`,
            j.tasks_total === null ? "…" : `${j.tasks_done}/${j.tasks_total}`,
            j.total_rows === null ? "" : formatCount(j.total_rows),
            j.rows_per_s === null ? "" : formatCount(Math.round(j.rows_per_s)),
            j.ratio === null ? "" : `${j.ratio.toFixed(1)}x`,
            j.codec_used ?? j.codec,
            j.destination,
          ]),
        ),
      );
      return 0;
    }),
});

/** `cluster workers`. */
export const workersCommand = command({
  name: "cluster workers",
  summary: "Every worker the master knows, with its status and last heartbeat.",
  usage: "",
  args: { min: 0, max: 0 },
  settings: CLIENT_CONFIG,
  flags: [JSON_FLAG],
  examples: ["permafrost cluster workers"],
  run: ({ flags, settings }, io) =>
    withClient(settings, io, async (client) => {
      const workers = await client.listWorkers();
      io.out(
        flags.json ? JSON.stringify(workers, null, 2) : table(
          ["worker_id", "status", "task", "jobs", "tasks done", "heartbeat", "url"],
          workers.map((w) => [
            w.worker_id,
            w.status,
            w.task_id ?? "",
            String(w.jobs_done),
            String(w.tasks_done),
            `${w.heartbeat_age_s.toFixed(1)} s ago`,
            w.url,
          ]),
        ),
      );
      return 0;
    }),
});

/** `cluster status <job_id>`. */
export const statusCommand = command({
  name: "cluster status",
  summary: "One job with its tasks (JSON).",
  usage: "<job_id>",
  args: { min: 1, max: 1 },
  settings: CLIENT_CONFIG,
  examples: ["permafrost cluster status 3f0c…"],
  run: ({ args, settings }, io) =>
    withClient(settings, io, async (client) => {
      io.out(JSON.stringify(await client.job(args[0]!), null, 2));
      return 0;
    }),
});

/** `cluster wait <job_id>`. */
export const waitCommand = command({
  name: "cluster wait",
  summary: "Waits for a job with a progress bar; exit 1 unless it ends DONE.",
  usage: "<job_id>",
  args: { min: 1, max: 1 },
  settings: WAIT_CONFIG,
  flags: [{ ...JSON_FLAG, help: "Print the finished job as JSON on stdout" }],
  examples: ["permafrost cluster wait 3f0c… --json"],
  run: ({ args, flags, settings }, io) =>
    withClient(
      settings,
      io,
      (client) =>
        waitFor(client, args[0]!, { json: flags.json === true, pollMs: settings.pollMs, io }),
    ),
});

/** `cluster cancel <job_id>`. */
export const cancelCommand = command({
  name: "cluster cancel",
  summary: "Cancels a QUEUED or RUNNING job.",
  usage: "<job_id>",
  args: { min: 1, max: 1 },
  settings: CLIENT_CONFIG,
  examples: ["permafrost cluster cancel 3f0c…"],
  run: ({ args, settings }, io) =>
    withClient(settings, io, async (client) => {
      const r = await client.cancel(args[0]!);
      io.err(`job ${r.job_id} is ${r.status}`);
      return 0;
    }),
});

/** Every cluster client command. */
export const CLUSTER_COMMANDS: readonly Command[] = Object.freeze([
  submitCommand,
  healthCommand,
  jobsCommand,
  workersCommand,
  statusCommand,
  waitCommand,
  cancelCommand,
] as Command[]);
