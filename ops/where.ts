/**
 * `--where`: a small filter language over one archive's columns, compiled once
 * against the schema into two checks — `mayMatch` on a chunk's footer statistics
 * (min, max, null count: prunes chunks before any block is read) and `mask` on
 * decoded rows (exact).
 *
 * Grammar (keywords case-insensitive):
 * ```
 * expr      := and ("or" and)*
 * and       := unary ("and" unary)*
 * unary     := "not" unary | "(" expr ")" | predicate
 * predicate := column op value | column ["not"] "in" "(" value ("," value)* ")"
 *            | column "is" ["not"] "null"
 * op        := = | == | != | <> | < | <= | > | >=
 * column    := bare word | "double quoted" | `backticked`
 * value     := bare word | 'single quoted' ('' is a quote)
 * ```
 * A value is read as the column's type: integers and decimals for int64
 * (`x > 5.5` means `x >= 6`), numbers and `inf`/`-inf` for float64, `true`/
 * `false` for bool, text for strings (compared by UTF-16 code units, as the
 * statistics are), `YYYY-MM-DD` or an ISO timestamp for dates and timestamps,
 * exact decimals for decimal columns (`price > 9.995` on a scale-2 column means
 * `price >= 10.00`), `HH:MM:SS[.fff]` for times, ISO 8601 `PT1H30M` for durations.
 * A json column takes only `is [not] null`: JSON text has many spellings of one
 * value, so comparing it as text would miss rows silently.
 * A timestamp literal without `Z` or an offset is read as UTC, the way stored
 * ticks count; one finer than the column's unit compares exactly
 * (`ts > 10:00:00.5` on a seconds column means `ts >= 10:00:01`).
 *
 * Nulls follow SQL's three-valued logic: a comparison with a null is unknown,
 * `not unknown` is unknown, and only rows whose predicate is true are kept. A
 * float NaN behaves like a null in comparisons (it matches none, nor their
 * negation); `is null` matches real nulls only.
 *
 * Pure: no I/O. A bad expression is `OpsError` BAD_OPTION saying what to fix.
 *
 * @module
 */
import type { Batch, Column, ColumnType, Field, Schema } from "../format/column.ts";
import { FLOAT_TYPES } from "../format/column.ts";
import { float16ToNumber, numberToFloat16 } from "../format/float16.ts";
import type { ColumnStats } from "../format/header.ts";
import {
  parseDuration,
  parseTimeOfDay,
  scanTimestamp,
  TICKS_PER_SECOND,
  timestampParts,
} from "../io/_parse.ts";
import {
  bad,
  MAX_WHERE_DEPTH,
  parseWhere,
  type WhereLiteral,
  type WhereNode,
  type WhereOp,
} from "./_where_syntax.ts";

export { MAX_WHERE_DEPTH, parseWhere } from "./_where_syntax.ts";
export type { WhereLiteral, WhereNode, WhereOp } from "./_where_syntax.ts";

/** Which truth values a predicate can take over a chunk (three-valued logic). */
interface Possible {
  /** Some row may be true. */
  t: boolean;
  /** Some row may be false. */
  f: boolean;
  /** Some row may be unknown (null). */
  u: boolean;
}

/** A `--where` expression checked against a schema. */
export interface CompiledWhere {
  /** The expression as given. */
  readonly text: string;
  /** Columns it reads, in schema order. */
  readonly columns: readonly string[];
  /**
   * Whether a chunk (or partition) with these statistics may hold a matching row.
   *
   * @param stats Statistics of a column by name; `undefined` when unknown.
   * @param rows Rows the statistics cover.
   */
  mayMatch(stats: (column: string) => ColumnStats | undefined, rows: number): boolean;
  /**
   * One byte per row, 1 where the predicate is true.
   *
   * @param batch Rows holding (at least) `columns`, found by name.
   */
  mask(batch: Batch): Uint8Array;
}

// Truth values of the row evaluation.
const F = 0;
const T = 1;
const U = 2;

