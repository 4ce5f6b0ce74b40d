/**
 * Which columns an `append` writes: the source's columns checked against the
 * archive's, and with `evolve` the archive's schema grown by the source's new
 * columns (spec 1.2.1's schema evolution on append).
 *
 * The rule, in one place:
 * - without `evolve`, the source holds exactly the archive's columns (any order),
 *   each of the archive's type; anything else is SCHEMA_MISMATCH listing them all;
 * - with `evolve`, a source column the archive lacks is **added** at the end of the
 *   schema when it is nullable: chunks already in the archive are not rewritten, they
 *   hold no block for it and read it as all null (format 1.8, FORMAT.md §6.1); an
 *   archive column the source lacks is **filled** with nulls in the new chunks when it
 *   is nullable (an ordinary null block, no format change). A new column that is not
 *   nullable, a missing one that is not, and any type change are refused, naming the
 *   column: evolution never changes a stored value's type (`thaw --schema` casts on
 *   the way out instead).
 *
 * Text sources (CSV, JSON lines) are opened a second time with the archive's types
 * forced on the columns the archive has, so `3` in a float column reads as 3.0; the
 * added columns keep the types read from the source.
 *
 * @module
 */
import type { Field, Schema } from "../format/column.ts";
import { type ArchiveHeader, archiveVersion, schemaToJson } from "../format/header.ts";
import { sourceFormatOf } from "../io/source.ts";
import type { SourceFormat } from "../io/types.ts";
import { OpsError } from "./errors.ts";
import type { FreezeSource } from "./freeze.ts";
import { type OpenedSource, openFreezeSource } from "./_freeze_source.ts";

/** The codec a column added to an archive of a codec per column (`mixed`) is written with. */
const ADDED_COLUMN_CODEC = "zstd";

/** How to open an append's source. */
export interface AppendSourceOptions {
  /** Source format, instead of guessing from the extension. */
  format?: SourceFormat;
  /** CSV field delimiter. */
  delimiter?: string;
  /** Rows per read batch (the archive's chunk rows). */
  chunkRows: number;
  /** Accept new nullable columns and fill missing nullable ones with nulls. */
  evolve: boolean;
}

/** The source opened for an append, and the schema the archive has after it. */
export interface AppendSchema {
  /** The source (text sources with the archive's types forced). */
  opened: OpenedSource;
  /** The archive's schema after the append: its own, then the added columns. */
  schema: Schema;
  /** Columns the append adds, in source order (empty without `evolve`). */
  added: Field[];
  /** Archive columns the source lacks, filled with nulls (empty without `evolve`). */
  filled: string[];
}

const TEXT_FORMATS: readonly SourceFormat[] = ["csv", "jsonl"];

/**
 * Opens the source and checks its columns against the archive's.
 *
 * @param source The rows to append.
 * @param archive The archive's path, for messages.
 * @param stored The archive's schema.
 * @param options Format, delimiter, batch rows, `evolve`.
 * @returns The opened source and the schema the archive will have.
 * @throws {OpsError} SCHEMA_MISMATCH naming every column that differs (and `column`,
 * the first of them); nothing is opened then.
 */
export async function openForAppend(
  source: FreezeSource,
  archive: string,
  stored: Schema,
  options: AppendSourceOptions,
): Promise<AppendSchema> {
  const { format, chunkRows, delimiter, evolve } = options;
  const first = await openFreezeSource(source, { format, chunkRows, delimiter });
  const isText = typeof source === "string" &&
    TEXT_FORMATS.includes(format ?? sourceFormatOf(source));
  try {
    refuseDifferences(first.schema, stored, source, archive, { evolve, isText });
  } catch (err) {
    await first.close();
    throw err;
  }
  let opened: OpenedSource = first;
  if (isText) {
    await first.close();
    opened = await openFreezeSource(source, {
      format,
      chunkRows,
      delimiter,
      types: forcedTypes(stored.filter((f) => first.schema.some((g) => g.name === f.name))),
    });
  }
  const added = opened.schema.filter((g) => !stored.some((f) => f.name === g.name));
  const filled = stored.filter((f) => !opened.schema.some((g) => g.name === f.name)).map((f) =>
    f.name
  );
  return { opened, schema: [...stored, ...added], added, filled };
}

