/**
 * Thawing in another schema (`thaw --schema FILE`, `ThawOptions.schema`; spec 1.2.1's
 * schema evolution): the archive's rows come out in the columns, order and types the
 * caller asks for. A column the archive lacks comes back null (it must be nullable); a
 * column the target lacks is dropped (and never read); a type change is made only where
 * `schemaDiff` calls it compatible — every old value has one exact form in the new type
 * (int64 → a decimal with 19 integer digits or more, a decimal to a wider one of the same
 * scale, float16 → float32 → float64 bit for bit, date → timestamp, a timestamp, time or
 * duration to a finer unit, anything → string in the text a CSV thaw writes) — and anything else is refused before a row is
 * read, as SCHEMA_INCOMPATIBLE naming the columns and why. No value is ever rounded.
 *
 * A target schema is given as JSON: a list of fields (`[{"name", "type", "nullable",
 * "unit", "timezone", "precision", "scale"}]`, as `audit` lists columns) or the Arrow
 * form `audit` reports as `stored_schema` (`{"fields": [...]}`).
 *
 * @module
 */
import {
  type Batch,
  type Column,
  emptyColumn,
  type Field,
  isWideDecimal,
  type Schema,
  type TimeUnit,
} from "../format/column.ts";
import { float16BitsToFloat32Bits } from "../format/float16.ts";
import { schemaFromJson } from "../format/header.ts";
import { cellText } from "../io/cell_text.ts";
import { OpsError } from "./errors.ts";
import { schemaDiff, typeText } from "./schema_diff.ts";

/** How one target column is made from the stored rows. */
type Source =
  | { kind: "copy"; index: number }
  | { kind: "cast"; index: number; from: Field; to: Field }
  | { kind: "null" };

/** A checked way from a stored schema to a target one. */
export interface Evolution {
  /** The schema rows come out in. */
  readonly target: Schema;
  /** The stored columns to read, in stored order (the others are never read). */
  readonly read: readonly string[];
  readonly sources: readonly Source[];
}

/**
 * Checks that rows of `stored` can be given in `target` without changing a value.
 *
 * @param stored The archive's schema.
 * @param target The schema asked for.
 * @returns How to make each target column.
 * @throws {OpsError} SCHEMA_INCOMPATIBLE naming every change that would change or
 * invent a value.
 */
export function planEvolution(stored: Schema, target: Schema): Evolution {
  const names = new Set<string>();
  for (const f of target) {
    if (names.has(f.name)) {
      throw new OpsError("BAD_OPTION", `The target schema names column '${f.name}' twice`);
    }
    names.add(f.name);
  }
  const refused = schemaDiff(stored, target).changes.filter((c) => !c.compatible);
  if (refused.length > 0) {
    throw new OpsError(
      "SCHEMA_INCOMPATIBLE",
      `Cannot thaw in the schema given: ${
        refused.map((c) =>
          `column '${c.column}' ${c.kind.replace("_", " ")}${
            c.from && c.to ? ` (${c.from} → ${c.to})` : ""
          }: ${c.reason}`
        ).join("; ")
      }`,
    );
  }
  const at = new Map(stored.map((f, i) => [f.name, i]));
  const read = new Set<string>();
  const sources = target.map((to): Source => {
    const index = at.get(to.name);
    if (index === undefined) return { kind: "null" };
    read.add(to.name);
    const from = stored[index]!;
    return typeText(from) === typeText(to)
      ? { kind: "copy", index }
      : { kind: "cast", index, from, to };
  });
  return { target, read: stored.filter((f) => read.has(f.name)).map((f) => f.name), sources };
}

/**
 * The rows of `batches` (each holding the stored columns {@link Evolution.read} names,
 * in stored order) in the target schema.
 *
 * @param batches Stored rows.
 * @param evolution What {@link planEvolution} returned.
 * @returns The same rows in the target schema.
 */
export async function* evolveBatches(
  batches: AsyncIterable<Batch>,
  evolution: Evolution,
): AsyncGenerator<Batch> {
  for await (const batch of batches) {
    const byName = new Map(batch.schema.map((f, i) => [f.name, batch.columns[i]!]));
    const columns = evolution.sources.map((source, j) => {
      const to = evolution.target[j]!;
      if (source.kind === "null") {
        const column = emptyColumn(to, batch.length);
        return { ...column, validity: new Uint8Array(batch.length) } as Column;
      }
      const column = byName.get(to.name)!;
      return source.kind === "copy" ? column : cast(column, source.from, to, batch.length);
    });
    yield { schema: evolution.target, columns, length: batch.length };
  }
}

const TICKS_PER_SECOND: Readonly<Record<TimeUnit, bigint>> = {
  s: 1n,
  ms: 1_000n,
  us: 1_000_000n,
  ns: 1_000_000_000n,
};

