/**
 * Recording one registered version: a `datasets` row and one `chunks` row per chunk
 * (see `_tables.ts`), in one transaction, so a crash leaves either all of it or none.
 * `Catalog.registerIndex` decides the name and version, then calls this on its single
 * writer connection.
 *
 * @module
 */
import { type DuckDBConnection, LIST, listValue, VARCHAR } from "@duckdb/node-api";
import type { Field } from "../format/column.ts";
import { PermafrostError } from "../internal/errors.ts";
import type { ArchiveIndex } from "./backend.ts";
import { CatalogError } from "./errors.ts";
import { message } from "./_db.ts";
import { columnInfo } from "./_rows.ts";
import { notFound } from "./_queries.ts";

/** What a version is recorded as. */
export interface VersionEntry {
  /** Dataset name. */
  name: string;
  /** Version label. */
  version: string;
  /** Storage class (a key of the catalog's prices). */
  storageClass: string;
  /** Free-text description. */
  description: string;
  /** Registration time, as DuckDB TIMESTAMP text. */
  registeredAt: string;
}

/**
 * Inserts one version and its chunks in one transaction.
 *
 * @param c The writer connection.
 * @param index The archive's header and footer.
 * @param entry Name, version and the other recorded fields.
 * @throws {CatalogError} DB_FAILED when DuckDB refuses the write (rolled back).
 */
