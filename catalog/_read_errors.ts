/**
 * How the catalog words a failed read of an archive: a path the process may not read
 * is `PATH_NOT_ALLOWED` naming the confinement (never the platform's own permission
 * text), a missing file says so, and a file that is not an archive says that without
 * echoing its bytes. Used by registration and the integrity check.
 *
 * @module
 */
import { PermafrostError } from "../internal/errors.ts";
import { CatalogError } from "./errors.ts";
import { message } from "./errors.ts";

/** The error of a registration whose archive could not be read. */
export function unreadable(path: string, cause: unknown): CatalogError {
  if (cause instanceof CatalogError) return cause;
  if (isPermissionError(cause)) return notAllowed(path, cause);
  const code = (cause as { code?: unknown })?.code;
  if (cause instanceof Deno.errors.NotFound || code === "ENOENT") {
    return new CatalogError("ARCHIVE_UNREADABLE", `Cannot register '${path}': no such file`, {
      cause,
      path,
    });
  }
  const why = cause instanceof PermafrostError ? ` (${cause.code})` : "";
  return new CatalogError(
    "ARCHIVE_UNREADABLE",
    `Cannot register '${path}'${why}: ${describeReadError(path, cause)}`,
    { cause, path },
  );
}

/** Why a path may not be read, in the catalog's words. */
const NOT_ALLOWED_WHY =
  "this catalog server is not allowed to read it (its process permissions or the file's do not let it)";

/**
 * What went wrong reading an archive, for a message that already names it: without
 * the platform's permission text, and without the reader's own "Cannot read archive
 * '<path>': " prefix.
 */
export function describeReadError(path: string, err: unknown): string {
  if (isPermissionError(err)) return NOT_ALLOWED_WHY;
  // The reader shows the bytes it found instead of the magic: for a file that is not
  // an archive at all (any file the server can read) that would echo its content.
  if (err instanceof PermafrostError && err.code === "BAD_MAGIC") {
    return "not a Permafrost archive (it does not start with the archive magic)";
  }
  const text = message(err);
  const prefix = `Cannot read archive '${path}': `;
  return text.startsWith(prefix) ? text.slice(prefix.length) : text;
}

/** Whether an error is the platform refusing a read (Deno's permissions, or the file's mode). */
export function isPermissionError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied ||
    code === "EACCES" || code === "EPERM";
}

/**
 * The answer to a path this process may not read: names the path and the
 * confinement, never the platform's own text (Deno's asks to rerun with flags).
 *
 * @param path The path as resolved.
 * @param cause The platform's error.
 * @returns A `PATH_NOT_ALLOWED` error.
 */
export function notAllowed(path: string, cause?: unknown): CatalogError {
  return new CatalogError(
    "PATH_NOT_ALLOWED",
    `Cannot read '${path}': ${NOT_ALLOWED_WHY}; register archives under the server's data roots (--data-roots)`,
    cause === undefined ? { path } : { path, cause },
  );
}
