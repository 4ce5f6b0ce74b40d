import assert from "node:assert/strict";
import { join } from "node:path";
import { thaw as opsThaw } from "../ops/thaw.ts";
import { Catalog } from "./catalog.ts";
import { nameFromPath } from "./options.ts";
import { CatalogError } from "./errors.ts";
import { createLogger } from "../internal/log.ts";
import { fakeIndex, logWatch, makeArchive, tempDir, UNINTERRUPTIBLE_SQL } from "./_test_utils.ts";

async function withCatalog(
  label: string,
  fn: (catalog: Catalog, dir: string) => Promise<void>,
  options: ConstructorParameters<typeof Catalog>[1] = {},
): Promise<void> {
  const dir = await tempDir(label);
  const catalog = await Catalog.open(join(dir, "catalog.db"), {
    now: () => new Date("2024-05-01T12:00:00Z"),
    ...options,
  });
  try {
    await fn(catalog, dir);
  } finally {
    await catalog.close();
    await Deno.remove(dir, { recursive: true });
  }
}

async function assertCatalogError(
  p: Promise<unknown>,
  code: string,
  includes?: string,
): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof CatalogError, `expected CatalogError, got ${err}`);
    assert.equal(err.code, code);
    if (includes) assert.ok(err.message.includes(includes), err.message);
    return true;
  });
}

Deno.test("Catalog.registerIndex() records a version, its chunks and stats", async () => {
  await withCatalog("reg", async (catalog) => {
    const index = fakeIndex("flights", {
      columns: ["origin"],
      metadata: { description: "US flights" },
    });
    const r = await catalog.registerIndex(index);
    assert.equal(r.created, true);
    assert.equal(r.dataset.name, "flights");
    assert.equal(r.dataset.version, "v1");
    assert.equal(r.dataset.rows, 250);
    assert.equal(r.dataset.columns, 3);
    assert.equal(r.dataset.chunks, 3);
    assert.equal(r.dataset.description, "US flights");
    assert.equal(r.dataset.registered_at, "2024-05-01T12:00:00.000Z");
    assert.deepEqual(r.dataset.schema[0], {
      name: "ts",
      type: "timestamp",
      nullable: false,
      unit: "us",
    });
    assert.equal(r.dataset.payload_sha256, index.footer.payload_sha256);
    const chunks = await catalog.chunks("flights");
    assert.equal(chunks.total, 3);
    assert.deepEqual(chunks.items.map((c) => [c.row_start, c.row_end]), [[0, 100], [100, 200], [
      200,
      250,
    ]]);
    assert.deepEqual(chunks.items[1]?.stats, [
      { column: "ts", min: "100000", max: "199000", null_count: 0 },
      { column: "value", min: 50, max: 99.5, null_count: 1 },
      { column: "origin", min: "a", max: "z", null_count: 0 },
    ]);
    assert.equal(chunks.items[0]?.sha256, index.footer.chunks[0]?.sha256);
  });
});

