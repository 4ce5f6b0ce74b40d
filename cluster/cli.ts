/**
 * The cluster's command lines, as functions `main.ts` calls (each returns an exit
 * code: 0 success, 1 failure with a message on stderr, 2 usage error):
 *
 * - {@link runMaster}: `master [--host H] [--port P] ...` serves the master until
 *   SIGINT/SIGTERM;
 * - {@link runWorker}: `worker --master URL [--host H] [--port P] [--worker-id ID] ...`;
 * - {@link runCluster}: `cluster submit|health|jobs|workers|status|wait|cancel`, the
 *   master's client, with a progress bar for `submit --wait` and `wait`;
 * - {@link runStart}: `start [--workers N]` (in `start.ts`): a master, N workers and
 *   a catalog on this machine, for trying it out.
 *
 * Settings follow flag > `PERMAFROST_*` variable > default (`master/config.ts`,
 * `worker/config.ts`, {@link CLIENT_CONFIG}); a bad value stops the command at once
 * with exit code 2, naming the flag and the variable. Human text and progress go to
 * stderr; data (ids, tables, JSON) to stdout.
 *
 * `deno run ... cluster/cli.ts master|worker|cluster|start ...` runs the same
 * commands without `main.ts` (the e2e tests and `start` spawn it that way).
 *
 * Auth: the `cluster` commands send `Authorization: Bearer <token>` from
 * `PERMAFROST_TOKEN` (or `--token`, which shows in `ps`: prefer the variable); a
 * 401 or 403 answer exits 1 with the status, the master's reason and what to do.
 * `submit` sends relative paths as given, with its working directory as `cwd`: a
 * master without data roots resolves them against it (as before), one with data
 * roots against its first root (`submit src.csv team-a/out.pf`).
 *
 * @module
 */
import {
  ConfigError,
  configHelp,
  type ConfigTable,
  loadConfig,
  parseArgs,
  processEnv,
  serverConfig,
  setting,
  stringParser,
  urlParser,
} from "../internal/config.ts";
import { PermafrostError } from "../internal/errors.ts";
import { stopSignal } from "../internal/stop_signal.ts";
import { JobError } from "../client/errors.ts";
import {
  formatBytes,
  formatCount,
  ProgressBar,
  type ProgressSink,
  stderrSink as progressStderr,
} from "../internal/progress.ts";
import { ClusterClient, type FetchLike } from "../client/cluster_client.ts";
import type { JobCodec, JobRecord, JobSourceFormat, SubmitRequest } from "../client/types.ts";
import { MASTER_CONFIG } from "../master/config.ts";
import { startMaster } from "../master/server.ts";
import { WORKER_CONFIG } from "../worker/config.ts";
import { advertisedUrl, createWorker } from "../worker/server.ts";
import { runStart } from "./start.ts";

export { runStart };

/** Settings of the `cluster` client commands. */
export const CLIENT_CONFIG = Object.freeze({
  master: setting({
    flag: "--master",
    env: "PERMAFROST_MASTER_URL",
    default: "http://127.0.0.1:8700",
    parse: urlParser(),
    description: "The master's URL",
  }),
  token: setting({
    flag: "--token",
    env: "PERMAFROST_TOKEN",
    default: "",
    parse: { ...stringParser({ nonEmpty: false }), describe: "a JWT", secret: true },
    description:
      "Bearer token sent to the master when it has auth on (cluster add-user prints one); prefer the variable: flags show in ps",
  }),
});

/** What the commands read and write besides their arguments (tests replace it). */
export interface CliIo {
  /** Environment (default: the process's `PERMAFROST_*` variables the tables name). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Messages (default: stderr). */
  print?: (line: string) => void;
  /** Data (default: stdout). */
  out?: (line: string) => void;
  /** Stops a server command when aborted (default: SIGINT or SIGTERM). */
  signal?: AbortSignal;
  /** Where progress bars draw (default: stderr, drawn only on a terminal). */
  progress?: ProgressSink;
  /** How the client reaches the master (tests: `app.request`). */
  fetch?: FetchLike;
}

const encoder = new TextEncoder();
function stderrLine(line: string): void {
  Deno.stderr.writeSync(encoder.encode(line.endsWith("\n") ? line : line + "\n"));
}
function stdoutLine(line: string): void {
  Deno.stdout.writeSync(encoder.encode(line.endsWith("\n") ? line : line + "\n"));
}

