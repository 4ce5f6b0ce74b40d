/**
 * `ClusterClient`: the typed REST client of the master, used by the CLI, the tests
 * and users' scripts. Every method is one request (but `wait`, which long-polls); an
 * error answer becomes a `JobError` with the server's code when it is a cluster
 * code (`JOB_NOT_FOUND`, `INVALID_JOB`...) and `REQUEST_FAILED` otherwise (the
 * server's code is then in the message); no answer at all is `UNREACHABLE`.
 *
 * Pass `fetch` to talk to an app without a socket (`fetch: app.request`).
 *
 * @module
 */
import { JOB_STATUS_BY_CODE, JobError, type JobErrorCode } from "./errors.ts";
import {
  type HealthRecord,
  type JobCodec,
  type JobRecord,
  type JobSourceFormat,
  type JobSummary,
  MAX_JOB_WAIT_S,
  type SubmitRequest,
  type SubmitResponse,
  type WorkerRecord,
} from "./types.ts";

/** A `fetch`-like function (the global one, or a Hono app's `request`). */
export type FetchLike = (input: string, init?: RequestInit) => Response | Promise<Response>;

/** Options of {@link ClusterClient}. */
export interface ClusterClientOptions {
  /** How requests are sent (default the global `fetch`). */
  fetch?: FetchLike;
  /** Bearer token sent with every request, when the cluster has auth on. */
  token?: string;
}

/** Options of {@link ClusterClient.freeze}. */
export interface ClusterFreezeOptions {
  /** Codec (default `zstd`). */
  codec?: JobCodec;
  /** Rows per chunk (default: the master's). */
  chunkRows?: number;
  /** Source format, instead of guessing from the extension. */
  format?: JobSourceFormat;
}

/** Options of {@link ClusterClient.wait}. */
export interface WaitOptions {
  /**
   * Milliseconds between progress updates (default 500). Each request asks the
   * master to answer as soon as the job ends, so the end is not delayed by this.
   */
  pollInterval?: number;
  /** Stops waiting (rejects with the signal's reason) when aborted. */
  signal?: AbortSignal;
  /** Called with the job after each poll. */
  onProgress?: (job: JobRecord) => void;
}

const FINAL = new Set(["DONE", "FAILED", "CANCELLED"]);

/**
 * The master's typed client.
 *
 * @example Submit a job and wait for it
 * ```ts ignore
 * import { ClusterClient } from "./cluster_client.ts";
 * const client = new ClusterClient("http://127.0.0.1:8700");
 * const jobId = await client.freeze("/data/flights.parquet", "/data/flights.pf", { codec: "zstd" });
 * const job = await client.wait(jobId, { pollInterval: 1000 });
 * console.log(job.status, job.payload_sha256);
 * ```
 */
export class ClusterClient {
  /** The master's base URL, without a trailing slash. */
  readonly url: string;
  #fetch: FetchLike;
  #token: string | undefined;

  /**
   * Creates a client of one master.
   *
   * @param url The master's URL (`http://127.0.0.1:8700`).
   * @param options `fetch` and `token`.
   */
  constructor(url: string, options: ClusterClientOptions = {}) {
    this.url = url.replace(/\/+$/, "");
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#token = options.token;
  }