/** Throws SCHEMA_MISMATCH listing every way the source's columns differ from the archive's. */
function refuseDifferences(
  given: Schema,
  stored: Schema,
  source: FreezeSource,
  archive: string,
  how: { evolve: boolean; isText: boolean },
): void {
  const problems: { column: string; text: string }[] = [];
  for (const f of stored) {
    if (given.some((g) => g.name === f.name)) continue;
    if (!how.evolve) {
      problems.push({ column: f.name, text: `missing "${f.name}" (${typeName(f)})` });
    } else if (!f.nullable) {
      problems.push({
        column: f.name,
        text: `missing "${f.name}" (${
          typeName(f)
        }), which is not nullable, so it cannot be filled with nulls`,
      });
    }
  }
  for (const g of given) {
    if (stored.some((f) => f.name === g.name)) continue;
    if (!how.evolve) problems.push({ column: g.name, text: `extra "${g.name}" (${typeName(g)})` });
    else if (!g.nullable) {
      problems.push({
        column: g.name,
        text: `new column "${g.name}" (${
          typeName(g)
        }) is not nullable, and the rows already stored would read it as null`,
      });
    }
  }
  if (!how.isText) {
    for (const f of stored) {
      const g = given.find((x) => x.name === f.name);
      // Units and decimal scales are converted exactly when the rows are conformed.
      if (g && g.type !== f.type) {
        problems.push({
          column: f.name,
          text: `"${f.name}": archive ${typeName(f)}, source ${typeName(g)}${
            how.evolve ? " (an append never changes a column's type)" : ""
          }`,
        });
      }
    }
  }
  if (problems.length === 0) return;
  const label = typeof source === "string" ? `'${source}'` : "the rows";
  const hint = !how.evolve && given.some((g) => !stored.some((f) => f.name === g.name))
    ? " (--evolve adds new nullable columns)"
    : "";
  throw new OpsError(
    "SCHEMA_MISMATCH",
    `Cannot append ${label} to '${archive}': columns differ: ${
      problems.map((p) => p.text).join("; ")
    }${hint}`,
    { path: archive, column: problems[0]!.column },
  );
}

/**
 * The archive's types forced on a text source. Types with parameters are forced whole,
 * so the text is read at the archive's scale or unit; a timestamp's unit is taken from
 * the text and converted when the batch is conformed.
 */
function forcedTypes(fields: Schema) {
  return Object.fromEntries(
    fields.map((f) => {
      if (f.type === "decimal") {
        return [f.name, { type: f.type, precision: f.precision, scale: f.scale }];
      }
      if (f.type === "time" || f.type === "duration") {
        return [f.name, { type: f.type, unit: f.unit }];
      }
      return [f.name, f.type];
    }),
  );
}

/**
 * The header of an archive after an append that added columns: the schema grown, each
 * added column planned plainly (no conditioning, lossless, the default codec where
 * columns name their own) and, when chunks are already stored, starting at the first
 * new chunk (`since_chunk`, which makes the archive 1.8). Without added columns the
 * header is the archive's own, so a plain append writes the bytes it always did.
 *
 * @param header The archive's header.
 * @param added The columns added, in order.
 * @param storedChunks Chunks already in the archive.
 * @returns The header to write.
 */
export function evolvedHeader(
  header: ArchiveHeader,
  added: readonly Field[],
  storedChunks: number,
): ArchiveHeader {
  if (added.length === 0) return { ...header, version: archiveVersion(header) };
  const columns = { ...header.columns };
  for (const f of added) {
    columns[f.name] = {
      deps: [],
      quantization: "QUANT_NONE",
      ...(header.codec === "mixed" ? { codec: ADDED_COLUMN_CODEC } : {}),
      ...(storedChunks > 0 ? { since_chunk: storedChunks } : {}),
    };
  }
  // The old columns keep their stored JSON as it is; the added ones follow.
  const schema = { fields: [...header.schema.fields, ...schemaToJson(added).fields] };
  const grown: ArchiveHeader = { ...header, schema, columns };
  return { ...grown, version: archiveVersion(grown) };
}

/**
 * A column's type as append's messages name it (`decimal(10, 2)`, `timestamp[ms]`).
 *
 * @param f The column.
 * @returns Its type's text.
 */
export function typeName(f: Field): string {
  switch (f.type) {
    case "timestamp":
    case "time":
    case "duration":
      return `${f.type}[${f.unit ?? "us"}]`;
    case "decimal":
      return `decimal(${f.precision}, ${f.scale})`;
    default:
      return f.type;
  }
}
