import assert from "node:assert/strict";
import { ALL_TYPES, prng, randomBatch } from "../format/_test_utils.ts";
import { formatDecimal } from "../format/decimal_value.ts";
import { formatDuration, formatTime } from "../io/_format.ts";
import { type Batch, cellValue, type Field, type Schema } from "../format/column.ts";
import { ArchiveReader } from "../format/reader.ts";
import { OpsError } from "./errors.ts";
import { freeze } from "./freeze.ts";
import { thaw, thawTable } from "./thaw.ts";
import { newCounters, scanArchive } from "./_scan.ts";
import { compileWhere, MAX_WHERE_DEPTH, parseWhere, type WhereNode } from "./where.ts";

const TMP = ".tmp/ops_where";
await Deno.mkdir(TMP, { recursive: true });

// A reference evaluator written independently of where.ts: one row at a time,
// over plain JS values, three-valued (null = unknown).
type Ref = (row: (bigint | number | boolean | string | null)[]) => boolean | null;
type Case = { text: string; ref: Ref };

const SCHEMA: Schema = [{ name: "id", type: "int64", nullable: false }, ...ALL_TYPES];

function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

function isoMicros(us: bigint): string {
  const ms = us / 1000n - (us % 1000n < 0n ? 1n : 0n);
  const frac = us - ms * 1000n;
  const base = new Date(Number(ms)).toISOString(); // ...ss.mmmZ
  return base.slice(0, 23) + String(frac).padStart(3, "0") + "Z";
}

function isoDate(days: number): string {
  return new Date(days * 86_400_000).toISOString().slice(0, 10);
}

type Cell = bigint | number | boolean | string;
type Literal = { lit: string; cmp: (x: Cell) => number };

/** A random literal for column c (often one of its values), with cmp(cell) → -1/0/1 against it. */
function randomLiteral(c: number, batch: Batch, rand: () => number): Literal {
  const pickInt = (n: number) => Math.floor(rand() * n);
  const field = SCHEMA[c]!;
  const col = batch.columns[c]!;
  const sample = () => cellValue(col, pickInt(batch.length));
  const order = <T>(x: T, v: T) => (x < v ? -1 : x > v ? 1 : 0);
  switch (field.type) {
    case "int64": {
      let v = sample() as bigint | null;
      if (v === null || rand() < 0.2) v = BigInt(pickInt(4000) - 2000);
      const half = rand() < 0.3;
      // Compare in halves: the literal v.5 is 2v+1 halves.
      const twice = 2n * v + (half ? 1n : 0n);
      const lit = !half ? `${v}` : v >= 0n ? `${v}.5` : `-${-v - 1n}.5`;
      return { lit, cmp: (x) => order(2n * (x as bigint), twice) };
    }
    case "float64":
    case "float32":
    case "float16": {
      let v = sample() as number | null;
      if (v === null || Number.isNaN(v) || rand() < 0.2) v = (rand() - 0.5) * 1e6;
      const lit = v === Infinity ? "inf" : v === -Infinity ? "-inf" : String(v);
      return { lit, cmp: (x) => order(x as number, v) };
    }
    case "bool": {
      const v = rand() < 0.5;
      return { lit: String(v), cmp: (x) => Number(x) - Number(v) };
    }
    case "string": {
      let v = sample() as string | null;
      if (v === null || rand() < 0.2) v = ["a", "k3", "", "zz", "héllo"][pickInt(5)]!;
      return { lit: sqlString(v), cmp: (x) => order(x as string, v) };
    }
    case "timestamp": {
      let v = sample() as bigint | null;
      if (v === null || rand() < 0.2) {
        v = 1_600_000_000_000_000n + BigInt(pickInt(1e6)) * 60_000_000n;
      }
      if (rand() < 0.3) v += BigInt(pickInt(120) - 60) * 1_000_000n + BigInt(pickInt(3));
      const iso = isoMicros(v);
      return {
        lit: rand() < 0.5 ? iso : sqlString(iso.replace("T", " ")),
        cmp: (x) => order(x as bigint, v),
      };
    }
    case "decimal": {
      let v = sample() as bigint | null;
      if (v === null || rand() < 0.2) v = BigInt(pickInt(4000) - 2000);
      const half = rand() < 0.3;
      // Compare in halves of the last digit: the literal with a trailing 5 is 2v+1 halves.
      const twice = 2n * v + (half ? 1n : 0n);
      const scale = field.scale ?? 0;
      const lit = half ? formatDecimal(10n * v + 5n, scale + 1) : formatDecimal(v, scale);
      return { lit, cmp: (x) => order(2n * (x as bigint), twice) };
    }
    case "time":
    case "duration": {
      let v = sample() as bigint | null;
      if (v === null || rand() < 0.2) v = BigInt(pickInt(86_400_000)) * 1000n;
      const unit = field.unit ?? "us";
      const lit = field.type === "time" ? formatTime(v, unit) : formatDuration(v, unit);
      return { lit: sqlString(lit), cmp: (x) => order(x as bigint, v) };
    }
    case "json":
      throw new Error("json columns take no literal");
    case "date": {
      let v = sample() as bigint | null;
      if (v === null || rand() < 0.2) v = BigInt(pickInt(40000) - 5000);
      const noon = rand() < 0.3;
      // Compare in half days: a date d is 2d, the literal at noon 2v+1.
      const twice = 2n * v + (noon ? 1n : 0n);
      return {
        lit: isoDate(Number(v)) + (noon ? "T12:00:00Z" : ""),
        cmp: (x) => order(2n * (x as bigint), twice),
      };
    }
  }
}

