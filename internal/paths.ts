/**
 * Data-root confinement: a user-given path is accepted only when it resolves —
 * `..` collapsed, relative paths taken from a base, every symbolic link followed
 * (`Deno.realPath`) — to a place inside one of the configured data roots. `..`,
 * absolute paths elsewhere and symlinks that lead out are `PATH_OUTSIDE_ROOT`
 * (403 over HTTP); empty, NUL-bearing or unreadable paths are `PATH_INVALID` (400).
 *
 * A path that does not exist yet (a job's destination) is resolved through its
 * deepest existing ancestor; a dangling symlink on the way is refused, since
 * writing through it would create a file wherever it points.
 *
 * The answer also names the path's namespace: its first directory under the root
 * (`<root>/team-a/x.pf` is in `team-a`; a file directly in the root is in `""`).
 *
 * A data root may also be an object-storage prefix (`s3://bucket/root`): a URI is
 * inside it when it continues that prefix with `/` and has no empty, `.` or `..`
 * segment (object stores have no links to follow); its namespace is likewise its
 * first segment under the root. Relative paths resolve against the first local root.
 *
 * The check is made when the request arrives; callers that use the path later keep
 * the real path and check again when they open it (the master's `_job_files.ts`:
 * the source's device and inode, the destination's directory), so a symlink swapped
 * in between fails instead of leading elsewhere.
 *
 * Leaf module: imports nothing from the project but `errors.ts`.
 *
 * @module
 */
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { PermafrostError } from "./errors.ts";

/** Closed list of path error codes. Never rename or reuse one. */
export type PathErrorCode = "PATH_OUTSIDE_ROOT" | "PATH_INVALID";

/**
 * A path refused by confinement.
 *
 * @example Check the code of a path error
 * ```ts
 * import assert from "node:assert/strict";
 * import { PathError } from "./paths.ts";
 * assert.equal(new PathError("PATH_OUTSIDE_ROOT", "Path '../x' is outside the data roots").code, "PATH_OUTSIDE_ROOT");
 * ```
 */
export class PathError extends PermafrostError<PathErrorCode> {
  /** Always `"PathError"`. */
  override name = "PathError";
}

/** Longest path text accepted. */
export const MAX_PATH_LENGTH = 4096;

/** Where a confined path landed. */
export interface ConfinedPath {
  /** Absolute path with every symlink resolved. */
  path: string;
  /** The data root (resolved) it lies in. */
  root: string;
  /** Its path relative to the root (`""` for the root itself). */
  relative: string;
  /** Its first directory under the root (`""` when it lies directly in the root). */
  namespace: string;
}

/**
 * Resolves configured data roots once, at startup: each must be an existing
 * directory; symlinks in them are resolved; duplicates dropped.
 *
 * @param paths Roots as configured.
 * @returns Their real absolute paths.
 * @throws {PathError} PATH_INVALID naming a root that is missing or not a directory.
 */
export async function resolveDataRoots(paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    checkText(p);
    if (isUri(p)) {
      const root = p.replace(/\/+$/, "");
      if (
        !/^[a-z][a-z0-9+.-]*:\/\/[a-z0-9][a-z0-9._-]+(\/[^/]+)*$/i.test(root) || badSegments(root)
      ) {
        throw new PathError(
          "PATH_INVALID",
          `Data root '${p}' is not an object-storage prefix like s3://bucket or s3://bucket/root`,
          { path: p },
        );
      }
      if (!out.includes(root)) out.push(root);
      continue;
    }
    let real: string;
    try {
      real = await Deno.realPath(resolve(p));
      if (!(await Deno.stat(real)).isDirectory) throw new Error("not a directory");
    } catch (cause) {
      throw new PathError(
        "PATH_INVALID",
        `Data root '${p}' is not an existing directory: ${message(cause)}`,
        { path: p, cause },
      );
    }
    if (!out.includes(real)) out.push(real);
  }
  return out;
}

/** Options of {@link confinePath}. */
export interface ConfineOptions {
  /** Directory a relative path resolves against (default: the first root). */
  base?: string;
}

/**
 * Resolves a user-given path and checks it lies inside a data root.
 *
 * @param path The path as the user gave it.
 * @param roots Data roots from {@link resolveDataRoots} (non-empty).
 * @param options `base` for relative paths.
 * @returns The resolved path, its root and namespace.
 * @throws {PathError} PATH_OUTSIDE_ROOT when it resolves outside every root (through
 * `..`, an absolute path or a symlink); PATH_INVALID when it is empty, holds NUL, or
 * cannot be resolved.
 *
 * @example Refuse a path that climbs out of the root
 * ```ts
 * import assert from "node:assert/strict";
 * import { confinePath, resolveDataRoots } from "./paths.ts";
 * const roots = await resolveDataRoots([Deno.cwd()]);
 * await assert.rejects(confinePath("../elsewhere.pf", roots), { code: "PATH_OUTSIDE_ROOT" });
 * ```
 */
