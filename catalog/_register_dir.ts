/**
 * Registering every archive in a directory (or under an object-storage prefix): the
 * listing, with its errors in the catalog's words, and the loop that registers each
 * file and reports what was registered, unchanged or failed (a failing file is
 * reported, not fatal). `Catalog.registerDir` and the namespace-checked
 * `CatalogAccess.registerDir` share both.
 *
 * @module
 */
import { PermafrostError } from "../internal/errors.ts";
import type { ArchiveBackend } from "./backend.ts";
import { message } from "./errors.ts";
import { CatalogError } from "./errors.ts";
import { isPermissionError, notAllowed } from "./_read_errors.ts";
import type { RegisterDirResult, RegisterResult } from "./types.ts";

/**
 * The archives (`*.pf`) in a directory or under a prefix.
 *
 * @param backend Reads the directory or store.
 * @param dir The directory (absolute) or prefix URI.
 * @param recursive Whether to descend.
 * @returns Their paths or URIs, sorted.
 * @throws {CatalogError} PATH_NOT_ALLOWED; INVALID_ARGUMENT when it cannot be listed.
 */
export async function listArchives(
  backend: ArchiveBackend,
  dir: string,
  recursive: boolean,
): Promise<string[]> {
  try {
    return await backend.list(dir, { recursive });
  } catch (cause) {
    if (isPermissionError(cause)) throw notAllowed(dir, cause);
    throw new CatalogError(
      "INVALID_ARGUMENT",
      `Cannot list directory '${dir}': ${message(cause)}`,
      {
        cause,
        path: dir,
      },
    );
  }
}

/**
 * Registers each file, collecting the outcome.
 *
 * @param dir The directory, for the result.
 * @param files The files.
 * @param register Registers one (throws a typed error to report it as failed).
 * @returns What was registered, unchanged or failed.
 */
export async function registerEach(
  dir: string,
  files: readonly string[],
  register: (file: string) => Promise<RegisterResult>,
): Promise<RegisterDirResult> {
  const result: RegisterDirResult = { dir, registered: [], unchanged: [], failed: [] };
  for (const file of files) {
    try {
      const r = await register(file);
      const entry = { name: r.dataset.name, version: r.dataset.version, path: r.dataset.path };
      (r.created ? result.registered : result.unchanged).push(entry);
    } catch (err) {
      if (!(err instanceof PermafrostError)) throw err;
      result.failed.push({ path: file, error: { code: err.code, message: err.message } });
    }
  }
  return result;
}
