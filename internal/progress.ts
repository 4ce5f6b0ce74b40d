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

/** A progress bar: call `update` as work advances and `done` at the end. */
export class ProgressBar {
  #sink: ProgressSink;
  #label: string;
  #last = 0;
  #drawn = false;
  #width = 28;

  /**
   * @param label Text before the bar (e.g. `freeze`).
   * @param sink Where to draw (default stderr).
   */
  constructor(label: string, sink: ProgressSink = stderrSink()) {
    this.#label = label;
    this.#sink = sink;
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
    const now = performance.now();
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
    const pct = fraction === null
      ? ""
      : ` ${(Math.max(0, Math.min(1, fraction)) * 100).toFixed(0).padStart(3)}%`;
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

/** Formats a count with thousands separators. */
export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}
