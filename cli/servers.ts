/**
 * The server commands: `master`, `worker` and `catalog serve`. Each resolves its
 * settings (flag > `PERMAFROST_*` variable > default; `master/config.ts`,
 * `worker/config.ts`, `catalog/config.ts`), serves until SIGINT or SIGTERM (or the
 * io's signal), and prints one "serving at" line that `cli/spawn.ts` and people read.
 * The servers themselves are loaded when a command runs.
 *
 * @module
 */
import { CATALOG_CONFIG } from "../catalog/config.ts";
import { LOG_FORMAT_SETTING } from "../internal/config.ts";
import {
  createLogger,
  type LogFormatChoice,
  type LogLevel,
  resolveLogFormat,
} from "../internal/log.ts";
import { MASTER_CONFIG } from "../master/config.ts";
import { stopSignal } from "../internal/stop_signal.ts";
import { WORKER_CONFIG } from "../worker/config.ts";
import { type Command, command } from "./command.ts";
import { loadModule } from "./lazy.ts";

/** How a listening address reads in a URL (`0.0.0.0` is reached at 127.0.0.1). */
export function displayHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

/** A server's logger: its level, and text or JSON lines as `--log-format` says. */
function logger(
  component: string,
  config: { logLevel: LogLevel; logFormat: LogFormatChoice },
) {
  return createLogger({
    component,
    level: config.logLevel,
    format: resolveLogFormat(config.logFormat),
  });
}

/** `master`. */
export const masterCommand = command({
  name: "master",
  summary: "Serves the cluster's master (REST API, status page at /) until SIGINT or SIGTERM.",
  usage: "",
  args: { min: 0, max: 0 },
  settings: { ...MASTER_CONFIG, logFormat: LOG_FORMAT_SETTING },
  examples: [
    "permafrost master --port 8700",
    "PERMAFROST_DATA_ROOTS=/data PERMAFROST_JWT_SECRET=… permafrost master",
  ],
  async run({ settings: config }, io) {
    const { startMaster } = await loadModule("masterServer");
    const stop = stopSignal(io.signal);
    let services;
    try {
      services = await startMaster(config, { logger: logger("master", config) });
    } catch (err) {
      stop.dispose();
      throw err;
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
      io.err(`Master serving at ${url} — status page: ${url}/`);
      services.logger.info("master listening", { url, port: server.addr.port, host: config.host });
      await server.finished;
      return 0;
    } finally {
      stop.dispose();
      await services.close();
    }
  },
});

/** `worker --master URL`. */
export const workerCommand = command({
  name: "worker",
  summary:
    "Serves a cluster worker: registers with the master, heartbeats, runs one task at a time, until SIGINT or SIGTERM.",
  usage: "",
  args: { min: 0, max: 0 },
  settings: { ...WORKER_CONFIG, logFormat: LOG_FORMAT_SETTING },
  examples: ["permafrost worker --master http://127.0.0.1:8700 --port 8801"],
  async run({ settings: config }, io) {
    const { advertisedUrl, createWorker } = await loadModule("workerServer");
    const stop = stopSignal(io.signal);
    const { node, app, logger: log } = createWorker(config, { logger: logger("worker", config) });
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
      io.err(
        `Worker ${node.workerId} serving at http://${
          displayHost(config.host)
        }:${port} — master: ${config.master}`,
      );
      log.info("worker listening", { url, port, worker_id: node.workerId });
      await server.finished;
      return 0;
    } finally {
      stop.dispose();
      await node.stop();
    }
  },
});

/** `catalog serve --db F`. */
export const catalogServeCommand = command({
  name: "catalog serve",
  summary:
    "Serves the catalog (REST API, /docs, /redoc) over a DuckDB file until SIGINT or SIGTERM.",
  usage: "",
  args: { min: 0, max: 0 },
  settings: { ...CATALOG_CONFIG, logFormat: LOG_FORMAT_SETTING },
  examples: [
    "permafrost catalog serve --db catalog.db --port 8800 --log-level info",
    "PERMAFROST_JWT_SECRET=… PERMAFROST_USERS_DB=/srv/pf/users.db permafrost catalog serve --db c.db",
  ],
  async run({ settings: config }, io) {
    const { serveCatalog } = await loadModule("catalogServer");
    const { thaw } = await loadModule("thaw");
    const stop = stopSignal(io.signal);
    try {
      const server = await serveCatalog({
        ...config,
        thaw,
        print: io.err,
        signal: stop.signal,
        logger: logger("catalog", config),
      });
      await server.finished;
      return 0;
    } finally {
      stop.dispose();
    }
  },
});

/** Every server command. */
export const SERVER_COMMANDS: readonly Command[] = Object.freeze([
  masterCommand,
  workerCommand,
  catalogServeCommand,
] as Command[]);
