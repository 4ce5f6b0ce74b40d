/**
 * The catalog server as a real process, for the `catalog_*` end-to-end tests:
 * `deno run <permissions> main.ts catalog serve --db ... --port 0` with the permissions the
 * README gives it, its stderr collected, its URL taken from the "serving at" line.
 *
 * @module
 */
import { resolve } from "node:path";

/** Repo-local temp root of the catalog e2e tests (the server may write only here). */
export const E2E_CATALOG_TMP = resolve(".tmp/e2e_catalog");

/** The permissions `catalog serve` runs with in these tests. */
export function catalogPermissions(): string[] {
  return [
    "--allow-net=127.0.0.1",
    "--allow-read",
    `--allow-write=${E2E_CATALOG_TMP}`,
    "--allow-ffi",
    "--allow-env=PERMAFROST_*",
  ];
}

/** A running catalog server process. */
export interface CatalogProcess {
  child: Deno.ChildProcess;
  url: string;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** Resolves when stderr closes. */
  drained: Promise<void>;
}

/** Options of {@link startCatalogServer}. */
export interface StartOptions {
  /** Arguments after `--db <db> --port 0 --log-level warn`. */
  args?: string[];
  /** Variables added to the inherited environment. */
  env?: Record<string, string>;
}

/**
 * Starts `catalog serve` on a free port and waits for its "serving at" line (20 s at most).
 *
 * @param db The catalog database file.
 * @param options Extra arguments and environment.
 * @returns The running process.
 */
export async function startCatalogServer(
  db: string,
  options: StartOptions = {},
): Promise<CatalogProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      ...catalogPermissions(),
      "main.ts",
      "catalog",
      "serve",
      "--db",
      db,
      "--port",
      "0",
      "--log-level",
      "warn",
      ...(options.args ?? []),
    ],
    env: options.env,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let text = "";
  let announce: (url: string) => void = () => {};
  const announced = new Promise<string>((r) => (announce = r));
  const drained = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      const m = /Catalog serving at (http:\/\/[^\s]+) — docs: \1\/docs/.exec(text);
      if (m) announce(m[1]!);
    }
  })();
  const timeout = new Promise<never>((_, reject) => {
    const id = setTimeout(() => reject(new Error(`server did not start: ${text}`)), 20_000);
    announced.finally(() => clearTimeout(id));
    child.status.finally(() => clearTimeout(id));
  });
  try {
    const url = await Promise.race([
      announced,
      timeout,
      child.status.then((s) => {
        throw new Error(`server exited with ${s.code}: ${text}`);
      }),
    ]);
    return { child, url, stderr: () => text, drained };
  } catch (err) {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
    await drained;
    throw err;
  }
}

/**
 * Sends a signal and waits for the process and its stderr to end.
 *
 * @param server The process.
 * @param signal SIGTERM for a clean stop, SIGKILL for a crash.
 * @returns Its exit status.
 */
export async function stopCatalogServer(
  server: CatalogProcess,
  signal: Deno.Signal,
): Promise<Deno.CommandStatus> {
  try {
    server.child.kill(signal);
  } catch { /* already gone */ }
  const status = await server.child.status;
  await server.drained;
  return status;
}