class UsageError extends Error {
  override name = "UsageError";
}

function displayHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

function loadOrUsage<T extends ConfigTable>(
  table: T,
  args: readonly string[],
  io: CliIo,
): ReturnType<typeof loadConfig<T>> {
  return loadConfig(table, { args, env: io.env ?? processEnv(table) });
}

/** Usage of `master`. */
export const MASTER_USAGE = `Usage: master [options]

Serves the cluster's master (REST API, status page at /) until SIGINT or SIGTERM.

Options (flag > environment variable > default):
${configHelp(MASTER_CONFIG)}`;

/**
 * `master`: serves the master until SIGINT/SIGTERM (or `io.signal`).
 *
 * @param argv Arguments after `master`.
 * @param io Environment, output, stop signal.
 * @returns Exit code: 0 after a clean stop, 1 on a failure, 2 on a usage error.
 */
export async function runMaster(argv: readonly string[], io: CliIo = {}): Promise<number> {
  const print = io.print ?? stderrLine;
  const config = serverConfig(MASTER_CONFIG, argv, {
    command: "master",
    usage: MASTER_USAGE,
    print,
    env: io.env,
  });
  if (typeof config === "number") return config;
  const stop = stopSignal(io.signal);
  let services;
  try {
    services = await startMaster(config);
  } catch (err) {
    stop.dispose();
    print(`master: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  try {
    const app = services.app;
    const server = Deno.serve({
      hostname: config.host,
      port: config.port,
      signal: stop.signal,
      onListen: () => {},
    }, (req, info) => app.fetch(req, { remoteAddr: info.remoteAddr as Deno.NetAddr }));
    const url = `http://${displayHost(config.host)}:${server.addr.port}`;
    print(`Master serving at ${url} — status page: ${url}/`);
    services.logger.info("master listening", { url, port: server.addr.port, host: config.host });
    await server.finished;
    return 0;
  } catch (err) {
    print(`master: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    stop.dispose();
    await services.close();
  }
}

/** Usage of `worker`. */
export const WORKER_USAGE = `Usage: worker --master URL [options]

Serves a cluster worker: registers with the master, heartbeats, runs one task at a
time, until SIGINT or SIGTERM.

Options (flag > environment variable > default):
${configHelp(WORKER_CONFIG)}`;

/**
 * `worker`: serves a worker until SIGINT/SIGTERM (or `io.signal`).
 *
 * @param argv Arguments after `worker`.
 * @param io Environment, output, stop signal.
 * @returns Exit code: 0 after a clean stop, 1 on a failure, 2 on a usage error.
 */
export async function runWorker(argv: readonly string[], io: CliIo = {}): Promise<number> {
  const print = io.print ?? stderrLine;
  const config = serverConfig(WORKER_CONFIG, argv, {
    command: "worker",
    usage: WORKER_USAGE,
    print,
    env: io.env,
  });
  if (typeof config === "number") return config;
  const stop = stopSignal(io.signal);
  const { node, app, logger } = createWorker(config);
  try {
    const server = Deno.serve({
      hostname: config.host,
      port: config.port,
      signal: stop.signal,
      onListen: () => {},
    }, (req) => app.fetch(req));
    const port = server.addr.port;
    const url = advertisedUrl(config.url, config.host, port);
    node.start(url);
    print(
      `Worker ${node.workerId} serving at http://${
        displayHost(config.host)
      }:${port} — master: ${config.master}`,
    );
    logger.info("worker listening", { url, port, worker_id: node.workerId });
    await server.finished;
    return 0;
  } catch (err) {
    print(`worker: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    stop.dispose();
    await node.stop();
  }
}

/** Usage of `cluster`. */
export const CLUSTER_USAGE = `Usage: cluster <command> [--master URL]

Commands:
  submit <source> <destination> [--codec zstd|lzma2|zpaq|auto] [--chunk-rows N]
         [--format csv|jsonl|parquet|arrow] [--wait] [--json]
                        submit a freeze job; prints its id (the master must see the
                        same paths; relative ones resolve against this directory, or
                        against the master's first data root when it has any)
  health                the master's worker counts (JSON)
  jobs [--json]         every job, newest first
  workers [--json]      every worker
  status <job_id>       one job with its tasks (JSON)
  wait <job_id> [--json]  wait for a job with a progress bar; exit 1 unless DONE
  cancel <job_id>       cancel a QUEUED or RUNNING job

Options (flag > environment variable > default):
${configHelp(CLIENT_CONFIG)}
  --poll-ms <ms>  How often --wait and wait ask the master (default 500)`;

const CLUSTER_COMMANDS = ["submit", "health", "jobs", "workers", "status", "wait", "cancel"];

/**
 * `cluster submit|health|jobs|workers|status|wait|cancel`.
 *
 * @param argv Arguments after `cluster`.
 * @param io Environment, output, progress sink, fetch.
 * @returns Exit code: 0 success (a waited job DONE), 1 failure (or a job not DONE), 2 usage error.
 */
export async function runCluster(argv: readonly string[], io: CliIo = {}): Promise<number> {
  const print = io.print ?? stderrLine;
  const out = io.out ?? stdoutLine;
  const [command, ...rest] = argv;
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    print(CLUSTER_USAGE);
    return command === undefined ? 2 : 0;
  }
  let sentToken = false;
  try {
    if (!CLUSTER_COMMANDS.includes(command)) {
      throw new UsageError(`Unknown cluster command '${command}'`);
    }
    const parsed = parseArgs(rest, {
      string: ["master", "token", "codec", "chunk-rows", "format", "poll-ms"],
      boolean: ["wait", "json"],
    });
    const config = loadOrUsage(
      CLIENT_CONFIG,
      (["master", "token"] as const).flatMap((f) =>
        parsed.flags[f] === undefined ? [] : [`--${f}=${String(parsed.flags[f])}`]
      ),
      io,
    );
    const only = (allowed: string[]) => {
      for (const f of Object.keys(parsed.flags)) {
        if (f !== "master" && f !== "token" && !allowed.includes(f)) {
          throw new UsageError(`--${f} does not apply to 'cluster ${command}'`);
        }
      }
    };
    const pollMs = parsed.flags["poll-ms"] === undefined ? 500 : Number(parsed.flags["poll-ms"]);
    if (!Number.isFinite(pollMs) || pollMs < 10) {
      throw new UsageError(`--poll-ms must be a number of milliseconds >= 10`);
    }
    sentToken = config.token !== "";
    const client = new ClusterClient(config.master, {
      fetch: io.fetch,
      token: sentToken ? config.token : undefined,
    });
    const args = parsed._;
    const needs = (n: number, names: string) => {
      if (args.length !== n) {
        throw new UsageError(
          `'cluster ${command}' expects ${names}, got ${
            args.length === 0 ? "nothing" : args.map((a) => `'${a}'`).join(" ")
          }`,
        );
      }
    };
    switch (command) {
      case "health":
        only([]);
        needs(0, "no arguments");
        out(JSON.stringify(await client.health(), null, 2));
        return 0;
      case "jobs": {
        only(["json"]);
        needs(0, "no arguments");
        const jobs = await client.listJobs();
        if (parsed.flags.json) out(JSON.stringify(jobs, null, 2));
        else {
          out(table(
            ["job_id", "status", "progress", "tasks", "rows", "codec", "destination"],
            jobs.map((j) => [
              j.job_id,
              j.status,
              `${Math.round(j.progress * 100)}%`,
              j.tasks_total === null ? "…" : `${j.tasks_done}/${j.tasks_total}`,
              j.total_rows === null ? "" : formatCount(j.total_rows),
              j.codec_used ?? j.codec,
              j.destination,
            ]),
          ));
        }
        return 0;
      }
      case "workers": {
        only(["json"]);
        needs(0, "no arguments");
        const workers = await client.listWorkers();
        if (parsed.flags.json) out(JSON.stringify(workers, null, 2));
        else {
          out(table(
            ["worker_id", "status", "task", "tasks done", "heartbeat", "url"],
            workers.map((w) => [
              w.worker_id,
              w.status,
              w.task_id ?? "",
              String(w.jobs_done),
              `${w.heartbeat_age_s.toFixed(1)} s ago`,
              w.url,
            ]),
          ));
        }
        return 0;
      }
      case "status":
        only([]);
        needs(1, "<job_id>");
        out(JSON.stringify(await client.job(args[0]!), null, 2));
        return 0;
      case "cancel": {
        only([]);
        needs(1, "<job_id>");
        const r = await client.cancel(args[0]!);
        print(`job ${r.job_id} is ${r.status}`);
        return 0;
      }
      case "wait":
        only(["json", "poll-ms"]);
        needs(1, "<job_id>");
        return await waitFor(client, args[0]!, { json: !!parsed.flags.json, pollMs, io });
      case "submit": {
        only(["codec", "chunk-rows", "format", "wait", "json", "poll-ms"]);
        needs(2, "<source> <destination>");
        const codec = parsed.flags.codec as string | undefined;
        if (codec !== undefined && !["zstd", "lzma2", "zpaq", "auto"].includes(codec)) {
          throw new UsageError(`--codec must be zstd, lzma2, zpaq or auto, got '${codec}'`);
        }
        const format = parsed.flags.format as string | undefined;
        if (format !== undefined && !["csv", "jsonl", "parquet", "arrow"].includes(format)) {
          throw new UsageError(`--format must be csv, jsonl, parquet or arrow, got '${format}'`);
        }
        const rawRows = parsed.flags["chunk-rows"];
        const chunkRows = rawRows === undefined ? undefined : Number(rawRows);
        if (chunkRows !== undefined && !(Number.isSafeInteger(chunkRows) && chunkRows > 0)) {
          throw new UsageError(`--chunk-rows must be a positive integer, got '${rawRows}'`);
        }
        const req: SubmitRequest = { source: args[0]!, destination: args[1]!, cwd: Deno.cwd() };
        if (codec !== undefined) req.codec = codec as JobCodec;
        if (chunkRows !== undefined) req.chunk_rows = chunkRows;
        if (format !== undefined) req.format = format as JobSourceFormat;
        const { job_id: jobId } = await client.submit(req);
        if (!parsed.flags.wait) {
          out(jobId);
          print(`submitted job ${jobId} to ${config.master}`);
          return 0;
        }
        print(`submitted job ${jobId} to ${config.master}`);
        return await waitFor(client, jobId, { json: !!parsed.flags.json, pollMs, io });
      }
    }
    return 2;
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      print(`error: ${err.message}\n(run 'cluster help' for usage)`);
      return 2;
    }
    if (err instanceof JobError && (err.status === 401 || err.status === 403)) {
      print(authFailure(err.status, err.message, sentToken));
      return 1;
    }
    if (err instanceof PermafrostError) {
      print(`error: ${err.name} ${err.code}: ${err.message}`);
      return 1;
    }
    print(`error: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

/** The message of a 401 or 403 answer: the status, the master's reason, what to do. */
function authFailure(status: 401 | 403, message: string, sentToken: boolean): string {
  const hint = status === 403
    ? "your token lacks the right or namespace this needs (ask an operator: cluster add-user ... --can-freeze --namespace NS)"
    : sentToken
    ? "the token was refused (expired, revoked, or signed with another secret): get a new one with cluster token <user>"
    : "the master has auth on: set PERMAFROST_TOKEN to a token from cluster add-user (or pass --token)";
  return `error: ${status} ${status === 401 ? "Unauthorized" : "Forbidden"}: ${message}\n${hint}`;
}

async function waitFor(
  client: ClusterClient,
  jobId: string,
  options: { json: boolean; pollMs: number; io: CliIo },
): Promise<number> {
  const print = options.io.print ?? stderrLine;
  const out = options.io.out ?? stdoutLine;
  const bar = new ProgressBar(`job ${jobId}`, options.io.progress ?? progressStderr());
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
  if (options.json) out(JSON.stringify(job, null, 2));
  const seconds = ((performance.now() - started) / 1000).toFixed(2);
  if (job.status === "DONE") {
    print(
      `job ${jobId} DONE: ${formatCount(job.total_rows ?? 0)} rows in ${
        job.tasks_total ?? 0
      } tasks -> ${job.destination} (${formatBytes(job.archive_bytes ?? 0)}), codec ${
        job.codec_used ?? job.codec
      }, waited ${seconds} s`,
    );
    for (const c of job.widened_columns) {
      print(
        `note: column "${c}" held values beyond the type sample that did not fit; stored as text`,
      );
    }
    return 0;
  }
  print(`job ${jobId} ${job.status}${job.error ? `: ${job.error}` : ""}`);
  return 1;
}

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(head), ...rows.map(line)].join("\n");
}

/** Dispatches `cluster/cli.ts <command> ...` when run directly. */
async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  switch (command) {
    case "master":
      return await runMaster(rest);
    case "worker":
      return await runWorker(rest);
    case "cluster":
      return await runCluster(rest);
    case "start":
      return await runStart(rest);
    default:
      stderrLine("Usage: cluster/cli.ts master|worker|cluster|start ...");
      return 2;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
