/**
 * The catalog half of `permafrost start` (the cluster half is `cluster/start.ts`):
 * freezes a small sample table into the data directory so there is something to
 * look at, runs the catalog server as a child process of the running Deno (a real
 * process with its own port and log), registers the sample in it, and prints where
 * everything is. Ctrl-C (or SIGTERM, or the given signal) stops it.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { tableFromArrays } from "apache-arrow";
import { type ChildServer, spawnChildServer } from "../internal/child_server.ts";
import { stopSignal } from "../internal/stop_signal.ts";
import { freeze } from "./freeze.ts";

/** Options of `runStart`. */
export interface StartOptions {
  /** Directory for the demo data and databases (default `.permafrost`). */
  dataDir?: string;
  /** Catalog port (default 8800). */
  catalogPort?: number;
  /** Where messages go. */
  print?: (line: string) => void;
  /** Stops everything when aborted (else SIGINT/SIGTERM). */
  signal?: AbortSignal;
}

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));
const PERMISSIONS = [
  "--allow-read",
  "--allow-write",
  "--allow-env=PERMAFROST_*",
  "--allow-ffi",
  "--allow-net",
  "--allow-run",
];

/**
 * Runs the local demo until interrupted.
 *
 * @param options Data directory, catalog port, output, stop signal.
 * @returns Exit code: 0 after a clean stop, 1 when the catalog failed to start.
 */
export async function runStart(options: StartOptions = {}): Promise<number> {
  const print = options.print ??
    ((line: string) => Deno.stderr.writeSync(new TextEncoder().encode(line + "\n")));
  const dataDir = resolve(options.dataDir ?? ".permafrost");
  await Deno.mkdir(join(dataDir, "archives"), { recursive: true });
  const sample = join(dataDir, "archives", "sensors.pf");
  const summary = await freeze(sampleTable(), sample, {
    codec: "zstd",
    chunkRows: 10_000,
    metadata: { description: "Demo sensor readings made by permafrost start" },
  });
  print(`froze a sample table: ${summary.rows} rows -> ${sample} (${summary.archive_bytes} bytes)`);

  const catalogPort = options.catalogPort ?? 8800;
  const stop = stopSignal(options.signal);
  let up = false;
  let server: ChildServer | undefined;
  try {
    server = await spawnChildServer(MAIN, [
      "catalog",
      "serve",
      "--db",
      join(dataDir, "catalog.db"),
      "--port",
      String(catalogPort),
      "--root",
      dataDir,
    ], {
      permissions: PERMISSIONS,
      ready: /serving at (http:\/\/\S+)/,
      name: "catalog",
      // Everything until it serves, then only its warnings and errors.
      onLine: (line) => {
        if (!up || /"level":"(warn|error)"/.test(line)) print(`[catalog] ${line}`);
      },
    });
    up = true;
    const catalog = server.url;
    const registered = await fetch(`${catalog}/datasets/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ path: sample, name: "sensors" }),
    });
    await registered.body?.cancel();
    print("");
    print("Permafrost is running on this machine:");
    print(`  ${"catalog".padEnd(10)} ${catalog}`);
    print("");
    print("Try:");
    print(`  curl -s ${catalog}/datasets/sensors`);
    print(`  curl -s '${catalog}/search?q=sensor'`);
    print(
      `  curl -s -XPOST ${catalog}/sql -d '{"query":"select name, rows, codec from datasets"}'`,
    );
    print(`  open ${catalog}/docs`);
    print(`  deno task cli peek ${sample} --rows 5`);
    print("Ctrl-C stops everything.");
    server.child.status.then(stop.stop);
    await new Promise<void>((done) => {
      if (stop.signal.aborted) done();
      stop.signal.addEventListener("abort", () => done(), { once: true });
    });
    return 0;
  } catch (err) {
    // Its lines were forwarded above; the message's first line says what happened.
    print(`error: ${(err instanceof Error ? err.message : String(err)).split("\n")[0]}`);
    return 1;
  } finally {
    stop.dispose();
    await server?.stop();
  }
}

/** A small, realistic table: 50,000 sensor readings, a minute apart per sensor. */
function sampleTable() {
  const rows = 50_000;
  const sensors = ["north", "south", "east", "west", "roof"];
  const ts = new BigInt64Array(rows);
  const sensor: string[] = [];
  const celsius = new Float64Array(rows);
  const ok: boolean[] = [];
  const start = Date.UTC(2026, 0, 1) * 1000;
  for (let i = 0; i < rows; i++) {
    const s = i % sensors.length;
    ts[i] = BigInt(start + Math.floor(i / sensors.length) * 60_000_000);
    sensor.push(sensors[s]!);
    celsius[i] = Math.round((12 + 8 * Math.sin(i / 2000) + s - ((i * 7919) % 13) / 10) * 10) / 10;
    ok.push((i * 31) % 97 !== 0);
  }
  return tableFromArrays({ ts_us: ts, sensor, celsius, ok });
}
