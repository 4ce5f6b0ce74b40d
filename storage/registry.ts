/**
 * Which store serves a path or URI: one line per scheme. A new backend is one file
 * in `storage/` and one line here.
 *
 * A store's module is loaded on its first use, not when this one is (the S3, Azure
 * and GCS stores pull in signing and JWT libraries that a local command never needs).
 * Every upload through a store from here is journaled while in flight (`journal.ts`).
 * Stores read their settings from the environment, or from the settings a caller
 * scopes its work with ({@link withStorageSettings}).
 *
 * `node:async_hooks` (what keeps a scope across awaits) is loaded by the first scope,
 * not with this module: loading a Node module costs a quick command that never scopes
 * anything (the CLI) ~6 ms of CPU to bootstrap Node compatibility.
 *
 * @module
 */
import type { AsyncLocalStorage } from "node:async_hooks";
import { StorageError } from "./errors.ts";
import { journaled } from "./journal.ts";
import type { ObjectStore } from "./store.ts";
import { isRemote, parseUri } from "./uri.ts";
import { requireNodeBuiltin } from "../internal/node_builtin.ts";

/** Reads a setting by its variable's name. */
type SettingReader = (name: string) => string | undefined;

// The remote stores' specifiers are computed: Deno reads a literal `import("./s3.ts")`
// ahead of time and would resolve aws4fetch and jose on every start, local commands
// too (cli/lazy.ts says why; `deno compile` includes these three from its list).
const S3 = new URL("./s3.ts", import.meta.url);
const AZ = new URL("./az.ts", import.meta.url);
const GS = new URL("./gs.ts", import.meta.url);

const LOADERS: Readonly<Record<string, (env?: SettingReader) => Promise<ObjectStore>>> = {
  file: async () => (await import("./local.ts")).localStore(),
  s3: async (env) => ((await import(S3.href)) as typeof import("./s3.ts")).s3Store({ env }),
  az: async (env) => ((await import(AZ.href)) as typeof import("./az.ts")).azureStore({ env }),
  gs: async (env) => ((await import(GS.href)) as typeof import("./gs.ts")).gcsStore({ env }),
};

/** The process's stores, configured by its environment. */
const stores = new Map<string, ObjectStore>();

/**
 * Storage settings by the names of the variables the stores read (`AWS_ACCESS_KEY_ID`,
 * `AWS_ENDPOINT_URL_S3`, `AZURE_STORAGE_ACCOUNT`, `GOOGLE_APPLICATION_CREDENTIALS`,
 * `STORAGE_EMULATOR_HOST`, …): what a setting does not name is read from the
 * environment as usual.
 */
export type StorageSettings = Readonly<Record<string, string>>;

/** Stores configured by settings, for the calls made inside {@link withStorageSettings}. */
interface Scope {
  settings: StorageSettings;
  stores: Map<string, ObjectStore>;
}

/** The scopes, once a first one is made: until then, every call is outside any scope. */
let scopes: AsyncLocalStorage<Scope> | null = null;

function newScopes(): AsyncLocalStorage<Scope> {
  const hooks = requireNodeBuiltin<typeof import("node:async_hooks")>("node:async_hooks");
  return new hooks.AsyncLocalStorage<Scope>();
}

/**
 * Runs `fn` with object stores configured by `settings` instead of the environment
 * alone: every store `fn` reaches, however deep (a freeze's upload, a thaw's ranged
 * reads), is one of its own, so two configurations can be in use at once in one
 * process (the context API gives each `Permafrost` its own).
 *
 * @param settings Settings by variable name.
 * @param fn The work.
 * @returns What `fn` returned.
 */
export function withStorageSettings<T>(
  settings: StorageSettings,
  fn: () => Promise<T>,
): Promise<T> {
  scopes ??= newScopes();
  return scopes.run({ settings: Object.freeze({ ...settings }), stores: new Map() }, fn);
}

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
  const scope = scopes?.getStore();
  const cache = scope?.stores ?? stores;
  let store = cache.get(scheme);
  if (!store) {
    const env: SettingReader | undefined = scope &&
      ((name) => scope.settings[name] ?? Deno.env.get(name));
    cache.set(scheme, store = lazyStore(scheme, () => load(env)));
  }
  return store;
}
