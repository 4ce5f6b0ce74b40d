/**
 * Whole files to and from object storage, streamed: an upload reads the local file
 * part by part (never whole in memory) into the store's multipart upload, which is
 * aborted when anything fails, so nothing partial is ever visible at the URI; a
 * download writes ranged reads into a temp file beside the target and renames it into
 * place once complete. {@link uploadSink} feeds an upload as a file is being written.
 *
 * @module
 */
import { nodePath } from "../internal/node_builtin.ts";
import { storeFor } from "./registry.ts";
import type { ObjectInfo } from "./store.ts";

/** Bytes read from a file per upload part, and fetched per download request. */
export const TRANSFER_BYTES = 8 * 1024 * 1024;

/**
 * Uploads a local file to a URI.
 *
 * @param local The file.
 * @param uri The destination.
 * @param storageClass Its storage class (or access tier).
 * @returns What the store says of the object.
 * @throws {import("./errors.ts").StorageError} from the upload (which is then aborted).
 */
export async function uploadFile(
  local: string,
  uri: string,
  storageClass?: string,
): Promise<ObjectInfo> {
  const upload = await storeFor(uri).upload(uri, { storageClass });
  try {
    const file = await Deno.open(local, { read: true });
    try {
      const buffer = new Uint8Array(TRANSFER_BYTES);
      for (;;) {
        let filled = 0;
        while (filled < buffer.length) {
          const n = await file.read(buffer.subarray(filled));
          if (n === null) break;
          filled += n;
        }
        if (filled > 0) await upload.putPart(buffer.subarray(0, filled));
        if (filled < buffer.length) break;
      }
    } finally {
      file.close();
    }
    return await upload.complete();
  } catch (err) {
    await upload.abort().catch(() => {});
    throw err;
  }
}

/**
 * Downloads an object to a local file (replaced only once the download is complete).
 *
 * @param uri The object.
 * @param local Where to put it (its directory must exist).
 * @returns The object's size.
 * @throws {import("./errors.ts").StorageError} from the reads.
 */
export async function downloadFile(uri: string, local: string): Promise<number> {
  const store = storeFor(uri);
  const { basename, dirname, join } = nodePath();
  const temp = join(
    dirname(local),
    `.${basename(local)}.download-${crypto.randomUUID().slice(0, 8)}`,
  );
  const file = await Deno.open(temp, { write: true, createNew: true });
  let offset = 0;
  try {
    let size = Infinity;
    while (offset < size) {
      const part = await store.read(uri, { offset, length: TRANSFER_BYTES });
      size = part.size;
      if (part.bytes.length === 0) break;
      let at = 0;
      while (at < part.bytes.length) at += await file.write(part.bytes.subarray(at));
      offset += part.bytes.length;
    }
  } catch (err) {
    file.close();
    await Deno.remove(temp).catch(() => {});
    throw err;
  }
  file.close();
  await Deno.rename(temp, local);
  return offset;
}

/** Bytes written in order to an object, as the archive writer's mirror takes them. */
export interface UploadSink {
  /** Sends the next bytes (the upload groups them into parts). */
  write(bytes: Uint8Array): Promise<void>;
  /** Completes the upload: the object appears, whole. */
  finish(): Promise<void>;
  /** Aborts the upload: nothing appears. */
  abort(): Promise<void>;
}

/**
 * An upload fed as bytes are written (the archive writer's mirror); it starts with
 * the first bytes.
 *
 * @param uri The destination.
 * @param storageClass Its storage class (or access tier).
 * @returns The sink.
 */
export function uploadSink(uri: string, storageClass?: string): UploadSink {
  let upload: Promise<Awaited<ReturnType<ReturnType<typeof storeFor>["upload"]>>> | undefined;
  const started = () => (upload ??= storeFor(uri).upload(uri, { storageClass }));
  return {
    write: async (bytes) => await (await started()).putPart(bytes),
    finish: async () => {
      await (await started()).complete();
    },
    abort: async () => {
      if (upload) await (await upload).abort();
    },
  };
}
