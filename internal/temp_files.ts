/**
 * Temp files beside a destination, for every writer that builds a file and renames
 * it into place (archives, appends, thaw outputs, manifests), and the removal of the
 * ones a killed process left behind.
 *
 * Naming: the temp file of `<dir>/<name>` is `<dir>/.<name>.pf.tmp-<suffix>`, with
 * `<suffix>` lower-case letters and digits (the `.gitignore` pattern `*.pf.tmp-*`
 * covers it). Helpers may add files named after it: a Parquet output stages in
 * `<temp>.duckdb`, `<temp>.duckdb.wal` and the directory `<temp>.duckdb.tmp`.
 *
 * Liveness: the writer holds an exclusive advisory lock (`flock`) on its temp file
 * from just after creating it until it closes it; the kernel drops that lock when the
 * process ends, SIGKILL included.
 *
 * Stale, and removed by the next {@link createTempBeside} for the same destination:
 * a temp file of exactly that naming, for exactly that destination, that is a regular
 * file, was last modified more than {@link STALE_TEMP_AGE_MS} ago (which also covers the
 * instant between creating and locking it) and whose lock nobody holds; with it go the
 * files named after it. Side files whose temp file is gone are stale once that old
 * too. Nothing else is ever touched (not even the visible `<name>.pf.tmp-*` files of
 * older versions, which a user may have made their own), and a failure to clean is
 * ignored: cleaning is a courtesy, writing is the job.
 *
 * Leaf module: imports nothing from the project.
 *
 * @module
 */
import { nodePath } from "./node_builtin.ts";

/** A temp file must be untouched for this long before another write may remove it. */
export const STALE_TEMP_AGE_MS = 60_000;

const MARK = ".pf.tmp-";
const SIDE_FILES = new Set(["", ".duckdb", ".duckdb.wal", ".duckdb.tmp"]);

/** A temp file created and locked by {@link createTempBeside}. */
export interface LockedTemp {
  /** Its path. */
  path: string;
  /** Open for writing and locked until closed. */
  file: Deno.FsFile;
}

/**
 * The temp path for a new file at `path`: `.<name>.pf.tmp-<random>` beside it.
 *
 * @param path The destination.
 * @returns A fresh sibling path.
 */
export function tempPathFor(path: string): string {
  const rand = crypto.getRandomValues(new Uint32Array(2));
  const suffix = `${(rand[0] ?? 0).toString(36)}${(rand[1] ?? 0).toString(36)}`;
  const { dir, name, join } = splitPath(path);
  return join(dir, `.${name}${MARK}${suffix}`);
}

/** A path's directory and last name, and a `join` that puts names in that directory. */
interface SplitPath {
  dir: string;
  name: string;
  join(dir: string, name: string): string;
}

/** Directories `node:path` would rewrite: a `.`, `..` or empty segment, a trailing `/`. */
const UNNORMAL_DIR = /(^|\/)\.\.?(\/|$)|\/\/|\/$/;

/**
 * `node:path`'s `dirname`, `basename` and `join` for a path, without loading
 * `node:path` when the answer is plain string work: on a POSIX system, a path whose
 * directory part `node:path` would leave as it is (no `.`, `..` or empty segment, no
 * trailing slash). Loading `node:path` starts Node compatibility in the thread (~20-40
 * ms of CPU), which a thaw's main thread would otherwise pay while its Workers decode
 * the first chunks. Other paths, and Windows, go to `node:path` itself.
 *
 * @param path A file path.
 * @returns What `dirname`, `basename` and `join` give for it.
 */
export function splitPath(path: string): SplitPath {
  const slash = path.lastIndexOf("/");
  const dir = slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash);
  if (
    Deno.build.os !== "windows" && path !== "" && slash < path.length - 1 &&
    !UNNORMAL_DIR.test(slash < 0 ? "" : path.slice(0, slash))
  ) {
    return {
      dir,
      name: path.slice(slash + 1),
      join: (d, n) => d === "." ? n : d === "/" ? `/${n}` : `${d}/${n}`,
    };
  }
  const { basename, dirname, join } = nodePath();
  return { dir: dirname(path), name: basename(path), join };
}

/**
 * Where a file written by temp-and-rename lands: `path` itself when it is a regular
 * file or does not exist, the file it names when it is a symbolic link to a regular
 * file (so the link is kept), and null for anything else (a directory, a FIFO, a
 * device, a link to one or to nothing), which a rename would replace.
 *
 * @param path The destination.
 * @returns The path to rename onto, or null.
 */
