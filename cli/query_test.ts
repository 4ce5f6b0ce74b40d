import assert from "node:assert/strict";
import { freeze } from "../ops/freeze.ts";
import { cli } from "./_test_utils.ts";

const TMP = ".tmp/cli_query";
await Deno.remove(TMP, { recursive: true }).catch(() => {});
await Deno.mkdir(TMP, { recursive: true });
await Deno.writeTextFile(
  `${TMP}/t.csv`,
  "day,city,n\n2024-01-01,Paris,3\n2024-01-02,Lyon,5\n2024-01-02,Paris,7\n",
);
await freeze(`${TMP}/t.csv`, `${TMP}/t.pf`, { threads: 0 });

Deno.test("sql answers as CSV, JSON lines, JSON, a table or into a file, and reports what it read", async () => {
  const q = "SELECT city, sum(n) AS total FROM t GROUP BY city ORDER BY city";
  const reg = ["--register", `t=${TMP}/t.pf`];
  const answer = async (format: string) => {
    const out = `${TMP}/answer.${format}`;
    await Deno.remove(out).catch(() => {});
    const r = await cli(["sql", q, ...reg, "--output", out, "--format", format]);
    assert.equal(r.code, 0, r.err);
    return { text: await Deno.readTextFile(out), err: r.err };
  };
  const csv = await answer("csv");
  assert.equal(csv.text, "city,total\nLyon,5\nParis,10\n");
  assert.match(
    csv.err,
    /^t: 2 column\(s\) thawed, 1 of 1 chunks read, .* 3 rows loaded\n2 row\(s\) in /,
  );
  assert.equal(
    (await answer("jsonl")).text,
    '{"city":"Lyon","total":5}\n{"city":"Paris","total":10}\n',
  );
  assert.deepEqual(JSON.parse((await answer("json")).text), [
    { city: "Lyon", total: 5 },
    { city: "Paris", total: 10 },
  ]);
  const table = await cli(["sql", q, ...reg], { stdoutIsTerminal: true });
  assert.match(table.out, /^city +total\n-+ +-+\nLyon +5\nParis +10$/);
  await Deno.remove(`${TMP}/a.parquet`).catch(() => {});
  assert.equal((await cli(["sql", q, ...reg, "--output", `${TMP}/a.parquet`])).code, 0);
  const back = await cli(["sql", "SELECT * FROM a", "--register", `a=${TMP}/t.pf`]);
  assert.equal(back.code, 0);
  const again = await cli(["sql", q, ...reg, "--output", `${TMP}/a.parquet`]);
  assert.equal(again.code, 1);
  assert.match(again.err, /\[DESTINATION_EXISTS\]/);
});

Deno.test("sql: usage errors exit 2, refused and failed queries exit 1 with their code", async () => {
  const cases: [string[], number, RegExp][] = [
    [["sql", "SELECT 1"], 2, /--register ALIAS=ARCHIVE/],
    [["sql", "SELECT 1", "--register", "t"], 2, /'t' is not ALIAS=ARCHIVE/],
    [
      ["sql", "SELECT 1", "--register", `t=${TMP}/t.pf`, "--format", "xml"],
      2,
      /--format must be one of/,
    ],
    [["sql", "DROP TABLE t", "--register", `t=${TMP}/t.pf`], 1, /\[SQL_REFUSED\]/],
    [
      ["sql", "SELECT * FROM read_csv('/etc/passwd')", "--register", `t=${TMP}/t.pf`],
      1,
      /reads or writes files.*\[SQL_REFUSED\]/,
    ],
    [
      ["sql", "SELECT * FROM u", "--register", `t=${TMP}/t.pf`],
      1,
      /u does not exist.*registered: t \[SQL_FAILED\]/,
    ],
    [
      ["sql", "SELECT 1", "--register", `t=${TMP}/t.csv`],
      1,
      /this is a CSV file, not a Permafrost archive/,
    ],
  ];
  for (const [args, code, pattern] of cases) {
    const r = await cli(args);
    assert.equal(r.code, code, `${args.join(" ")}: ${r.err}`);
    assert.match(r.err, pattern, args.join(" "));
  }
});

Deno.test("sql --query-backend duckdb-wasm answers as the native engine does", async () => {
  const q = "SELECT city, sum(n) AS total, min(day) AS first FROM t GROUP BY city ORDER BY city";
  const reg = ["--register", `t=${TMP}/t.pf`, "--force"];
  const native = await cli(["sql", q, ...reg, "--output", `${TMP}/native.csv`]);
  assert.equal(native.code, 0, native.err);
  const wasm = await cli([
    "sql",
    q,
    ...reg,
    "--output",
    `${TMP}/wasm.csv`,
    "--query-backend",
    "duckdb-wasm",
  ]);
  assert.equal(wasm.code, 0, wasm.err);
  const text = await Deno.readTextFile(`${TMP}/wasm.csv`);
  assert.equal(text, await Deno.readTextFile(`${TMP}/native.csv`));
  assert.equal(text, "city,total,first\nLyon,5,2024-01-02\nParis,10,2024-01-01\n");
  const bad = await cli(["sql", q, ...reg, "--query-backend", "sqlite"]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /expected one of duckdb, duckdb-wasm/);
});