/** A random leaf predicate on one column, with its reference. */
function randomLeaf(batch: Batch, rand: () => number): Case {
  const c = Math.floor(rand() * SCHEMA.length);
  const field = SCHEMA[c]!;
  const name = rand() < 0.2 ? `"${field.name}"` : field.name;
  const r = rand();
  if (r < 0.1 || field.type === "json") {
    const neg = rand() < 0.5;
    return { text: `${name} is ${neg ? "not " : ""}null`, ref: (row) => (row[c] === null) !== neg };
  }
  const unknown = (x: unknown) => x === null || (typeof x === "number" && Number.isNaN(x));
  if (r < 0.25) {
    const neg = rand() < 0.4;
    const list = Array.from(
      { length: 1 + Math.floor(rand() * 3) },
      () => randomLiteral(c, batch, rand),
    );
    return {
      text: `${name} ${neg ? "NOT IN" : "in"} (${list.map((l) => l.lit).join(", ")})`,
      ref: (row) => {
        const x = row[c]!;
        if (unknown(x)) return null;
        const hit = list.some((l) => l.cmp(x as Cell) === 0);
        return neg ? !hit : hit;
      },
    };
  }
  const { lit, cmp } = randomLiteral(c, batch, rand);
  const ops = ["=", "!=", "<", "<=", ">", ">=", "==", "<>"] as const;
  const op = ops[Math.floor(rand() * ops.length)]!;
  return {
    text: `${name} ${op} ${lit}`,
    ref: (row) => {
      const x = row[c]!;
      if (unknown(x)) return null;
      const d = cmp(x as Cell);
      switch (op) {
        case "=":
        case "==":
          return d === 0;
        case "!=":
        case "<>":
          return d !== 0;
        case "<":
          return d < 0;
        case "<=":
          return d <= 0;
        case ">":
          return d > 0;
        case ">=":
          return d >= 0;
      }
    },
  };
}

