/**
 * Starting cluster servers as child processes of the running Deno: `start` uses it
 * for the local demo, the e2e tests and the benchmark for real processes. Each child
 * runs `cluster/cli.ts master|worker` with explicit permissions; the URL it serves
 * at is read from its "serving at" line (so port 0 works), and its output is kept.
 *
 * @module
 */
import { fileURLToPath } from "node:url";

/** The entry the children run. */
export const CLUSTER_CLI = fileURLToPath(new URL("./cli.ts", import.meta.url));

/** Permissions of a master process. */
export const MASTER_PERMISSIONS: readonly string[] = Object.freeze([
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-ffi",
  "--allow-env=PERMAFROST_*",
]);

/** Permissions of a worker process (the zpaq codec runs the `zpaq` binary). */
export const WORKER_PERMISSIONS: readonly string[] = Object.freeze([
  ...MASTER_PERMISSIONS,
  "--allow-run=zpaq",
]);

/** A running child server. */
export interface ServerProcess {
  /** `master` or `worker`. */
  readonly role: "master" | "worker";
  /** The process. */
  readonly child: Deno.ChildProcess;
  /** URL from its "serving at" line. */
  readonly url: string;
  /** Every line it wrote (stdout and stderr). */
  readonly lines: string[];
  /** Resolves when its output has closed. */
  readonly drained: Promise<void>;
  /** Sends a signal (ignores a process already gone). */
  kill(signal?: Deno.Signal): void;
  /** Sends SIGTERM (or SIGKILL) and waits for it to exit. */
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
}

/** Options of {@link spawnServer}. */
export interface SpawnOptions {
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Called with each output line (e.g. to forward it). */
  onLine?: (line: string) => void;
  /** Milliseconds to wait for the "serving at" line (default 60 s). */
  readyTimeoutMs?: number;
  /** Working directory (default the current one). */
  cwd?: string;
}

const READY = /(?:Master|Worker \S+) serving at (http:\/\/\S+)/;

/**
 * Spawns `cluster/cli.ts <role> ...args` and waits for it to serve.
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
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...(role === "master" ? MASTER_PERMISSIONS : WORKER_PERMISSIONS),
      CLUSTER_CLI,
      role,
      ...args,
    ],
    env: options.env,
    cwd: options.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  let resolveUrl: (url: string | null) => void = () => {};
  const ready = new Promise<string | null>((r) => (resolveUrl = r));
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    let buffered = "";
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      buffered += text;
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        lines.push(line);
        options.onLine?.(line);
        const m = READY.exec(line);
        if (m) resolveUrl(m[1]!);
      }
    }
    if (buffered !== "") lines.push(buffered);
  };
  const drained = Promise.all([pump(child.stdout), pump(child.stderr)]).then(() => {});
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    resolveUrl(null);
    return s;
  });
  const timeout = setTimeout(() => resolveUrl(null), options.readyTimeoutMs ?? 60_000);
  const url = await ready;
  clearTimeout(timeout);
  const kill = (signal: Deno.Signal = "SIGTERM") => {
    if (exited) return;
    try {
      child.kill(signal);
    } catch { /* already gone */ }
  };
  if (url === null) {
    kill("SIGKILL");
    await status;
    await drained;
    throw new Error(`${role} did not start:\n${lines.join("\n")}`);
  }
  return {
    role,
    child,
    url,
    lines,
    drained,
    kill,
    async stop(signal: Deno.Signal = "SIGTERM") {
      kill(signal);
      const s = await status;
      await drained;
      return s;
    },
  };
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