Deno.test("Catalog.registerIndex() keeps versions, is idempotent and refuses conflicts", async (t) => {
  await withCatalog("versions", async (catalog) => {
    await t.step("same archive twice changes nothing", async () => {
      assert.equal((await catalog.registerIndex(fakeIndex("a"))).created, true);
      const again = await catalog.registerIndex(fakeIndex("a"));
      assert.equal(again.created, false);
      assert.equal(again.dataset.version, "v1");
    });
    await t.step("other content becomes v2, history kept", async () => {
      const r = await catalog.registerIndex(fakeIndex("a", { seed: "2", rows: 500 }));
      assert.equal(r.dataset.version, "v2");
      const got = await catalog.get("a");
      assert.equal(got.version, "v2");
      assert.equal(got.versions, 2);
      assert.equal(got.rows, 500);
      assert.equal((await catalog.get("a", { version: "v1" })).rows, 250);
      assert.deepEqual((await catalog.versions("a")).items.map((v) => v.version), ["v2", "v1"]);
    });
    await t.step(
      "explicit version: same content is unchanged, other content conflicts",
      async () => {
        assert.equal(
          (await catalog.registerIndex(fakeIndex("a", { seed: "3" }), { version: "2001-h1" }))
            .created,
          true,
        );
        assert.equal(
          (await catalog.registerIndex(fakeIndex("a", { seed: "3" }), { version: "2001-h1" }))
            .created,
          false,
        );
        await assertCatalogError(
          catalog.registerIndex(fakeIndex("a", { seed: "4" }), { version: "2001-h1" }),
          "CONFLICT",
          "2001-h1",
        );
      },
    );
    await t.step("auto versions skip labels in use", async () => {
      await catalog.registerIndex(fakeIndex("b"), { version: "v2" });
      assert.equal(
        (await catalog.registerIndex(fakeIndex("b", { seed: "x" }))).dataset.version,
        "v3",
      );
    });
    await t.step("bad names, versions and storage classes", async () => {
      await assertCatalogError(
        catalog.registerIndex(fakeIndex("c"), { name: "../x" }),
        "INVALID_ARGUMENT",
        "name",
      );
      await assertCatalogError(
        catalog.registerIndex(fakeIndex("c"), { version: "a b" }),
        "INVALID_ARGUMENT",
        "version",
      );
      await assertCatalogError(
        catalog.registerIndex(fakeIndex("c"), { storageClass: "glacier" }),
        "INVALID_ARGUMENT",
        "standard",
      );
    });
  });
});

Deno.test("Catalog.get() and versions() answer NOT_FOUND for unknown names", async () => {
  await withCatalog("nf", async (catalog) => {
    await assertCatalogError(catalog.get("nope"), "NOT_FOUND", "'nope'");
    await assertCatalogError(catalog.versions("nope"), "NOT_FOUND");
    await assertCatalogError(catalog.chunks("nope"), "NOT_FOUND");
    await catalog.registerIndex(fakeIndex("x"));
    await assertCatalogError(catalog.get("x", { version: "v9" }), "NOT_FOUND", "v9");
  });
});

Deno.test("Catalog.list() pages and filters", async () => {
  await withCatalog("list", async (catalog) => {
    for (const n of ["alpha", "beta", "gamma", "delta"]) {
      await catalog.registerIndex(fakeIndex(n, { codec: n === "beta" ? "lzma2" : "zstd" }));
    }
    await catalog.registerIndex(fakeIndex("alpha", { seed: "2" }), { storageClass: "archive" });
    const all = await catalog.list();
    assert.deepEqual(all.items.map((d) => d.name), ["alpha", "beta", "delta", "gamma"]);
    assert.equal(all.total, 4);
    assert.equal(all.items[0]?.version, "v2");
    const page = await catalog.list({ limit: 2, offset: 1 });
    assert.deepEqual(page.items.map((d) => d.name), ["beta", "delta"]);
    assert.equal(page.total, 4);
    assert.deepEqual((await catalog.list({ codec: "lzma2" })).items.map((d) => d.name), ["beta"]);
    assert.deepEqual((await catalog.list({ prefix: "d" })).items.map((d) => d.name), ["delta"]);
    assert.deepEqual((await catalog.list({ storageClass: "archive" })).items.map((d) => d.name), [
      "alpha",
    ]);
    assert.equal((await catalog.list({ allVersions: true })).total, 5);
    await assertCatalogError(catalog.list({ limit: 0 }), "INVALID_ARGUMENT");
    await assertCatalogError(catalog.list({ offset: -1 }), "INVALID_ARGUMENT");
  });
});

