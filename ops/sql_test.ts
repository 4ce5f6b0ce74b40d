import assert from "node:assert/strict";
import { join } from "node:path";
import { tableFromArrays } from "apache-arrow";
import { FormatError } from "../format/errors.ts";
import { OpsError } from "./errors.ts";
import { freeze } from "./freeze.ts";
import { freezePartitioned } from "./partition.ts";
import { type QueryAnswer, SqlSession } from "./sql.ts";

const TMP = ".tmp/ops_sql";
await Deno.remove(TMP, { recursive: true }).catch(() => {});
await Deno.mkdir(TMP, { recursive: true });

/** The rows of {@link flights}, to check answers against. */
const DATA: { date: string; origin: string; delay: number; cents: number }[] = [];

/** 30,000 flights over 3 months, sorted by date, in 30 chunks. */
async function flights(): Promise<string> {
  const path = join(TMP, "flights.pf");
  const n = 30_000;
  const day = new Int32Array(n);
  const origin: string[] = [];
  const delay = new BigInt64Array(n);
  const price: string[] = [];
  for (let i = 0; i < n; i++) {
    day[i] = 11_323 + Math.floor(i / 333); // from 2001-01-01, one day per 333 rows
    origin.push(["SFO", "LAX", "JFK"][i % 3]!);
    delay[i] = BigInt(((i * 37) % 150) - 30);
    price.push(`${(i % 500) + 10}.${String(i % 100).padStart(2, "0")}`);
  }
  const csv = ["date,origin,delay,price"];
  for (let i = 0; i < n; i++) {
    const d = new Date(day[i]! * 86_400_000).toISOString().slice(0, 10);
    csv.push(`${d},${origin[i]},${delay[i]},${price[i]}`);
    DATA.push({
      date: d,
      origin: origin[i]!,
      delay: Number(delay[i]),
      cents: Math.round(Number(price[i]) * 100),
    });
  }
  await Deno.writeTextFile(join(TMP, "flights.csv"), csv.join("\n") + "\n");
  await freeze(join(TMP, "flights.csv"), path, {
    chunkRows: 1000,
    threads: 0,
    types: { price: { type: "decimal", precision: 10, scale: 2 } },
  });
  return path;
}

const FLIGHTS = await flights();

async function rows(answer: QueryAnswer): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  const { cellText } = await import("../io/cell_text.ts");
  for await (const b of answer.batches) {
    for (let r = 0; r < b.length; r++) {
      out.push(
        Object.fromEntries(answer.schema.map((f, i) => [f.name, cellText(b.columns[i]!, r, f)])),
      );
    }
  }
  return out;
}

Deno.test("SqlSession registers, lists and forgets aliases", async () => {
  const s = new SqlSession();
  const reg = await s.register("flights", FLIGHTS);
  assert.deepEqual([reg.rows, reg.columns], [30_000, ["date", "origin", "delay", "price"]]);
  assert.deepEqual(s.registered().map((r) => r.alias), ["flights"]);
  assert.equal(s.unregister("FLIGHTS"), true);
  assert.deepEqual(s.registered(), []);
  await assert.rejects(s.register("1bad", FLIGHTS), { code: "BAD_OPTION" });
  await assert.rejects(s.register("x", join(TMP, "flights.csv")), FormatError);
});

Deno.test("SqlSession.execute() answers with exact types and thaws only the columns named", async () => {
  const s = new SqlSession();
  await s.register("flights", FLIGHTS);
  const { value, scans } = await s.execute(
    "SELECT origin, count(*) AS n, sum(price) AS total, min(date) AS first FROM flights GROUP BY origin ORDER BY origin",
    async (a) => ({ schema: a.schema, rows: await rows(a) }),
  );
  assert.deepEqual(value.schema.map((f) => [f.name, f.type]), [
    ["origin", "string"],
    ["n", "int64"],
    ["total", "decimal"],
    ["first", "date"],
  ]);
  const jfk = DATA.filter((r) => r.origin === "JFK");
  const cents = jfk.reduce((n, r) => n + r.cents, 0);
  assert.deepEqual(value.rows[0], {
    origin: "JFK",
    n: String(jfk.length),
    total: `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`,
    first: jfk[0]!.date,
  });
  assert.deepEqual(scans[0]!.columns, ["date", "origin", "price"]);
  assert.equal(scans[0]!.pruned_by, null);
  assert.equal(scans[0]!.chunks_read, 30);
});