/** One column in a type `planEvolution` found compatible. */
function cast(column: Column, from: Field, to: Field, rows: number): Column {
  const validity = column.validity;
  if (to.type === "string") {
    const values = new Array<string>(rows);
    for (let i = 0; i < rows; i++) values[i] = cellText(column, i, from) ?? "";
    return { type: "string", values, validity };
  }
  if (to.type === "decimal") {
    const scale = 10n ** BigInt(to.scale ?? 0);
    const source = column.values as BigInt64Array | bigint[];
    // int64 → decimal scales by 10^scale; decimal → decimal keeps the unscaled value.
    const factor = from.type === "int64" ? scale : 1n;
    if (isWideDecimal(to)) {
      const values = new Array<bigint>(rows);
      for (let i = 0; i < rows; i++) values[i] = BigInt(source[i]!) * factor;
      return { type: "decimal", values, validity };
    }
    const values = new BigInt64Array(rows);
    for (let i = 0; i < rows; i++) values[i] = BigInt(source[i]!) * factor;
    return { type: "decimal", values, validity };
  }
  if (to.type === "float64" || to.type === "float32") return widenFloat(column, to.type, rows);
  // Ticks to a finer unit, or days to a timestamp's ticks.
  const ticks = column.values as BigInt64Array;
  const factor = from.type === "date"
    ? 86_400n * TICKS_PER_SECOND[to.unit ?? "us"]
    : TICKS_PER_SECOND[to.unit ?? "us"] / TICKS_PER_SECOND[from.unit ?? "us"];
  const values = new BigInt64Array(rows);
  for (let i = 0; i < rows; i++) values[i] = ticks[i]! * factor;
  return { type: to.type as "timestamp", values, validity };
}

/**
 * float16 → float32 or float64, float32 → float64, bit for bit: a finite value is the
 * same number, and a NaN keeps its sign and payload (what IEEE 754 widening does; a
 * plain JS conversion would make every NaN the canonical one).
 */
function widenFloat(column: Column, to: "float32" | "float64", rows: number): Column {
  const validity = column.validity;
  const single = new Uint32Array(rows);
  if (column.type === "float16") {
    for (let i = 0; i < rows; i++) single[i] = float16BitsToFloat32Bits(column.values[i]!);
  } else {
    const f = column.values as Float32Array;
    single.set(new Uint32Array(f.buffer, f.byteOffset, rows));
  }
  if (to === "float32") {
    return { type: "float32", values: new Float32Array(single.buffer), validity };
  }
  const values = new Float64Array(rows);
  const words = new Uint32Array(values.buffer);
  const asFloat = new Float32Array(single.buffer);
  for (let i = 0; i < rows; i++) {
    const bits = single[i]!;
    if ((bits & 0x7f800000) === 0x7f800000 && (bits & 0x7fffff) !== 0) {
      // NaN: sign, all-ones exponent, the 23 payload bits at the top of the 52.
      words[2 * i + 1] = ((bits & 0x80000000) | 0x7ff00000 | ((bits & 0x7fffff) >>> 3)) >>> 0;
      words[2 * i] = ((bits & 7) << 29) >>> 0;
    } else values[i] = asFloat[i]!;
  }
  return { type: "float64", values, validity };
}

/**
 * Reads a target schema from JSON text: a list of fields, or the Arrow form with
 * `fields` (`audit`'s `stored_schema`).
 *
 * @param text The JSON.
 * @param name Where it came from, for messages.
 * @returns The schema.
 * @throws {OpsError} BAD_OPTION naming what is wrong.
 */
export function parseSchemaJson(text: string, name: string): Schema {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new OpsError("BAD_OPTION", `Cannot read the schema in ${name}: it is not JSON`, {
      cause,
    });
  }
  if (json !== null && typeof json === "object" && "fields" in json) {
    try {
      return schemaFromJson(json);
    } catch (cause) {
      throw new OpsError(
        "BAD_OPTION",
        `Cannot read the schema in ${name}: ${cause instanceof Error ? cause.message : cause}`,
        { cause },
      );
    }
  }
  if (!Array.isArray(json)) {
    throw new OpsError(
      "BAD_OPTION",
      `Cannot read the schema in ${name}: give a list of fields ([{"name": "id", "type": "int64", "nullable": false}, …]) or audit's stored_schema`,
    );
  }
  return json.map((f, i) => checkField(f, i, name));
}

const TYPES = new Set([
  "int64",
  "float64",
  "float32",
  "float16",
  "bool",
  "date",
  "timestamp",
  "string",
  "json",
  "decimal",
  "time",
  "duration",
]);

function checkField(f: unknown, i: number, name: string): Field {
  const bad = (why: string) =>
    new OpsError("BAD_OPTION", `Cannot read the schema in ${name}: field ${i} ${why}`);
  if (f === null || typeof f !== "object") throw bad("is not an object");
  const o = f as Record<string, unknown>;
  if (typeof o.name !== "string" || o.name === "") throw bad("has no name");
  if (typeof o.type !== "string" || !TYPES.has(o.type)) {
    throw bad(`('${o.name}') has type ${JSON.stringify(o.type)}: use ${[...TYPES].join(", ")}`);
  }
  const type = o.type as Field["type"];
  let unit: TimeUnit | undefined;
  if (o.unit !== undefined) {
    if (!["s", "ms", "us", "ns"].includes(String(o.unit))) throw bad(`has unit ${o.unit}`);
    unit = o.unit as TimeUnit;
  } else if (type === "timestamp" || type === "time" || type === "duration") {
    unit = "us";
  }
  if (type === "decimal" && (!Number.isInteger(o.precision) || !Number.isInteger(o.scale))) {
    throw bad(`('${o.name}') is a decimal without integer precision and scale`);
  }
  return {
    name: o.name,
    type,
    nullable: o.nullable !== false,
    ...(unit ? { unit } : {}),
    ...(typeof o.timezone === "string" ? { timezone: o.timezone } : {}),
    ...(type === "decimal" ? { precision: o.precision as number, scale: o.scale as number } : {}),
  };
}