Deno.test("Catalog.chunks() filters by row range", async () => {
  await withCatalog("chunks", async (catalog) => {
    await catalog.registerIndex(fakeIndex("t", { rows: 1000, chunkRows: 100 }));
    const r = await catalog.chunks("t", { rows: { start: 150, end: 320 } });
    assert.deepEqual(r.items.map((c) => c.chunk), [1, 2, 3]);
    assert.equal(r.total, 3);
    const p = await catalog.chunks("t", { limit: 2, offset: 8 });
    assert.deepEqual(p.items.map((c) => c.chunk), [8, 9]);
    await assertCatalogError(
      catalog.chunks("t", { rows: { start: 5, end: 1 } }),
      "INVALID_ARGUMENT",
    );
  });
});

Deno.test("Catalog.remove() forgets one version or all", async () => {
  await withCatalog("remove", async (catalog) => {
    await catalog.registerIndex(fakeIndex("r"));
    await catalog.registerIndex(fakeIndex("r", { seed: "2" }));
    assert.deepEqual(await catalog.remove("r", { version: "v1" }), { name: "r", removed: ["v1"] });
    assert.equal((await catalog.get("r")).versions, 1);
    assert.deepEqual(await catalog.remove("r"), { name: "r", removed: ["v2"] });
    await assertCatalogError(catalog.get("r"), "NOT_FOUND");
    await assertCatalogError(catalog.remove("r"), "NOT_FOUND");
    const left = await catalog.sql("select count(*) from chunks where dataset = 'r'");
    assert.deepEqual(left.rows, [[0]]);
    // The name can be registered again afterwards.
    assert.equal((await catalog.registerIndex(fakeIndex("r"))).dataset.version, "v1");
  });
});

Deno.test("Catalog.stats() and costReport() total the catalog", async () => {
  await withCatalog("stats", async (catalog) => {
    const empty = await catalog.stats();
    assert.deepEqual([empty.datasets, empty.versions, empty.rows, empty.ratio], [0, 0, 0, null]);
    await catalog.registerIndex(fakeIndex("a"));
    await catalog.registerIndex(fakeIndex("a", { seed: "2" }));
    await catalog.registerIndex(fakeIndex("b", { codec: "lzma2" }), { storageClass: "archive" });
    const s = await catalog.stats();
    assert.equal(s.datasets, 2);
    assert.equal(s.versions, 3);
    assert.equal(s.rows, 750);
    assert.equal(s.chunks, 9);
    assert.deepEqual(s.by_codec.map((g) => [g.codec, g.versions]), [["lzma2", 1], ["zstd", 2]]);
    assert.equal(s.ratio, Math.round((s.raw_bytes / s.stored_bytes) * 1e4) / 1e4);
    const cost = await catalog.costReport();
    assert.equal(cost.currency, "USD");
    assert.deepEqual(cost.storage_classes.map((l) => l.storage_class), ["archive", "standard"]);
    const std = cost.storage_classes[1]!;
    assert.equal(std.price_per_gb_month, 0.023);
    assert.ok(Math.abs(std.monthly_cost! - (std.stored_bytes / 2 ** 30) * 0.023) < 1e-12);
    assert.ok(cost.total.savings_vs_raw > 0);
    assert.ok(cost.total.savings_vs_parquet > 0);
    assert.equal(cost.total.stored_bytes, s.stored_bytes);
  }, { prices: { standard: 0.023, archive: 0.004 } });
});

Deno.test("Catalog.search() ranks name, version, column and description matches", async () => {
  await withCatalog("search", async (catalog) => {
    await catalog.registerIndex(fakeIndex("flights", { columns: ["origin", "dest"] }));
    await catalog.registerIndex(fakeIndex("flight_delays", { columns: ["carrier"] }));
    await catalog.registerIndex(fakeIndex("weather", { columns: ["flight_level"] }));
    await catalog.registerIndex(
      fakeIndex("sales", { metadata: { description: "Ticket sales per flight" } }),
    );
    await catalog.registerIndex(fakeIndex("other"));
    const r = await catalog.search("flights");
    assert.deepEqual(r.items.map((h) => h.name), ["flights"]);
    const f = await catalog.search("Flight");
    assert.deepEqual(f.items.map((h) => h.name), ["flight_delays", "flights", "weather", "sales"]);
    assert.deepEqual(f.items[2]?.matched, ["column:flight_level"]);
    assert.deepEqual(f.items[3]?.matched, ["description"]);
    assert.equal(f.total, 4);
    const two = await catalog.search("flights origin");
    assert.equal(two.items[0]?.name, "flights");
    assert.deepEqual(two.items[0]?.matched, ["name", "column:origin"]);
    assert.equal((await catalog.search("zzz")).total, 0);
    await assertCatalogError(catalog.search("  "), "INVALID_ARGUMENT");
  });
});

