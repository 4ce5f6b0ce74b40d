/**
 * Reading a partitioned dataset (`partition.ts` writes one): its manifest, checked,
 * and its rows, partition by partition in manifest order, opening only the
 * partitions whose merged statistics a `where` can match. A dataset may be a directory
 * or an object-storage prefix (`s3://bucket/events/`): the manifest is one read, each
 * partition is opened with ranged reads.
 *
 * @module
 */
import { nodePath } from "../internal/node_builtin.ts";
import type { Batch, Schema } from "../format/column.ts";
import type { ArrowSchemaJson, ColumnStats } from "../format/header.ts";
import { schemaFromJson } from "../format/header.ts";
import type { KeyRing } from "../format/key_provider.ts";
import type { RowRange } from "../format/reader.ts";
import { isRemote } from "../storage/uri.ts";
import { openArchive, storeAt } from "./_remote.ts";
import { OpsError } from "./errors.ts";
import {
  scanArchive,
  type ScanCounters,
  type ScanOptions,
  selectSchema,
  whereFor,
} from "./_scan.ts";

/** Name of the manifest file in a partitioned dataset directory. */
export const MANIFEST_NAME = "_manifest.json";

/** One partition in the manifest. */
export interface PartitionEntry {
  /** Partition column → value as text (dates `YYYY-MM-DD`, timestamps ISO, null as null). */
  values: Record<string, string | null>;
  /** Archive path relative to the dataset directory. */
  path: string;
  /** Rows. */
  rows: number;
  /** Chunks. */
  chunks: number;
  /** Size of the archive file. */
  archive_bytes: number;
  /** SHA-256 (hex) of the archive's payload. */
  payload_sha256: string;
  /** Merged statistics of every column, by name (for pruning whole partitions). */
  stats: Record<string, ColumnStats>;
}

/** The manifest (`_manifest.json`). */
export interface PartitionManifest {
  /** Always `permafrost-partitioned`. */
  format: "permafrost-partitioned";
  /** Manifest version (1). */
  version: 1;
  /** Partition columns, outermost first. */
  partition_by: string[];
  /** The schema shared by every partition (Arrow-schema JSON). */
  schema: ArrowSchemaJson;
  /** Total rows. */
  rows: number;
  /** Partitions, in order of first appearance in the source. */
  partitions: PartitionEntry[];
}

/**
 * A file of a dataset by its path relative to the dataset (`country=US/part.pf`).
 *
 * @param dir The dataset's directory or URI prefix.
 * @param relative The manifest's path (`/`-separated).
 * @returns Its path or URI.
 */
export function datasetFile(dir: string, relative: string): string {
  if (isRemote(dir)) return `${dir.replace(/\/+$/, "")}/${relative}`;
  return nodePath().join(dir, ...relative.split("/"));
}

/**
 * Tells whether a path is a partitioned dataset directory (holds a manifest), or a URI
 * a partitioned dataset prefix.
 *
 * @param path A path or URI.
 * @returns True for a directory or prefix with `_manifest.json`.
 */
export async function isPartitionedDir(path: string): Promise<boolean> {
  if (isRemote(path)) {
    const manifest = datasetFile(path, MANIFEST_NAME);
    return (await (await storeAt(manifest)).stat(manifest)) !== null;
  }
  try {
    const info = await Deno.stat(path);
    if (!info.isDirectory) return false;
    return (await Deno.stat(nodePath().join(path, MANIFEST_NAME))).isFile;
  } catch {
    return false;
  }
}

/**
 * Reads and checks a partitioned dataset's manifest.
 *
 * @param dir The dataset directory.
 * @returns The manifest and its schema.
 * @throws {OpsError} BAD_OPTION when the manifest is missing or malformed.
 */
export async function readManifest(
  dir: string,
): Promise<{ manifest: PartitionManifest; schema: Schema }> {
  let manifest: PartitionManifest;
  const at = datasetFile(dir, MANIFEST_NAME);
  try {
    const text = isRemote(at)
      ? new TextDecoder().decode((await (await storeAt(at)).read(at)).bytes)
      : await Deno.readTextFile(at);
    manifest = JSON.parse(text);
  } catch (cause) {
    throw new OpsError(
      "BAD_OPTION",
      `Cannot read '${at}': ${cause instanceof Error ? cause.message : cause}`,
      { path: dir, cause },
    );
  }
  if (manifest?.format !== "permafrost-partitioned" || !Array.isArray(manifest.partitions)) {
    throw new OpsError("BAD_OPTION", `'${at}' is not a Permafrost manifest`, {
      path: dir,
    });
  }
  for (const p of manifest.partitions) {
    if (typeof p?.path !== "string" || p.path.split("/").some((s) => s === ".." || s === "")) {
      throw new OpsError("BAD_OPTION", `'${at}' names a bad partition path`, {
        path: dir,
      });
    }
  }
  return { manifest, schema: schemaFromJson(manifest.schema) };
}

/** Counters of a partitioned read. */
export interface PartitionCounters extends ScanCounters {
  /** Partitions in the manifest. */
  partitions_total: number;
  /** Partitions opened (the others were skipped by their statistics). */
  partitions_read: number;
}

/**
 * Reads a partitioned dataset: partitions in manifest order, each filtered by
 * `where`. `rows` counts across the partitions in that order.
 *
 * @param dir The dataset directory.
 * @param options Rows, columns, where; keys for encrypted partitions.
 * @param counters Updated as partitions and chunks are skipped and read.
 * @returns Batches holding `options.columns`.
 */
export async function* readPartitioned(
  dir: string,
  options: ScanOptions & { keys?: KeyRing },
  counters: PartitionCounters,
): AsyncGenerator<Batch> {
  const { manifest, schema } = await readManifest(dir);
  selectSchema(schema, options.columns);
  const where = await whereFor(options.where, schema);
  const start = options.rows?.start ?? 0;
  const end = options.rows?.end ?? Infinity;
  counters.partitions_total += manifest.partitions.length;
  let offset = 0;
  for (const p of manifest.partitions) {
    const first = offset;
    offset += p.rows;
    if (offset <= start || first >= end) continue;
    if (where && !where.mayMatch((name) => p.stats?.[name], p.rows)) continue;
    counters.partitions_read++;
    const reader = await openArchive(datasetFile(dir, p.path), {
      keys: options.keys,
      requireKey: true,
    });
    try {
      const rows: RowRange = {
        start: Math.max(0, start - first),
        end: Math.min(p.rows, end - first),
      };
      yield* scanArchive(reader, { ...options, rows, where }, counters);
    } finally {
      reader.close();
    }
  }
}