function randomExpr(batch: Batch, rand: () => number, depth = 0): Case {
  const r = rand();
  if (depth >= 3 || r < 0.45) return randomLeaf(batch, rand);
  if (r < 0.55) {
    const inner = randomExpr(batch, rand, depth + 1);
    return {
      text: `not (${inner.text})`,
      ref: (row) => (inner.ref(row) === null ? null : !inner.ref(row)),
    };
  }
  const a = randomExpr(batch, rand, depth + 1);
  const b = randomExpr(batch, rand, depth + 1);
  const and = r < 0.8;
  return {
    text: `(${a.text}) ${and ? (rand() < 0.5 ? "and" : "AND") : "or"} (${b.text})`,
    ref: (row) => {
      const x = a.ref(row);
      const y = b.ref(row);
      if (and) return x === false || y === false ? false : x === null || y === null ? null : true;
      return x === true || y === true ? true : x === null || y === null ? null : false;
    },
  };
}

function withIds(batch: Batch): Batch {
  const ids = new BigInt64Array(batch.length);
  for (let i = 0; i < ids.length; i++) ids[i] = BigInt(i);
  return {
    schema: SCHEMA,
    columns: [{ type: "int64", values: ids, validity: null }, ...batch.columns],
    length: batch.length,
  };
}

function rowsOf(batch: Batch): (bigint | number | boolean | string | null)[][] {
  const rows = [];
  for (let r = 0; r < batch.length; r++) rows.push(batch.columns.map((c) => cellValue(c, r)));
  return rows;
}

Deno.test("compileWhere() agrees with a full-scan reference on random tables and predicates, pruning included", async () => {
  let pruned = 0;
  let cases = 0;
  for (const seed of [1, 2, 3]) {
    const batch = withIds(randomBatch(ALL_TYPES, 1500, seed, 0.15));
    const path = `${TMP}/random_${seed}.pf`;
    await freeze({ schema: SCHEMA, batches: [batch] }, path, { chunkRows: 100, threads: 0 });
    const rows = rowsOf(batch);
    const rand = prng(seed * 7919);
    const reader = await ArchiveReader.open(path);
    try {
      for (let k = 0; k < 120; k++) {
        const c = randomExpr(batch, rand);
        const expected = rows.filter((row) => c.ref(row) === true).map((row) => row[0]);
        const where = compileWhere(c.text, SCHEMA);
        const mask = where.mask(batch);
        const inMemory = rows.filter((_, i) => mask[i] === 1).map((row) => row[0]);
        assert.deepEqual(inMemory, expected, `mask of: ${c.text}`);
        const counters = newCounters();
        const got: unknown[] = [];
        for await (const b of scanArchive(reader, { where: c.text, columns: ["id"] }, counters)) {
          for (let i = 0; i < b.length; i++) got.push(cellValue(b.columns[0]!, i));
        }
        assert.deepEqual(got, expected, `archive scan of: ${c.text}`);
        pruned += counters.chunks_pruned;
        cases++;
      }
    } finally {
      reader.close();
    }
  }
  assert.equal(cases, 360);
  assert.ok(pruned > 0, "some chunks were pruned by their statistics");
});

Deno.test("parseWhere() refuses bad expressions with a BAD_OPTION saying what to fix", async (t) => {
  const cases: [string, RegExp][] = [
    ["", /empty --where/],
    ["delay >", /expected a value, found the end/],
    [
      "delay ~ 5",
      /expected an operator \(= != < <= > >=\), 'in', 'not in' or 'is' after column "delay"/,
    ],
    ["delay = null", /use 'is null'/],
    ["(delay = 1", /expected '\)' to close/],
    ["delay in (1, 2", /expected ',' or '\)' in the 'in' list/],
    ["origin = 'SFO", /never closed/],
    ["delay > 1 delay < 3", /join conditions with 'and' or 'or'/],
    ["delay is 5", /expected 'null' after 'is'/],
    ["and = 1", /expected a column name/],
  ];
  for (const [text, message] of cases) {
    await t.step(JSON.stringify(text), () => {
      assert.throws(
        () => parseWhere(text),
        (e) => e instanceof OpsError && e.code === "BAD_OPTION" && message.test(e.message),
      );
    });
  }
});