Deno.test("Catalog.sql() runs one SELECT over the catalog tables", async () => {
  await withCatalog("sql", async (catalog) => {
    await catalog.registerIndex(fakeIndex("a"));
    await catalog.registerIndex(fakeIndex("b", { rows: 10 }));
    const r = await catalog.sql("select name, sum(rows) from datasets group by 1 order by 1");
    assert.deepEqual(r.rows, [["a", 250], ["b", 10]]);
    assert.deepEqual(r.columns.map((c) => c.name), ["name", 'sum("rows")']);
    const nan = await catalog.sql(
      "select 'nan'::double as x, 9007199254740993::bigint as big, 1.5 as d",
    );
    assert.deepEqual(nan.rows, [[null, "9007199254740993", 1.5]]);
    const stats = await catalog.sql(
      "select column_name, min, max from chunk_stats where dataset = 'a' and chunk = 0 order by 1",
    );
    assert.deepEqual(stats.rows, [["ts", "0", "99000"], ["value", "0", "49.5"]]);
    await assertCatalogError(catalog.sql("select * from read_csv('/etc/passwd')"), "SQL_REFUSED");
  }, { sql: { maxRows: 2 } });
});

Deno.test("Catalog.sql() cuts results at the row limit", async () => {
  await withCatalog("sqlrows", async (catalog) => {
    await catalog.registerIndex(fakeIndex("t", { rows: 1000, chunkRows: 100 }));
    const r = await catalog.sql("select chunk from chunks order by chunk");
    assert.equal(r.row_count, 3);
    assert.equal(r.truncated, true);
    assert.deepEqual(r.rows, [[0], [1], [2]]);
    const all = await catalog.sql("select count(*) from chunks");
    assert.equal(all.truncated, false);
  }, { sql: { maxRows: 3 } });
});

Deno.test("Catalog.sql() stops a query at the time limit", async () => {
  await withCatalog("sqltime", async (catalog) => {
    await catalog.registerIndex(fakeIndex("t", { rows: 2000, chunkRows: 10 }));
    await assertCatalogError(
      catalog.sql(
        "select count(*) from chunks a, chunks b, chunks c, chunks d where a.sha256 < b.sha256 || c.sha256 || d.sha256",
      ),
      "SQL_TIMEOUT",
      "200 ms",
    );
    // The sandbox works again afterwards.
    assert.deepEqual((await catalog.sql("select count(*) from datasets")).rows, [[1]]);
  }, { sql: { timeoutMs: 200 } });
});

Deno.test("Catalog.sql() answers at the limit while DuckDB stops a query, and reuses the connection after", async () => {
  const watch = logWatch();
  const logger = createLogger({ component: "catalog", level: "debug", sink: watch.sink });
  await withCatalog("sqlstuck", async (catalog) => {
    await assertCatalogError(catalog.sql(UNINTERRUPTIBLE_SQL), "SQL_TIMEOUT", "200 ms");
    // Its one connection is still running the interrupted query: the next one waits
    // out its own limit for it, and says why.
    await assertCatalogError(
      catalog.sql("select 1"),
      "SQL_TIMEOUT",
      "all 1 SQL connections stayed busy",
    );
    await watch.until(/interrupted sql query has stopped/);
    assert.deepEqual((await catalog.sql("select 1")).rows, [[1]]);
  }, { logger, sql: { timeoutMs: 200, connections: 1 } });
});

