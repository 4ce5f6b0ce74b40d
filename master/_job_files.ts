/**
 * The files of a job, checked when the job is accepted and again when they are used,
 * so that a check about a path still holds about the file behind it:
 *
 * - **Real paths.** A job keeps its source's and destination's real paths (every
 *   symbolic link resolved when it was accepted), never the text it was given; a
 *   destination that is a link to a regular file is that file, as the archive writer
 *   replaces the file and keeps the link.
 * - **The same file, not the same text.** A destination that is the source (through a
 *   link, or a hard link: same device and inode), or that another running job writes
 *   or reads, is refused; so is a source another running job writes.
 * - **At the moment of use.** The source's identity (device, inode, size, modification
 *   time) is recorded; every read checks the file it opens against it
 *   (`cluster/task_source.ts`), so a path swapped for a link to another namespace's
 *   file reads nothing. Before the archive is written, and again once it is in place,
 *   the destination's directory must still resolve to the real path recorded: a
 *   directory swapped for a link that leads elsewhere (out of the data roots) fails the
 *   job instead of writing there.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { JobError } from "../client/errors.ts";
import {
  type FileIdentity,
  identityOf,
  openedIdentity,
  sameFile,
} from "../internal/file_identity.ts";

/** A job's files as accepted. */
export interface JobFiles {
  /** The source's real path. */
  source: string;
  /** The source file's identity. */
  sourceId: FileIdentity;
  /** The destination's real path (its directory's real path and its name). */
  destination: string;
}

/** A running job's files, for the busy checks. */
export interface ActiveFiles {
  job_id: string;
  source: string;
  destination: string;
}

/**
 * Resolves and checks a new job's files.
 *
 * @param source The source path (absolute).
 * @param destination The destination path (absolute).
 * @param shown The paths as the user gave them, for messages.
 * @returns The files to record.
 * @throws {JobError} SOURCE_NOT_FOUND when the source is missing or not a regular file;
 * INVALID_JOB for a destination that is a directory, in a missing directory, a link to
 * something other than a regular file, or the source itself.
 */
export async function acceptFiles(
  source: string,
  destination: string,
  shown: { source: string; destination: string },
): Promise<JobFiles> {
  const { source: sourceReal, sourceId } = await acceptSource(source, shown.source);
  const destReal = await realDestination(destination, shown.destination);
  const destId = await openedIdentity(destReal);
  if (destReal === sourceReal || sameFile(destId, sourceId)) {
    throw new JobError(
      "INVALID_JOB",
      `Cannot write '${shown.destination}': it is the source itself${
        destReal === sourceReal ? "" : " (the same file through another name)"
      }; pick another destination`,
    );
  }
  return { source: sourceReal, sourceId, destination: destReal };
}

/**
 * Resolves and checks a job's local source.
 *
 * @param source The source path (absolute).
 * @param shown The path as the user gave it, for messages.
 * @returns Its real path and identity.
 * @throws {JobError} SOURCE_NOT_FOUND when it is missing or not a regular file.
 */
export async function acceptSource(
  source: string,
  shown: string,
): Promise<{ source: string; sourceId: FileIdentity }> {
  let sourceReal: string;
  try {
    sourceReal = await Deno.realPath(source);
  } catch (cause) {
    throw new JobError(
      "SOURCE_NOT_FOUND",
      `Cannot read source '${shown}': ${(cause as Error).message}`,
      { cause, path: source },
    );
  }
  // lstat of the real path: a link here now means it was swapped a moment ago.
  const sourceId = await identityOf(sourceReal);
  if (sourceId === null) {
    throw new JobError("SOURCE_NOT_FOUND", `Cannot read source '${shown}': not a file`, {
      path: source,
    });
  }
  return { source: sourceReal, sourceId };
}

/**
 * The real path a write to `destination` replaces (see the module doc).
 *
 * @param destination The destination path (absolute).
 * @param shown The path as the user gave it, for messages.
 * @returns Its real path.
 * @throws {JobError} INVALID_JOB for a directory, a missing directory, or a link to
 * something other than a regular file.
 */
export async function realDestination(destination: string, shown: string): Promise<string> {
  const info = await Deno.lstat(destination).catch(() => null);
  if (info?.isSymlink) {
    const target = await Deno.realPath(destination).catch(() => null);
    const targetInfo = target === null ? null : await Deno.stat(target).catch(() => null);
    if (target === null || !targetInfo?.isFile) {
      throw new JobError(
        "INVALID_JOB",
        `Cannot write '${shown}': it is a link to something that is not a regular file`,
      );
    }
    return target;
  }
  if (info?.isDirectory) {
    throw new JobError("INVALID_JOB", `Cannot write '${shown}': it is a directory`);
  }
  const dir = await Deno.realPath(dirname(destination)).catch(() => null);
  const dirInfo = dir === null ? null : await Deno.stat(dir).catch(() => null);
  if (!dirInfo?.isDirectory) {
    throw new JobError(
      "INVALID_JOB",
      `Cannot write '${shown}': directory '${dirname(destination)}' does not exist`,
    );
  }
  return join(dir!, basename(destination));
}

/**
 * Refuses a new job whose files collide with a running job's: the same destination
 * file, a destination another job reads, or a source another job writes.
 *
 * @param files The new job's files.
 * @param active The running jobs' files.
 * @param shown The destination as given, for messages.
 * @throws {JobError} DESTINATION_BUSY naming the other job.
 */
export async function checkNotBusy(
  files: JobFiles,
  active: readonly ActiveFiles[],
  shown: string,
): Promise<void> {
  const destId = await openedIdentity(files.destination);
  for (const other of active) {
    const otherDestId = await openedIdentity(other.destination);
    if (other.destination === files.destination || sameFile(destId, otherDestId)) {
      throw new JobError("DESTINATION_BUSY", `Job ${other.job_id} is already writing '${shown}'`);
    }
    if (
      other.source === files.destination || sameFile(destId, await openedIdentity(other.source))
    ) {
      throw new JobError(
        "DESTINATION_BUSY",
        `Job ${other.job_id} is reading '${shown}' as its source; writing it now would change what that job reads`,
      );
    }
    if (other.destination === files.source || sameFile(files.sourceId, otherDestId)) {
      throw new JobError(
        "DESTINATION_BUSY",
        `Job ${other.job_id} is writing this job's source; wait for it to finish`,
      );
    }
  }
}

/**
 * Checks, right before the archive is written and again once it is in place, that
 * the destination's directory still resolves to the real path recorded and that the
 * destination is not now a link.
 *
 * @param destination The destination's real path, as recorded.
 * @throws {JobError} INVALID_JOB saying what moved.
 */
export async function checkDestinationInPlace(destination: string): Promise<void> {
  const dir = dirname(destination);
  const now = await Deno.realPath(dir).catch(() => null);
  if (now !== dir) {
    throw new JobError(
      "INVALID_JOB",
      `Cannot write '${destination}': its directory now resolves to ${
        now === null ? "nothing" : `'${now}'`
      } (replaced by a link since the job was accepted); nothing was written there`,
    );
  }
  const info = await Deno.lstat(destination).catch(() => null);
  if (info?.isSymlink) {
    throw new JobError(
      "INVALID_JOB",
      `Cannot write '${destination}': it became a symbolic link since the job was accepted`,
    );
  }
}