// ---------------------------------------------------------------------------
// Compiling against a schema

/** A value in the comparison domain of its column (bigint for int64/timestamp/date, 0/1 for bool). */
type Value = bigint | number | string;

/** A leaf after literals are read: ops on one column in its own domain. */
type Leaf =
  | { kind: "cmp"; col: number; op: WhereOp | "never" | "always"; v: Value }
  | { kind: "in"; col: number; set: Set<Value>; list: Value[]; negated: boolean }
  | { kind: "null"; col: number; negated: boolean };

type Bound = Leaf | { kind: "and" | "or"; args: Bound[] } | { kind: "not"; arg: Bound };

/**
 * Checks a `--where` expression against a schema and compiles it.
 *
 * @param where The expression text, or a tree from `parseWhere`.
 * @param schema The archive's schema.
 * @returns The compiled filter.
 * @throws {OpsError} BAD_OPTION for a syntax error, an unknown column or a value
 * that is not of the column's type.
 *
 * @example Prune a chunk by its statistics, then filter rows
 * ```ts
 * import assert from "node:assert/strict";
 * import { compileWhere } from "./where.ts";
 * const schema = [{ name: "n", type: "int64" as const, nullable: true }];
 * const w = compileWhere("n > 5.5", schema);
 * assert.equal(w.mayMatch(() => ({ min: "0", max: "5", null_count: 0 }), 10), false);
 * const batch = { schema, columns: [{ type: "int64" as const, values: BigInt64Array.of(5n, 6n), validity: null }], length: 2 };
 * assert.deepEqual([...w.mask(batch)], [0, 1]);
 * ```
 */
export function compileWhere(where: string | WhereNode, schema: Schema): CompiledWhere {
  const text = typeof where === "string" ? where : "(expression)";
  const tree = typeof where === "string" ? parseWhere(where) : where;
  const used = new Set<number>();
  const bind = (n: WhereNode, depth: number): Bound => {
    if (depth > MAX_WHERE_DEPTH) {
      throw bad(text, `it nests more than ${MAX_WHERE_DEPTH} deep; write it flatter`);
    }
    switch (n.kind) {
      case "and":
      case "or":
        return { kind: n.kind, args: n.args.map((a) => bind(a, depth + 1)) };
      case "not":
        return { kind: "not", arg: bind(n.arg, depth + 1) };
      default: {
        const col = schema.findIndex((f) => f.name === n.column);
        if (col < 0) {
          throw bad(
            text,
            `no column "${n.column}"; the columns are ${
              schema.map((f) => `"${f.name}"`).join(", ")
            }`,
          );
        }
        used.add(col);
        const field = schema[col]!;
        if (n.kind === "null") return { kind: "null", col, negated: n.negated };
        if (field.type === "json") {
          throw bad(
            text,
            `json column "${field.name}" can only be tested with is null / is not null`,
          );
        }
        if (n.kind === "in") {
          const list: Value[] = [];
          for (const lit of n.values) {
            const r = readLiteral(field, lit, text);
            if (r.exact) list.push(r.value);
          }
          return { kind: "in", col, set: new Set(list), list, negated: n.negated };
        }
        const r = readLiteral(field, n.value, text);
        return { kind: "cmp", col, op: exactOp(n.op, r.exact), v: r.value };
      }
    }
  };
  const root = bind(tree, 0);
  const columns = [...used].sort((a, b) => a - b).map((i) => schema[i]!.name);
  const types = schema.map((f) => f.type);
  return {
    text,
    columns,
    mayMatch(stats, rows) {
      return possible(root, types, schema, stats, rows).t;
    },
    mask(batch) {
      const byCol = new Map<number, Column>();
      for (const i of used) {
        const name = schema[i]!.name;
        const j = batch.schema.findIndex((f) => f.name === name);
        if (j < 0) throw new Error(`mask(): the batch lacks column "${name}"`);
        byCol.set(i, batch.columns[j]!);
      }
      const truth = evaluate(root, byCol, batch.length);
      const out = new Uint8Array(batch.length);
      for (let i = 0; i < out.length; i++) out[i] = truth[i] === T ? 1 : 0;
      return out;
    },
  };
}

