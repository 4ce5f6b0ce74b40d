/**
 * How two schemas differ, column by column, and whether each change is one a reader of
 * the old data can follow without changing a value (spec 1.2.1's schema evolution):
 *
 * - a column **added**: compatible when it is nullable (old rows read it as null);
 * - a column **removed**: compatible (it is dropped);
 * - a **type change**: compatible when every old value has one exact form in the new type:
 *   int64 → decimal with 19 integer digits or more, a decimal to a wider one with the same
 *   scale, float16 → float32 → float64, date → timestamp, a timestamp, time or duration to a
 *   finer unit, and anything →
 *   string; int64 → float64 is not (integers past 2^53 have no exact double), nor is any
 *   narrowing;
 * - **nullability**: not null → nullable is compatible, nullable → not null is not.
 *
 * @example Compare two schemas
 * ```ts
 * import assert from "node:assert/strict";
 * import { schemaDiff } from "./schema_diff.ts";
 * const a = [{ name: "id", type: "int64", nullable: false }] as const;
 * const b = [
 *   { name: "id", type: "string", nullable: false },
 *   { name: "note", type: "string", nullable: true },
 * ] as const;
 * const d = schemaDiff(a, b);
 * assert.deepEqual(d.changes.map((c) => [c.column, c.kind, c.compatible]), [
 *   ["id", "type_changed", true],
 *   ["note", "added", true],
 * ]);
 * assert.equal(d.compatible, true);
 * ```
 *
 * @module
 */
import type { Field, Schema, TimeUnit } from "../format/column.ts";

/** What kind of change a column went through. */
export type SchemaChangeKind = "added" | "removed" | "type_changed" | "nullability_changed";

/** One column's change. */
export interface SchemaChange {
  /** The column. */
  column: string;
  /** What changed. */
  kind: SchemaChangeKind;
  /** Its type before (`decimal(10,2)`, `timestamp[ms, UTC]`, …), null when added. */
  from: string | null;
  /** Its type after, null when removed. */
  to: string | null;
  /** Whether old data can be read in the new schema without changing a value. */
  compatible: boolean;
  /** Why, in a sentence. */
  reason: string;
}

/** What {@link schemaDiff} found. */
export interface SchemaDiff {
  /** Every change, in the order of `a`'s columns, then the added ones in `b`'s order. */
  changes: SchemaChange[];
  /** Whether the columns the two schemas share come in another order. */
  reordered: boolean;
  /** Whether every change is compatible. */
  compatible: boolean;
}

const UNIT_RANK: Readonly<Record<TimeUnit, number>> = { s: 0, ms: 1, us: 2, ns: 3 };

/**
 * A column's type in words (`int64`, `decimal(10,2)`, `timestamp[ms, UTC]`).
 *
 * @param f The column.
 * @returns Its type's text.
 */
export function typeText(f: Field): string {
  switch (f.type) {
    case "decimal":
      return `decimal(${f.precision},${f.scale})`;
    case "timestamp":
      return `timestamp[${f.unit ?? "us"}${f.timezone ? `, ${f.timezone}` : ""}]`;
    case "time":
    case "duration":
      return `${f.type}[${f.unit ?? "us"}]`;
    default:
      return f.type;
  }
}

/** Whether every value of `from` has one exact form in `to`, and why. */
function castable(from: Field, to: Field): { ok: boolean; reason: string } {
  if (to.type === "string") return { ok: true, reason: "every value has a text form" };
  if (from.type === "int64" && to.type === "decimal") {
    const digits = (to.precision ?? 0) - (to.scale ?? 0);
    return digits >= 19 ? { ok: true, reason: "every int64 fits the decimal's integer digits" } : {
      ok: false,
      reason:
        `an int64 needs 19 integer digits, decimal(${to.precision},${to.scale}) has ${digits}`,
    };
  }
  if (from.type === "decimal" && to.type === "decimal") {
    const ok = to.scale === from.scale && (to.precision ?? 0) >= (from.precision ?? 0);
    return ok
      ? { ok, reason: "the same scale with as many digits or more" }
      : { ok, reason: "a smaller precision or another scale would change or refuse values" };
  }
  if (from.type === "date" && to.type === "timestamp" && to.timezone === undefined) {
    return { ok: true, reason: "a date is its midnight" };
  }
  if (
    (from.type === "timestamp" || from.type === "time" || from.type === "duration") &&
    to.type === from.type && from.timezone === to.timezone
  ) {
    const ok = UNIT_RANK[to.unit ?? "us"] >= UNIT_RANK[from.unit ?? "us"];
    return ok
      ? { ok, reason: "a finer unit holds every coarser tick" }
      : { ok, reason: "a coarser unit would round values" };
  }
  const width: Partial<Record<string, number>> = { float16: 16, float32: 32, float64: 64 };
  const [fromBits, toBits] = [width[from.type], width[to.type]];
  if (fromBits !== undefined && toBits !== undefined) {
    return toBits >= fromBits
      ? { ok: true, reason: "a wider float holds every value exactly, NaN payloads too" }
      : { ok: false, reason: `a ${to.type} would round ${from.type} values` };
  }
  if (from.type === "int64" && to.type === "float64") {
    return { ok: false, reason: "integers past 2^53 have no exact float64" };
  }
  return {
    ok: false,
    reason: `no value-preserving cast from ${typeText(from)} to ${typeText(to)}`,
  };
}

/**
 * Compares two schemas.
 *
 * @param a The old schema.
 * @param b The new schema.
 * @returns Each change with whether it is compatible.
 */
export function schemaDiff(a: Schema, b: Schema): SchemaDiff {
  const inB = new Map(b.map((f) => [f.name, f]));
  const inA = new Map(a.map((f) => [f.name, f]));
  const changes: SchemaChange[] = [];
  for (const f of a) {
    const g = inB.get(f.name);
    if (!g) {
      changes.push({
        column: f.name,
        kind: "removed",
        from: typeText(f),
        to: null,
        compatible: true,
        reason: "the column is dropped",
      });
      continue;
    }
    if (typeText(f) !== typeText(g)) {
      const { ok, reason } = castable(f, g);
      changes.push({
        column: f.name,
        kind: "type_changed",
        from: typeText(f),
        to: typeText(g),
        compatible: ok,
        reason,
      });
    }
    if (f.nullable !== g.nullable) {
      changes.push({
        column: f.name,
        kind: "nullability_changed",
        from: f.nullable ? "nullable" : "not null",
        to: g.nullable ? "nullable" : "not null",
        compatible: g.nullable,
        reason: g.nullable ? "nulls become allowed" : "old rows may hold nulls",
      });
    }
  }
  for (const g of b) {
    if (inA.has(g.name)) continue;
    changes.push({
      column: g.name,
      kind: "added",
      from: null,
      to: typeText(g),
      compatible: g.nullable,
      reason: g.nullable
        ? "old rows read it as null"
        : "old rows have no value for a not-null column",
    });
  }
  const shared = (s: Schema, other: Map<string, Field>) =>
    s.filter((f) => other.has(f.name)).map((f) => f.name).join("\u0000");
  return {
    changes,
    reordered: shared(a, inB) !== shared(b, inA),
    compatible: changes.every((c) => c.compatible),
  };
}
