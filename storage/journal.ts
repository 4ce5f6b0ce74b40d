/**
 * The upload journal: each multipart upload (S3) or resumable session (GCS) in flight
 * is written down as a small file under the state directory once the store has given
 * it an id, and the file is removed when the upload completes or is aborted. A process
 * killed mid-upload (SIGKILL, out of memory, a lost machine) cannot abort its upload,
 * and the store keeps the parts, billed and invisible, until someone does:
 * {@link collectUploads} (`permafrost storage gc`) finds the uploads whose process is
 * gone and aborts them. A failed abort keeps its entry for the next run.
 *
 * Azure block-list uploads have no id to abort: the service drops uncommitted blocks
 * by itself within 7 days, so they are not written down.
 *
 * The state directory is `PERMAFROST_STATE_DIR`, else `$XDG_STATE_HOME/permafrost`,
 * else `$HOME/.local/state/permafrost`; with none of them readable, nothing is
 * journaled. Entries are private to the user (mode 0600): a GCS session URL lets
 * whoever holds it write the upload.
 *
 * @module
 */
import { nodePath } from "../internal/node_builtin.ts";
import { StorageError } from "./errors.ts";
import type { ObjectStore, Upload } from "./store.ts";

/** `node:path`'s `join`, loaded on first use (see `internal/node_builtin.ts`). */
function join(...parts: string[]): string {
  return nodePath().join(...parts);
}

/** One upload written down. */
export interface JournalEntry {
  /** The destination. */
  uri: string;
  /** The store's id of the upload (an S3 upload id, a GCS session URL). */
  id: string;
  /** The process that started it. */
  pid: number;
  /** When it started (ms since the epoch). */
  started_ms: number;
}

/** Reads a variable when the process may (never prompts, never throws). */
function envVar(name: string): string | undefined {
  if (Deno.permissions.querySync({ name: "env", variable: name }).state !== "granted") {
    return undefined;
  }
  return Deno.env.get(name) || undefined;
}

/**
 * The state directory: `PERMAFROST_STATE_DIR`, `$XDG_STATE_HOME/permafrost` or
 * `$HOME/.local/state/permafrost`.
 *
 * @param configured A directory given on the command line (wins over the variables).
 * @returns The directory, or null when none can be told.
 */
export function stateDir(configured?: string): string | null {
  if (configured) return configured;
  const own = envVar("PERMAFROST_STATE_DIR");
  if (own) return own;
  const xdg = envVar("XDG_STATE_HOME");
  if (xdg) return join(xdg, "permafrost");
  const home = envVar("HOME");
  return home ? join(home, ".local", "state", "permafrost") : null;
}

function uploadsDir(dir: string): string {
  return join(dir, "uploads");
}

