/**
 * Archives and files in object storage for the operations: each takes a URI
 * (`s3://bucket/key`, `file://…`) wherever it takes a path.
 *
 * - **Reading an archive** is ranged ({@link openArchive}): the tail and footer first,
 *   then only the chunks a read touches, each chunk's wanted blocks in one request.
 * - **Writing to a URI** ({@link toDestination}): the operation writes a private temp
 *   file (in the system temp directory), which then goes up as a multipart upload,
 *   read back from disk part by part (never whole in memory); a failed part is
 *   retried, and a part failing for good aborts the upload, so nothing partial is ever
 *   visible at the URI. An existing object is refused unless `overwrite`.
 * - **A source at a URI** ({@link fromSource}) is downloaded to a temp file by ranges
 *   first, then read as a local file of the same name.
 *
 * @module
 */
import { nodePath } from "../internal/node_builtin.ts";
import { ArchiveReader, type OpenOptions } from "../format/reader.ts";
import type { ArchiveIndex } from "../format/reader.ts";
import { openRangeReader } from "../storage/range_reader.ts";
import { storeFor } from "../storage/registry.ts";
import { isRemote } from "../storage/uri.ts";
import { downloadFile, uploadFile, uploadSink } from "../storage/transfer.ts";
import { OpsError } from "./errors.ts";

export { isRemote, uploadFile, uploadSink };

/**
 * Opens an archive at a path or URI.
 *
 * @param where Path or URI.
 * @param options Keys, `requireKey`.
 * @returns The reader.
 */
export async function openArchive(
  where: string,
  options: OpenOptions = {},
): Promise<ArchiveReader> {
  if (!isRemote(where)) return await ArchiveReader.open(where, options);
  return await ArchiveReader.openSource(await openRangeReader(where), options);
}

/**
 * Header and footer of an archive at a path or URI (nothing else is read).
 *
 * @param where Path or URI.
 * @returns The index.
 */
export async function readIndexAt(where: string): Promise<ArchiveIndex> {
  const reader = await openArchive(where);
  reader.close();
  return reader.index;
}

/** Options of {@link toDestination}. */
export interface DestinationOptions {
  /** Whether an existing object may be replaced (default true). */
  overwrite?: boolean;
  /** Storage class of the object written. */
  storageClass?: string;
}

/**
 * Refuses to replace an object unless `overwrite` allows it.
 *
 * @param uri The destination.
 * @param overwrite Whether an existing object may be replaced (default true).
 * @throws {OpsError} DESTINATION_EXISTS.
 */
export async function checkNoObject(uri: string, overwrite: boolean | undefined): Promise<void> {
  if (overwrite === false && (await storeFor(uri).stat(uri)) !== null) {
    throw new OpsError(
      "DESTINATION_EXISTS",
      `'${uri}' already exists; pass --force (overwrite: true) to replace it`,
      { path: uri },
    );
  }
}

/**
 * Runs `write` against a local path for `destination`: the path itself, or, for a URI,
 * a temp file uploaded there once `write` succeeds.
 *
 * @param destination Path or URI.
 * @param write Writes the file at the path it is given.
 * @param options Overwrite, storage class.
 * @returns What `write` returned.
 * @throws {OpsError} DESTINATION_EXISTS; {StorageError} from the upload.
 */
export async function toDestination<T>(
  destination: string,
  write: (path: string) => Promise<T>,
  options: DestinationOptions = {},
): Promise<T> {
  if (!isRemote(destination)) return await write(destination);
  await checkNoObject(destination, options.overwrite);
  const dir = await Deno.makeTempDir({ prefix: "permafrost-upload-" });
  try {
    const local = nodePath().join(dir, nodePath().basename(destination));
    const result = await write(local);
    await uploadFile(local, destination, options.storageClass);
    return result;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/**
 * The ETag (or version) of an object now, or null when there is none.
 *
 * @param uri The object.
 * @returns Its tag.
 */
export async function objectTag(uri: string): Promise<string | null> {
  return (await storeFor(uri).stat(uri))?.etag ?? null;
}

/**
 * Runs `read` against a local path for `source`: the path itself, or, for a URI, a
 * temp copy of the object (same file name, so the format is told from it).
 *
 * @param source Path or URI.
 * @param read Reads the file at the path it is given.
 * @returns What `read` returned.
 * @throws {StorageError} from the download.
 */
export async function fromSource<T>(
  source: string,
  read: (path: string) => Promise<T>,
): Promise<T> {
  if (!isRemote(source)) return await read(source);
  const dir = await Deno.makeTempDir({ prefix: "permafrost-download-" });
  try {
    const local = nodePath().join(dir, nodePath().basename(source));
    await downloadFile(source, local);
    return await read(local);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
