import assert from "node:assert/strict";
import { join } from "node:path";
import { Catalog } from "./catalog.ts";
import { CatalogError } from "./errors.ts";
import { checkPlan } from "./sql_sandbox.ts";
import { openCatalogDb } from "./_db.ts";
import { SCHEMA_DDL } from "./_tables.ts";
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
  // A CTE is visible inside the query that defines it, never beside it.
  ["select * from (with catalog_meta as (select 1) select 1) t, catalog_meta", "catalog_meta"],
  [
    "select * from (with duckdb_databases as (select 1) select 1) t, duckdb_databases",
    "duckdb_databases",
  ],
  [
    "select * from (with pragma_database_list as (select 1) select 1) t, pragma_database_list",
    "pragma_database_list",
  ],
  [
    "select (with duckdb_settings as (select 1) select 1) x, * from duckdb_settings",
    "duckdb_settings",
  ],
  [
    "select * from datasets where name in (with catalog_meta as (select 'a') select * from catalog_meta) union all select * from catalog_meta",
    "catalog_meta",
  ],
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
      [
        "with a1 as (select name from datasets), a2 as (select * from a1) select * from (select * from a2) t order by 1",
        [["a"], ["b"]],
      ],
      [
        "with recursive r(i) as (select 1 union all select i + 1 from r where i < 3) select * from r",
        [
          [1],
          [2],
          [3],
        ],
      ],
      [
        "with n as (select 'b' as x) select name from datasets where name in (select x from n)",
        [["b"]],
      ],
      ["select count(*) from chunk_stats where dataset = 'b'", [[2]]],
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

Deno.test("checkPlan() refuses what DuckDB binds to anything but a catalog table", async (t) => {
  const dir = await tempDir("plan");
  const db = await openCatalogDb(join(dir, "c.db"), { sqlConnections: 1 });
  try {
    await db.writer.run(async (c) => {
      for (const ddl of SCHEMA_DDL) await c.run(ddl);
    });
    const c = (await db.sandbox.acquire(1000))!;
    try {
      // Names the parse tree would take for catalog tables: only the bound plan
      // tells that they are system views and table functions.
      for (
        const [query, mentions] of [
          ["select * from duckdb_databases", "duckdb_databases()"],
          ["select * from pragma_database_list", "duckdb_databases()"],
          ["select * from duckdb_tables", "duckdb_tables()"],
          ["select * from catalog_meta", "catalog_meta"],
          ["select (select count(*) from catalog_meta)", "catalog_meta"],
          ["show tables", "duckdb_tables()"],
        ]
      ) {
        await t.step(`refuses ${query}`, async () => {
          await assert.rejects(checkPlan(c, query!), (err: unknown) => {
            assert.ok(err instanceof CatalogError, String(err));
            assert.equal(err.code, "SQL_REFUSED");
            assert.ok(err.message.includes(mentions!), err.message);
            return true;
          });
        });
      }
      await t.step("passes the catalog tables and the chunk_stats view", async () => {
        await checkPlan(c, "select * from datasets d join chunks c on c.dataset = d.name");
        await checkPlan(c, "select * from chunk_stats");
      });
      await t.step("a binder error is SQL_FAILED", async () => {
        await assert.rejects(checkPlan(c, "select nope from datasets"), { code: "SQL_FAILED" });
      });
    } finally {
      db.sandbox.release(c);
    }
  } finally {
    await db.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openCatalogDb() locks down every connection user SQL runs on", async () => {
  const dir = await tempDir("lockdown");
  const file = join(dir, "c.db");
  const db = await openCatalogDb(file, { sqlConnections: 3 });
  const held = [];
  try {
    for (let i = 0; i < 3; i++) held.push((await db.sandbox.acquire(1000))!);
    assert.equal(await db.sandbox.acquire(0), null, "three connections, all taken");
    for (const c of held) {
      const r = await c.runAndReadAll(
        `select current_setting('enable_external_access'), current_setting('lock_configuration'),
          current_setting('autoload_known_extensions'), current_setting('autoinstall_known_extensions'),
          current_setting('allowed_directories'), current_setting('allowed_paths'),
          current_setting('streaming_buffer_size')`,
      );
      const [external, locked, autoload, autoinstall, dirs, paths, buffer] = r.getRowsJS()[0]!;
      assert.deepEqual([external, locked, autoload, autoinstall], [false, true, false, false]);
      // Results are computed little ahead of the reader, which stops at the byte limit.
      assert.equal(buffer, "62.5 KiB");
      // What DuckDB itself allows with external access off: its own files, nothing else.
      assert.deepEqual(dirs, [`${file}.tmp/`]);
      for (const p of paths as string[]) assert.ok(p.startsWith(file), p);
      await assert.rejects(c.run("SET enable_external_access = true"), /locked/);
      await assert.rejects(c.run("SET allowed_directories = ['/']"), /locked/);
      await assert.rejects(c.run("SET streaming_buffer_size = '1GB'"), /locked/);
    }
  } finally {
    for (const c of held) db.sandbox.release(c);
    await db.close();
    await Deno.remove(dir, { recursive: true });
  }
});
