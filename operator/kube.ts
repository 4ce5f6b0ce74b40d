/**
 * The few Kubernetes API calls the operator makes, over `fetch`: list PermafrostJob
 * objects, merge-patch one's status or its finalizers, and read and set the scale of
 * the worker Deployment. In a pod it authenticates with the service account's token
 * (read again for each request: Kubernetes rotates it) and trusts the cluster's CA.
 * Errors are {@link KubeError}s whose code says what to do: `NOT_FOUND` (the CRD is not
 * installed, or the object is gone), `FORBIDDEN` (the Role lacks a right),
 * `UNREACHABLE`, `CONFLICT`, `REQUEST_FAILED`.
 *
 * @module
 */
import { PermafrostError } from "../internal/errors.ts";

/** What went wrong with the Kubernetes API. */
export type KubeErrorCode =
  | "NOT_FOUND"
  | "FORBIDDEN"
  | "UNREACHABLE"
  | "CONFLICT"
  | "REQUEST_FAILED";

/** A failed Kubernetes API call. */
export class KubeError extends PermafrostError<KubeErrorCode> {
  /** Always `"KubeError"`. */
  override name = "KubeError";
}

/** The PermafrostJob API group and version. */
export const GROUP_VERSION = "permafrost.dev/v1alpha1";
/** The finalizer that makes a deleted PermafrostJob cancel its master job first. */
export const FINALIZER = "permafrost.dev/cancel-job";

/** The phases of a PermafrostJob. */
export type JobPhase = "Pending" | "Running" | "Completed" | "Failed";

/** A PermafrostJob's status. */
export interface PermafrostJobStatus {
  phase?: JobPhase;
  job_id?: string;
  progress?: number;
  message?: string;
  observedGeneration?: number;
}

/** A PermafrostJob object. */
export interface PermafrostJob {
  apiVersion: string;
  kind: "PermafrostJob";
  metadata: {
    name: string;
    namespace?: string;
    generation?: number;
    resourceVersion?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
  };
  spec: { source?: unknown; destination?: unknown; codec?: unknown; chunk_rows?: unknown };
  status?: PermafrostJobStatus;
}

/** How to reach the API. */
export interface KubeOptions {
  /** The API's base URL (`https://10.0.0.1:443`). */
  apiUrl: string;
  /** The bearer token, read for each request (null: none). */
  token: () => Promise<string | null>;
  /** The cluster CA (PEM), trusted for the API's certificate. */
  caCert?: string;
  /** `fetch` (tests). */
  fetch?: typeof fetch;
}

/** A client of the API subset the operator uses. */
export class KubeClient {
  #options: KubeOptions;
  #client: Deno.HttpClient | undefined;

  /** @param options API URL, token, CA. */
  constructor(options: KubeOptions) {
    this.#options = options;
    this.#client = options.caCert
      ? Deno.createHttpClient({ caCerts: [options.caCert] })
      : undefined;
  }

  /** Releases the HTTP client. */
  close(): void {
    this.#client?.close();
  }

  async #call(method: string, path: string, body?: unknown): Promise<unknown> {
    const headers: Record<string, string> = { accept: "application/json" };
    const token = await this.#options.token();
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers["content-type"] = "application/merge-patch+json";
    const url = `${this.#options.apiUrl.replace(/\/+$/, "")}${path}`;
    let res: Response;
    try {
      const init: RequestInit & { client?: Deno.HttpClient } = {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      };
      if (this.#client) init.client = this.#client;
      res = await (this.#options.fetch ?? fetch)(url, init);
    } catch (cause) {
      throw new KubeError(
        "UNREACHABLE",
        `Cannot reach the Kubernetes API at ${this.#options.apiUrl}: ${
          cause instanceof Error ? cause.message : String(cause)
        }`,
        { cause },
      );
    }
    const text = await res.text();
    if (res.ok) return text === "" ? {} : JSON.parse(text);
    let reason = text.slice(0, 300);
    try {
      reason = JSON.parse(text).message ?? reason;
    } catch {
      // not a Status object
    }
    const code: KubeErrorCode = res.status === 404
      ? "NOT_FOUND"
      : res.status === 401 || res.status === 403
      ? "FORBIDDEN"
      : res.status === 409
      ? "CONFLICT"
      : "REQUEST_FAILED";
    throw new KubeError(code, `${method} ${path}: ${res.status} ${reason}`);
  }

  /**
   * The PermafrostJob objects of a namespace.
   *
   * @param namespace The namespace.
   * @returns The objects.
   * @throws {KubeError} NOT_FOUND when the CRD is not installed.
   */
  async listJobs(namespace: string): Promise<PermafrostJob[]> {
    const list = await this.#call("GET", `${jobsPath(namespace)}`) as { items?: PermafrostJob[] };
    return list.items ?? [];
  }

  /**
   * Merge-patches a PermafrostJob's status (the status subresource).
   *
   * @param namespace Its namespace.
   * @param name Its name.
   * @param status The fields to set.
   */
  async patchStatus(namespace: string, name: string, status: PermafrostJobStatus): Promise<void> {
    await this.#call("PATCH", `${jobsPath(namespace)}/${encodeURIComponent(name)}/status`, {
      status,
    });
  }

  /**
   * Sets a PermafrostJob's finalizers (guarded by its resourceVersion).
   *
   * @param job The object as read.
   * @param finalizers The new list.
   * @throws {KubeError} CONFLICT when the object changed since it was read.
   */
  async setFinalizers(job: PermafrostJob, finalizers: string[]): Promise<void> {
    const ns = job.metadata.namespace ?? "default";
    await this.#call("PATCH", `${jobsPath(ns)}/${encodeURIComponent(job.metadata.name)}`, {
      metadata: { finalizers, resourceVersion: job.metadata.resourceVersion },
    });
  }

  /**
   * The replicas a Deployment asks for (its scale subresource).
   *
   * @param namespace Its namespace.
   * @param name Its name.
   * @returns `spec.replicas`.
   */
  async getScale(namespace: string, name: string): Promise<number> {
    const scale = await this.#call("GET", scalePath(namespace, name)) as {
      spec?: { replicas?: number };
    };
    return scale.spec?.replicas ?? 0;
  }

  /**
   * Sets the replicas of a Deployment (its scale subresource).
   *
   * @param namespace Its namespace.
   * @param name Its name.
   * @param replicas How many.
   */
  async setScale(namespace: string, name: string, replicas: number): Promise<void> {
    await this.#call("PATCH", scalePath(namespace, name), { spec: { replicas } });
  }
}

function jobsPath(namespace: string): string {
  return `/apis/${GROUP_VERSION}/namespaces/${encodeURIComponent(namespace)}/permafrostjobs`;
}

function scalePath(namespace: string, name: string): string {
  return `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/deployments/${
    encodeURIComponent(name)
  }/scale`;
}
