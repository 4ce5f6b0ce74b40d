/**
 * The catalog's names and options: what a dataset name and version may be
 * ({@link NAME_PATTERN}, {@link nameFromPath}), pages ({@link MAX_PAGE}), and the
 * options of `Catalog` and its methods.
 *
 * @module
 */
import { isRemote } from "../storage/uri.ts";
import { basename, isAbsolute, relative, resolve, sep } from "node:path";
import type { RowRange } from "../format/reader.ts";
import type { Logger } from "../internal/log.ts";
import { ARCHIVE_EXTENSION, type ArchiveBackend } from "./backend.ts";
import { CatalogError } from "./errors.ts";
import { NAME_PATTERN } from "./limits.ts";

/** Thaws an archive (`mod.ts`'s `thaw`), injected so the catalog does not import `mod.ts`. */
export type ThawFunction = (
  archivePath: string,
  outputPath: string,
  options: { rows?: RowRange; columns?: string[] },
) => Promise<unknown>;

export { NAME_PATTERN } from "./limits.ts";

/** Largest page a list answers. */
export const MAX_PAGE = 1000;

/** Options of {@link Catalog}. */
export interface CatalogOptions {
  /** Where archives are read from (default: local disk). */
  backend?: ArchiveBackend;
  /** `mod.ts`'s `thaw`, for {@link Catalog.thaw}. */
  thaw?: ThawFunction;
  /** Logger (default: silent). */
  logger?: Logger;
  /** Clock (default: `new Date()`). */
  now?: () => Date;
  /** When set, only archives under this directory may be registered; relative paths resolve against it. */
  root?: string;
  /** $/GB-month by storage class (default {@link DEFAULT_PRICES}); also the classes a dataset may use. */
  prices?: Readonly<Record<string, number>>;
  /** Parquet size as a fraction of raw bytes, for `costReport` (default {@link DEFAULT_PARQUET_RATIO}). */
  parquetRatio?: number;
  /**
   * Limits of `sql` (defaults: 5,000 ms, 10,000 rows, 32 MiB of JSON) and the
   * connections it runs on (default 4: queries that may run at once).
   */
  sql?: { timeoutMs?: number; maxRows?: number; maxBytes?: number; connections?: number };
  /** Read connections (default 4). */
  readConnections?: number;
  /** DuckDB memory limit (default `1GB`). */
  memoryLimit?: string;
  /** Bytes of remote archives' indexes kept in memory by the default backend (64 MB). */
  cacheBytes?: number;
  /** Seconds a cached index of a remote archive is used without revalidating it (0). */
  cacheTtlS?: number;
}

/** Options of {@link Catalog.register}. */
export interface RegisterOptions {
  /** Dataset name (default: the file name without `.pf`). */
  name?: string;
  /** Version label (default: `v<N>`, the next free number). */
  version?: string;
  /** Free-text description (default: the header's `metadata.description`). */
  description?: string;
  /** Storage class (default `standard`). */
  storageClass?: string;
}

/** Options of {@link Catalog.list}. */
export interface ListOptions {
  /** Page size (default 100, at most {@link MAX_PAGE}). */
  limit?: number;
  /** Items to skip. */
  offset?: number;
  /** Only this codec. */
  codec?: string;
  /** Only names starting with this prefix. */
  prefix?: string;
  /** Only this storage class. */
  storageClass?: string;
  /** Every version instead of the latest of each name. */
  allVersions?: boolean;
}

/** Options of {@link Catalog.chunks}. */
export interface ChunkOptions {
  /** Version (default: latest). */
  version?: string;
  /** Page size (default 100, at most {@link MAX_PAGE}). */
  limit?: number;
  /** Items to skip. */
  offset?: number;
  /** Only chunks overlapping these rows (0-based, half-open). */
  rows?: RowRange;
}

/** Checks and defaults a page request. */
export function paging(
  options: { limit?: number; offset?: number },
): { limit: number; offset: number } {
  const limit = options.limit ?? 100;
  const offset = options.offset ?? 0;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new CatalogError("INVALID_ARGUMENT", `limit must be 1..${MAX_PAGE}, got ${limit}`);
  }
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new CatalogError("INVALID_ARGUMENT", `offset must be a count, got ${offset}`);
  }
  return { limit, offset };
}

/** Checks a dataset name or version against {@link NAME_PATTERN}. */
export function checkName(what: "name" | "version", value: string): void {
  if (!NAME_PATTERN.test(value)) {
    throw new CatalogError(
      "INVALID_ARGUMENT",
      `Invalid dataset ${what} '${value}': use letters, digits, '.', '_' or '-' (starting with a letter or digit, 128 at most)`,
    );
  }
}

/**
 * The dataset name a path registers under by default: the file name without `.pf`,
 * with characters a name may not hold replaced by `_`.
 *
 * @param path Archive path.
 * @returns The name.
 */
export function nameFromPath(path: string): string {
  let base = basename(path);
  if (base.endsWith(ARCHIVE_EXTENSION)) base = base.slice(0, -ARCHIVE_EXTENSION.length);
  const clean = base.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^[._-]+/, "").slice(0, 128);
  return clean === "" ? "dataset" : clean;
}

/**
 * Resolves a path to register under the catalog's root.
 *
 * @param path The path as given.
 * @param root The root (absolute), or undefined for none.
 * @param resolveFree How a path resolves without a root (the backend's way).
 * @returns The absolute path.
 * @throws {CatalogError} INVALID_ARGUMENT for an empty path; PATH_OUTSIDE_ROOT.
 */
export function resolveUnderRoot(
  path: string,
  root: string | undefined,
  resolveFree: (path: string) => string,
): string {
  if (typeof path !== "string" || path.trim() === "" || path.includes("\0")) {
    throw new CatalogError("INVALID_ARGUMENT", "Path is empty");
  }
  if (!root || isRemote(path)) {
    if (root) {
      throw new CatalogError(
        "PATH_OUTSIDE_ROOT",
        `'${path}' is in object storage, outside the catalog root '${root}'`,
        { path },
      );
    }
    return resolveFree(path);
  }
  const abs = resolve(root, path);
  const rel = relative(root, abs);
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new CatalogError(
      "PATH_OUTSIDE_ROOT",
      `Path '${path}' is outside the catalog root '${root}'`,
      {
        path,
      },
    );
  }
  return abs;
}