Deno.test("compileWhere() names unknown columns and literals of the wrong type", () => {
  const schema: Schema = [
    { name: "n", type: "int64", nullable: true },
    { name: "t", type: "timestamp", nullable: true, unit: "s" },
  ];
  assert.throws(() => compileWhere("m = 1", schema), /no column "m"; the columns are "n", "t"/);
  assert.throws(
    () => compileWhere("n > ten", schema),
    /int64 column "n" with 'ten': expected a number/,
  );
  assert.throws(
    () => compileWhere("t < yesterday", schema),
    /expected a date or timestamp like 2001-02-01/,
  );
});

function oneColumn(field: Field, values: bigint[]): Batch {
  return {
    schema: [field],
    columns: [{ type: field.type as "int64", values: BigInt64Array.from(values), validity: null }],
    length: values.length,
  };
}

Deno.test("compileWhere() reads timestamp and date literals exactly, in UTC unless an offset is given", () => {
  const ts: Field = { name: "t", type: "timestamp", nullable: false, unit: "s" };
  const base = BigInt(Date.UTC(2001, 1, 1, 10, 0, 0) / 1000);
  const batch = oneColumn(ts, [base - 1n, base, base + 1n]);
  const hits = (text: string) => [...compileWhere(text, [ts]).mask(batch)];
  assert.deepEqual(hits("t >= 2001-02-01T10:00:00Z"), [0, 1, 1]);
  assert.deepEqual(hits("t > '2001-02-01 10:00:00'"), [0, 0, 1]);
  assert.deepEqual(
    hits("t > 2001-02-01T09:59:59.5Z"),
    [0, 1, 1],
    "sub-second literal on a seconds column",
  );
  assert.deepEqual(hits("t = 2001-02-01T09:59:59.5Z"), [0, 0, 0]);
  assert.deepEqual(hits("t = 2001-02-01T11:00:00+01:00"), [0, 1, 0]);
  assert.deepEqual(hits("t < 2001-02-02"), [1, 1, 1]);
  const d: Field = { name: "d", type: "date", nullable: false };
  const day = BigInt(Date.UTC(2001, 1, 1) / 86_400_000);
  const dates = oneColumn(d, [day - 1n, day, day + 1n]);
  assert.deepEqual([...compileWhere("d < 2001-02-01", [d]).mask(dates)], [1, 0, 0]);
  assert.deepEqual([...compileWhere("d <= 2001-02-01T12:00:00Z", [d]).mask(dates)], [1, 1, 0]);
  assert.deepEqual([...compileWhere("d in (2001-01-31, 2001-02-02)", [d]).mask(dates)], [1, 0, 1]);
});

Deno.test("compileWhere() keeps only true rows: nulls and NaN are unknown, even under not", () => {
  const f: Field = { name: "x", type: "float64", nullable: true };
  const batch: Batch = {
    schema: [f],
    columns: [{
      type: "float64",
      values: Float64Array.of(1, NaN, 0, 3),
      validity: Uint8Array.of(1, 1, 0, 1),
    }],
    length: 4,
  };
  const hits = (text: string) => [...compileWhere(text, [f]).mask(batch)];
  assert.deepEqual(hits("x > 2"), [0, 0, 0, 1]);
  assert.deepEqual(hits("not (x > 2)"), [1, 0, 0, 0]);
  assert.deepEqual(hits("x is null"), [0, 0, 1, 0]);
  assert.deepEqual(hits("x is null or x = 1"), [1, 0, 1, 0]);
  assert.deepEqual(hits("x not in (1, inf)"), [0, 0, 0, 1]);
});

