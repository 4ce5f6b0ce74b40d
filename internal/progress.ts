/**
 * A one-line progress bar for the CLI: redrawn in place on a TTY (stderr), and
 * silent elsewhere so logs and pipes stay clean. Rate-limited to 10 redraws/s.
 *
 * Leaf module: writes only to the sink it is given.
 *
 * @module
 */

/** Where the bar draws. */
export interface ProgressSink {
  write(text: string): void;
  /** Whether the sink is an interactive terminal. */
  readonly isTerminal: boolean;
}

/** The process's stderr as a sink. */
export function stderrSink(): ProgressSink {
  const encoder = new TextEncoder();
  return {
    write: (text) => void Deno.stderr.writeSync(encoder.encode(text)),
    isTerminal: Deno.stderr.isTerminal(),
  };
}

/**
 * A progress bar: call `update` as work advances and `done` at the end. With a known
 * fraction it shows the percentage and, once a second has passed and 1% is done, the
 * time left at the pace so far.
 */
export class ProgressBar {
  #sink: ProgressSink;
  #label: string;
  #clock: () => number;
  #started: number;
  #last = -Infinity;
  #drawn = false;
  #width = 28;

  /**
   * @param label Text before the bar (e.g. `freeze`).
   * @param sink Where to draw (default stderr).
   * @param clock Milliseconds now (default `performance.now`; tests pass their own).
   */
  constructor(
    label: string,
    sink: ProgressSink = stderrSink(),
    clock: () => number = () => performance.now(),
  ) {
    this.#label = label;
    this.#sink = sink;
    this.#clock = clock;
    this.#started = clock();
  }

  /**
   * Redraws the bar.
   *
   * @param fraction Done fraction 0..1, or null when unknown (a spinner-like bar).
   * @param detail Text after the bar (rows, MB/s).
   * @param force Redraw even within the rate limit.
   */
  update(fraction: number | null, detail: string, force = false): void {
    if (!this.#sink.isTerminal) return;
    const now = this.#clock();
    if (!force && now - this.#last < 100) return;
    this.#last = now;
    let bar: string;
    if (fraction === null) {
      const at = Math.floor(now / 120) % this.#width;
      bar = " ".repeat(at) + "=" + " ".repeat(this.#width - at - 1);
    } else {
      const f = Math.max(0, Math.min(1, fraction));
      const filled = Math.round(f * this.#width);
      bar = "#".repeat(filled) + "-".repeat(this.#width - filled);
    }
    let pct = "";
    if (fraction !== null) {
      const f = Math.max(0, Math.min(1, fraction));
      pct = ` ${(f * 100).toFixed(0).padStart(3)}%`;
      const elapsed = (now - this.#started) / 1000;
      if (f >= 0.01 && f < 1 && elapsed >= 1) {
        pct += `  ETA ${formatDuration((elapsed * (1 - f)) / f)}`;
      }
    }
    this.#sink.write(`\r\x1b[2K${this.#label} [${bar}]${pct} ${detail}`);
    this.#drawn = true;
  }

  /** Clears the bar line (the caller prints its summary after). */
  done(): void {
    if (this.#drawn) this.#sink.write("\r\x1b[2K");
    this.#drawn = false;
  }
}

/** Formats a byte count as `12.3 MB` (decimal units, like the benchmark table). */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(1)} kB`;
  if (n < 1e9) return `${(n / 1e6).toFixed(1)} MB`;
  return `${(n / 1e9).toFixed(2)} GB`;
}

/**
 * Formats seconds as `45s`, `3m05s` or `2h07m`.
 *
 * @param seconds A duration.
 * @returns The text.
 */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/**
 * Formats a rate of bytes per second as `21.9 MB/s`.
 *
 * @param bytes Bytes done.
 * @param seconds In this many seconds.
 * @returns The text.
 */
export function formatRate(bytes: number, seconds: number): string {
  return `${(bytes / 1e6 / Math.max(seconds, 1e-3)).toFixed(1)} MB/s`;
}

/**
 * Formats a count with thousands separators, as `toLocaleString("en-US")` does.
 *
 * Integers are grouped here: the first `toLocaleString` of a process loads ICU's number
 * formatting, several milliseconds of a short command's start.
 *
 * @param n A count.
 * @returns The text, e.g. `3,000,000`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatCount } from "./progress.ts";
 * assert.equal(formatCount(3000000), "3,000,000");
 * assert.equal(formatCount(-1234), "-1,234");
 * ```
 */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString("en-US");
  const digits = String(Math.abs(n));
  let out = digits.slice(0, digits.length % 3 || 3);
  for (let i = out.length; i < digits.length; i += 3) out += "," + digits.slice(i, i + 3);
  return n < 0 ? "-" + out : out;
}
