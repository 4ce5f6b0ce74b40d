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
import { isRemote } from "../storage/uri.ts";
import type { ObjectStore } from "../storage/store.ts";
import type { UploadSink } from "../storage/transfer.ts";
import { OpsError } from "./errors.ts";

export { isRemote };

// The stores' modules (registry, journal, ranged reads, transfers) load on the first
// remote use: a local thaw or audit never needs them, and evaluating them costs every
// such start ~1.5 ms. Literal specifiers: they load no npm package, and the stores
// themselves load by computed ones (storage/registry.ts).
function registry(): Promise<typeof import("../storage/registry.ts")> {
  return import("../storage/registry.ts");
}

function transfer(): Promise<typeof import("../storage/transfer.ts")> {
  return import("../storage/transfer.ts");
}

/**
 * The store of a URI (`storage/registry.ts`'s `storeFor`, loaded on first use).
 *
 * @param uri An object URI.
 * @returns Its store.
 */
export async function storeAt(uri: string): Promise<ObjectStore> {
  return (await registry()).storeFor(uri);
}

/**
 * Uploads a local file to a URI (`storage/transfer.ts`'s `uploadFile`).
 *
 * @param args Local path, destination, storage class.
 * @returns What `uploadFile` returns.
 */
export async function uploadFile(
  ...args: Parameters<typeof import("../storage/transfer.ts").uploadFile>
): ReturnType<typeof import("../storage/transfer.ts").uploadFile> {
  return await (await transfer()).uploadFile(...args);
}

/**
 * An upload fed as bytes are written (`storage/transfer.ts`'s `uploadSink`); the
 * transfer module loads with the first bytes.
 *
 * @param uri The destination.
 * @param storageClass Its storage class (or access tier).
 * @returns The sink.
 */
export function uploadSink(uri: string, storageClass?: string): UploadSink {
  let sink: Promise<UploadSink> | undefined;
  const started = () => (sink ??= transfer().then((m) => m.uploadSink(uri, storageClass)));
  return {
    write: async (bytes) => await (await started()).write(bytes),
    finish: async () => await (await started()).finish(),
    abort: async () => {
      if (sink) await (await sink).abort();
    },
  };
}

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
  const { openRangeReader } = await import("../storage/range_reader.ts");
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
  if (overwrite === false && (await (await storeAt(uri)).stat(uri)) !== null) {
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
  return (await (await storeAt(uri)).stat(uri))?.etag ?? null;
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
    await (await transfer()).downloadFile(source, local);
    return await read(local);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
