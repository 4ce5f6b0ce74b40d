/**
 * Which store serves a path or URI: one line per scheme. A new backend is one file
 * in `storage/` and one line here.
 *
 * A store's module is loaded on its first use, not when this one is (the S3, Azure
 * and GCS stores pull in signing and JWT libraries that a local command never needs).
 * Every upload through a store from here is journaled while in flight (`journal.ts`).
 *
 * @module
 */
import { StorageError } from "./errors.ts";
import { journaled } from "./journal.ts";
import type { ObjectStore } from "./store.ts";
import { isRemote, parseUri } from "./uri.ts";

const LOADERS: Readonly<Record<string, () => Promise<ObjectStore>>> = {
  file: async () => (await import("./local.ts")).localStore(),
  s3: async () => (await import("./s3.ts")).s3Store(),
  az: async () => (await import("./az.ts")).azureStore(),
  gs: async () => (await import("./gs.ts")).gcsStore(),
};

const stores = new Map<string, ObjectStore>();

/** A store whose module loads on the first call of any of its methods. */
function lazyStore(scheme: string, load: () => Promise<ObjectStore>): ObjectStore {
  let loading: Promise<ObjectStore> | undefined;
  const real = () => (loading ??= load());
  const store: ObjectStore = {
    scheme,
    stat: async (uri) => (await real()).stat(uri),
    read: async (uri, range) => (await real()).read(uri, range),
    list: async (prefix, options) => (await real()).list(prefix, options),
    delete: async (uri) => (await real()).delete(uri),
    upload: async (uri, options) =>
      journaled(store, uri, await (await real()).upload(uri, options)),
    abortUpload: async (uri, id) => (await real()).abortUpload(uri, id),
  };
  return store;
}

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
  const load = LOADERS[scheme];
  if (!load) {
    throw new StorageError(
      "BAD_URI",
      `'${scheme}://' is not supported yet (${uri}): use ${Object.keys(LOADERS).join(", ")}`,
      { path: uri },
    );
  }
  let store = stores.get(scheme);
  if (!store) stores.set(scheme, store = lazyStore(scheme, load));
  return store;
}
