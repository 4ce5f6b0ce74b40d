/**
 * `permafrost start`: everything on this machine, for trying it out. Spawns the
 * servers as child processes of the running Deno (so each is a real process
 * with its own port and log), freezes a small sample table into the data
 * directory so there is something to look at, registers it in the catalog, and
 * prints where everything is. Ctrl-C (or SIGTERM) stops every child.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { tableFromArrays } from "apache-arrow";
import { freeze } from "./freeze.ts";

/** One child server `start` runs. */
export interface ChildSpec {
  /** Name in messages. */
  name: string;
  /** Arguments after `main.ts`. */
  args: string[];
  /** Line on stdout or stderr that says the child is ready, and its URL. */
  ready: RegExp;
}

/** Options of `runStart`. */
export interface StartOptions {
  /** Directory for the demo data and databases (default `.permafrost`). */
  dataDir?: string;
  /** Catalog port (default 8800). */
  catalogPort?: number;
  /** More child servers (the cluster's master and workers). */
  extraChildren?: (dataDir: string) => ChildSpec[];
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
 * @param options Data directory, ports, extra children, output.
 * @returns Exit code: 0 after a clean stop, 1 when a child failed to start.
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
  const children: ChildSpec[] = [
    {
      name: "catalog",
      args: [
        "catalog",
        "serve",
        "--db",
        join(dataDir, "catalog.db"),
        "--port",
        String(catalogPort),
        "--root",
        dataDir,
      ],
      ready: /serving at (http:\/\/\S+)/,
    },
    ...(options.extraChildren?.(dataDir) ?? []),
  ];
  const running: Deno.ChildProcess[] = [];
  const stop = () => {
    for (const child of running) {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
    }
  };
  try {
    const urls = new Map<string, string>();
    for (const spec of children) {
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", ...PERMISSIONS, MAIN, ...spec.args],
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      running.push(child);
      const url = await waitReady(child, spec, print);
      if (url === null) {
        print(`error: ${spec.name} did not start (see its lines above)`);
        return 1;
      }
      urls.set(spec.name, url);
    }
    const catalog = urls.get("catalog")!;
    const registered = await fetch(`${catalog}/datasets/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ path: sample, name: "sensors" }),
    });
    await registered.body?.cancel();
    print("");
    print("Permafrost is running on this machine:");
    for (const [name, url] of urls) print(`  ${name.padEnd(10)} ${url}`);
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
    await new Promise<void>((done) => {
      if (options.signal) options.signal.addEventListener("abort", () => done(), { once: true });
      else {
        Deno.addSignalListener("SIGINT", () => done());
        Deno.addSignalListener("SIGTERM", () => done());
      }
      for (const child of running) child.status.then(() => done());
    });
    return 0;
  } finally {
    stop();
    await Promise.allSettled(running.map((c) => c.status));
  }
}

/** Forwards a child's output, prefixed, and resolves with the URL from its ready line (null if it exits). */
function waitReady(
  child: Deno.ChildProcess,
  spec: ChildSpec,
  print: (line: string) => void,
): Promise<string | null> {
  return new Promise((resolveReady) => {
    let settled = false;
    const pump = async (stream: ReadableStream<Uint8Array>) => {
      let buffered = "";
      for await (const text of stream.pipeThrough(new TextDecoderStream())) {
        buffered += text;
        let newline: number;
        while ((newline = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          const match = spec.ready.exec(line);
          if (match && !settled) {
            settled = true;
            resolveReady(match[1] ?? "");
          }
          if (!settled || /"level":"(warn|error)"/.test(line)) print(`[${spec.name}] ${line}`);
        }
      }
    };
    void pump(child.stdout);
    void pump(child.stderr);
    child.status.then(() => {
      if (!settled) {
        settled = true;
        resolveReady(null);
      }
    });
  });
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
