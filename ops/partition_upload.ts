/**
 * A partitioned dataset written to an object-storage prefix (`s3://bucket/events/`):
 * the prefix must hold nothing yet; the dataset is frozen into a private temp directory,
 * then each partition goes up (a multipart upload, never whole in memory) and the
 * manifest last, so a reader never sees a manifest whose partitions are not all there.
 * A failure removes what went up and the temp directory.
 *
 * @module
 */
import { join } from "node:path";
import { storeFor } from "../storage/registry.ts";
import { uploadFile } from "../storage/transfer.ts";
import { OpsError } from "./errors.ts";
import { datasetFile, MANIFEST_NAME, type PartitionEntry } from "./partition_read.ts";

/**
 * Refuses a prefix that already holds objects (as a local freeze refuses a directory
 * that is not empty).
 *
 * @param prefix The dataset's URI prefix.
 * @throws {OpsError} BAD_OPTION naming the prefix.
 */
export async function checkEmptyPrefix(prefix: string): Promise<void> {
  const under = `${prefix.replace(/\/+$/, "")}/`;
  const found = await storeFor(under).list(under, { recursive: true });
  if (found.length > 0) {
    throw new OpsError(
      "BAD_OPTION",
      `Cannot write partitions to '${prefix}': it already holds ${found.length} object(s), e.g. '${
        found[0]
      }' (remove them or pick a new prefix)`,
      { path: prefix },
    );
  }
}

/**
 * Uploads a dataset frozen into `local` to `prefix`: partitions first, manifest last.
 *
 * @param local The dataset's temp directory.
 * @param prefix Where it goes.
 * @param partitions The manifest's partitions.
 * @param storageClass Storage class of the objects.
 * @throws {import("../storage/errors.ts").StorageError} from an upload, after removing
 * what went up.
 */
export async function uploadPartitioned(
  local: string,
  prefix: string,
  partitions: readonly PartitionEntry[],
  storageClass?: string,
): Promise<void> {
  const sent: string[] = [];
  try {
    for (const relative of [...partitions.map((p) => p.path), MANIFEST_NAME]) {
      const uri = datasetFile(prefix, relative);
      await uploadFile(join(local, ...relative.split("/")), uri, storageClass);
      sent.push(uri);
    }
  } catch (err) {
    for (const uri of sent) await storeFor(uri).delete(uri).catch(() => {});
    throw err;
  }
}
