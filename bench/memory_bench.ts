/**
 * Peak memory of freeze and thaw against source size: generates CSV files of
 * the given sizes (default 200 MB and 2 GB, cached in `bench/.cache/`), freezes
 * each in a fresh process and thaws it back to CSV in another, and takes each
 * process's peak resident set: from GNU time's `%M` (the kernel's maxrss) when
 * `/usr/bin/time` exists, else from `Deno.memoryUsage().rss` sampled every 5 ms
 * in the child (Deno grants `/proc/self` only with `--allow-all`).
 * Prints one markdown row per size and the ratio of the largest to the
 * smallest; the target is a ratio within 1.5x (memory flat in source size).
 *
 * ```
 * deno run --allow-read --allow-write --allow-env --allow-ffi --allow-run bench/memory_bench.ts [--sizes 200,2000]
 * ```
 *
 * @module
 */
import { freeze } from "../ops/freeze.ts";
import { thaw } from "../ops/thaw.ts";

/** One measured process. */
export interface MemoryRun {
  /** Peak resident set in bytes. */
  peak_rss: number;
  /** Rows processed. */
  rows: number;
  /** Wall-clock seconds. */
  seconds: number;
}

const SENSORS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"];
const NOTES = [
  "ok",
  "recalibrated",
  '"door open, check seal"',
  "low battery",
  "",
  "spike: 3 sigma",
];

/**
 * Writes a CSV of about `bytes` bytes: a time series of sensor readings
 * (timestamp, id, sensor, float reading, bool, free text), seeded and fast.
 *
 * @param path Destination.
 * @param bytes Approximate size.
 * @returns Rows written.
 */
export async function generateCsv(path: string, bytes: number): Promise<number> {
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const enc = new TextEncoder();
  let written = 0;
  let rows = 0;
  let seed = 12345;
  const rand = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 4294967296;
  };
  let t = Date.UTC(2024, 0, 1);
  try {
    let chunk = "ts,id,sensor,reading,ok,note\n";
    while (written < bytes) {
      for (let k = 0; k < 20000; k++) {
        t += 1000 + Math.floor(rand() * 4) * 250;
        const ts = new Date(t).toISOString().replace("T", " ").replace("Z", "");
        const reading = (20 + rand() * 15).toFixed(2);
        chunk += `${ts},${rows},${SENSORS[rows % 7]},${reading},${rand() < 0.9},${
          NOTES[Math.floor(rand() * NOTES.length)]
        }\n`;
        rows++;
      }
      const b = enc.encode(chunk);
      let at = 0;
      while (at < b.length) at += await file.write(b.subarray(at));
      written += b.length;
      chunk = "";
    }
  } finally {
    file.close();
  }
  return rows;
}

const GNU_TIME = "/usr/bin/time";

/**
 * Runs one freeze or thaw in a fresh process and returns its peak memory.
 *
 * @param mode `freeze` (source → archive) or `thaw` (archive → CSV).
 * @param input Source or archive.
 * @param output Archive or CSV.
 * @returns The run's peak RSS, rows and seconds.
 */
export async function measure(
  mode: "freeze" | "thaw",
  input: string,
  output: string,
): Promise<MemoryRun> {
  const gnuTime = await Deno.stat(GNU_TIME).then((s) => s.isFile, () => false);
  const deno = [
    Deno.execPath(),
    "run",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-ffi",
    "--allow-run=zpaq",
    new URL(import.meta.url).pathname,
    "--child",
    mode,
    input,
    output,
  ];
  const [cmd, ...args] = gnuTime ? [GNU_TIME, "-f", "maxrss_kb=%M", ...deno] : deno;
  const out = await new Deno.Command(cmd!, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  const err = new TextDecoder().decode(out.stderr);
  if (out.code !== 0) throw new Error(`${mode} child failed: ${err}`);
  const run: MemoryRun = JSON.parse(text.trim().split("\n").pop()!);
  const m = /maxrss_kb=(\d+)/.exec(err);
  if (m) run.peak_rss = Number(m[1]) * 1024;
  return run;
}

async function child(mode: string, input: string, output: string): Promise<void> {
  const started = performance.now();
  let peak = Deno.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, Deno.memoryUsage().rss);
  }, 5);
  let rows: number;
  try {
    rows = mode === "freeze"
      ? (await freeze(input, output)).rows
      : (await thaw(input, output)).rows;
  } finally {
    clearInterval(timer);
  }
  const run: MemoryRun = {
    peak_rss: Math.max(peak, Deno.memoryUsage().rss),
    rows,
    seconds: (performance.now() - started) / 1000,
  };
  Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(run) + "\n"));
}

function mb(n: number): string {
  return `${(n / 1e6).toFixed(0)} MB`;
}

async function main(args: string[]): Promise<void> {
  if (args[0] === "--child") return await child(args[1]!, args[2]!, args[3]!);
  const at = args.indexOf("--sizes");
  const sizes = (at >= 0 ? args[at + 1]! : "200,2000").split(",").map(Number);
  const dir = new URL("./.cache/", import.meta.url).pathname;
  await Deno.mkdir(dir, { recursive: true });
  const say = (s: string) => Deno.stdout.writeSync(new TextEncoder().encode(s + "\n"));
  say("| source CSV | rows | archive | freeze peak RSS | freeze s | thaw peak RSS | thaw s |");
  say("|---|---|---|---|---|---|---|");
  const results: { freeze: MemoryRun; thaw: MemoryRun }[] = [];
  for (const size of sizes) {
    const csv = `${dir}memory_${size}MB.csv`;
    const stat = await Deno.stat(csv).catch(() => null);
    if (!stat || stat.size < size * 1e6) await generateCsv(csv, size * 1e6);
    const pf = `${dir}memory_${size}MB.pf`;
    const f = await measure("freeze", csv, pf);
    const t = await measure("thaw", pf, `${dir}memory_${size}MB.back.csv`);
    await Deno.remove(`${dir}memory_${size}MB.back.csv`);
    const archive = (await Deno.stat(pf)).size;
    results.push({ freeze: f, thaw: t });
    say(
      `| ${mb((await Deno.stat(csv)).size)} | ${f.rows.toLocaleString("en-US")} | ${
        mb(archive)
      } | ${mb(f.peak_rss)} | ${f.seconds.toFixed(1)} | ${mb(t.peak_rss)} | ${
        t.seconds.toFixed(1)
      } |`,
    );
  }
  if (results.length > 1) {
    const first = results[0]!;
    const last = results[results.length - 1]!;
    say(
      `\nPeak RSS ratio, largest / smallest source: freeze ${
        (last.freeze.peak_rss / first.freeze.peak_rss).toFixed(2)
      }x, thaw ${(last.thaw.peak_rss / first.thaw.peak_rss).toFixed(2)}x (target <= 1.5x)`,
    );
  }
}

if (import.meta.main) await main(Deno.args);
