/**
 * Every type a source can hold comes back exactly, or is refused by name: Parquet
 * DECIMAL at 18 and 38 digits, Arrow decimal128/256, time32/64, duration and list
 * columns, and JSON lines with nested, mixed, huge and escaped values — each frozen
 * and thawed through `main.ts` as a user runs it, and compared with what DuckDB
 * (the project's own `@duckdb/node-api`) reads back.
 */
import assert from "node:assert/strict";
import * as arrow from "apache-arrow";
import { openLockedDuckDB, sqlString } from "../../io/_duckdb.ts";

const TMP = ".tmp/e2e_exact_types";
await Deno.remove(TMP, { recursive: true }).catch(() => {});
await Deno.mkdir(TMP, { recursive: true });

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-ffi",
      "main.ts",
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Runs one query in a DuckDB that may touch only `paths`, rows as text. */
async function duck(paths: string[], sql: string): Promise<string[][]> {
  const db = await openLockedDuckDB(paths);
  try {
    const r = await db.connection.runAndReadAll(sql);
    return r.getRows().map((row) => row.map((v) => (v === null ? "NULL" : String(v))));
  } finally {
    db.close();
  }
}

Deno.test("Parquet DECIMAL(18,2), (18,4) and (38,10) thaw exactly to CSV, JSON lines and Parquet", async () => {
  const src = `${TMP}/dec.parquet`;
  const db = await openLockedDuckDB([src]);
  try {
    await db.connection.run(
      `COPY (SELECT * FROM (VALUES
         (1234567890123456.78::DECIMAL(18,2), 99999999999999.9999::DECIMAL(18,4),
          1234567890123456.78::DECIMAL(38,10), 12345678901234567890123456.7890123456::DECIMAL(38,10)),
         (-0.01::DECIMAL(18,2), -99999999999999.9999::DECIMAL(18,4), NULL, -0.0000000001::DECIMAL(38,10))
       ) t(a, b, c, d)) TO ${sqlString(src)} (FORMAT parquet)`,
    );
  } finally {
    db.close();
  }
  const pf = `${TMP}/dec.pf`;
  const frozen = await cli("freeze", src, pf);
  assert.equal(frozen.code, 0, frozen.stderr);
  const audit = JSON.parse((await cli("audit", pf)).stdout);
  assert.deepEqual(audit.lossy_columns, []);
  assert.deepEqual(audit.columns.map((c: { type: string }) => c.type), [
    "decimal",
    "decimal",
    "decimal",
    "decimal",
  ]);

  assert.equal((await cli("thaw", pf, `${TMP}/dec.csv`)).code, 0);
  assert.equal(
    await Deno.readTextFile(`${TMP}/dec.csv`),
    "a,b,c,d\n" +
      "1234567890123456.78,99999999999999.9999,1234567890123456.7800000000,12345678901234567890123456.7890123456\n" +
      "-0.01,-99999999999999.9999,,-0.0000000001\n",
  );
  assert.equal((await cli("thaw", pf, `${TMP}/dec.jsonl`)).code, 0);
  assert.equal(
    (await Deno.readTextFile(`${TMP}/dec.jsonl`)).split("\n")[0],
    '{"a":1234567890123456.78,"b":99999999999999.9999,"c":1234567890123456.7800000000,"d":12345678901234567890123456.7890123456}',
  );

  const back = `${TMP}/dec_back.parquet`;
  assert.equal((await cli("thaw", pf, back)).code, 0);
  const q = (p: string) =>
    `SELECT a::VARCHAR, b::VARCHAR, c::VARCHAR, d::VARCHAR, typeof(a), typeof(d) FROM read_parquet(${
      sqlString(p)
    })`;
  assert.deepEqual(await duck([back], q(back)), await duck([src], q(src)));
});

