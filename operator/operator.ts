/**
 * The PermafrostJob operator: every `pollS` seconds it looks at the namespace's
 * PermafrostJob objects and moves each along — Pending → Running (submits the job to
 * the master, records `job_id`) → Completed or Failed (with the master's error) — with
 * `status.progress` kept current; a deleted object's master job is cancelled first (a
 * finalizer holds the object until then); and it scales the worker Deployment between
 * a minimum and a maximum by the master's queued tasks. A missing CRD, a 403 from the
 * API or an unreachable master is logged and tried again at the next look; nothing
 * here ends the loop but the stop signal.
 *
 * @module
 */
import type { ClusterClient } from "../client/cluster_client.ts";
import { JobError } from "../client/errors.ts";
import type { JobRecord } from "../client/types.ts";
import type { Logger } from "../internal/log.ts";
import {
  FINALIZER,
  type KubeClient,
  KubeError,
  type PermafrostJob,
  type PermafrostJobStatus,
} from "./kube.ts";

/** What the operator needs. */
export interface OperatorOptions {
  /** The Kubernetes API. */
  kube: KubeClient;
  /** The master. */
  master: ClusterClient;
  /** The namespace whose PermafrostJobs it runs. */
  namespace: string;
  /** The worker Deployment to scale (empty: leave it alone). */
  workers?: string;
  /** Fewest and most workers. */
  minWorkers?: number;
  maxWorkers?: number;
  /** Queued tasks per worker the scaling aims at. */
  tasksPerWorker?: number;
  /** Where it logs. */
  logger: Logger;
}

const CODECS = new Set(["zstd", "lzma2", "zpaq", "zpaqwasm", "auto"]);

/** Runs PermafrostJob objects through the master. */
export class Operator {
  #o: Required<OperatorOptions>;
  /** The last thing logged per object and problem, so a problem is logged when it changes. */
  #said = new Map<string, string>();

  /** @param options Kubernetes, master, namespace, scaling. */
  constructor(options: OperatorOptions) {
    this.#o = { workers: "", minWorkers: 1, maxWorkers: 8, tasksPerWorker: 4, ...options };
  }

