/**
 * Starting cluster servers as child processes of the running Deno: `start` uses it
 * for the local demo, the e2e tests and the benchmark for real processes. Each child
 * runs `main.ts master|worker` (quiet: `deno run -q`) with explicit permissions; the
 * URL it serves at is read from its "serving at" line (so port 0 works), and its
 * output is kept.
 *
 * @module
 */
import { STORAGE_ENV } from "../storage/env.ts";
import {
  type ChildServer,
  type ChildServerOptions,
  spawnChildServer,
} from "../internal/child_server.ts";

/** The entry the children run: the `permafrost` command. */
export const MAIN_ENTRY = filePath(new URL("../main.ts", import.meta.url));

/**
 * The path of a `file:` URL, as `node:url`'s `fileURLToPath` gives it (percent-decoded;
 * on Windows without the leading slash, with backslashes). Not `node:url` itself: the
 * router loads this module for `--help`, and a Node module makes a process bootstrap
 * Node compatibility, ~6 ms of CPU.
 */
function filePath(url: URL): string {
  const path = decodeURIComponent(url.pathname);
  return Deno.build.os === "windows" ? path.slice(1).replaceAll("/", "\\") : path;
}

/** Permissions of a master process. */
export const MASTER_PERMISSIONS: readonly string[] = Object.freeze([
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-ffi",
  `--allow-env=${["PERMAFROST_*", ...STORAGE_ENV].join(",")}`,
]);

/** Permissions of a worker process (the zpaq codec runs the `zpaq` binary). */
export const WORKER_PERMISSIONS: readonly string[] = Object.freeze([
  ...MASTER_PERMISSIONS,
  "--allow-run=zpaq",
]);

/** A running master or worker. */
export interface ServerProcess extends ChildServer {
  /** `master` or `worker`. */
  readonly role: "master" | "worker";
}

/** Options of {@link spawnServer}. */
export type SpawnOptions = Pick<ChildServerOptions, "env" | "onLine" | "readyTimeoutMs" | "cwd">;

const READY = /(?:Master|Worker \S+) serving at (http:\/\/\S+)/;

/**
 * Spawns `main.ts <role> ...args` and waits for it to serve.
 *
 * @param role `master` or `worker`.
 * @param args Arguments after the role (`--port 0`, `--master URL`...).
 * @param options Environment, line callback, timeout.
 * @returns The running server.
 * @throws {Error} when it exits or stays silent before serving (its output in the message).
 */
export async function spawnServer(
  role: "master" | "worker",
  args: readonly string[],
  options: SpawnOptions = {},
): Promise<ServerProcess> {
  const server = await spawnChildServer(MAIN_ENTRY, [role, ...args], {
    ...options,
    permissions: role === "master" ? MASTER_PERMISSIONS : WORKER_PERMISSIONS,
    ready: READY,
    name: role,
  });
  return { ...server, role };
}

/** A master on 127.0.0.1 for this machine (`start`, tests, benchmarks). */
export interface LocalMasterOptions extends SpawnOptions {
  /** Its data directory (job store, staged chunks). */
  dataDir: string;
  /** Port (default 0: any free port). */
  port?: number;
  /** More arguments (`--heartbeat-s 0.2`, `--log-level warn`...). */
  args?: readonly string[];
}

/**
 * Spawns a master listening on 127.0.0.1.
 *
 * @param options Data directory, port, more arguments, spawn options.
 * @returns The running master.
 */
export function spawnLocalMaster(options: LocalMasterOptions): Promise<ServerProcess> {
  const { dataDir, port = 0, args = [] } = options;
  return spawnServer("master", [
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--data-dir",
    dataDir,
    ...args,
  ], options);
}

/** A worker on 127.0.0.1 for this machine. */
export interface LocalWorkerOptions extends SpawnOptions {
  /** The master's URL. */
  master: string;
  /** Its worker id. */
  id: string;
  /** Port (default 0: any free port). */
  port?: number;
  /** More arguments. */
  args?: readonly string[];
}

/**
 * Spawns a worker listening on 127.0.0.1 that registers with `master`.
 *
 * @param options Master URL, id, port, more arguments, spawn options.
 * @returns The running worker.
 */
export function spawnLocalWorker(options: LocalWorkerOptions): Promise<ServerProcess> {
  const { master, id, port = 0, args = [] } = options;
  return spawnServer("worker", [
    "--master",
    master,
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--worker-id",
    id,
    ...args,
  ], options);
}
