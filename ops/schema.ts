/**
 * `Schema` and `Field` as values of the library, not only types (spec 1.2.1): build
 * them checked (`Field.of`, `Schema.of`), read them from JSON or from an archive
 * (`Schema.parse`, `Schema.fromArchive`), write them back (`Schema.toJson`), look a
 * column up and compare two (`Schema.field`, `Schema.diff`). Each name is both the
 * type and its companion object, so `import { Field, Schema }` gives both.
 *
 * A schema is a frozen list of frozen fields — what `freeze` records, `audit` reports
 * and `thaw({ schema })` takes — so every part of the library reads it as it is.
 *
 * @example A target schema for thaw, built in code
 * ```ts
 * import assert from "node:assert/strict";
 * import { Field, Schema } from "./schema.ts";
 * const target = Schema.of([
 *   Field.of("id", "int64", { nullable: false }),
 *   Field.of("price", "decimal", { precision: 12, scale: 2 }),
 *   Field.of("at", "timestamp", { unit: "ms", timezone: "UTC" }),
 * ]);
 * assert.equal(Schema.field(target, "price")?.scale, 2);
 * assert.deepEqual(Schema.parse(Schema.toJson(target)), target);
 * const older = Schema.of([Field.of("id", "int64", { nullable: false })]);
 * assert.deepEqual(Schema.diff(older, target).changes.map((c) => c.kind), ["added", "added"]);
 * ```
 *
 * @module
 */
import {
  COLUMN_TYPES,
  type ColumnType,
  type Field as FieldType,
  MAX_DECIMAL_PRECISION,
  type Schema as SchemaType,
  type TimeUnit,
} from "../format/column.ts";
import { readIndexAt } from "./_remote.ts";
import { OpsError } from "./errors.ts";
import { parseSchemaJson } from "./evolve.ts";
import { type SchemaDiff, schemaDiff, typeText } from "./schema_diff.ts";

/** One column of a schema: its name, type, nullability and the type's parameters. */
export type Field = FieldType;

/** An ordered list of fields with unique names. */
export type Schema = SchemaType;

/** What a field may carry besides its name and type. */
export interface FieldOptions {
  /** Whether the column may hold nulls (default true). */
  nullable?: boolean;
  /** Tick unit of a `timestamp`, `time` or `duration` (default `us`). */
  unit?: TimeUnit;
  /** IANA timezone or offset of a `timestamp`. */
  timezone?: string;
  /** Significant digits of a `decimal` (1..76); required for decimals. */
  precision?: number;
  /** Digits after the point of a `decimal` (0..precision); required for decimals. */
  scale?: number;
}

const UNITS: readonly TimeUnit[] = ["s", "ms", "us", "ns"];
const TICKED: ReadonlySet<ColumnType> = new Set(["timestamp", "time", "duration"]);

function bad(message: string): OpsError {
  return new OpsError("BAD_OPTION", message);
}

/** The companion of the {@link Field} type: builds and reads fields. */
export interface FieldValues {
  /**
   * A checked, frozen field.
   *
   * @param name Column name (not empty).
   * @param type One of the column types (`int64`, `float64`, `float32`, `float16`,
   *   `bool`, `timestamp`, `date`, `time`, `duration`, `decimal`, `string`, `json`).
   * @param options Nullability and the type's parameters.
   * @returns The field.
   * @throws {OpsError} BAD_OPTION naming what is wrong (an unknown type, a unit on a
   *   type without ticks, a decimal without precision and scale, …).
   */
  of(name: string, type: ColumnType, options?: FieldOptions): Field;
  /**
   * A field's type in words: `int64`, `decimal(10,2)`, `timestamp[ms, UTC]`.
   *
   * @param field The field.
   * @returns Its type's text, as `diff` and `audit` write it.
   */
  text(field: Field): string;
}

