/**
 * The spec's names for the operations on archives in object storage: thin aliases
 * of `freeze`, `thaw` and `audit`, which take a URI (`s3://`, `az://`, `gs://`)
 * wherever they take a path.
 *
 * @module
 */
import { freeze, type FreezeOptions, type FreezeSource, type FreezeSummary } from "./freeze.ts";
import { audit, type AuditReport } from "./inspect.ts";
import { thaw, type ThawOptions, type ThawSummary } from "./thaw.ts";

/**
 * Freezes a source into an archive at a URI (or path): `freeze` under the spec's name.
 *
 * @param source What `freeze` takes (a path or URI, an Arrow table, batches).
 * @param uri Where the archive goes, e.g. `s3://bucket/key.pf`.
 * @param options As `freeze`'s (with `storageClass`).
 * @returns The summary.
 */
export function freezeTo(
  source: FreezeSource,
  uri: string,
  options?: FreezeOptions,
): Promise<FreezeSummary> {
  return freeze(source, uri, options);
}

/**
 * Thaws an archive at a URI (or path), whole or a slice: `thaw` under the spec's name.
 *
 * @param uri The archive, e.g. `s3://bucket/key.pf` (read by ranges).
 * @param output The output path or URI.
 * @param options As `thaw`'s.
 * @returns The summary.
 */
export function thawFrom(uri: string, output: string, options?: ThawOptions): Promise<ThawSummary> {
  return thaw(uri, output, options);
}

/**
 * Audits an archive at a URI (or path), reading its tail and footer only: `audit`
 * under the spec's name.
 *
 * @param uri The archive.
 * @returns The report.
 */
export function auditRemote(uri: string): Promise<AuditReport> {
  return audit(uri);
}