Deno.test("a WHERE on a date skips chunks by min/max and gives the same answer as reading all", async () => {
  const s = new SqlSession();
  await s.register("flights", FLIGHTS);
  const q =
    "SELECT origin, count(*) AS n, avg(delay) AS d FROM flights WHERE date BETWEEN '2001-02-01' AND '2001-02-03' AND delay > 10 GROUP BY 1 ORDER BY 1";
  const pruned = await s.execute(q, rows);
  assert.equal(
    pruned.scans[0]!.pruned_by,
    `("date" >= '2001-02-01' and "date" <= '2001-02-03') and "delay" > 10`,
  );
  assert.ok(pruned.scans[0]!.chunks_read <= 2, JSON.stringify(pruned.scans));
  assert.ok(pruned.scans[0]!.bytes_read < pruned.scans[0]!.payload_bytes / 10);
  // The same filter hidden from the pruning (an OR with a false branch) reads everything.
  const full = await s.execute(
    "SELECT origin, count(*) AS n, avg(delay) AS d FROM flights WHERE 1 = 0 OR (date BETWEEN '2001-02-01' AND '2001-02-03' AND delay > 10) GROUP BY 1 ORDER BY 1",
    rows,
  );
  assert.equal(full.scans[0]!.chunks_read, 30);
  assert.deepEqual(pruned.value, full.value);
  const kept = DATA.filter((r) => r.date >= "2001-02-01" && r.date <= "2001-02-03" && r.delay > 10);
  assert.deepEqual(
    pruned.value.map((r) => [r.origin, Number(r.n)]),
    ["JFK", "LAX", "SFO"].map((o) => [o, kept.filter((r) => r.origin === o).length]),
  );
  assert.ok(pruned.value.length === 3);
});

Deno.test("TIMESTAMP '…' and DATE '…' literals prune a microsecond timestamp column, and nothing else", async () => {
  const n = 20_000;
  const start = Date.UTC(2001, 0, 1);
  const ts = Array.from({ length: n }, (_, i) => new Date(start + i * 60_000).toISOString());
  const csv = ["ts,v", ...ts.map((t, i) => `${t.replace("T", " ").replace("Z", "")},${i % 7}`)];
  await Deno.writeTextFile(join(TMP, "ts.csv"), csv.join("\n") + "\n");
  const path = join(TMP, "ts.pf");
  await freeze(join(TMP, "ts.csv"), path, { chunkRows: 1000, threads: 0 });
  const s = new SqlSession();
  await s.register("t", path);
  const where = "ts BETWEEN TIMESTAMP '2001-01-05 00:00:00' AND DATE '2001-01-06'";
  const pruned = await s.execute(`SELECT count(*) AS n, sum(v) AS s FROM t WHERE ${where}`, rows);
  assert.match(
    pruned.scans[0]!.pruned_by ?? "",
    /"ts" >= '2001-01-05 00:00:00' and "ts" <= '2001-01-06'/,
  );
  assert.ok(pruned.scans[0]!.chunks_read <= 3, JSON.stringify(pruned.scans));
  const full = await s.execute(
    `SELECT count(*) AS n, sum(v) AS s FROM t WHERE 1 = 0 OR (${where})`,
    rows,
  );
  assert.equal(full.scans[0]!.chunks_read, 20);
  assert.deepEqual(pruned.value, full.value);
  assert.equal(Number(pruned.value[0]!.n), 24 * 60 + 1, "one day of minutes, both ends included");
  // A timestamp literal against a date column is left to DuckDB (it means another day).
  const s2 = new SqlSession();
  await s2.register("flights", FLIGHTS);
  const mixed = await s2.execute(
    "SELECT count(*) AS n FROM flights WHERE date >= TIMESTAMP '2001-02-01 12:00:00'",
    rows,
  );
  assert.equal(mixed.scans[0]!.pruned_by, null);
  assert.equal(Number(mixed.value[0]!.n), DATA.filter((r) => r.date >= "2001-02-02").length);
});

Deno.test("no pruning where it could change the answer: the table twice, joins, CTEs, floats", async () => {
  const s = new SqlSession();
  await s.register("flights", FLIGHTS);
  const twice = await s.execute(
    "SELECT count(*) AS n FROM flights WHERE delay > (SELECT avg(delay) FROM flights) AND date < '2001-01-05'",
    rows,
  );
  assert.equal(twice.scans[0]!.pruned_by, null);
  const avg = DATA.reduce((n, r) => n + r.delay, 0) / DATA.length;
  const expected = DATA.filter((r) => r.delay > avg && r.date < "2001-01-05").length;
  assert.equal(twice.value[0]!.n, String(expected));
  const cte = await s.execute(
    "WITH f AS (SELECT * FROM flights WHERE delay > 100) SELECT count(*) AS n FROM f WHERE date < '2001-01-05'",
    rows,
  );
  assert.equal(cte.scans[0]!.pruned_by, null);
  // A float NaN is greater than every number for DuckDB but not in the statistics: no pruning.
  const path = join(TMP, "nan.pf");
  await freeze(tableFromArrays({ x: Float64Array.of(1, 2, NaN) }), path, { threads: 0 });
  await s.register("nan", path);
  const nan = await s.execute("SELECT count(*) AS n FROM nan WHERE x > 5", rows);
  assert.equal(nan.scans[0]!.pruned_by, null);
  assert.equal(nan.value[0]!.n, "1");
});

