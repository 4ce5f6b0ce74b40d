import assert from "node:assert/strict";
import { join } from "node:path";
import { Catalog } from "./catalog.ts";
import { CatalogError } from "./errors.ts";
import { fakeIndex, tempDir } from "./_test_utils.ts";

const REFUSED: readonly [string, string][] = [
  ["select * from read_csv('/etc/passwd')", "read_csv"],
  ["select * from read_csv_auto('/etc/passwd')", "read_csv_auto"],
  ["select * from '/etc/passwd'", "/etc/passwd"],
  ["select * from read_text('/etc/passwd')", "read_text"],
  ["select * from glob('/*')", "glob"],
  ["select * from query('select 1')", "query"],
  ["select * from duckdb_settings()", "duckdb_settings"],
  ["select * from information_schema.tables", "information_schema"],
  ["select * from system.main.duckdb_tables", "system"],
  ["select * from catalog_meta", "catalog_meta"],
  ["select current_setting('memory_limit')", "current_setting"],
  ["select nextval('datasets_seq')", "nextval"],
  ["COPY datasets TO '/tmp/x.csv'", "SELECT"],
  ["COPY (select 1) TO '/tmp/x.csv'", "SELECT"],
  ["ATTACH '/tmp/other.db' AS other", "SELECT"],
  ["INSTALL httpfs", "SELECT"],
  ["LOAD httpfs", "SELECT"],
  ["SET enable_external_access = true", "SELECT"],
  ["PRAGMA database_list", "SELECT"],
  ["CALL pragma_version()", "SELECT"],
  ["EXPORT DATABASE '/tmp/x'", "SELECT"],
  ["CREATE TABLE t AS SELECT 1", "SELECT"],
  ["DROP TABLE datasets", "SELECT"],
  ["ALTER TABLE datasets ADD COLUMN x INT", "SELECT"],
  ["INSERT INTO datasets SELECT * FROM datasets", "SELECT"],
  ["UPDATE datasets SET rows = 0", "SELECT"],
  ["DELETE FROM datasets", "SELECT"],
  ["select 1; select 2", "one statement"],
  ["select 1; drop table datasets", "one statement"],
  ["", "empty"],
  ["   ", "empty"],
];

Deno.test("Catalog.sql() refuses anything but one SELECT over the catalog tables", async (t) => {
  const dir = await tempDir("sandbox");
  const catalog = await Catalog.open(join(dir, "c.db"));
  try {
    await catalog.registerIndex(fakeIndex("a"));
    for (const [query, mentions] of REFUSED) {
      await t.step(`refuses ${JSON.stringify(query)}`, async () => {
        await assert.rejects(catalog.sql(query), (err: unknown) => {
          assert.ok(err instanceof CatalogError, String(err));
          assert.equal(err.code, "SQL_REFUSED", err.message);
          assert.ok(err.message.includes(mentions), `"${err.message}" lacks "${mentions}"`);
          return true;
        });
      });
    }
    await t.step("the database is untouched", async () => {
      assert.deepEqual((await catalog.sql("select count(*) from datasets")).rows, [[1]]);
      assert.equal((await catalog.get("a")).rows, 250);
    });
  } finally {
    await catalog.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Catalog.sql() accepts SELECTs with CTEs, joins, subqueries, views and DESCRIBE", async (t) => {
  const dir = await tempDir("sandbox-ok");
  const catalog = await Catalog.open(join(dir, "c.db"));
  try {
    await catalog.registerIndex(fakeIndex("a"));
    await catalog.registerIndex(fakeIndex("b", { rows: 10 }));
    const ok: [string, unknown[][]][] = [
      ["select name, sum(rows) from datasets group by 1 order by 1", [["a", 250], ["b", 10]]],
      [
        "with big as (select * from datasets where rows > 100) select name from big join chunks c on c.dataset = big.name where c.chunk = 0",
        [["a"]],
      ],
      ["select count(*) from (select distinct dataset from chunks) t", [[2]]],
      ["from datasets select name order by name desc limit 1", [["b"]]],
      ["select name from datasets where name in (select dataset from chunk_stats) order by 1", [[
        "a",
      ], ["b"]]],
      ["select * from (values (1, 'x')) v(n, s)", [[1, "x"]]],
      ["select 1 union all select 2 order by 1", [[1], [2]]],
      ["select lower('ABC') as x", [["abc"]]],
    ];
    for (const [query, rows] of ok) {
      await t.step(query, async () => {
        assert.deepEqual((await catalog.sql(query)).rows, rows);
      });
    }
    await t.step("DESCRIBE a catalog table", async () => {
      const r = await catalog.sql("describe datasets");
      assert.ok(r.rows.some((row) => row[0] === "payload_sha256"));
    });
    await t.step("a syntax or binder error is SQL_FAILED", async () => {
      for (const q of ["select from where", "select nope from datasets"]) {
        await assert.rejects(catalog.sql(q), (err: unknown) => {
          assert.ok(err instanceof CatalogError);
          assert.ok(["SQL_FAILED", "SQL_REFUSED"].includes(err.code), err.code);
          return true;
        });
      }
      await assert.rejects(catalog.sql("select nope from datasets"), { code: "SQL_FAILED" });
    });
  } finally {
    await catalog.close();
    await Deno.remove(dir, { recursive: true });
  }
});
