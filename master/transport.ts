/**
 * How the master reaches workers: the `WorkerTransport` it hands tasks and drops
 * through (`httpTransport`: `POST {url}/tasks`, `POST {url}/tasks/{id}/cancel`,
 * signed with the master's service token), the `DispatchError` a refusal becomes,
 * and the URL a registering worker is reached at (`workerUrl`).
 *
 * @module
 */
import type { TaskSpec } from "../client/types.ts";
import { JobError } from "../client/errors.ts";
import { type ServiceToken, withServiceToken } from "../cluster/service_token.ts";

/** Why a task could not be handed to a worker. */
export class DispatchError extends Error {
  override name = "DispatchError";
  /** `unreachable` (no answer), `busy` (runs another task) or `refused` (any other error answer). */
  readonly kind: "unreachable" | "busy" | "refused";

  /**
   * Creates a dispatch error.
   *
   * @param kind What happened.
   * @param message Details.
   */
  constructor(kind: "unreachable" | "busy" | "refused", message: string) {
    super(message);
    this.kind = kind;
  }
}

/** How the master reaches workers. */
export interface WorkerTransport {
  /**
   * Hands a task to a worker.
   *
   * @throws {DispatchError} when the worker does not take it.
   */
  assign(url: string, spec: TaskSpec): Promise<void>;
  /** Tells a worker to drop a task (best effort; throws when unreachable). */
  cancel(url: string, taskId: string): Promise<void>;
}

/**
 * The HTTP transport: `POST {url}/tasks` and `POST {url}/tasks/{id}/cancel`.
 *
 * @param options `fetch` (default the global one), a per-request timeout, and the
 * master's service token (with auth on, workers refuse calls without one).
 * @returns The transport.
 */
export function httpTransport(
  options: { fetch?: typeof fetch; timeoutMs?: number; token?: ServiceToken } = {},
): WorkerTransport {
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  async function call(url: string, body: unknown): Promise<Response> {
    const headers = await withServiceToken({ "content-type": "application/json" }, options.token);
    try {
      return await doFetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new DispatchError("unreachable", err instanceof Error ? err.message : String(err));
    }
  }
  return {
    async assign(url, spec) {
      const res = await call(`${url}/tasks`, spec);
      if (res.ok) {
        await res.body?.cancel();
        return;
      }
      const text = await res.text().catch(() => "");
      let message = text;
      try {
        message = JSON.parse(text).error?.message ?? text;
      } catch { /* not JSON */ }
      throw new DispatchError(
        res.status === 409 ? "busy" : "refused",
        `worker answered ${res.status}: ${message}`,
      );
    },
    async cancel(url, taskId) {
      const res = await call(`${url}/tasks/${encodeURIComponent(taskId)}/cancel`, {});
      await res.body?.cancel();
    },
  };
}

/** The URL the master uses for a worker: an unspecified host becomes the caller's address. */
export function workerUrl(raw: string, remoteHost?: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new JobError("INVALID_JOB", `Worker url '${raw}' is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new JobError("INVALID_JOB", `Worker url '${raw}' is not http(s)`);
  }
  const host = url.hostname;
  if (host === "0.0.0.0" || host === "[::]" || host === "::") {
    const h = remoteHost && remoteHost !== "" ? remoteHost : "127.0.0.1";
    url.hostname = h.includes(":") && !h.startsWith("[") ? `[${h}]` : h;
  }
  return url.href.replace(/\/+$/, "");
}