/** Writes an entry; returns its file, or null when it cannot be written (never fails the upload). */
async function record(entry: JournalEntry): Promise<string | null> {
  const dir = stateDir();
  if (dir === null) return null;
  const path = join(uploadsDir(dir), `${crypto.randomUUID()}.json`);
  try {
    await Deno.mkdir(uploadsDir(dir), { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(path, JSON.stringify(entry), { createNew: true, mode: 0o600 });
    return path;
  } catch {
    return null;
  }
}

/**
 * Wraps an upload so that it is journaled while in flight: written down when the store
 * gives it an id, forgotten when it completes or an abort is confirmed. When a part or
 * the completion fails, the store has aborted the upload; the abort is confirmed
 * here (`abortUpload`), and an upload that could not be aborted stays written down.
 *
 * @param store The store that started it.
 * @param uri The destination.
 * @param upload The upload.
 * @returns The same upload, journaled.
 */
export function journaled(store: ObjectStore, uri: string, upload: Upload): Upload {
  let file: Promise<string | null> | null = null;
  const started_ms = Date.now();
  const noted = async () => {
    if (file === null && upload.id !== null) {
      file = record({ uri, id: upload.id, pid: Deno.pid, started_ms });
    }
    await file;
  };
  const forget = async () => {
    const path = await file;
    if (path) await Deno.remove(path).catch(() => {});
  };
  const confirmAborted = async () => {
    if (upload.id === null) return;
    try {
      await store.abortUpload(uri, upload.id);
      await forget();
    } catch {
      // Still in the journal: `storage gc` tries again.
    }
  };
  return {
    get id() {
      return upload.id;
    },
    async putPart(bytes) {
      try {
        await upload.putPart(bytes);
      } catch (err) {
        await noted();
        await confirmAborted();
        throw err;
      }
      await noted();
    },
    async complete() {
      try {
        const info = await upload.complete();
        await forget();
        return info;
      } catch (err) {
        await noted();
        await confirmAborted();
        throw err;
      }
    },
    async abort() {
      await upload.abort();
      await noted();
      await confirmAborted();
    },
  };
}

/** What {@link collectUploads} found for one upload. */
export interface CollectedUpload {
  /** The destination. */
  uri: string;
  /** The process that started it. */
  pid: number;
  /** When it started (ISO 8601). */
  started: string;
  /**
   * `aborted`; `orphaned` (a dry run would abort it); `in_progress` (its process is
   * running and it is not older than asked); `failed` (the abort failed: see `error`).
   */
  state: "aborted" | "orphaned" | "in_progress" | "failed";
  /** Why the abort failed. */
  error?: string;
}

/** Options of {@link collectUploads}. */
export interface CollectOptions {
  /** Only uploads to URIs that start with this. */
  prefix?: string;
  /** Also abort uploads whose process still runs, when they started this long ago (ms). */
  olderThanMs?: number;
  /** Report what would be aborted; abort nothing. */
  dryRun?: boolean;
  /** The state directory (default {@link stateDir}). */
  stateDir?: string;
  /** The store of a URI (default by scheme). */
  storeFor?: (uri: string) => ObjectStore;
  /** Whether a process runs on this machine (default: `/proc/<pid>` on Linux). */
  isRunning?: (pid: number) => boolean;
  /** Now (ms; for tests). */
  now?: number;
}

/** Whether a process runs here; where that cannot be told, it is taken to be running. */
function processRunning(pid: number): boolean {
  if (pid === Deno.pid) return true;
  if (Deno.build.os !== "linux") return true;
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds the journaled uploads whose process is gone (or that are older than asked) and
 * aborts them, so a killed freeze leaves no parts behind.
 *
 * @param options Prefix, age, dry run, state directory.
 * @returns One line per journaled upload, oldest first.
 * @throws {StorageError} BAD_URI when no state directory can be told.
 */
export async function collectUploads(options: CollectOptions = {}): Promise<CollectedUpload[]> {
  const dir = stateDir(options.stateDir);
  if (dir === null) {
    throw new StorageError(
      "NO_JOURNAL",
      "Cannot find the upload journal: set PERMAFROST_STATE_DIR (or HOME) or pass --state-dir",
    );
  }
  const store = options.storeFor ?? (await import("./registry.ts")).storeFor;
  const isRunning = options.isRunning ?? processRunning;
  const now = options.now ?? Date.now();
  const entries: { path: string; entry: JournalEntry }[] = [];
  try {
    for await (const e of Deno.readDir(uploadsDir(dir))) {
      if (!e.isFile || !e.name.endsWith(".json")) continue;
      const path = join(uploadsDir(dir), e.name);
      const entry = parseEntry(await Deno.readTextFile(path).catch(() => ""));
      if (entry && entry.uri.startsWith(options.prefix ?? "")) entries.push({ path, entry });
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  entries.sort((a, b) => a.entry.started_ms - b.entry.started_ms);
  const out: CollectedUpload[] = [];
  for (const { path, entry } of entries) {
    const line = {
      uri: entry.uri,
      pid: entry.pid,
      started: new Date(entry.started_ms).toISOString(),
    };
    const old = options.olderThanMs !== undefined && now - entry.started_ms >= options.olderThanMs;
    if (isRunning(entry.pid) && !old) {
      out.push({ ...line, state: "in_progress" });
    } else if (options.dryRun) {
      out.push({ ...line, state: "orphaned" });
    } else {
      try {
        await store(entry.uri).abortUpload(entry.uri, entry.id);
        await Deno.remove(path).catch(() => {});
        out.push({ ...line, state: "aborted" });
      } catch (err) {
        out.push({
          ...line,
          state: "failed",
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
  }
  return out;
}

function parseEntry(text: string): JournalEntry | null {
  try {
    const e = JSON.parse(text);
    if (
      typeof e?.uri === "string" && typeof e.id === "string" && Number.isSafeInteger(e.pid) &&
      Number.isFinite(e.started_ms)
    ) {
      return { uri: e.uri, id: e.id, pid: e.pid, started_ms: e.started_ms };
    }
  } catch {
    // not an entry
  }
  return null;
}