/** Builds and reads fields: `Field.of("id", "int64")`. */
export const Field: FieldValues = Object.freeze({
  of(name: string, type: ColumnType, options: FieldOptions = {}): Field {
    if (typeof name !== "string" || name === "") throw bad("A field needs a name");
    if (!COLUMN_TYPES.includes(type)) {
      throw bad(`Field '${name}' has type '${type}': use ${COLUMN_TYPES.join(", ")}`);
    }
    const { nullable = true, unit, timezone, precision, scale } = options;
    if (unit !== undefined && (!TICKED.has(type) || !UNITS.includes(unit))) {
      throw bad(
        TICKED.has(type)
          ? `Field '${name}' has unit '${unit}': use ${UNITS.join(", ")}`
          : `Field '${name}' is a ${type}: only timestamp, time and duration take a unit`,
      );
    }
    if (timezone !== undefined && (type !== "timestamp" || timezone === "")) {
      throw bad(`Field '${name}': only a timestamp takes a timezone, and not an empty one`);
    }
    if (type === "decimal") {
      if (
        !Number.isInteger(precision) || precision! < 1 || precision! > MAX_DECIMAL_PRECISION ||
        !Number.isInteger(scale) || scale! < 0 || scale! > precision!
      ) {
        throw bad(
          `Field '${name}' is a decimal: give precision 1..${MAX_DECIMAL_PRECISION} and scale 0..precision`,
        );
      }
    } else if (precision !== undefined || scale !== undefined) {
      throw bad(`Field '${name}' is a ${type}: only a decimal takes precision and scale`);
    }
    return Object.freeze({
      name,
      type,
      nullable,
      ...(TICKED.has(type) ? { unit: unit ?? "us" } : {}),
      ...(timezone !== undefined ? { timezone } : {}),
      ...(type === "decimal" ? { precision, scale } : {}),
    });
  },

  text(field: Field): string {
    return typeText(field);
  },
});

/** The companion of the {@link Schema} type: builds, reads, writes and compares schemas. */
export interface SchemaValues {
  /**
   * A checked, frozen schema.
   *
   * @param fields The columns, in order (each checked as by {@link Field.of}).
   * @returns The schema.
   * @throws {OpsError} BAD_OPTION for a name used twice or a bad field.
   */
  of(fields: readonly Field[]): Schema;
  /**
   * Reads a schema from JSON: a list of fields (`[{"name", "type", "nullable", …}]`,
   * as {@link Schema.toJson} writes it) or the Arrow form `audit` reports as
   * `stored_schema` (`{"fields": [...]}`).
   *
   * @param json The JSON text.
   * @param source Where it came from, for messages.
   * @returns The schema.
   * @throws {OpsError} BAD_OPTION naming what is wrong.
   */
  parse(json: string, source?: string): Schema;
  /**
   * Writes a schema as the list of fields {@link Schema.parse} reads (and
   * `thaw --schema FILE` takes).
   *
   * @param schema The schema.
   * @returns JSON text, one field per line.
   */
  toJson(schema: Schema): string;
  /**
   * The schema an archive was frozen with (its header's; an `append --evolve` grows it).
   *
   * @param path A local path or an object-storage URI.
   * @returns The schema.
   * @throws {OpsError|FormatError} When the archive cannot be read.
   */
  fromArchive(path: string): Promise<Schema>;
  /**
   * A column by name.
   *
   * @param schema The schema.
   * @param name Column name.
   * @returns The field, or undefined.
   */
  field(schema: Schema, name: string): Field | undefined;
  /**
   * What changed from `a` to `b`: columns added, removed, retyped and made (not)
   * nullable, each with whether rows of `a` read in `b` without changing a value.
   *
   * @param a The older schema.
   * @param b The newer one.
   * @returns The changes.
   */
  diff(a: Schema, b: Schema): SchemaDiff;
}

/** Builds, reads, writes and compares schemas: `Schema.of([...])`, `Schema.parse(json)`. */
export const Schema: SchemaValues = Object.freeze({
  of(fields: readonly Field[]): Schema {
    const names = new Set<string>();
    const out = fields.map((f) => {
      if (names.has(f.name)) throw bad(`The schema names column '${f.name}' twice`);
      names.add(f.name);
      const { name, type, nullable, ...options } = f;
      return Field.of(name, type, { nullable, ...options });
    });
    return Object.freeze(out);
  },

  parse(json: string, source = "the JSON given"): Schema {
    return Schema.of(parseSchemaJson(json, source));
  },

  toJson(schema: Schema): string {
    return `[\n${schema.map((f) => `  ${JSON.stringify(f)}`).join(",\n")}\n]\n`;
  },

  async fromArchive(path: string): Promise<Schema> {
    return Schema.of((await readIndexAt(path)).schema);
  },

  field(schema: Schema, name: string): Field | undefined {
    return schema.find((f) => f.name === name);
  },

  diff(a: Schema, b: Schema): SchemaDiff {
    return schemaDiff(a, b);
  },
});