Deno.test("thaw() with where skips chunks by min/max and reports bytes read against the payload", async () => {
  const n = 20_000;
  const lines = ["id,day,delay,origin"];
  for (let i = 0; i < n; i++) {
    const day = isoDate(11_000 + Math.floor(i / 200));
    lines.push(`${i},${day},${(i * 37) % 300 - 30},${["SFO", "LAX", "JFK"][i % 3]}`);
  }
  await Deno.writeTextFile(`${TMP}/trips.csv`, lines.join("\n") + "\n");
  await freeze(`${TMP}/trips.csv`, `${TMP}/trips.pf`, { chunkRows: 1000, threads: 0 });
  const cut = isoDate(11_000 + 2);
  const s = await thaw(`${TMP}/trips.pf`, `${TMP}/early.csv`, { where: `day < ${cut}` });
  assert.equal(s.rows, 400);
  assert.equal(s.chunks_total, 20);
  assert.equal(s.chunks_skipped, 19);
  assert.ok(s.bytes_read < s.payload_bytes / 10, `${s.bytes_read} of ${s.payload_bytes}`);
  const late = await thawTable(`${TMP}/trips.pf`, {
    where: "delay > 260 and origin in ('SFO', 'JFK')",
    columns: ["id", "origin"],
  });
  const expected = lines.slice(1).map((l) => l.split(",")).filter((c) =>
    Number(c[2]) > 260 && (c[3] === "SFO" || c[3] === "JFK")
  ).map((c) => BigInt(c[0]!));
  assert.deepEqual([...late.getChild("id")!.toArray()], expected);
  assert.deepEqual(late.schema.fields.map((f) => f.name), ["id", "origin"]);
});

Deno.test("thaw() with where on a primary key reads one chunk (point lookup by min/max)", async () => {
  const lines = ["order_id,amount"];
  for (let i = 0; i < 10_000; i++) lines.push(`${1000 + i * 3},${i % 97}.5`);
  await Deno.writeTextFile(`${TMP}/orders.csv`, lines.join("\n") + "\n");
  await freeze(`${TMP}/orders.csv`, `${TMP}/orders.pf`, {
    chunkRows: 500,
    threads: 0,
    primaryKey: "order_id",
  });
  const s = await thaw(`${TMP}/orders.pf`, `${TMP}/one.jsonl`, { where: "order_id = 16000" });
  assert.equal(s.rows, 1);
  assert.equal(s.chunks_read, 1);
  assert.equal(s.chunks_skipped, 19);
  assert.equal(await Deno.readTextFile(`${TMP}/one.jsonl`), '{"order_id":16000,"amount":53.5}\n');
});

Deno.test("parseWhere() refuses nesting past MAX_WHERE_DEPTH with a one-line BAD_OPTION", async (t) => {
  const schema: Schema = [{ name: "x", type: "int64", nullable: true }];
  await t.step("at the limit, parentheses and not both work", () => {
    const deep = "(".repeat(MAX_WHERE_DEPTH / 2) + "x = 1" + ")".repeat(MAX_WHERE_DEPTH / 2);
    compileWhere("not ".repeat(MAX_WHERE_DEPTH / 2) + deep, schema);
  });
  const cases: [string, string, number][] = [
    ["3,000 parentheses", "(".repeat(3000) + "x = 1" + ")".repeat(3000), MAX_WHERE_DEPTH + 1],
    ["3,000 nots", "not ".repeat(3000) + "x = 1", 4 * MAX_WHERE_DEPTH + 1],
  ];
  for (const [what, text, at] of cases) {
    await t.step(what, () => {
      assert.throws(() => parseWhere(text), (err) => {
        assert.ok(err instanceof OpsError, String(err));
        assert.equal(err.code, "BAD_OPTION");
        assert.ok(!err.message.includes("\n"), "one line");
        assert.ok(err.message.length < 300, "does not repeat the whole expression's tail");
        assert.match(err.message, new RegExp(`more than ${MAX_WHERE_DEPTH} deep`));
        assert.match(err.message, new RegExp(`at character ${at}\\b`));
        return true;
      });
    });
  }
  await t.step("a tree built by hand", () => {
    let node: WhereNode = { kind: "null", column: "x", negated: false };
    for (let i = 0; i < 5000; i++) node = { kind: "not", arg: node };
    assert.throws(() => compileWhere(node, schema), { code: "BAD_OPTION" });
  });
});
