/**
 * The cluster's client side: {@link ClusterClient} (the master's typed REST client),
 * the wire types, and `JobError`.
 *
 * @example Ask a master how many workers it has
 * ```ts ignore
 * import { ClusterClient } from "./mod.ts";
 * const health = await new ClusterClient("http://127.0.0.1:8700").health();
 * console.log(health.workers, health.idle_workers);
 * ```
 *
 * @module
 */
export { ClusterClient } from "./cluster_client.ts";
export type {
  ClusterClientOptions,
  ClusterFreezeOptions,
  FetchLike,
  WaitOptions,
} from "./cluster_client.ts";
export { JobError } from "./errors.ts";
export type { JobErrorCode } from "./errors.ts";
export type {
  HealthRecord,
  JobCodec,
  JobMetrics,
  JobPhase,
  JobRecord,
  JobSourceFormat,
  JobStatus,
  JobSummary,
  SubmitRequest,
  SubmitResponse,
  TaskRecord,
  TaskStatus,
  WorkerRecord,
  WorkerStatus,
} from "./types.ts";
