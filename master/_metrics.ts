/**
 * A job's figures as people read them on the status page and in `cluster status`:
 * rows done, elapsed time, rows/s and source MB/s so far, the time left at that rate,
 * and the compression ratio (exact once the archive is written, estimated from the
 * staged chunks while the job runs).
 *
 * @module
 */
import type { JobMetrics } from "../client/types.ts";
import type { JobRow, TaskRow } from "./store.ts";

export type { JobMetrics };

/**
 * Computes a job's figures.
 *
 * @param job The job.
 * @param tasks Its tasks.
 * @param progress Its progress, 0..1.
 * @param now The clock, epoch milliseconds.
 * @returns The figures.
 */
export function jobMetrics(
  job: JobRow,
  tasks: readonly TaskRow[],
  progress: number,
  now: number,
): JobMetrics {
  const sourceBytes = job.prepared?.source_bytes ?? null;
  let rowsDone = 0;
  let stagedBytes = 0;
  for (const t of tasks) {
    if (t.status !== "DONE") continue;
    rowsDone += t.rows;
    stagedBytes += t.staged_bytes ?? 0;
  }
  if (job.status === "DONE") rowsDone = job.total_rows ?? rowsDone;
  const started = job.started_at;
  const elapsedS = started === null
    ? null
    : Math.max(0, ((job.finished_at ?? now) - started) / 1000);
  const rate = (n: number) => (elapsedS && elapsedS > 0 ? n / elapsedS : null);
  const running = job.status === "RUNNING";
  let ratio: number | null = null;
  if (sourceBytes !== null && job.status === "DONE" && job.archive_bytes) {
    ratio = sourceBytes / job.archive_bytes;
  } else if (sourceBytes !== null && running && stagedBytes > 0 && progress > 0) {
    ratio = (sourceBytes * progress) / stagedBytes;
  }
  return {
    source_bytes: sourceBytes,
    rows_done: rowsDone,
    elapsed_s: elapsedS,
    rows_per_s: rate(rowsDone),
    mb_per_s: sourceBytes === null ? null : rate((sourceBytes * progress) / 1e6),
    eta_s: running && elapsedS !== null && progress > 0 && progress < 1
      ? (elapsedS * (1 - progress)) / progress
      : null,
    ratio,
  };
}