Deno.test("Catalog.register() reads real archives and integrityCheck() re-hashes them", async (t) => {
  await withCatalog("real", async (catalog, dir) => {
    const path = await makeArchive(dir, "sensors", 300, 100);
    const r = await catalog.register(path, { version: "2024-01" });
    assert.equal(r.dataset.name, "sensors");
    assert.equal(r.dataset.rows, 300);
    assert.equal(r.dataset.chunks, 3);
    assert.deepEqual(r.dataset.schema.map((c) => c.name), ["ts", "sensor", "reading"]);
    await t.step("a sound archive is ok", async () => {
      const report = await catalog.integrityCheck("sensors");
      assert.equal(report.ok, true, JSON.stringify(report.problems));
      assert.equal(report.chunks_checked, 3);
      assert.equal(report.bytes_checked, r.dataset.stored_bytes);
    });
    await t.step("a flipped byte in chunk 1 is reported", async () => {
      const bytes = await Deno.readFile(path);
      const chunk1 = (await catalog.chunks("sensors")).items[1]!;
      bytes[chunk1.offset + 3]! ^= 0xff;
      await Deno.writeFile(path, bytes);
      const report = await catalog.integrityCheck("sensors", { version: "2024-01" });
      assert.equal(report.ok, false);
      const kinds = report.problems.map((p) => `${p.kind}:${p.chunk}`);
      assert.ok(kinds.includes("CHUNK_HASH:1"), kinds.join(" "));
      assert.ok(kinds.includes("PAYLOAD_HASH:null"), kinds.join(" "));
      assert.ok(!kinds.includes("CHUNK_HASH:0"));
    });
    await t.step("a missing file is reported", async () => {
      await Deno.remove(path);
      const report = await catalog.integrityCheck("sensors");
      assert.equal(report.ok, false);
      assert.deepEqual(report.problems.map((p) => p.kind), ["MISSING_FILE"]);
    });
    await t.step("a missing or non-archive file is not registered", async () => {
      await assertCatalogError(
        catalog.register(join(dir, "nope.pf")),
        "ARCHIVE_UNREADABLE",
        "no such file",
      );
      const bogus = join(dir, "bogus.pf");
      await Deno.writeTextFile(bogus, "a,b\n1,2\n".repeat(20));
      await assertCatalogError(catalog.register(bogus), "ARCHIVE_UNREADABLE", "BAD_MAGIC");
    });
  });
});

Deno.test("Catalog.registerDir() registers every archive and reports failures", async () => {
  await withCatalog("dir", async (catalog, dir) => {
    const data = join(dir, "data");
    await Deno.mkdir(join(data, "sub"), { recursive: true });
    await makeArchive(data, "one", 50, 20);
    await makeArchive(data, "two", 80, 20);
    await makeArchive(join(data, "sub"), "three", 10, 20);
    await Deno.writeTextFile(join(data, "broken.pf"), "not an archive");
    await Deno.writeTextFile(join(data, "notes.txt"), "ignored");
    const r = await catalog.registerDir(data);
    assert.deepEqual(r.registered.map((e) => e.name), ["one", "two"]);
    assert.deepEqual(r.failed.map((f) => [f.path.endsWith("broken.pf"), f.error.code]), [[
      true,
      "ARCHIVE_UNREADABLE",
    ]]);
    const again = await catalog.registerDir(data, { recursive: true });
    assert.deepEqual(again.registered.map((e) => e.name), ["three"]);
    assert.deepEqual(again.unchanged.map((e) => e.name), ["one", "two"]);
    await assertCatalogError(catalog.registerDir(join(dir, "missing")), "INVALID_ARGUMENT");
  });
});

