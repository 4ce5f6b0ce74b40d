/**
 * `JobError`: every failure of the cluster (master, workers, and the client that
 * talks to them). Declared here, beside the wire types, because all three share it:
 * the master throws it, the HTTP layer maps its code to a status, and the client
 * turns an error answer back into the same class and code.
 *
 * Codes, with the HTTP status the master and workers answer:
 * - `INVALID_JOB` (400): a job request the master refuses (unknown codec, bad
 *   `chunk_rows`, unknown source format, destination equal to the source...).
 * - `SOURCE_NOT_FOUND` (400): the master cannot read the job's source file.
 * - `JOB_NOT_FOUND` (404), `TASK_NOT_FOUND` (404), `WORKER_NOT_FOUND` (404).
 * - `JOB_FINISHED` (409): cancelling a job that is already DONE or FAILED.
 * - `DESTINATION_BUSY` (409): another active job writes the same destination.
 * - `STALE_RESULT` (409): a result or report for a task lease that is no longer
 *   current (late, duplicate, or from a worker declared offline). Safe to drop.
 * - `BUSY` (409): a worker asked to run a task while it runs another.
 * - `BAD_CHUNK` (422): a frozen chunk that fails its checks (framing, sizes,
 *   hashes, row or column count).
 * - `SOURCE_CHANGED` (422): a task's rows are not what the master planned (the
 *   source file changed since the job was prepared).
 * - `UNREACHABLE` (503): the master (or a worker) did not answer.
 * - `REQUEST_FAILED` (500): any other error answer the client got, keeping the
 *   server's own code in the message.
 *
 * @module
 */
import { PermafrostError } from "../internal/errors.ts";

/** Closed list of cluster error codes. Never rename or reuse one. */
export type JobErrorCode =
  | "INVALID_JOB"
  | "SOURCE_NOT_FOUND"
  | "JOB_NOT_FOUND"
  | "TASK_NOT_FOUND"
  | "WORKER_NOT_FOUND"
  | "JOB_FINISHED"
  | "DESTINATION_BUSY"
  | "STALE_RESULT"
  | "BUSY"
  | "BAD_CHUNK"
  | "SOURCE_CHANGED"
  | "UNREACHABLE"
  | "REQUEST_FAILED";

/** HTTP status of each cluster error code (merged into the apps' error handlers). */
export const JOB_STATUS_BY_CODE = Object.freeze(
  {
    INVALID_JOB: 400,
    SOURCE_NOT_FOUND: 400,
    JOB_NOT_FOUND: 404,
    TASK_NOT_FOUND: 404,
    WORKER_NOT_FOUND: 404,
    JOB_FINISHED: 409,
    DESTINATION_BUSY: 409,
    STALE_RESULT: 409,
    BUSY: 409,
    BAD_CHUNK: 422,
    SOURCE_CHANGED: 422,
    UNREACHABLE: 503,
    REQUEST_FAILED: 500,
  } as const satisfies Record<JobErrorCode, number>,
);

/**
 * A cluster failure.
 *
 * @example Check the code of a cluster error
 * ```ts
 * import assert from "node:assert/strict";
 * import { JobError } from "./errors.ts";
 * assert.equal(new JobError("JOB_NOT_FOUND", "No job 'x'").code, "JOB_NOT_FOUND");
 * ```
 */
export class JobError extends PermafrostError<JobErrorCode> {
  /** Always `"JobError"`. */
  override name = "JobError";
  /** HTTP status of the answer this error came from (client side), when any. */
  readonly status?: number;

  /**
   * Creates a cluster error.
   *
   * @param code Stable code.
   * @param message What failed and the current state.
   * @param details Cause, column, path, and the HTTP status the client saw.
   */
  constructor(
    code: JobErrorCode,
    message: string,
    details: ConstructorParameters<typeof PermafrostError>[2] & { status?: number } = {},
  ) {
    super(code, message, details);
    if (details.status !== undefined) this.status = details.status;
  }
}
