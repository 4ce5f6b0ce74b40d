/**
 * `start`: the whole system on this machine, for trying it out. A master, N workers
 * (default 2) and a catalog come up as child processes of the running Deno (each
 * `main.ts master|worker|catalog serve` with its own permissions, port and log); a
 * sample table is written and frozen into the data directory and registered in the
 * catalog, and every URL is printed with commands to try. Ctrl-C (or SIGTERM) stops
 * every child.
 *
 * @module
 */
import { STORAGE_ENV } from "../storage/env.ts";
import { nodePath } from "../internal/node_builtin.ts";
import { type ChildServer, spawnChildServer } from "../internal/child_server.ts";
import { portParser } from "../internal/config.ts";
import { textLine } from "../internal/log.ts";
import { formatBytes, formatCount } from "../internal/progress.ts";
import { stopSignal } from "../internal/stop_signal.ts";
import { command, type FlagValue } from "./command.ts";
import { UsageError } from "./errors.ts";
import type { CliIo } from "./io.ts";
import { MAIN_ENTRY, spawnLocalMaster, spawnLocalWorker } from "./spawn.ts";
import { loadModule } from "./lazy.ts";

/** The catalog child's permissions (it reads archives and writes its database). */
const CATALOG_PERMISSIONS: readonly string[] = Object.freeze([
  "--allow-read",
  "--allow-write",
  `--allow-env=${["PERMAFROST_*", ...STORAGE_ENV].join(",")}`,
  "--allow-ffi",
  "--allow-net",
]);

const SAMPLE_ROWS = 200_000;

function portFlag(name: string, raw: FlagValue): number | null {
  if (raw === undefined) return null;
  try {
    return portParser().parse(String(raw));
  } catch {
    throw new UsageError(`--${name} must be a port 0..65535 (0: any free port), got '${raw}'`);
  }
}

/** `start`. */
export const startCommand = command({
  name: "start",
  summary: "Runs a master, N workers and a catalog on this machine, with a sample, until Ctrl-C.",
  usage: "",
  args: { min: 0, max: 0 },
  flags: [
    { name: "workers", type: "string", value: "N", help: "Workers to start, 0..64 (default 2)" },
    {
      name: "data-dir",
      type: "string",
      value: "DIR",
      help: "Where the sample, archives and databases go (default .permafrost)",
    },
    { name: "master-port", type: "string", value: "P", help: "Master port (default 8700)" },
    {
      name: "worker-port",
      type: "string",
      value: "P",
      help: "First worker port (default 8801, then 8802…; 0: any free port)",
    },
    { name: "catalog-port", type: "string", value: "P", help: "Catalog port (default 8800)" },
  ],
  details: "A default port that is taken becomes any free one, and the printed URLs say which.",
  examples: ["permafrost start", "permafrost start --workers 4 --data-dir /tmp/pf"],
  async run({ flags }, io) {
    const workers = flags.workers === undefined ? 2 : Number(flags.workers);
    if (!Number.isInteger(workers) || workers < 0 || workers > 64) {
      throw new UsageError(`--workers must be an integer 0..64, got '${flags.workers}'`);
    }
    const dataDir = nodePath().resolve(String(flags["data-dir"] ?? ".permafrost"));
    const masterPort = portFlag("master-port", flags["master-port"]);
    const workerPort = portFlag("worker-port", flags["worker-port"]);
    const catalogPort = portFlag("catalog-port", flags["catalog-port"]);
    return await runLocal({ workers, dataDir, masterPort, workerPort, catalogPort }, io);
  },
});

interface LocalPlan {
  workers: number;
  dataDir: string;
  masterPort: number | null;
  workerPort: number | null;
  catalogPort: number | null;
}