/**
 * Rewrites an operator for an integer domain when the literal fell between two
 * integers (`exact` false): the literal's floor is the value compared.
 */
function exactOp(op: WhereOp, exact: boolean): WhereOp | "never" | "always" {
  if (exact) return op;
  switch (op) {
    case "=":
      return "never";
    case "!=":
      return "always";
    case "<":
      return "<=";
    case ">=":
      return ">";
    default:
      return op;
  }
}

interface Read {
  value: Value;
  /** False when the literal lies strictly between two values of an integer domain (value is its floor). */
  exact: boolean;
}

const INT_RE = /^[+-]?\d+$/;
const DECIMAL_RE = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

function readLiteral(field: Field, lit: WhereLiteral, text: string): Read {
  const s = lit.text.trim();
  const fail = (expected: string) =>
    bad(
      text,
      `cannot compare ${field.type} column "${field.name}" with '${lit.text}': expected ${expected}`,
    );
  switch (field.type) {
    case "string":
      return { value: lit.text, exact: true };
    case "bool": {
      const l = s.toLowerCase();
      if (l === "true" || l === "1") return { value: 1, exact: true };
      if (l === "false" || l === "0") return { value: 0, exact: true };
      throw fail("true or false");
    }
    case "float64":
    case "float32":
    case "float16": {
      // A float32/float16 column compares with the literal read as its own type, as its
      // values are read and shown (`price = 100.51` finds the float32 100.51).
      const l = s.toLowerCase();
      if (l === "inf" || l === "+inf" || l === "infinity" || l === "+infinity") {
        return { value: Infinity, exact: true };
      }
      if (l === "-inf" || l === "-infinity") return { value: -Infinity, exact: true };
      if (l === "nan") {
        throw bad(
          text,
          `NaN matches no comparison (column "${field.name}"); NaN values are never kept by a comparison`,
        );
      }
      const m = DECIMAL_RE.exec(s);
      if (!m || (m[2] === "" && (m[3] ?? "") === "")) throw fail("a number");
      const x = Number(s);
      if (field.type === "float32") return { value: Math.fround(x), exact: true };
      if (field.type === "float16") {
        return { value: float16ToNumber(numberToFloat16(x)), exact: true };
      }
      return { value: x, exact: true };
    }
    case "int64": {
      if (INT_RE.test(s)) return { value: BigInt(s), exact: true };
      const r = decimalFloor(s);
      if (!r) throw fail("a number");
      return { value: r.floor, exact: r.exact };
    }
    case "decimal": {
      // Compared as unscaled integers: the literal times 10^scale, floored.
      const r = decimalFloor(s, field.scale ?? 0);
      if (!r) throw fail("a number");
      return { value: r.floor, exact: r.exact };
    }
    case "time":
    case "duration": {
      const ns = field.type === "time" ? parseTimeOfDay(s, "ns") : parseDuration(s, "ns");
      if (ns === null) {
        throw fail(field.type === "time" ? "a time like 13:45:00" : "a duration like PT1H30M");
      }
      const per = 1_000_000_000n / BigInt(TICKS_PER_SECOND[field.unit ?? "us"]);
      const floor = floorDiv(ns, per);
      return { value: floor, exact: floor * per === ns };
    }
    case "json":
      throw fail("is null or is not null");
    case "date":
    case "timestamp": {
      const parts = timestampParts();
      if (!scanTimestamp(s, 0, s.length, parts)) {
        throw fail(
          field.type === "date"
            ? "a date like 2001-02-01"
            : "a date or timestamp like 2001-02-01 or 2001-02-01T10:00:00Z (quote it if it holds a space)",
        );
      }
      // Exact instant in nanoseconds, then floor to the column's tick.
      const ns = BigInt(parts.seconds) * 1_000_000_000n + BigInt(parts.nanos);
      const per = field.type === "date"
        ? 86_400_000_000_000n
        : 1_000_000_000n / BigInt(TICKS_PER_SECOND[field.unit ?? "us"]);
      const floor = floorDiv(ns, per);
      return { value: floor, exact: floor * per === ns };
    }
  }
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
}

