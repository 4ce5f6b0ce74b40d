/**
 * A server run as a child process of the running Deno (`deno run <permissions>
 * <script> <args>`): its URL is read from the line it prints when it serves (so
 * port 0 works), and its output is kept, line by line. `start` (catalog, master,
 * workers), the e2e tests and the benchmarks start real servers with it.
 *
 * @module
 */

/** A running child server. */
export interface ChildServer {
  /** The process. */
  readonly child: Deno.ChildProcess;
  /** URL from its ready line. */
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

/** Options of {@link spawnChildServer}. */
export interface ChildServerOptions {
  /** `deno run` permission flags. */
  permissions: readonly string[];
  /** The ready line; its first group is the URL. */
  ready: RegExp;
  /** Name in the error when it does not start. */
  name: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Called with each output line (e.g. to forward it). */
  onLine?: (line: string) => void;
  /** Milliseconds to wait for the ready line (default 60 s). */
  readyTimeoutMs?: number;
  /** Working directory (default the current one). */
  cwd?: string;
}

/**
 * Spawns `deno run <permissions> <script> <args>` and waits for it to serve.
 *
 * @param script The entry file.
 * @param args Its arguments.
 * @param options Permissions, ready line, name, environment, line callback, timeout.
 * @returns The running server.
 * @throws {Error} when it exits or stays silent before serving (its output in the message).
 */
export async function spawnChildServer(
  script: string,
  args: readonly string[],
  options: ChildServerOptions,
): Promise<ChildServer> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-q", ...options.permissions, script, ...args],
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
        const m = options.ready.exec(line);
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
    throw new Error(`${options.name} did not start:\n${lines.join("\n")}`);
  }
  return {
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
