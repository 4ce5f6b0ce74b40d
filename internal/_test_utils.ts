/**
 * Test helpers every folder shares (tests only):
 * - {@link until}: the one bounded wait. It polls a check until it holds, and fails
 *   naming what it waited for, so no test hangs or sleeps a fixed time to synchronise.
 * - {@link requireTool}: whether a system tool a test needs (`zpaq`, `chromium`) is on
 *   this machine. On a machine without it the tests skip, each with one line saying
 *   why and how to install it; CI sets `PERMAFROST_REQUIRE_TOOLS=1`, which makes a
 *   missing tool a failure, so CI can never skip them silently.
 * - {@link renderPage}: a page as headless Chromium renders it (and a screenshot).
 * - {@link evalTracingDetach}: a script's output in a fresh process that reports V8's
 *   first buffer detach breaking {@link DETACH_PROTECTOR_BROKEN}.
 *
 * @module
 */

/** Options of {@link until}. */
export interface UntilOptions {
  /** Longest wait before failing (default 10,000 ms). */
  timeoutMs?: number;
  /** Pause between checks (default 10 ms). */
  intervalMs?: number;
}

/**
 * Waits until `check` returns a value other than `undefined`, `null` or `false`, and
 * returns it.
 *
 * @param what What is awaited, for the failure message ("the worker to register").
 * @param check A sync or async check.
 * @param options Time-out and poll interval.
 * @returns The check's first truthy-ish value.
 * @throws {Error} `gave up after N ms waiting for <what>`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { until } from "./_test_utils.ts";
 * let n = 0;
 * assert.equal(await until("n to reach 3", () => ++n >= 3 && n), 3);
 * ```
 */
export async function until<T>(
  what: string,
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  options: UntilOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 10;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== null && v !== false) return v;
    if (performance.now() >= deadline) {
      throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Where to look for a tool, when not just on the PATH under its own name. */
const PATHS: Readonly<Record<string, readonly string[]>> = {
  chromium: ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"],
};

const found = new Map<string, string | null>();
const announced = new Set<string>();

function locate(tool: string): string | null {
  if (found.has(tool)) return found.get(tool)!;
  let hit: string | null = null;
  for (const p of PATHS[tool] ?? [tool]) {
    const candidates = p.includes("/")
      ? [p]
      : (Deno.env.get("PATH") ?? "").split(":").filter((d) => d !== "").map((d) => `${d}/${p}`);
    hit = candidates.find((c) => {
      try {
        return Deno.statSync(c).isFile;
      } catch {
        return false;
      }
    }) ?? null;
    if (hit !== null) break;
  }
  found.set(tool, hit);
  return hit;
}

/**
 * Where a tool the calling tests need is, or null when it is missing. A missing tool
 * prints one line per test file (why the tests skip, how to install the tool) — and
 * with `PERMAFROST_REQUIRE_TOOLS=1` (CI) throws instead, failing the file.
 *
 * @param tool The tool: a program name (the Debian package of the same name installs it).
 * @param who Which tests need it, for the message (the test file's name).
 * @returns The tool's path, or null.
 * @throws {Error} when the tool is missing and `PERMAFROST_REQUIRE_TOOLS=1`.
 */
export function requireTool(tool: string, who: string): string | null {
  const path = locate(tool);
  if (path !== null) return path;
  const why = `${tool} is not installed (apt-get install -y ${tool})`;
  if (Deno.env.get("PERMAFROST_REQUIRE_TOOLS") === "1") {
    throw new Error(`${who} needs ${why}; PERMAFROST_REQUIRE_TOOLS=1 forbids skipping them`);
  }
  const line = `SKIPPED: the tests of ${who} that need ${tool}: ${why}`;
  if (!announced.has(line)) {
    announced.add(line);
    Deno.stderr.writeSync(new TextEncoder().encode(line + "\n"));
  }
  return null;
}

/** Options of {@link renderPage}. */
export interface RenderOptions {
  /** Milliseconds of page time to let the page's scripts run (default 5,000). */
  budgetMs?: number;
  /** Also save a screenshot of the page here (PNG), for people to look at. */
  screenshot?: string;
  /** Window size for the screenshot (default `1400,900`). */
  windowSize?: string;
}

/**
 * Loads a page in headless Chromium (Debian `chromium`), lets its scripts run, and
 * answers the DOM as it then stands (`--dump-dom`); with `screenshot`, a second load
 * saves a PNG of it. Chromium starts with the flags this machine's closed network
 * needs (no background networking, no component updates) and a fresh profile.
 *
 * @param chromium The browser's path ({@link requireTool}).
 * @param url The page.
 * @param options Script time, screenshot.
 * @returns The rendered DOM as HTML.
 * @throws {Error} when Chromium fails, with its stderr.
 */
export async function renderPage(
  chromium: string,
  url: string,
  options: RenderOptions = {},
): Promise<string> {
  const profile = await Deno.makeTempDir({ prefix: "permafrost-chromium-" });
  const common = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    `--user-data-dir=${profile}`,
    `--virtual-time-budget=${options.budgetMs ?? 5000}`,
  ];
  const run = async (args: string[]) => {
    const out = await new Deno.Command(chromium, {
      args: [...common, ...args, url],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (out.code !== 0) {
      throw new Error(
        `chromium exited with ${out.code}: ${new TextDecoder().decode(out.stderr).slice(-2000)}`,
      );
    }
    return new TextDecoder().decode(out.stdout);
  };
  try {
    const dom = await run(["--dump-dom"]);
    if (options.screenshot) {
      const shot = options.screenshot.startsWith("/")
        ? options.screenshot
        : `${Deno.cwd()}/${options.screenshot}`;
      await Deno.mkdir(shot.slice(0, shot.lastIndexOf("/")), { recursive: true });
      await run([`--screenshot=${shot}`, `--window-size=${options.windowSize ?? "1400,900"}`]);
    }
    return dom;
  } finally {
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
}

/**
 * Deterministic pseudo-random bytes (xorshift32), so failures reproduce.
 *
 * @param length How many.
 * @param seed Any 32-bit number (0 counts as 1).
 * @returns The bytes.
 */
export function pseudoRandomBytes(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

/**
 * What V8 prints (under `--trace-protector-invalidation`) when an isolate's first detach
 * of an `ArrayBuffer` with more than one view breaks its ArrayBufferDetaching protector,
 * which deoptimizes the code that relied on it: Workers must not do that mid-run.
 */
export const DETACH_PROTECTOR_BROKEN = /Invalidating protector cell ArrayBufferDetaching/;

/**
 * Runs a module script in a fresh `deno eval` with V8 tracing protector invalidations,
 * and fails unless it succeeds.
 *
 * @param script The script (it may import the project's modules by `file:` URL).
 * @returns Its stdout: its own output and V8's trace lines.
 */
export async function evalTracingDetach(script: string): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--v8-flags=--trace-protector-invalidation", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}
