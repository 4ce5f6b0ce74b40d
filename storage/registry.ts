/**
 * Which store serves a path or URI: one line per scheme. A new backend is one file
 * in `storage/` and one line here.
 *
 * @module
 */
import { StorageError } from "./errors.ts";
import { localStore } from "./local.ts";
import { s3Store } from "./s3.ts";
import { azureStore } from "./az.ts";
import { gcsStore } from "./gs.ts";
import type { ObjectStore } from "./store.ts";
import { isRemote, parseUri } from "./uri.ts";

const FACTORIES: Readonly<Record<string, () => ObjectStore>> = {
  file: localStore,
  s3: () => s3Store(),
  az: () => azureStore(),
  gs: () => gcsStore(),
};

const stores = new Map<string, ObjectStore>();

/**
 * The store for a path or URI (checked: a bad URI is refused here).
 *
 * @param uri A path, `file://…`, or an object URI.
 * @returns Its store.
 * @throws {StorageError} BAD_URI for an unknown scheme or a malformed URI.
 */
export function storeFor(uri: string): ObjectStore {
  let scheme = "file";
  if (isRemote(uri)) scheme = parseUri(uri, { prefix: true }).scheme;
  const factory = FACTORIES[scheme];
  if (!factory) {
    throw new StorageError(
      "BAD_URI",
      `'${scheme}://' is not supported yet (${uri}): use ${Object.keys(FACTORIES).join(", ")}`,
      { path: uri },
    );
  }
  let store = stores.get(scheme);
  if (!store) stores.set(scheme, store = factory());
  return store;
}
