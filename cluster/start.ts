/**
 * `start [--workers N]`: the whole system on this machine, for trying it out. It
 * spawns a master and N workers (default 2) as child processes of the running Deno
 * (`cluster/cli.ts master|worker`, each with its own permissions, port and log),
 * writes a sample CSV to freeze through them, then hands over to `ops/start.ts`,
 * which freezes a sample archive, serves the catalog (`catalog serve`) with it
 * registered, and waits. Every URL is printed; Ctrl-C (or SIGTERM) stops every child.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { parseArgs } from "../internal/config.ts";
import { stopSignal } from "../internal/stop_signal.ts";
import { runStart as runLocalStart } from "../ops/start.ts";
import { type ServerProcess, spawnLocalMaster, spawnLocalWorker } from "./spawn.ts";
import type { CliIo } from "./cli.ts";

/** Usage of `start`. */
export const START_USAGE =
  `Usage: start [--workers N] [--data-dir D] [--master-port P] [--worker-port P]
             [--catalog-port P]

Runs a master, N workers (default 2) and a catalog on this machine until Ctrl-C.
Ports: master 8700, workers 8801.. (0: any free port), catalog 8800. Data in D
(default .permafrost).`;

/** A port given on the command line, or `null` for the default. */
function port(raw: unknown, name: string): number | null {
  if (raw === undefined) return null;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new RangeError(`--${name} must be a port 0..65535, got '${raw}'`);
  }
  return n;
}

/**
 * Runs the local demo until interrupted.
 *
 * @param argv Arguments after `start`.
 * @param io Output and stop signal.
 * @returns Exit code: 0 after a clean stop, 1 when a server failed to start, 2 on a usage error.
 */
export async function runStart(argv: readonly string[], io: CliIo = {}): Promise<number> {
  const print = io.print ??
    ((line: string) => Deno.stderr.writeSync(new TextEncoder().encode(line + "\n")));
  let workers: number;
  let dataDir: string;
  let masterPort: number | null;
  let workerPort: number | null;
  let catalogPort: number;
  try {
    const parsed = parseArgs(argv, {
      string: ["workers", "data-dir", "master-port", "worker-port", "catalog-port"],
      boolean: ["help"],
    });
    if (parsed.flags.help) {
      print(START_USAGE);
      return 0;
    }
    if (parsed._.length > 0) throw new RangeError(`Unexpected argument '${parsed._[0]}'`);
    workers = parsed.flags.workers === undefined ? 2 : Number(parsed.flags.workers);
    if (!Number.isInteger(workers) || workers < 0 || workers > 64) {
      throw new RangeError(`--workers must be an integer 0..64, got '${parsed.flags.workers}'`);
    }
    dataDir = resolve(String(parsed.flags["data-dir"] ?? ".permafrost"));
    masterPort = port(parsed.flags["master-port"], "master-port");
    workerPort = port(parsed.flags["worker-port"], "worker-port");
    catalogPort = port(parsed.flags["catalog-port"], "catalog-port") ?? 8800;
  } catch (err) {
    print(`error: ${(err as Error).message}\n\n${START_USAGE}`);
    return 2;
  }

  const stop = stopSignal(io.signal);
  const servers: ServerProcess[] = [];
  const forward = (name: string) => (line: string) => {
    if (/"level":"(warn|error)"/.test(line)) print(`[${name}] ${line}`);
  };
  try {
    await Deno.mkdir(join(dataDir, "samples"), { recursive: true });
    await Deno.mkdir(join(dataDir, "archives"), { recursive: true });
    // Default ports that are taken (another demo, a real master) become free ones.
    const masterAt = masterPort ?? freeOr(8700, print, "master");
    const master = await spawnLocalMaster({
      dataDir: join(dataDir, "master"),
      port: masterAt,
      onLine: forward("master"),
    });
    servers.push(master);
    for (let i = 0; i < workers; i++) {
      const port = workerPort === 0
        ? 0
        : workerPort !== null
        ? workerPort + i
        : freeOr(8801 + i, print, `worker ${i + 1}`);
      servers.push(
        await spawnLocalWorker({
          master: master.url,
          id: `local-${i + 1}`,
          port,
          onLine: forward(`worker ${i + 1}`),
        }),
      );
    }
    for (const s of servers) s.child.status.then(stop.stop);
    const sample = join(dataDir, "samples", "readings.csv");
    await writeSample(sample, 200_000);
    const destination = join(dataDir, "archives", "readings.pf");
    const intercept = (line: string) => {
      if (line === "Ctrl-C stops everything.") {
        print(
          `  deno task cli cluster submit ${sample} ${destination} --wait --master ${master.url}`,
        );
        print(`  curl -s ${master.url}/workers ; curl -s ${master.url}/jobs`);
        print(`  open ${master.url}/`);
      }
      print(line);
      if (line === "Permafrost is running on this machine:") {
        print(`  ${"master".padEnd(10)} ${master.url}  (status page: ${master.url}/)`);
        for (const [i, w] of servers.slice(1).entries()) {
          print(`  ${`worker ${i + 1}`.padEnd(10)} ${w.url}`);
        }
      }
    };
    return await runLocalStart({
      dataDir,
      catalogPort,
      print: intercept,
      signal: stop.signal,
    });
  } catch (err) {
    print(`error: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    stop.dispose();
    await Promise.allSettled(servers.map((s) => s.stop()));
  }
}

/** `port` when nothing listens on it, else 0 (any free port), saying so. */
function freeOr(port: number, print: (line: string) => void, name: string): number {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
    return port;
  } catch {
    print(`note: port ${port} is taken; the ${name} takes any free port`);
    return 0;
  }
}

/** A sample CSV to freeze through the cluster: timestamped readings of a few sensors. */
async function writeSample(path: string, rows: number): Promise<void> {
  const exists = await Deno.stat(path).then(() => true, () => false);
  if (exists) return;
  const sensors = ["north", "south", "east", "west", "roof"];
  const start = Date.UTC(2026, 0, 1);
  const parts = ["ts,sensor,celsius,ok\n"];
  for (let i = 0; i < rows; i++) {
    const s = i % sensors.length;
    const ts = new Date(start + Math.floor(i / sensors.length) * 60_000).toISOString();
    const celsius = (12 + 8 * Math.sin(i / 2000) + s - ((i * 7919) % 13) / 10).toFixed(1);
    parts.push(`${ts},${sensors[s]},${celsius},${(i * 31) % 97 !== 0}\n`);
  }
  await Deno.writeTextFile(path, parts.join(""));
}
