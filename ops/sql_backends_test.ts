/**
 * The same query suite on both engines (`duckdb`, native, and `duckdb-wasm`): every
 * query gives the same answer, cell for cell and type for type, and the answers are the
 * ones the data says (exact decimals, a sum past 2^63, dates, nulls, joins, CTEs,
 * window functions); the refusals are the same (file functions, other statements,
 * several statements); `setQueryBackend` picks the engine of sessions made without one.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { cellText } from "../io/cell_text.ts";
import { OpsError } from "./errors.ts";
import { freeze } from "./freeze.ts";
import { type QueryAnswer, queryBackend, setQueryBackend, SqlSession } from "./sql.ts";

const dir = await Deno.makeTempDir({ prefix: "permafrost-sql-backends-" });
const N = 6000;
{
  const lines = ["id,city,fare,day,price,note"];
  for (let i = 0; i < N; i++) {
    const note = i % 11 === 0 ? "" : `n${i % 5}`;
    lines.push(
      `${i},c${i % 7},${(i * 7919) % 10007 / 100},2024-0${1 + (i % 9)}-1${i % 10},${i}.${
        String(i % 100).padStart(2, "0")
      },${note}`,
    );
  }
  await Deno.writeTextFile(join(dir, "trips.csv"), lines.join("\n") + "\n");
  await freeze(join(dir, "trips.csv"), join(dir, "trips.pf"), {
    chunkRows: 1000,
    threads: 0,
    types: { price: { type: "decimal", precision: 12, scale: 2 } },
  });
  await Deno.writeTextFile(
    join(dir, "cities.csv"),
    "city,country\n" + Array.from({ length: 7 }, (_, i) => `c${i},k${i % 3}`).join("\n") + "\n",
  );
  await freeze(join(dir, "cities.csv"), join(dir, "cities.pf"), { threads: 0 });
}

async function texts(answer: QueryAnswer): Promise<{ types: string[]; rows: (string | null)[][] }> {
  const rows: (string | null)[][] = [];
  for await (const b of answer.batches) {
    for (let r = 0; r < b.length; r++) {
      rows.push(b.columns.map((c, i) => cellText(c, r, answer.schema[i]!)));
    }
  }
  return { types: answer.schema.map((f) => f.type), rows };
}

const SUITE = [
  "SELECT city, count(*) AS n, sum(price) AS total, min(day) AS first FROM trips GROUP BY 1 ORDER BY 1",
  "SELECT sum(id + 9000000000000000000) AS big FROM trips",
  "SELECT id, note, price FROM trips WHERE id < 12 ORDER BY id",
  "SELECT count(*) AS n FROM trips WHERE note IS NULL",
  "SELECT t.city, c.country, count(*) AS n FROM trips t JOIN cities c ON t.city = c.city GROUP BY 1, 2 ORDER BY 1",
  "WITH x AS (SELECT city, avg(fare) AS a FROM trips GROUP BY 1) SELECT * FROM x WHERE a > 0 ORDER BY city",
  "SELECT id, sum(fare) OVER (ORDER BY id ROWS 2 PRECEDING) AS s FROM trips WHERE id < 5 ORDER BY id",
  "SELECT day, count(*) AS n FROM trips WHERE day BETWEEN DATE '2024-03-10' AND DATE '2024-03-19' GROUP BY 1 ORDER BY 1",
  "SELECT * FROM trips ORDER BY id DESC LIMIT 3",
];

Deno.test("the query suite gives the same answers on duckdb and duckdb-wasm, and the right ones", async () => {
  const sessions = await Promise.all((["duckdb", "duckdb-wasm"] as const).map(async (backend) => {
    const s = new SqlSession({ backend });
    await s.register("trips", join(dir, "trips.pf"));
    await s.register("cities", join(dir, "cities.pf"));
    return s;
  }));
  for (const query of SUITE) {
    const [native, wasm] = [
      await sessions[0]!.execute(query, texts),
      await sessions[1]!.execute(query, texts),
    ];
    assert.deepEqual(wasm.value, native.value, query);
  }
  const big = (await sessions[1]!.execute(SUITE[1]!, texts)).value;
  assert.equal(
    big.rows[0]![0],
    (9000000000000000000n * BigInt(N) + BigInt((N * (N - 1)) / 2)).toString(),
  );
  assert.equal(big.types[0], "decimal", "past 2^63: exact, never a float");
  const nulls = (await sessions[1]!.execute(SUITE[3]!, texts)).value;
  assert.equal(Number(nulls.rows[0]![0]), Math.ceil(N / 11));
  const first = (await sessions[1]!.execute(SUITE[2]!, texts)).value;
  assert.deepEqual(first.rows[1], ["1", "n1", "1.01"]);
  assert.deepEqual(first.rows[0], ["0", null, "0.00"]);
});

Deno.test("both engines refuse the same things, by the same codes", async () => {
  for (const backend of ["duckdb", "duckdb-wasm"] as const) {
    const s = new SqlSession({ backend });
    await s.register("trips", join(dir, "trips.pf"));
    for (
      const [query, code] of [
        ["SELECT * FROM read_csv('/etc/hostname')", "SQL_REFUSED"],
        ["SELECT * FROM trips, glob('/*')", "SQL_REFUSED"],
        ["CREATE TABLE x AS SELECT 1", "SQL_REFUSED"],
        ["COPY trips TO '/tmp/x.csv'", "SQL_REFUSED"],
        ["SELECT 1; SELECT 2", "SQL_REFUSED"],
        ["SELECT nope FROM trips", "SQL_FAILED"],
        ["SELECT * FROM nope", "SQL_FAILED"],
      ] as const
    ) {
      await assert.rejects(
        s.execute(query, texts),
        (e: unknown) => e instanceof OpsError && e.code === code,
        `${backend}: ${query}`,
      );
    }
  }
});

Deno.test("setQueryBackend() picks the engine of sessions made without one", async () => {
  assert.equal(queryBackend(), "duckdb");
  setQueryBackend("duckdb-wasm");
  try {
    const s = new SqlSession();
    assert.equal(s.backend, "duckdb-wasm");
    await s.register("trips", join(dir, "trips.pf"));
    const { value } = await s.execute("SELECT count(*) AS n FROM trips", texts);
    assert.equal(value.rows[0]![0], String(N));
    assert.throws(
      () => setQueryBackend("sqlite" as "duckdb"),
      (e: unknown) => e instanceof OpsError && /duckdb or duckdb-wasm/.test(e.message),
    );
  } finally {
    setQueryBackend("duckdb");
  }
});

Deno.test({
  name: "backend tests clean up",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => Deno.remove(dir, { recursive: true }),
});
