/**
 * Jobs whose source or destination is in object storage (`s3://`, `az://`,
 * `gs://`). The master keeps its own copy of a remote source under its data
 * directory (`sources/<job>/<name>`), downloaded once when the job is prepared: the
 * job is laid out, and its tasks read, from that copy (workers on this machine read
 * it themselves, the others get their rows from the master), so what the job reads
 * cannot change under it. A remote destination is written as a local archive
 * (`out/<job>.pf`) and uploaded when complete (a multipart upload, aborted on
 * failure: nothing partial is ever visible). Both copies go when the job ends.
 *
 * @module
 */
import { basename, join } from "node:path";
import { JobError } from "../client/errors.ts";
import { type FileIdentity, identityOf } from "../internal/file_identity.ts";
import { storeFor } from "../storage/registry.ts";
import { downloadFile } from "../storage/transfer.ts";
import { isRemote, parseUri } from "../storage/uri.ts";
import { acceptSource, type JobFiles, realDestination } from "./_job_files.ts";
import type { JobRow } from "./store.ts";

export { isRemote };

/**
 * Checks a job whose source or destination is a URI (the other one may be a path).
 *
 * @param source The source (a URI, or an absolute path already accepted).
 * @param destination The destination (a URI, or an absolute path).
 * @returns The files to record; a remote source's identity is its size only until
 * the copy is made.
 * @throws {JobError} INVALID_JOB for a bad URI; SOURCE_NOT_FOUND for a missing object.
 */
export async function acceptRemoteFiles(source: string, destination: string): Promise<JobFiles> {
  for (const uri of [source, destination].filter(isRemote)) {
    try {
      parseUri(uri);
    } catch (cause) {
      throw new JobError("INVALID_JOB", (cause as Error).message, { cause });
    }
  }
  if (source === destination) {
    throw new JobError("INVALID_JOB", `Cannot write '${destination}': it is the source itself`);
  }
  const dest = isRemote(destination)
    ? destination
    : await realDestination(destination, destination);
  if (!isRemote(source)) return { ...(await acceptSource(source, source)), destination: dest };
  let info;
  try {
    info = await storeFor(source).stat(source);
  } catch (cause) {
    throw new JobError(
      "SOURCE_NOT_FOUND",
      `Cannot read source '${source}': ${(cause as Error).message}`,
      {
        cause,
        path: source,
      },
    );
  }
  if (info === null) {
    throw new JobError("SOURCE_NOT_FOUND", `Cannot read source '${source}': no such object`, {
      path: source,
    });
  }
  return {
    source,
    sourceId: { dev: 0, ino: 0, size: info.size, mtime_ms: null },
    destination: dest,
  };
}

/**
 * The path the job's rows are read from: the source, or the master's copy of it.
 *
 * @param dataDir The master's data directory.
 * @param job The job.
 * @returns A local path.
 */
export function readablePath(dataDir: string, job: Pick<JobRow, "job_id" | "source">): string {
  if (!isRemote(job.source)) return job.source;
  return join(dataDir, "sources", job.job_id, basename(parseUri(job.source).key));
}

/**
 * Makes (once) the master's copy of a remote source.
 *
 * @param dataDir The master's data directory.
 * @param job The job.
 * @returns The copy's identity (for a local source, the one recorded).
 * @throws {import("../storage/errors.ts").StorageError} when it cannot be downloaded.
 */
export async function ensureSourceCopy(dataDir: string, job: JobRow): Promise<FileIdentity | null> {
  if (!isRemote(job.source)) return job.source_id;
  const copy = readablePath(dataDir, job);
  const had = await identityOf(copy);
  if (had !== null && job.source_id?.etag) return { ...had, etag: job.source_id.etag };
  await Deno.mkdir(join(dataDir, "sources", job.job_id), { recursive: true });
  const store = storeFor(job.source);
  const before = await store.stat(job.source);
  await downloadFile(job.source, copy);
  const after = await store.stat(job.source);
  if (before?.etag == null || before.etag !== after?.etag) {
    await Deno.remove(copy).catch(() => {});
    throw new JobError(
      "SOURCE_CHANGED",
      `Cannot copy source '${job.source}': it changed while it was copied (or has no ETag); submit the job again`,
      { path: job.source },
    );
  }
  const identity = await identityOf(copy);
  return identity === null ? null : { ...identity, etag: before.etag };
}

/**
 * Where the archive is written: the destination, or a local file uploaded after.
 *
 * @param dataDir The master's data directory.
 * @param job The job.
 * @returns A local path.
 */
export function localDestination(
  dataDir: string,
  job: Pick<JobRow, "job_id" | "destination">,
): string {
  return isRemote(job.destination) ? join(dataDir, "out", `${job.job_id}.pf`) : job.destination;
}

/**
 * Removes a job's copies (its source copy and an archive not uploaded).
 *
 * @param dataDir The master's data directory.
 * @param jobId The job.
 */
export async function removeJobCopies(dataDir: string, jobId: string): Promise<void> {
  await Deno.remove(join(dataDir, "sources", jobId), { recursive: true }).catch(() => {});
  await Deno.remove(join(dataDir, "out", `${jobId}.pf`)).catch(() => {});
}
