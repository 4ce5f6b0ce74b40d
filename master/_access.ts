/**
 * Who may do what on the master, and where a job may read and write.
 * The app authenticates (bearer token → {@link Principal}, `auth/`); this module
 * applies the rules to one caller. With auth off (`who === null`) everyone sees
 * everything, as before.
 *
 * **Owners.** A job records the namespace and user of the token that submitted it.
 * A token sees, and cancels, only the jobs of its own namespace; namespace `*`
 * (operators) sees all of them. A job the caller may not see answers 404
 * `JOB_NOT_FOUND`, as if it did not exist (the catalog does the same). Jobs
 * submitted while auth was off have no namespace: only `*` sees them.
 *
 * **Paths.** With data roots configured (`--data-roots` / `PERMAFROST_DATA_ROOTS`),
 * `source` and `destination` must resolve — `..` collapsed, symlinks followed
 * (`internal/paths.ts`) — inside a root, else 403 `PATH_OUTSIDE_ROOT`; a relative
 * path resolves against the first root (`team-a/out.pf` is `<root>/team-a/out.pf`),
 * and the request's `cwd` is ignored. For a token with a namespace other than `*`:
 * - the destination must lie under `<root>/<namespace>/` (403 `FORBIDDEN` otherwise);
 * - the source must lie under `<root>/<namespace>/`, or directly in a root: files
 *   at a root's top level are a shared inbox every namespace may read (not write);
 *   another namespace's files are refused (403), so no one can freeze a copy of
 *   them into their own namespace.
 *
 * Without data roots, paths are not confined and only namespace `*` may submit when
 * auth is on (403 for the others: there is nowhere their namespace could be checked);
 * the server logs a warning at start.
 *
 * At the moment of use: the job keeps the real paths checked here and its source's
 * identity; reads and the archive's write check them again (`_job_files.ts`), so a
 * link swapped in afterwards fails the job instead of leading out of the roots.
 *
 * @module
 */
import { seesNamespace } from "../auth/bearer/index.ts";
import { AuthError } from "../auth/errors.ts";
import { ALL_NAMESPACES, type Principal } from "../auth/types.ts";
import { JobError } from "../client/errors.ts";
import type { JobRecord, JobSummary, SubmitRequest, WorkerRecord } from "../client/types.ts";
import { type ConfinedPath, confinePath } from "../internal/paths.ts";
import type { JobOwner, Master } from "./master.ts";

/** Namespace-aware operations over a master, for one caller at a time. */
export class JobAccess {
  readonly #master: Master;
  readonly #roots: readonly string[];

  /**
   * @param master The master.
   * @param roots Data roots, resolved (`resolveDataRoots`); empty: no confinement.
   */
  constructor(master: Master, roots: readonly string[]) {
    this.#master = master;
    this.#roots = roots;
  }

  /**
   * `POST /jobs`: confines the paths, checks the namespace, submits with the owner.
   *
   * @param who The caller (null: auth off).
   * @param req The job request.
   * @returns The new job.
   * @throws {AuthError} FORBIDDEN; {import("../internal/paths.ts").PathError}
   * PATH_OUTSIDE_ROOT, PATH_INVALID; {JobError} as `Master.submit`.
   */
  async submit(who: Principal | null, req: SubmitRequest): Promise<JobRecord> {
    const owner: JobOwner = who === null
      ? { namespace: null, submitted_by: null }
      : { namespace: who.namespace, submitted_by: who.sub };
    const scoped = who !== null && who.namespace !== ALL_NAMESPACES;
    if (this.#roots.length === 0) {
      if (scoped) {
        throw new AuthError(
          "FORBIDDEN",
          `This master has no data roots (--data-roots / PERMAFROST_DATA_ROOTS), so only a token with namespace '*' may submit jobs; the token of '${who.sub}' is for '${who.namespace}'`,
        );
      }
      return await this.#master.submit(req, owner);
    }
    const source = await confinePath(req.source, this.#roots);
    const destination = await confinePath(req.destination, this.#roots);
    if (scoped) {
      const ns = who.namespace;
      if (destination.namespace !== ns) {
        throw new AuthError(
          "FORBIDDEN",
          `Destination '${req.destination}' is ${
            where(destination)
          }; the token of '${who.sub}' may write only under <data root>/${ns}/ (relative paths resolve against the data root: use '${ns}/<file>')`,
        );
      }
      if (source.namespace !== ns && source.namespace !== "") {
        throw new AuthError(
          "FORBIDDEN",
          `Source '${req.source}' is ${
            where(source)
          }; the token of '${who.sub}' may read only under <data root>/${ns}/ or files directly in a data root`,
        );
      }
    }
    const { cwd: _ignored, ...rest } = req;
    return await this.#master.submit(
      { ...rest, source: source.path, destination: destination.path },
      owner,
    );
  }

  /**
   * Whether a caller sees a job.
   *
   * @param who The caller.
   * @param job The job (its `namespace`).
   * @returns True when visible.
   */
  visible(who: Principal | null, job: Pick<JobSummary, "namespace">): boolean {
    return seesNamespace(who, job.namespace);
  }

  /**
   * `GET /jobs/{id}`.
   *
   * @param who The caller.
   * @param jobId The job.
   * @returns The job with its tasks.
   * @throws {JobError} JOB_NOT_FOUND, also for another namespace's job.
   */
  job(who: Principal | null, jobId: string): JobRecord {
    const job = this.#master.job(jobId);
    if (!this.visible(who, job)) throw new JobError("JOB_NOT_FOUND", `No job '${jobId}'`);
    return job;
  }

  /**
   * `GET /jobs`: the jobs the caller sees, newest first.
   *
   * @param who The caller.
   * @returns The jobs.
   */
  jobs(who: Principal | null): JobSummary[] {
    return this.#master.jobs().filter((j) => this.visible(who, j));
  }

  /**
   * `POST /jobs/{id}/cancel` and `DELETE /jobs/{id}`.
   *
   * @param who The caller.
   * @param jobId The job.
   * @returns The job, CANCELLED.
   * @throws {JobError} JOB_NOT_FOUND (also for another namespace's job), JOB_FINISHED.
   */
  cancel(who: Principal | null, jobId: string): JobRecord {
    this.job(who, jobId);
    return this.#master.cancel(jobId);
  }

  /**
   * `GET /workers`: every worker; the task a worker runs is shown only when the
   * caller sees its job.
   *
   * @param who The caller.
   * @returns The workers.
   */
  workers(who: Principal | null): WorkerRecord[] {
    return this.#master.workers().map((w) => {
      if (w.task_id === null || who === null || who.namespace === ALL_NAMESPACES) return w;
      const jobId = this.#master.taskJobId(w.task_id);
      const seen = jobId !== null && this.visible(who, this.#master.job(jobId));
      return seen ? w : { ...w, task_id: null };
    });
  }
}

function where(p: ConfinedPath): string {
  return p.namespace === ""
    ? `directly in the data root '${p.root}'`
    : `in namespace '${p.namespace}' ('${p.root}')`;
}