/** An Arrow IPC file with the column types the issue found mangled. */
async function writeArrowTypes(path: string): Promise<void> {
  const raw = <T extends arrow.DataType>(type: T, length: number, data: ArrayBufferView) =>
    arrow.makeVector(arrow.makeData({ type, length, nullCount: 0, data } as never));
  const dec = new Uint32Array(8);
  dec[0] = 123; // 1.23
  dec.set([0xffffff85, 0xffffffff, 0xffffffff, 0xffffffff], 4); // -1.23
  const table = new arrow.Table({
    d: raw(new arrow.Decimal(2, 10, 128), 2, dec),
    t: raw(new arrow.TimeMicrosecond(), 2, BigInt64Array.of(3723456789n, 86399999999n)),
    du: raw(new arrow.DurationMillisecond(), 2, BigInt64Array.of(5400000n, -1n)),
    l: arrow.vectorFromArray(
      [[1n, 2n], []],
      new arrow.List(new arrow.Field("item", new arrow.Int64())),
    ),
  });
  await Deno.writeFile(path, arrow.tableToIPC(table, "file"));
}

Deno.test("Arrow decimal128, time64, duration come back exactly; a list is refused by name, or stored as JSON when asked", async () => {
  const src = `${TMP}/types.arrow`;
  await writeArrowTypes(src);
  const pf = `${TMP}/types.pf`;
  const refused = await cli("freeze", src, pf);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /column 'l'.*List<Int64>/);
  assert.match(refused.stderr, /json/);
  await assert.rejects(Deno.stat(pf), Deno.errors.NotFound);

  const frozen = await cli("freeze", src, pf, "--types", "l=json");
  assert.equal(frozen.code, 0, frozen.stderr);
  const peek = JSON.parse((await cli("peek", pf, "--json")).stdout);
  assert.deepEqual(peek.rows, [
    ["1.23", "01:02:03.456789", "PT1H30M", "[1,2]"],
    ["-1.23", "23:59:59.999999", "-PT0.001S", "[]"],
  ]);
  const out = `${TMP}/types_back.arrow`;
  assert.equal((await cli("thaw", pf, out)).code, 0);
  const back = arrow.tableFromIPC(await Deno.readFile(out));
  assert.deepEqual(back.schema.fields.map((f) => String(f.type)), [
    "Decimal[10e+2]",
    "Time64<MICROSECOND>",
    "Duration<MILLISECOND>",
    "Utf8",
  ]);
  assert.equal(back.schema.fields[3]!.metadata.get("ARROW:extension:name"), "arrow.json");
  const original = arrow.tableFromIPC(await Deno.readFile(src));
  for (const name of ["d", "t", "du"]) {
    const a = original.getChild(name)!.data[0]!;
    const b = back.getChild(name)!.data[0]!;
    assert.deepEqual(b.values, a.values, `${name}: same values`);
  }
});

Deno.test("JSON lines values thaw as the same JSON values: nested, mixed, huge, escaped", async () => {
  const lines = [
    '{"a":{"x":1},"b":[1,"x",null],"c":1,"d":12345678901234567890123,"e":1e400,"f":"\\ud800","g":1.5}',
    '{"a":{"y":[2]},"b":[],"c":"x","d":1,"e":2,"f":"ok","g":1234567890123456.78}',
    '{"a":null,"b":null,"c":true,"d":2,"e":3,"f":"z","g":2}',
  ];
  const src = `${TMP}/values.jsonl`;
  await Deno.writeTextFile(src, lines.join("\n") + "\n");
  const pf = `${TMP}/values.pf`;
  const frozen = await cli("freeze", src, pf);
  assert.equal(frozen.code, 0, frozen.stderr);
  const audit = JSON.parse((await cli("audit", pf)).stdout);
  assert.deepEqual(
    audit.columns.map((c: { name: string; type: string }) => `${c.name}:${c.type}`),
    ["a:json", "b:json", "c:json", "d:json", "e:json", "f:json", "g:json"],
  );
  assert.equal((await cli("thaw", pf, `${TMP}/values_back.jsonl`)).code, 0);
  const back = (await Deno.readTextFile(`${TMP}/values_back.jsonl`)).split("\n");
  assert.deepEqual(back.slice(0, 3), lines, "byte for byte, since every key was present");
});