export async function recordVersion(
  c: DuckDBConnection,
  index: ArchiveIndex,
  entry: VersionEntry,
): Promise<void> {
  const { name, version, storageClass, description, registeredAt } = entry;
  const { header, footer } = index;
  await c.run("BEGIN TRANSACTION");
  try {
    await c.run(
      `INSERT INTO datasets VALUES ($1, $2, nextval('datasets_seq'), $3, $4, $5,
        from_json($6, '["VARCHAR"]'), $7::JSON, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
        from_json($19, '["VARCHAR"]'), $20, $21::JSON, $22::JSON, $23, $24, $25::TIMESTAMP)`,
      [
        name,
        version,
        index.path,
        footer.rows,
        index.schema.length,
        JSON.stringify(index.schema.map((f) => f.name)),
        JSON.stringify(index.schema.map(columnInfo)),
        header.codec,
        header.auto_reason ?? null,
        header.chunk_rows,
        footer.chunks.length,
        index.file_bytes,
        footer.payload_length,
        footer.raw_bytes,
        index.version,
        index.header_sha256,
        footer.payload_sha256,
        header.primary_key ?? null,
        JSON.stringify(header.lossy_columns ?? []),
        header.encryption !== null && header.encryption !== undefined,
        header.partition ? JSON.stringify(header.partition) : null,
        JSON.stringify(header.metadata ?? {}),
        description,
        storageClass,
        registeredAt,
      ],
    );
    const appender = await c.createAppender("chunks");
    try {
      footer.chunks.forEach((chunk, i) => {
        appender.appendVarchar(name);
        appender.appendVarchar(version);
        appender.appendInteger(i);
        appender.appendBigInt(BigInt(chunk.row_start));
        appender.appendBigInt(BigInt(chunk.row_end));
        appender.appendBigInt(BigInt(chunk.offset));
        appender.appendBigInt(BigInt(chunk.length));
        appender.appendBigInt(BigInt(chunk.blocks.reduce((s, b) => s + b.raw_length, 0)));
        appender.appendVarchar(chunk.sha256);
        appender.appendVarchar(JSON.stringify(
          chunk.stats.map((s, j) => ({
            column: index.schema[j]?.name ?? `#${j}`,
            min: s.min,
            max: s.max,
            null_count: s.null_count,
          })),
        ));
        appender.endRow();
      });
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
    await recordColumns(c, index, name, version);
    await c.run("COMMIT");
  } catch (err) {
    await c.run("ROLLBACK").catch(() => undefined);
    throw err instanceof PermafrostError ? err : new CatalogError(
      "DB_FAILED",
      `Cannot record dataset '${name}': ${message(err)}`,
      { cause: err },
    );
  }
}

/**
 * Decides the version an archive registers as: the one asked for (a `CONFLICT` when it
 * exists with other content, nothing to do when with the same), else the next free
 * `vN` — or nothing to do when the latest version is this very archive.
 *
 * @param c The writer connection.
 * @param index The archive.
 * @param name Dataset name.
 * @param requested The version asked for, if any.
 * @returns The version, and whether it is to be recorded (`created`).
 * @throws {CatalogError} CONFLICT.
 */
export async function chooseVersion(
  c: DuckDBConnection,
  index: ArchiveIndex,
  name: string,
  requested: string | undefined,
): Promise<{ created: boolean; version: string }> {
  const existing = await c.runAndReadAll(
    "SELECT version, header_sha256, payload_sha256, path FROM datasets WHERE name = $1 ORDER BY seq",
    [name],
  );
  const versions = existing.getRowObjectsJS() as {
    version: string;
    header_sha256: string;
    payload_sha256: string;
    path: string;
  }[];
  const same = (v: (typeof versions)[number]) =>
    v.header_sha256 === index.header_sha256 && v.payload_sha256 === index.footer.payload_sha256;
  let version = requested;
  if (version !== undefined) {
    const found = versions.find((v) => v.version === version);
    if (found && same(found)) return { created: false, version };
    if (found) {
      throw new CatalogError(
        "CONFLICT",
        `Dataset '${name}' version '${version}' is already registered with other content (${found.path}); pick another version`,
      );
    }
  } else {
    const latest = versions.at(-1);
    if (latest && same(latest) && latest.path === index.path) {
      return { created: false, version: latest.version };
    }
    const used = new Set(versions.map((v) => v.version));
    let n = versions.length + 1;
    while (used.has(`v${n}`)) n++;
    version = `v${n}`;
  }
  return { created: true, version };
}

/**
 * Deletes every version of a dataset, or one, with its chunks, in one transaction.
 *
 * @param c The writer connection.
 * @param name Dataset name.
 * @param version Only this version.
 * @returns The versions removed, oldest first.
 * @throws {CatalogError} NOT_FOUND; DB_FAILED (rolled back).
 */
export async function deleteVersions(
  c: DuckDBConnection,
  name: string,
  version: string | undefined,
): Promise<string[]> {
  const params = version === undefined ? [name] : [name, version];
  const cond = version === undefined ? "name = $1" : "name = $1 AND version = $2";
  const found =
    (await c.runAndReadAll(`SELECT version FROM datasets WHERE ${cond} ORDER BY seq`, params))
      .getRowsJS().map((r) => String(r[0]));
  if (found.length === 0) throw notFound(name, version);
  await c.run("BEGIN TRANSACTION");
  try {
    await c.run(`DELETE FROM chunks WHERE ${cond.replace("name", "dataset")}`, params);
    await c.run(`DELETE FROM dataset_columns WHERE ${cond.replace("name", "dataset")}`, params);
    await c.run(`DELETE FROM datasets WHERE ${cond}`, params);
    await c.run("COMMIT");
  } catch (err) {
    await c.run("ROLLBACK").catch(() => undefined);
    throw new CatalogError("DB_FAILED", `Cannot remove dataset '${name}': ${message(err)}`, {
      cause: err,
    });
  }
  return found;
}

/**
 * Records a version's columns with their bytes summed over its chunks
 * (`dataset_columns`), inside the caller's transaction.
 *
 * @param c The writer connection.
 * @param index The archive.
 * @param name Dataset name.
 * @param version Its version.
 */
export async function recordColumns(
  c: DuckDBConnection,
  index: ArchiveIndex,
  name: string,
  version: string,
): Promise<void> {
  const appender = await c.createAppender("dataset_columns");
  try {
    index.schema.forEach((field, j) => {
      let stored = 0;
      let raw = 0;
      let nulls = 0;
      const predictors = new Set<string>();
      for (const chunk of index.footer.chunks) {
        const block = chunk.blocks[j];
        if (block) {
          stored += block.length;
          raw += block.raw_length;
          predictors.add(block.predictor);
        }
        nulls += chunk.stats[j]?.null_count ?? 0;
      }
      appender.appendVarchar(name);
      appender.appendVarchar(version);
      appender.appendInteger(j);
      appender.appendVarchar(field.name);
      appender.appendVarchar(columnTypeText(field));
      appender.appendList(listValue([...predictors]), LIST(VARCHAR));
      appender.appendBigInt(BigInt(stored));
      appender.appendBigInt(BigInt(raw));
      appender.appendBigInt(BigInt(nulls));
      appender.endRow();
    });
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

/** A column's type as people read it: `decimal(18,2)`, `timestamp[us, UTC]`, `int64`. */
function columnTypeText(f: Field): string {
  if (f.type === "decimal") return `decimal(${f.precision},${f.scale})`;
  if (f.unit === undefined) return f.type;
  return `${f.type}[${f.unit}${f.timezone ? `, ${f.timezone}` : ""}]`;
}