export async function renameTarget(path: string): Promise<string | null> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return path;
    throw err;
  }
  if (info.isFile) return path;
  if (!info.isSymlink) return null;
  try {
    return (await Deno.stat(path)).isFile ? await Deno.realPath(path) : null;
  } catch {
    return null;
  }
}

/**
 * Puts a finished temp file in place. With `replace` it is renamed over `target`;
 * without, it is hard-linked to `target`, which the kernel refuses atomically when
 * `target` exists (so a file that appeared meanwhile is never replaced), and the temp
 * name is then removed. A file system without hard links falls back to a check and
 * a rename.
 *
 * @param temp The finished, closed temp file (beside `target`).
 * @param target Where it goes.
 * @param replace Whether an existing `target` may be replaced.
 * @throws {Deno.errors.AlreadyExists} when `replace` is false and `target` exists
 * (the temp file is left for the caller to remove); the OS error otherwise.
 */
export async function commitTemp(temp: string, target: string, replace: boolean): Promise<void> {
  if (replace) return await Deno.rename(temp, target);
  try {
    await Deno.link(temp, target);
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) throw err;
    if (await Deno.lstat(target).then(() => true, () => false)) {
      throw new Deno.errors.AlreadyExists(`'${target}' exists`);
    }
    return await Deno.rename(temp, target);
  }
  await Deno.remove(temp);
}

/**
 * Whether something is at `path` (a file, a directory, a link, even a broken one).
 *
 * @param path The path.
 * @returns True when `lstat` finds it.
 */
export async function pathExists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

/**
 * Removes the stale temp files of `path` (see the module doc), then creates a fresh
 * temp file beside it, open for writing and locked.
 *
 * @param path The destination.
 * @returns The temp file; close it (which unlocks it) before renaming or removing it.
 * @throws The OS error when the temp file cannot be created.
 */
export async function createTempBeside(path: string): Promise<LockedTemp> {
  await removeStaleTemps(path);
  const temp = tempPathFor(path);
  const file = await Deno.open(temp, { write: true, createNew: true });
  try {
    await file.lock(true);
  } catch {
    // A file system without locks: the age rule alone protects this file.
  }
  return { path: temp, file };
}

/**
 * Removes the stale temp files of `path` (see the module doc).
 *
 * @param path The destination whose temp files to look at.
 * @param options `now` (ms since the epoch) and `ageMs`, for tests.
 * @returns The paths removed.
 */
export async function removeStaleTemps(
  path: string,
  options: { now?: number; ageMs?: number } = {},
): Promise<string[]> {
  const { dir, name, join } = splitPath(path);
  const before = (options.now ?? Date.now()) - (options.ageMs ?? STALE_TEMP_AGE_MS);
  const groups = new Map<string, string[]>();
  try {
    for await (const entry of Deno.readDir(dir)) {
      const base = tempBase(entry.name, name);
      if (base === null) continue;
      const group = groups.get(base);
      if (group) group.push(entry.name);
      else groups.set(base, [entry.name]);
    }
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const [base, members] of groups) {
    try {
      if (await staleGroup(join(dir, base), members.map((m) => join(dir, m)), before)) {
        for (const m of members) {
          await Deno.remove(join(dir, m), { recursive: true });
          removed.push(join(dir, m));
        }
      }
    } catch {
      // Gone meanwhile, or not ours to remove: leave it.
    }
  }
  return removed;
}

/** The temp file `entry` belongs to when it is one of `name`'s, else null. */
function tempBase(entry: string, name: string): string | null {
  const prefix = `.${name}${MARK}`;
  if (!entry.startsWith(prefix)) return null;
  const suffix = /^[0-9a-z]+/.exec(entry.slice(prefix.length))?.[0];
  if (suffix === undefined) return null;
  return SIDE_FILES.has(entry.slice(prefix.length + suffix.length)) ? prefix + suffix : null;
}

async function staleGroup(base: string, members: string[], before: number): Promise<boolean> {
  let info: Deno.FileInfo | null;
  try {
    info = await Deno.lstat(base);
  } catch {
    info = null;
  }
  if (info === null) {
    // Side files without their temp file: stale once all are old.
    for (const m of members) if (!olderThan(await Deno.lstat(m), before)) return false;
    return true;
  }
  if (!info.isFile || !olderThan(info, before)) return false;
  const file = await Deno.open(base, { read: true });
  try {
    // Held: a live writer's. Free: stays free, as only a temp file's creator locks it.
    return await file.tryLock(true);
  } finally {
    file.close();
  }
}

function olderThan(info: Deno.FileInfo, before: number): boolean {
  return info.mtime !== null && info.mtime.getTime() < before;
}