  /**
   * Looks once: every object, then the workers' scale. Never throws.
   *
   * @returns How many objects it looked at (null when they could not be listed).
   */
  async reconcile(): Promise<number | null> {
    let jobs: PermafrostJob[];
    try {
      jobs = await this.#o.kube.listJobs(this.#o.namespace);
    } catch (err) {
      this.#problem("list", describeKube(err, "cannot list PermafrostJobs"));
      return null;
    }
    this.#said.delete("list");
    for (const job of jobs) {
      try {
        await this.#step(job);
      } catch (err) {
        this.#problem(
          `job/${job.metadata.name}`,
          err instanceof KubeError
            ? describeKube(err, `cannot update PermafrostJob ${job.metadata.name}`)
            : `PermafrostJob ${job.metadata.name}: ${err instanceof Error ? err.message : err}`,
        );
      }
    }
    if (this.#o.workers) {
      try {
        await this.#scale();
        this.#said.delete("scale");
      } catch (err) {
        this.#problem("scale", describeKube(err, "cannot scale the workers"));
      }
    }
    return jobs.length;
  }

  /**
   * Looks every `pollS` seconds until `signal` aborts.
   *
   * @param pollS Seconds between looks.
   * @param signal Stops the loop.
   */
  async run(pollS: number, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.reconcile();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollS * 1000);
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve();
        }, { once: true });
      });
    }
  }

  #problem(key: string, message: string): void {
    if (this.#said.get(key) === message) return;
    this.#said.set(key, message);
    this.#o.logger.warn(message, { namespace: this.#o.namespace });
  }

  async #patch(job: PermafrostJob, status: PermafrostJobStatus): Promise<void> {
    await this.#o.kube.patchStatus(this.#o.namespace, job.metadata.name, {
      ...status,
      observedGeneration: job.metadata.generation,
    });
  }

  async #dropFinalizer(job: PermafrostJob): Promise<void> {
    const finalizers = job.metadata.finalizers ?? [];
    if (!finalizers.includes(FINALIZER)) return;
    await this.#o.kube.setFinalizers(job, finalizers.filter((f) => f !== FINALIZER));
  }

  async #step(job: PermafrostJob): Promise<void> {
    const { name } = job.metadata;
    const status = job.status ?? {};
    if (job.metadata.deletionTimestamp) {
      if (status.phase === "Running" && status.job_id) {
        try {
          await this.#o.master.cancel(status.job_id);
          this.#o.logger.info("cancelled the job of a deleted PermafrostJob", {
            name,
            job_id: status.job_id,
          });
        } catch (err) {
          // A job that already ended, or that the master forgot, needs no cancelling.
          if (!(err instanceof JobError) || err.code === "UNREACHABLE") throw err;
        }
      }
      await this.#dropFinalizer(job);
      return;
    }
    switch (status.phase) {
      case undefined:
      case "Pending":
        return await this.#submit(job);
      case "Running":
        return await this.#follow(job, status.job_id ?? "");
      default:
        // Completed or Failed: nothing left to cancel, so deletion need not wait.
        return await this.#dropFinalizer(job);
    }
  }

  async #submit(job: PermafrostJob): Promise<void> {
    const { name } = job.metadata;
    const { source, destination, codec, chunk_rows } = job.spec ?? {};
    const bad = typeof source !== "string" || source === ""
      ? "spec.source must be a path or URI"
      : typeof destination !== "string" || destination === ""
      ? "spec.destination must be a path or URI"
      : codec !== undefined && (typeof codec !== "string" || !CODECS.has(codec))
      ? `spec.codec must be one of ${[...CODECS].join(", ")}`
      : chunk_rows !== undefined &&
          (!Number.isSafeInteger(chunk_rows) || (chunk_rows as number) < 1)
      ? "spec.chunk_rows must be a positive integer"
      : null;
    if (bad !== null) {
      await this.#patch(job, { phase: "Failed", message: bad });
      return;
    }
    // The finalizer goes on first, so a deletion from now on always cancels the job.
    const finalizers = job.metadata.finalizers ?? [];
    if (!finalizers.includes(FINALIZER)) {
      await this.#o.kube.setFinalizers(job, [...finalizers, FINALIZER]);
    }
    let jobId: string;
    try {
      jobId = await this.#o.master.freeze(source as string, destination as string, {
        ...(codec === undefined ? {} : { codec: codec as string }),
        ...(chunk_rows === undefined ? {} : { chunkRows: chunk_rows as number }),
      });
    } catch (err) {
      if (err instanceof JobError && err.code === "UNREACHABLE") {
        const message = `waiting for the master: ${err.message}`;
        if (job.status?.message !== message) {
          await this.#patch(job, { phase: "Pending", message });
        }
        this.#problem(`job/${name}`, message);
        return;
      }
      // The master refused it (a bad path, a missing source, no right): final.
      await this.#patch(job, {
        phase: "Failed",
        message: err instanceof Error ? err.message : String(err),
      });
      await this.#dropFinalizer(await this.#reread(job));
      return;
    }
    await this.#patch(job, {
      phase: "Running",
      job_id: jobId,
      progress: 0,
      message: `submitted to ${this.#o.master.url}`,
    });
    this.#o.logger.info("submitted a PermafrostJob", { name, job_id: jobId });
  }

  async #follow(job: PermafrostJob, jobId: string): Promise<void> {
    let record: JobRecord;
    try {
      record = await this.#o.master.job(jobId);
    } catch (err) {
      if (err instanceof JobError && err.code === "JOB_NOT_FOUND") {
        await this.#patch(job, { phase: "Failed", message: `the master has no job ${jobId}` });
        return;
      }
      throw err;
    }
    const progress = Math.round(record.progress * 1000) / 1000;
    if (record.status === "DONE") {
      await this.#patch(job, {
        phase: "Completed",
        progress: 1,
        message: `${record.total_rows ?? 0} rows frozen to ${record.destination} (${
          record.archive_bytes ?? 0
        } bytes)`,
      });
      this.#o.logger.info("PermafrostJob completed", { name: job.metadata.name, job_id: jobId });
    } else if (record.status === "FAILED" || record.status === "CANCELLED") {
      await this.#patch(job, {
        phase: "Failed",
        progress,
        message: record.error ?? `the job was ${record.status.toLowerCase()} on the master`,
      });
    } else if (job.status?.progress !== progress) {
      await this.#patch(job, { phase: "Running", progress });
    }
  }

  async #reread(job: PermafrostJob): Promise<PermafrostJob> {
    const all = await this.#o.kube.listJobs(this.#o.namespace);
    return all.find((j) => j.metadata.name === job.metadata.name) ?? job;
  }

  async #scale(): Promise<void> {
    const { kube, master, namespace, workers, minWorkers, maxWorkers, tasksPerWorker } = this.#o;
    const jobs = await master.listJobs();
    const queued = jobs
      .filter((j) => j.status === "QUEUED" || j.status === "RUNNING")
      .reduce((n, j) => n + Math.max(0, (j.tasks_total ?? 1) - j.tasks_done), 0);
    const want = Math.min(maxWorkers, Math.max(minWorkers, Math.ceil(queued / tasksPerWorker)));
    const have = await kube.getScale(namespace, workers);
    if (have !== want) {
      await kube.setScale(namespace, workers, want);
      this.#o.logger.info("scaled the workers", {
        deployment: workers,
        from: have,
        to: want,
        queued,
      });
    }
  }
}

function describeKube(err: unknown, what: string): string {
  if (err instanceof KubeError) {
    const hint = err.code === "NOT_FOUND"
      ? " (is the PermafrostJob CRD installed? helm install puts it in place)"
      : err.code === "FORBIDDEN"
      ? " (the operator's Role lacks this right)"
      : "";
    return `${what}: ${err.message}${hint}; trying again`;
  }
  if (err instanceof JobError) return `${what}: ${err.message}; trying again`;
  return `${what}: ${err instanceof Error ? err.message : String(err)}; trying again`;
}