  async #call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    let res: Response;
    try {
      res = await this.#fetch(`${this.url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
    } catch (cause) {
      if (signal?.aborted) throw signal.reason;
      throw new JobError(
        "UNREACHABLE",
        `Cannot reach the master at ${this.url}: ${
          cause instanceof Error ? cause.message : String(cause)
        }`,
        { cause },
      );
    }
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const e = (parsed as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
      const code = typeof e?.code === "string" ? e.code : `HTTP_${res.status}`;
      const message = typeof e?.message === "string" ? e.message : text.slice(0, 300);
      const known = Object.hasOwn(JOB_STATUS_BY_CODE, code);
      throw new JobError(
        known ? code as JobErrorCode : "REQUEST_FAILED",
        known ? message : `${method} ${path} failed with ${res.status} ${code}: ${message}`,
        { status: res.status },
      );
    }
    if (parsed === undefined) {
      throw new JobError(
        "REQUEST_FAILED",
        `${method} ${path} answered ${res.status} without a JSON body`,
        { status: res.status },
      );
    }
    return parsed as T;
  }

  /**
   * `GET /health`.
   *
   * @returns Worker counts.
   * @throws {JobError} UNREACHABLE when the master does not answer.
   */
  health(): Promise<HealthRecord> {
    return this.#call("GET", "/health");
  }

  /**
   * `POST /jobs` with the raw request.
   *
   * @param req The job.
   * @returns Its id and status.
   * @throws {JobError} INVALID_JOB, SOURCE_NOT_FOUND, DESTINATION_BUSY, REQUEST_FAILED (400 validation).
   */
  submit(req: SubmitRequest): Promise<SubmitResponse> {
    return this.#call("POST", "/jobs", req);
  }

  /**
   * Submits a freeze job.
   *
   * @param source Source file, as the master's filesystem names it.
   * @param destination Archive path, on the master's filesystem.
   * @param options Codec, chunk rows, format.
   * @returns The job id.
   * @throws {JobError} as {@link ClusterClient.submit}.
   */
  async freeze(
    source: string,
    destination: string,
    options: ClusterFreezeOptions = {},
  ): Promise<string> {
    const req: SubmitRequest = { source, destination };
    if (options.codec !== undefined) req.codec = options.codec;
    if (options.chunkRows !== undefined) req.chunk_rows = options.chunkRows;
    if (options.format !== undefined) req.format = options.format;
    return (await this.submit(req)).job_id;
  }

  /**
   * `GET /jobs/{id}`.
   *
   * @param jobId The job.
   * @param options `waitS`: let the master hold the answer until the job is DONE,
   * FAILED or CANCELLED, at most this many seconds (`?wait_s=`); `signal` aborts.
   * @returns The job with its tasks.
   * @throws {JobError} JOB_NOT_FOUND.
   */
  job(jobId: string, options: { waitS?: number; signal?: AbortSignal } = {}): Promise<JobRecord> {
    const wait = options.waitS ? `?wait_s=${Math.min(options.waitS, MAX_JOB_WAIT_S)}` : "";
    return this.#call(
      "GET",
      `/jobs/${encodeURIComponent(jobId)}${wait}`,
      undefined,
      options.signal,
    );
  }

  /**
   * `GET /jobs`.
   *
   * @returns Every job, newest first.
   */
  listJobs(): Promise<JobSummary[]> {
    return this.#call("GET", "/jobs");
  }

  /**
   * `GET /workers`.
   *
   * @returns Every worker.
   */
  listWorkers(): Promise<WorkerRecord[]> {
    return this.#call("GET", "/workers");
  }

  /**
   * `POST /jobs/{id}/cancel`.
   *
   * @param jobId The job.
   * @returns Its id and status (CANCELLED).
   * @throws {JobError} JOB_NOT_FOUND; JOB_FINISHED when it is DONE or FAILED.
   */
  cancel(jobId: string): Promise<SubmitResponse> {
    return this.#call("POST", `/jobs/${encodeURIComponent(jobId)}/cancel`);
  }

  /**
   * Waits until a job is DONE, FAILED or CANCELLED: each request asks the master to
   * answer when the job ends or `pollInterval` has passed (`?wait_s=`).
   *
   * @param jobId The job.
   * @param options Poll interval (ms, default 500), abort signal, progress callback.
   * @returns The final job record (check its `status`).
   * @throws {JobError} JOB_NOT_FOUND, UNREACHABLE; the signal's reason when aborted.
   */
  async wait(jobId: string, options: WaitOptions = {}): Promise<JobRecord> {
    const every = options.pollInterval ?? 500;
    for (;;) {
      options.signal?.throwIfAborted();
      // The master holds the answer until the job ends or `every` passes, so the end
      // is seen at once; a master that answers sooner is polled every `every` ms.
      const asked = performance.now();
      const job = await this.job(jobId, { waitS: every / 1000, signal: options.signal });
      options.onProgress?.(job);
      if (FINAL.has(job.status)) return job;
      options.signal?.throwIfAborted();
      const rest = every - (performance.now() - asked);
      if (rest <= 0) continue;
      await new Promise<void>((resolve, reject) => {
        const signal = options.signal;
        const timer = setTimeout(() => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        }, rest);
        function onAbort() {
          clearTimeout(timer);
          reject(signal!.reason);
        }
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    }
  }
}