/**
 * Floor of a decimal literal (`-2.5e3`) times 10^`scale`, exactly; null when it is
 * not one.
 */
function decimalFloor(s: string, scale = 0): { floor: bigint; exact: boolean } | null {
  const m = DECIMAL_RE.exec(s);
  if (!m) return null;
  const [, sign, whole = "", frac = "", expText] = m;
  if (whole === "" && frac === "") return null;
  const exp = Number(expText ?? "0") - frac.length + scale;
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 4000) return null;
  let num = BigInt((whole + frac) || "0");
  if (sign === "-") num = -num;
  if (exp >= 0) return { floor: num * 10n ** BigInt(exp), exact: true };
  const den = 10n ** BigInt(-exp);
  const floor = floorDiv(num, den);
  return { floor, exact: floor * den === num };
}

// ---------------------------------------------------------------------------
// Pruning on statistics

const NONE: Possible = { t: false, f: false, u: false };

function possible(
  n: Bound,
  types: readonly ColumnType[],
  schema: Schema,
  stats: (column: string) => ColumnStats | undefined,
  rows: number,
): Possible {
  switch (n.kind) {
    case "and": {
      // Conservative: each arg's possibilities, combined as if independent.
      let acc: Possible = { t: true, f: false, u: false };
      for (const a of n.args) {
        const p = possible(a, types, schema, stats, rows);
        acc = {
          t: acc.t && p.t,
          f: acc.f || p.f,
          u: (acc.u && (p.t || p.u)) || (p.u && (acc.t || acc.u)),
        };
      }
      return acc;
    }
    case "or": {
      let acc: Possible = { t: false, f: true, u: false };
      for (const a of n.args) {
        const p = possible(a, types, schema, stats, rows);
        acc = {
          t: acc.t || p.t,
          f: acc.f && p.f,
          u: (acc.u && (p.f || p.u)) || (p.u && (acc.f || acc.u)),
        };
      }
      return acc;
    }
    case "not": {
      const p = possible(n.arg, types, schema, stats, rows);
      return { t: p.f, f: p.t, u: p.u };
    }
    default:
      return leafPossible(n, types[n.col]!, stats(schema[n.col]!.name), rows);
  }
}

function statValue(type: ColumnType, v: ColumnStats["min"]): Value | null {
  if (v === null || v === undefined) return null;
  switch (type) {
    case "int64":
    case "timestamp":
    case "date":
    case "time":
    case "duration":
    case "decimal":
      try {
        return BigInt(v as string);
      } catch {
        return null;
      }
    case "float64":
    case "float32":
    case "float16": {
      const x = Number(v);
      return Number.isNaN(x) ? null : x;
    }
    case "bool":
      return v === true ? 1 : 0;
    case "string":
    case "json":
      return typeof v === "string" ? v : null;
  }
}