Deno.test("joins two archives, and a partitioned dataset, by alias", async () => {
  const dir = join(TMP, "parts");
  await freezePartitioned(join(TMP, "flights.csv"), dir, { partitionBy: ["origin"], threads: 0 });
  const airports = join(TMP, "airports.pf");
  await freeze(
    tableFromArrays({
      code: ["SFO", "LAX", "JFK"],
      city: ["San Francisco", "Los Angeles", "New York"],
    }),
    airports,
    { threads: 0 },
  );
  const s = new SqlSession();
  await s.register("f", dir);
  await s.register("a", airports);
  const table = await s.query(
    "SELECT a.city, count(*) AS n FROM f JOIN a ON f.origin = a.code GROUP BY 1 ORDER BY 1",
  );
  assert.deepEqual(table.toArray().map((r) => [r.city, Number(r.n)]), [
    ["Los Angeles", 10000],
    ["New York", 10000],
    ["San Francisco", 10000],
  ]);
});

Deno.test("refuses anything but one SELECT, and every file function, by name", async () => {
  const s = new SqlSession();
  await s.register("flights", FLIGHTS);
  const refused: string[] = [
    "DROP TABLE flights",
    "COPY flights TO '/tmp/out.csv'",
    "ATTACH '/tmp/x.db'",
    "INSTALL httpfs",
    "SET threads = 1",
    "SELECT 1; SELECT 2",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_parquet('flights.parquet')",
    "SELECT * FROM glob('/*')",
  ];
  for (const q of refused) {
    await assert.rejects(s.query(q), (e: unknown) => {
      assert.ok(e instanceof OpsError, q);
      assert.ok(e.code === "SQL_REFUSED", `${q}: ${e.code} ${e.message}`);
      return true;
    });
  }
  await assert.rejects(s.query("SELECT * FROM nope"), (e: unknown) => {
    assert.ok(e instanceof OpsError && e.code === "SQL_FAILED");
    assert.match(e.message, /nope does not exist.*registered: flights/);
    return true;
  });
  await assert.rejects(s.query("SELECT nope FROM flights"), { code: "SQL_FAILED" });
  await assert.rejects(s.query("SELECT * FROM flights) TO '/tmp/x.csv' (FORMAT csv); --"), {
    code: "SQL_FAILED",
  });
});

Deno.test("a corrupted archive is a typed error, never wrong rows", async () => {
  const path = join(TMP, "corrupt.pf");
  const bytes = await Deno.readFile(FLIGHTS);
  const { readArchiveIndex } = await import("../format/reader.ts");
  const index = await readArchiveIndex(FLIGHTS);
  const block = index.footer.chunks[5]!.blocks[2]!;
  bytes[block.offset + Math.floor(block.length / 2)]! ^= 0x40;
  await Deno.writeFile(path, bytes);
  const s = new SqlSession();
  await s.register("flights", path);
  await assert.rejects(s.query("SELECT sum(delay) FROM flights"), (e: unknown) => {
    assert.ok(e instanceof FormatError, String(e));
    assert.equal(e.code, "HASH_MISMATCH");
    return true;
  });
});

Deno.test("a sum past 2^53 (and past int64) comes back exact, never as a float", async () => {
  const path = join(TMP, "big.pf");
  const big = 2n ** 62n + 1n;
  await freeze(tableFromArrays({ v: BigInt64Array.of(big, big, 1n) }), path, { threads: 0 });
  const s = new SqlSession();
  await s.register("b", path);
  const { value } = await s.execute("SELECT sum(v) AS total, max(v) AS top FROM b", async (a) => ({
    schema: a.schema,
    rows: await rows(a),
  }));
  assert.deepEqual(value.schema.map((f) => f.type), ["decimal", "int64"]);
  assert.deepEqual(value.rows, [{ total: String(2n * big + 1n), top: String(big) }]);
});