Deno.test("Catalog with a root refuses paths outside it", async () => {
  const dir = await tempDir("root");
  const data = join(dir, "data");
  await Deno.mkdir(data);
  await makeArchive(data, "inside", 20, 10);
  await makeArchive(dir, "outside", 20, 10);
  const catalog = await Catalog.open(join(dir, "c.db"), { root: data });
  try {
    assert.equal((await catalog.register("inside.pf")).dataset.path, join(data, "inside.pf"));
    await assertCatalogError(catalog.register("../outside.pf"), "PATH_OUTSIDE_ROOT");
    await assertCatalogError(catalog.register(join(dir, "outside.pf")), "PATH_OUTSIDE_ROOT");
    await assertCatalogError(catalog.registerDir("/"), "PATH_OUTSIDE_ROOT");
  } finally {
    await catalog.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Catalog.thaw() delegates to the injected thaw function", async (t) => {
  await withCatalog("thaw", async (catalog, dir) => {
    const path = await makeArchive(dir, "t", 120, 50);
    await catalog.register(path);
    await catalog.register(path, { name: "t", version: "again" }).catch(() => undefined);
    await t.step("real thaw of a row range and columns", async () => {
      const out = join(dir, "t.csv");
      await catalog.thaw("t", { output: out, rows: { start: 10, end: 13 }, columns: ["sensor"] });
      assert.equal(await Deno.readTextFile(out), "sensor\ns2\ns3\ns0\n");
    });
    await t.step("unknown names are NOT_FOUND", async () => {
      await assertCatalogError(catalog.thaw("nope", { output: join(dir, "x.csv") }), "NOT_FOUND");
    });
  }, { thaw: opsThaw });
  await withCatalog("nothaw", async (catalog) => {
    await catalog.registerIndex(fakeIndex("t"));
    await assertCatalogError(catalog.thaw("t", { output: "x.csv" }), "THAW_UNAVAILABLE");
  });
});

Deno.test("Catalog keeps every one of 50 concurrent registrations", async () => {
  await withCatalog("concurrent", async (catalog) => {
    const results = await Promise.all(
      Array.from(
        { length: 50 },
        (_, i) =>
          i % 2 === 0
            ? catalog.registerIndex(fakeIndex(`ds${i}`))
            : catalog.registerIndex(fakeIndex("shared", { seed: String(i) })),
      ),
    );
    assert.ok(results.every((r) => r.created));
    const reads = await Promise.all(
      Array.from({ length: 20 }, () => catalog.list({ limit: 1000 })),
    );
    assert.ok(reads.every((p) => p.total === 26));
    assert.equal((await catalog.versions("shared", { limit: 100 })).total, 25);
    const versions = new Set(
      (await catalog.versions("shared", { limit: 100 })).items.map((v) => v.version),
    );
    assert.equal(versions.size, 25);
    assert.deepEqual((await catalog.sql("select count(*) from chunks")).rows, [[150]]);
  });
});

Deno.test("Catalog refuses a second owner of the database file and keeps data across reopen", async () => {
  const dir = await tempDir("owner");
  const db = join(dir, "c.db");
  const first = await Catalog.open(db);
  try {
    await first.registerIndex(fakeIndex("kept"));
    await assertCatalogError(Catalog.open(db), "DB_LOCKED", "already open");
  } finally {
    await first.close();
  }
  const second = await Catalog.open(db);
  try {
    assert.equal((await second.get("kept")).rows, 250);
    assert.equal((await second.chunks("kept")).total, 3);
  } finally {
    await second.close();
  }
  await assertCatalogError(second.get("kept"), "CLOSED");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("nameFromPath() strips .pf and unsafe characters", () => {
  assert.equal(nameFromPath("/data/flights.pf"), "flights");
  assert.equal(nameFromPath("my data (2).pf"), "my_data__2_");
  assert.equal(nameFromPath(".hidden.pf"), "hidden");
  assert.equal(nameFromPath("..."), "dataset");
});

Deno.test("Catalog.columns() answers each column's bytes, and works them out for older registrations", async () => {
  const dir = await tempDir("columns");
  const db = join(dir, "catalog.db");
  const archive = await makeArchive(dir, "sensors", 300, 100);
  let catalog = await Catalog.open(db);
  try {
    await catalog.register(archive);
    const report = await catalog.columns("sensors");
    const record = await catalog.get("sensors");
    assert.equal(report.version, "v1");
    assert.equal(report.rows, 300);
    assert.deepEqual(report.columns.map((c) => [c.name, c.type]), [
      ["ts", "timestamp[us]"],
      ["sensor", "string"],
      ["reading", "float64"],
    ]);
    // The blocks of every chunk, column by column, are the whole payload.
    assert.equal(report.stored_bytes, record.stored_bytes);
    assert.ok(Math.abs(report.columns.reduce((n, c) => n + c.share, 0) - 1) < 1e-9);
    for (const c of report.columns) {
      assert.ok(c.stored_bytes > 0 && c.raw_bytes > 0 && c.predictors.length > 0, c.name);
    }
    // A registration from before the table existed: worked out from the archive once.
    await catalog.close();
    const { DuckDBInstance } = await import("@duckdb/node-api");
    const raw = await DuckDBInstance.create(db);
    const conn = await raw.connect();
    await conn.run("DELETE FROM dataset_columns");
    conn.closeSync();
    raw.closeSync();
    catalog = await Catalog.open(db);
    assert.deepEqual(await catalog.columns("sensors"), report);
    assert.equal((await catalog.sql("SELECT count(*) AS n FROM dataset_columns")).rows[0]![0], 3);
    // …and a clear error when that archive is gone.
    await catalog.close();
    const again = await DuckDBInstance.create(db);
    const c2 = await again.connect();
    await c2.run("DELETE FROM dataset_columns");
    c2.closeSync();
    again.closeSync();
    await Deno.remove(archive);
    catalog = await Catalog.open(db);
    await assertCatalogError(catalog.columns("sensors"), "ARCHIVE_UNREADABLE");
    await assertCatalogError(catalog.columns("nope"), "NOT_FOUND");
  } finally {
    await catalog.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Catalog registers an archive grown by append --evolve: its schema, columns and schema changes", async () => {
  const { append } = await import("../ops/append.ts");
  const { freeze } = await import("../ops/freeze.ts");
  const { CatalogAccess } = await import("./_access.ts");
  await withCatalog("evolved", async (catalog, dir) => {
    await Deno.writeTextFile(join(dir, "a.csv"), "id,city\n1,Oslo\n2,Lima\n3,Pune\n");
    await Deno.writeTextFile(join(dir, "b.csv"), "id,city,tip\n4,Oslo,1.5\n5,Lima,\n");
    const path = join(dir, "trips.pf");
    await freeze(join(dir, "a.csv"), path, { chunkRows: 2, threads: 0 });
    await catalog.register(path, { version: "v1" });
    await append(join(dir, "b.csv"), path, { evolve: true, threads: 0 });
    const r = await catalog.register(path, { version: "v2" });
    assert.deepEqual(r.dataset.schema.map((c) => c.name), ["id", "city", "tip"]);
    assert.equal(r.dataset.rows, 5);
    const columns = await catalog.columns("trips", { version: "v2" });
    const tip = columns.columns.find((c) => c.name === "tip")!;
    assert.ok(tip.stored_bytes > 0, "the one chunk holding tip counts its bytes");
    assert.equal(tip.null_count, 5 - 1, "rows 1-3 lack it, row 5 holds a null");
    const versions = await new CatalogAccess(catalog, { roots: [] }).versions(null, "trips", {});
    assert.deepEqual(
      versions.items.map((v) => [v.version, v.schema_changes?.map((c) => [c.column, c.kind])]),
      [["v2", [["tip", "added"]]], ["v1", undefined]],
    );
    const report = await catalog.integrityCheck("trips");
    assert.equal(report.ok, true, JSON.stringify(report.problems));
  });
});