function leafPossible(
  n: Leaf,
  type: ColumnType,
  s: ColumnStats | undefined,
  rows: number,
): Possible {
  if (rows <= 0) return NONE;
  if (!s) return { t: true, f: true, u: true };
  const nulls = Math.min(s.null_count, rows);
  const present = rows - nulls;
  if (n.kind === "null") {
    const isNull = { t: nulls > 0, f: present > 0, u: false };
    return n.negated ? { t: isNull.f, f: isNull.t, u: false } : isNull;
  }
  if (present === 0) return { t: false, f: false, u: true };
  // NaN is unknown in comparisons, and the statistics cannot tell whether a chunk holds one.
  const u = nulls > 0 || type === "float64";
  const lo = statValue(type, s.min);
  const hi = statValue(type, s.max);
  if (type === "float64" && lo === null && hi === null) return { t: false, f: false, u: true };
  // Unknown bounds (long strings) are open ends.
  const ge = (a: Value | null, b: Value) => a === null ? true : a >= b; // a >= b possible
  const le = (a: Value | null, b: Value) => a === null ? true : a <= b;
  const single = lo !== null && hi !== null && lo === hi;
  const inRange = (v: Value) => (lo === null || lo <= v) && (hi === null || v <= hi);
  if (n.kind === "in") {
    const anyIn = n.list.some(inRange);
    const allIn = single && n.set.has(lo!);
    const p = { t: anyIn, f: !allIn, u };
    return n.negated ? { t: p.f, f: p.t, u } : p;
  }
  const v = n.v;
  switch (n.op) {
    case "never":
      return { t: false, f: true, u };
    case "always":
      return { t: true, f: false, u };
    case "=":
      return { t: inRange(v), f: !(single && lo === v), u };
    case "!=":
      return { t: !(single && lo === v), f: inRange(v), u };
    case "<":
      return { t: lo === null || lo < v, f: ge(hi, v), u };
    case "<=":
      return { t: le(lo, v), f: hi === null || hi > v, u };
    case ">":
      return { t: hi === null || hi > v, f: le(lo, v), u };
    case ">=":
      return { t: ge(hi, v), f: lo === null || lo < v, u };
  }
}

// ---------------------------------------------------------------------------
// Row evaluation

function evaluate(n: Bound, cols: Map<number, Column>, length: number): Uint8Array {
  switch (n.kind) {
    case "and":
    case "or": {
      const out = evaluate(n.args[0]!, cols, length);
      const winner = n.kind === "and" ? F : T;
      for (let k = 1; k < n.args.length; k++) {
        const b = evaluate(n.args[k]!, cols, length);
        for (let i = 0; i < length; i++) {
          const a = out[i]!;
          if (a === winner) continue;
          const x = b[i]!;
          out[i] = x === winner ? winner : (a === U || x === U) ? U : a;
        }
      }
      return out;
    }
    case "not": {
      const out = evaluate(n.arg, cols, length);
      for (let i = 0; i < length; i++) out[i] = out[i] === U ? U : out[i] === T ? F : T;
      return out;
    }
    default:
      return evaluateLeaf(n, cols.get(n.col)!, length);
  }
}

function evaluateLeaf(n: Leaf, column: Column, length: number): Uint8Array {
  const out = new Uint8Array(length);
  const validity = column.validity;
  if (n.kind === "null") {
    const hit = n.negated ? F : T;
    const miss = n.negated ? T : F;
    for (let i = 0; i < length; i++) out[i] = validity && validity[i] === 0 ? hit : miss;
    return out;
  }
  const values = column.type === "float16"
    ? Float64Array.from(column.values, float16ToNumber)
    : column.values as ArrayLike<Value>;
  const isFloat = FLOAT_TYPES.has(column.type);
  const test = leafTest(n);
  for (let i = 0; i < length; i++) {
    if (validity && validity[i] === 0) {
      out[i] = U;
      continue;
    }
    const x = values[i]!;
    if (isFloat && x !== x) {
      out[i] = U;
      continue;
    }
    out[i] = test(x) ? T : F;
  }
  return out;
}

function leafTest(n: Exclude<Leaf, { kind: "null" }>): (x: Value) => boolean {
  if (n.kind === "in") {
    const set = n.set;
    return n.negated ? (x) => !set.has(x) : (x) => set.has(x);
  }
  const v = n.v;
  switch (n.op) {
    case "never":
      return () => false;
    case "always":
      return () => true;
    case "=":
      return (x) => x === v;
    case "!=":
      return (x) => x !== v;
    case "<":
      return (x) => x < v;
    case "<=":
      return (x) => x <= v;
    case ">":
      return (x) => x > v;
    case ">=":
      return (x) => x >= v;
  }
}