export async function confinePath(
  path: string,
  roots: readonly string[],
  options: ConfineOptions = {},
): Promise<ConfinedPath> {
  checkText(path);
  if (roots.length === 0) throw new TypeError("confinePath needs at least one data root");
  if (isUri(path)) return confineUri(path, roots);
  const localRoots = roots.filter((r) => !isUri(r));
  const base = options.base ?? localRoots[0];
  if (base === undefined) {
    throw new PathError(
      "PATH_INVALID",
      `Path '${path}' is not an object URI, and the data roots are all in object storage: give the full URI`,
      { path },
    );
  }
  const abs = resolve(base, path);
  const real = await realPathOf(abs, path);
  let best: string | undefined;
  for (const root of localRoots) {
    const rel = relative(root, real);
    const inside = rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
    if (inside && (best === undefined || root.length > best.length)) best = root;
  }
  if (best === undefined) {
    throw new PathError(
      "PATH_OUTSIDE_ROOT",
      `Path '${path}' is outside the data roots (${roots.map((r) => `'${r}'`).join(", ")})`,
      { path },
    );
  }
  const rel = relative(best, real);
  const first = rel === "" ? "" : rel.split(sep)[0]!;
  // A file directly in the root has no namespace; a directory there is one.
  const namespace = rel.includes(sep) || (rel !== "" && (await isDirectory(real))) ? first : "";
  return { path: real, root: best, relative: rel, namespace };
}

async function realPathOf(abs: string, given: string): Promise<string> {
  const tail: string[] = [];
  let head = abs;
  for (;;) {
    try {
      return join(await Deno.realPath(head), ...tail);
    } catch (cause) {
      if (!(cause instanceof Deno.errors.NotFound)) {
        throw new PathError("PATH_INVALID", `Cannot resolve path '${given}': ${message(cause)}`, {
          path: given,
          cause,
        });
      }
    }
    const link = await Deno.lstat(head).then((s) => s.isSymlink, () => false);
    if (link) {
      throw new PathError(
        "PATH_OUTSIDE_ROOT",
        `Path '${given}' goes through a symbolic link to nothing; refusing to follow it`,
        { path: given },
      );
    }
    const parent = dirname(head);
    if (parent === head) {
      throw new PathError("PATH_INVALID", `Cannot resolve path '${given}'`, { path: given });
    }
    tail.unshift(basename(head));
    head = parent;
  }
}

async function isDirectory(p: string): Promise<boolean> {
  return await Deno.stat(p).then((s) => s.isDirectory, () => false);
}

/** Whether a text is a URI (`scheme://…`) other than `file://`. */
function isUri(text: string): boolean {
  const m = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text);
  return m !== null && m[1]!.toLowerCase() !== "file";
}

/** Whether a URI's path holds an empty, `.` or `..` segment. */
function badSegments(uri: string): boolean {
  const path = uri.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "");
  return path.split("/").slice(1).some((s) => s === "" || s === "." || s === "..");
}

/** {@link confinePath} for an object URI against the roots that are URIs. */
function confineUri(path: string, roots: readonly string[]): ConfinedPath {
  const outside = () =>
    new PathError(
      "PATH_OUTSIDE_ROOT",
      `Path '${path}' is outside the data roots (${roots.map((r) => `'${r}'`).join(", ")})`,
      { path },
    );
  if (badSegments(path)) {
    throw new PathError("PATH_INVALID", `Path '${path}' holds an empty, '.' or '..' segment`, {
      path,
    });
  }
  let best: string | undefined;
  for (const root of roots) {
    if (
      isUri(root) && path.startsWith(`${root}/`) &&
      (best === undefined || root.length > best.length)
    ) {
      best = root;
    }
  }
  if (best === undefined) throw outside();
  const rel = path.slice(best.length + 1);
  return {
    path,
    root: best,
    relative: rel,
    namespace: rel.includes("/") ? rel.split("/")[0]! : "",
  };
}

function checkText(path: string): void {
  if (typeof path !== "string" || path.trim() === "" || path.includes("\0")) {
    throw new PathError("PATH_INVALID", "Path is empty or holds a NUL character");
  }
  if (path.length > MAX_PATH_LENGTH) {
    throw new PathError(
      "PATH_INVALID",
      `Path is ${path.length} characters, at most ${MAX_PATH_LENGTH}`,
    );
  }
}

function message(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}
