/**
 * How a worker speaks to its master: each request carries the worker's service token
 * (when auth is on, `cluster/service_token.ts`) and a time limit of its own; a master
 * that cannot be reached is `UNREACHABLE`, an error answer a {@link JobError} with
 * the master's code where the worker acts on it (`WORKER_NOT_FOUND`, `STALE_RESULT`,
 * `TASK_NOT_FOUND`, `BAD_CHUNK`) and `REQUEST_FAILED` otherwise, with the status.
 *
 * @module
 */
import { JobError, type JobErrorCode } from "../client/errors.ts";
import { PermafrostError } from "../internal/errors.ts";
import type { TaskSpec } from "../client/types.ts";
import { type ServiceToken, withServiceToken } from "../cluster/service_token.ts";

/** Codes of the master's answers the worker acts on; others are REQUEST_FAILED. */
const ACTED_ON: ReadonlySet<string> = new Set<JobErrorCode>([
  "WORKER_NOT_FOUND",
  "STALE_RESULT",
  "TASK_NOT_FOUND",
  "BAD_CHUNK",
]);

/** One worker's line to its master. */
export class MasterLink {
  /** The master's URL, without a trailing slash. */
  readonly url: string;
  #fetch: typeof fetch;
  #token: ServiceToken | undefined;
  #timeoutMs: () => number;

  /**
   * @param url The master's URL.
   * @param options `fetch` (tests), the service `token`, and the time limit of a POST.
   */
  constructor(
    url: string,
    options: { fetch?: typeof fetch; token?: ServiceToken; timeoutMs: () => number },
  ) {
    this.url = url.replace(/\/+$/, "");
    this.#fetch = options.fetch ?? fetch;
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs;
  }

  /**
   * POSTs a body to a path of the master.
   *
   * @throws {JobError} UNREACHABLE when no answer came.
   */
  async post(path: string, body: BodyInit, type: string, signal?: AbortSignal): Promise<Response> {
    const timeout = AbortSignal.timeout(this.#timeoutMs());
    const headers = await withServiceToken({ "content-type": type }, this.#token);
    try {
      return await this.#fetch(`${this.url}${path}`, {
        method: "POST",
        headers,
        body,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (cause) {
      throw new JobError(
        "UNREACHABLE",
        `Cannot reach the master at ${this.url}: ${
          cause instanceof Error ? cause.message : String(cause)
        }`,
        { cause },
      );
    }
  }

  /**
   * GETs a running task's rows (framed, `cluster/wire.ts`).
   *
   * @throws {JobError} UNREACHABLE, or the master's refusal; a `PermafrostError` with the
   * code and column of the source's own error (422), e.g. SCHEMA_MISMATCH.
   */
  async taskRows(spec: TaskSpec, signal: AbortSignal): Promise<Uint8Array> {
    const url = `${this.url}/tasks/${encodeURIComponent(spec.task_id)}/rows?lease=${
      encodeURIComponent(spec.lease)
    }`;
    const headers = await withServiceToken({}, this.#token);
    let res: Response;
    try {
      res = await this.#fetch(url, { signal, headers });
    } catch (cause) {
      throw new JobError(
        "UNREACHABLE",
        `Cannot fetch rows from the master: ${
          cause instanceof Error ? cause.message : String(cause)
        }`,
        { cause },
      );
    }
    if (res.status === 422) {
      // The source's own error, read on the master: reported as if read here.
      const e = ((await res.json().catch(() => null)) as {
        error?: { code?: string; message?: string; column?: string };
      } | null)?.error;
      throw new PermafrostError(
        e?.code ?? "READ_FAILED",
        e?.message ?? "the master could not read the rows",
        {
          ...(e?.column ? { column: e.column } : {}),
        },
      );
    }
    if (!res.ok) await this.json<unknown>(res);
    return new Uint8Array(await res.arrayBuffer());
  }

  /**
   * The JSON body of an answer.
   *
   * @throws {JobError} for an error answer (see the module doc).
   */
  async json<T>(res: Response): Promise<T> {
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    if (!res.ok) {
      const e = (body as { error?: { code?: string; message?: string } } | null)?.error;
      const code = e?.code && ACTED_ON.has(e.code) ? e.code as JobErrorCode : "REQUEST_FAILED";
      throw new JobError(
        code,
        `Master answered ${res.status}: ${e?.message ?? text.slice(0, 200)}`,
        {
          status: res.status,
        },
      );
    }
    return body as T;
  }
}