async function runLocal(plan: LocalPlan, io: CliIo): Promise<number> {
  const { dataDir } = plan;
  const { join } = nodePath();
  const stop = stopSignal(io.signal);
  const servers: ChildServer[] = [];
  // The children log JSON (their output is a pipe); warnings and errors are shown
  // here as text. Auth being off is the point of a local demo: said once, not by each.
  let authNoted = false;
  const forward = (name: string) => (line: string) => {
    let record: { level?: unknown; msg?: unknown };
    try {
      record = JSON.parse(line);
    } catch {
      return;
    }
    if (record.level !== "warn" && record.level !== "error") return;
    if (typeof record.msg === "string" && record.msg.startsWith("auth is off")) {
      if (!authNoted) {
        authNoted = true;
        io.err(
          "note: auth is off in this demo (no JWT secret): every request is allowed; the README's Security section turns it on",
        );
      }
      return;
    }
    io.err(`[${name}] ${textLine(line)}`);
  };
  try {
    await Deno.mkdir(join(dataDir, "samples"), { recursive: true });
    await Deno.mkdir(join(dataDir, "archives"), { recursive: true });
    const sample = join(dataDir, "samples", "readings.csv");
    await writeSample(sample, SAMPLE_ROWS);
    const archive = join(dataDir, "archives", "sensors.pf");
    const { freeze } = await loadModule("freeze");
    const summary = await freeze(sample, archive, {
      codec: "zstd",
      chunkRows: 20_000,
      metadata: { description: "Demo sensor readings made by permafrost start" },
    });
    io.err(
      `froze a sample table: ${formatCount(summary.rows)} rows -> ${archive} (${
        formatBytes(summary.archive_bytes)
      })`,
    );

    const master = await spawnLocalMaster({
      dataDir: join(dataDir, "master"),
      port: plan.masterPort ?? freeOr(8700, io, "master"),
      onLine: forward("master"),
    });
    servers.push(master);
    const workerUrls: string[] = [];
    for (let i = 0; i < plan.workers; i++) {
      const port = plan.workerPort === 0
        ? 0
        : plan.workerPort !== null
        ? plan.workerPort + i
        : freeOr(8801 + i, io, `worker ${i + 1}`);
      const worker = await spawnLocalWorker({
        master: master.url,
        id: `local-${i + 1}`,
        port,
        onLine: forward(`worker ${i + 1}`),
      });
      servers.push(worker);
      workerUrls.push(worker.url);
    }
    const catalog = await spawnChildServer(MAIN_ENTRY, [
      "catalog",
      "serve",
      "--db",
      join(dataDir, "catalog.db"),
      "--port",
      String(plan.catalogPort ?? freeOr(8800, io, "catalog")),
      "--root",
      dataDir,
    ], {
      permissions: CATALOG_PERMISSIONS,
      ready: /serving at (http:\/\/\S+)/,
      name: "catalog",
      onLine: forward("catalog"),
    });
    servers.push(catalog);
    const registered = await fetch(`${catalog.url}/datasets/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ path: archive, name: "sensors" }),
    });
    await registered.body?.cancel();
    for (const s of servers) s.child.status.then(stop.stop);

    const destination = join(dataDir, "archives", "readings.pf");
    io.err([
      "",
      "Permafrost is running on this machine:",
      `  ${"master".padEnd(10)} ${master.url}  (status page: ${master.url}/)`,
      ...workerUrls.map((url, i) => `  ${`worker ${i + 1}`.padEnd(10)} ${url}`),
      `  ${"catalog".padEnd(10)} ${catalog.url}  (API docs: ${catalog.url}/docs)`,
      "",
      "Try:",
      `  permafrost cluster submit ${sample} ${destination} --wait --master ${master.url}`,
      `  curl -s ${master.url}/workers`,
      `  curl -s ${catalog.url}/datasets/sensors`,
      `  curl -s '${catalog.url}/search?q=sensor'`,
      `  curl -s -XPOST ${catalog.url}/sql -d '{"query":"select name, rows, codec from datasets"}'`,
      `  permafrost peek ${archive} --rows 5`,
      "Ctrl-C stops everything.",
    ].join("\n"));
    await new Promise<void>((done) => {
      if (stop.signal.aborted) done();
      stop.signal.addEventListener("abort", () => done(), { once: true });
    });
    return 0;
  } finally {
    stop.dispose();
    await Promise.allSettled(servers.map((s) => s.stop()));
  }
}

/** `port` when nothing listens on it, else 0 (any free port), saying so. */
function freeOr(port: number, io: CliIo, name: string): number {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
    return port;
  } catch {
    io.err(`note: port ${port} is taken; the ${name} takes any free port`);
    return 0;
  }
}

/** A sample CSV: timestamped readings of five sensors, a minute apart per sensor. */
async function writeSample(path: string, rows: number): Promise<void> {
  if (await Deno.stat(path).then(() => true, () => false)) return;
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
