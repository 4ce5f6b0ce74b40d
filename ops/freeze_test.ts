import assert from "node:assert/strict";
import { historyHas, readerAt } from "../tests/_history.ts";
import { requireTool } from "../internal/_test_utils.ts";
import { tableFromArrays } from "apache-arrow";
import { ALL_TYPES, assertColumnEqual, randomBatch } from "../format/_test_utils.ts";
import { ArchiveReader } from "../format/reader.ts";
import { concatBatches } from "../format/column.ts";
import type { Batch } from "../format/column.ts";
import { append, audit, freeze, OpsError, thaw, thawTable, verify } from "../mod.ts";
import type { FormatWarning } from "../mod.ts";

const ZPAQ = requireTool("zpaq", "ops/freeze_test.ts") !== null;

const TMP = ".tmp/ops_freeze";
await Deno.mkdir(TMP, { recursive: true });

async function readBack(path: string): Promise<Batch> {
  const reader = await ArchiveReader.open(path);
  try {
    const parts: Batch[] = [];
    for await (const b of reader.read()) parts.push(b);
    return concatBatches(reader.index.schema, parts);
  } finally {
    reader.close();
  }
}

Deno.test("freeze() of batches round-trips every type, with and without the Worker pool", async () => {
  const batch = randomBatch(ALL_TYPES, 2500, 11);
  const inline = await freeze({ schema: ALL_TYPES, batches: [batch] }, `${TMP}/inline.pf`, {
    chunkRows: 1000,
    threads: 0,
  });
  const pooled = await freeze({ schema: ALL_TYPES, batches: [batch] }, `${TMP}/pooled.pf`, {
    chunkRows: 1000,
    threads: 2,
  });
  assert.equal(inline.rows, 2500);
  assert.equal(inline.chunks, 3);
  assert.equal(pooled.payload_sha256, inline.payload_sha256, "the pool writes the same bytes");
  const back = await readBack(`${TMP}/pooled.pf`);
  ALL_TYPES.forEach((f, i) => assertColumnEqual(back.columns[i]!, batch.columns[i]!, f.name));
});

Deno.test("freeze() of an Arrow table thaws back to the same table, nulls apart from empty strings", async () => {
  const table = tableFromArrays({
    id: BigInt64Array.from([1n, 2n, 9007199254740993n]),
    name: ["", "x", "y"],
  });
  await freeze(table, `${TMP}/table.pf`, { threads: 0 });
  const back = await thawTable(`${TMP}/table.pf`);
  assert.deepEqual(back.getChild("id")?.toArray(), table.getChild("id")?.toArray());
  assert.deepEqual(back.getChild("name")?.toArray(), ["", "x", "y"]);
  await Deno.writeTextFile(`${TMP}/nulls.csv`, 'k,v\n1,""\n2,\n3,z\n');
  await freeze(`${TMP}/nulls.csv`, `${TMP}/nulls.pf`, { threads: 0 });
  const nulls = await thawTable(`${TMP}/nulls.pf`);
  assert.deepEqual(nulls.getChild("v")?.toArray(), ["", null, "z"]);
});

Deno.test("freeze() reads a column as text when a value past the type sample does not fit", async () => {
  const lines = ["n,s"];
  for (let i = 0; i < 10_050; i++) lines.push(`${i},r${i}`);
  lines.push("not-a-number,last");
  await Deno.writeTextFile(`${TMP}/late.csv`, lines.join("\n") + "\n");
  const summary = await freeze(`${TMP}/late.csv`, `${TMP}/late.pf`, { threads: 0 });
  assert.deepEqual(summary.widened_columns, ["n"]);
  const report = await audit(`${TMP}/late.pf`);
  assert.equal(report.columns[0]!.type, "string");
  await thaw(`${TMP}/late.pf`, `${TMP}/late_back.csv`);
  assert.equal(await Deno.readTextFile(`${TMP}/late_back.csv`), lines.join("\n") + "\n");
});

Deno.test("freeze() warns about non-monotonic timestamps and still round-trips them exactly", async () => {
  const ts = BigInt64Array.from([3n, 1n, 2n, 10n].map((x) => x * 60_000_000n));
  const schema = [{ name: "t", type: "timestamp" as const, nullable: false, unit: "us" as const }];
  const batch: Batch = {
    schema,
    columns: [{ type: "timestamp", values: ts, validity: null }],
    length: 4,
  };
  const warnings: FormatWarning[] = [];
  const summary = await freeze({ schema, batches: [batch] }, `${TMP}/ts.pf`, {
    threads: 0,
    onWarning: (w) => warnings.push(w),
  });
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0]!.code, "NON_MONOTONIC_TIMESTAMPS");
  assert.equal(warnings[0]!.column, "t");
  assert.deepEqual(summary.warnings, warnings);
  assert.deepEqual((await readBack(`${TMP}/ts.pf`)).columns[0]!.values, ts);
});

Deno.test("freeze() quantizes floats only when asked, and audit lists the lossy columns", async () => {
  const values = Float64Array.from({ length: 1000 }, (_, i) => Math.sin(i) * 1000);
  const table = tableFromArrays({ x: values, y: values.slice() });
  await freeze(table, `${TMP}/exact.pf`, { threads: 0 });
  assert.deepEqual((await audit(`${TMP}/exact.pf`)).lossy_columns, []);
  assert.deepEqual((await readBack(`${TMP}/exact.pf`)).columns[0]!.values, values);
  await freeze(table, `${TMP}/lossy.pf`, { threads: 0, quantization: { x: "QUANT_MEDIUM" } });
  const report = await audit(`${TMP}/lossy.pf`);
  assert.deepEqual(report.lossy_columns, ["x"]);
  const back = await readBack(`${TMP}/lossy.pf`);
  assert.deepEqual(back.columns[1]!.values, values, "y stays exact");
  const x = back.columns[0]!.values as Float64Array;
  assert.notDeepEqual(x, values);
  for (let i = 0; i < values.length; i++) {
    assert.ok(Math.abs(x[i]! - values[i]!) <= Math.abs(values[i]!) * 2 ** -23);
  }
  await assert.rejects(
    freeze(table, `${TMP}/bad.pf`, { quantization: "QUANT_HUGE" as "QUANT_LOW" }),
    OpsError,
  );
});

Deno.test("freeze() refuses duplicate and null primary keys naming the first offender", async () => {
  await Deno.writeTextFile(`${TMP}/pk.csv`, "id,v\n1,a\n2,b\n2,c\n");
  await assert.rejects(
    freeze(`${TMP}/pk.csv`, `${TMP}/pk.pf`, { primaryKey: "id", threads: 0 }),
    (e: unknown) =>
      e instanceof OpsError && e.code === "PRIMARY_KEY" &&
      /repeats value "2" at row 2/.test(e.message),
  );
  await assert.rejects(
    Deno.stat(`${TMP}/pk.pf`),
    Deno.errors.NotFound,
    "no archive is left behind",
  );
  await Deno.writeTextFile(`${TMP}/pk2.csv`, "id,v\n1,a\n2,b\n3,c\n");
  await freeze(`${TMP}/pk2.csv`, `${TMP}/pk2.pf`, { primaryKey: "id", threads: 0 });
  assert.equal((await audit(`${TMP}/pk2.pf`)).primary_key, "id");
  await assert.rejects(
    freeze(`${TMP}/pk2.csv`, `${TMP}/pk3.pf`, { primaryKey: "nope" }),
    /not a column/,
  );
});

Deno.test("freeze() with codec auto records why it chose", async () => {
  const batch = randomBatch(ALL_TYPES, 3000, 4);
  const s = await freeze({ schema: ALL_TYPES, batches: [batch] }, `${TMP}/auto.pf`, {
    codec: "auto",
    threads: 0,
  });
  assert.ok(["zstd", "lzma2"].includes(s.codec));
  assert.match(s.auto_reason ?? "", /1000-row sample/);
  const report = await audit(`${TMP}/auto.pf`);
  assert.equal(report.auto_reason, s.auto_reason);
  assert.equal((await verify(`${TMP}/auto.pf`)).ok, true);
});

Deno.test("freeze() with zpaq round-trips", { ignore: !ZPAQ }, async () => {
  const batch = randomBatch(ALL_TYPES, 500, 8);
  await freeze({ schema: ALL_TYPES, batches: [batch] }, `${TMP}/zpaq.pf`, {
    codec: "zpaq",
    threads: 0,
  });
  assert.equal((await audit(`${TMP}/zpaq.pf`)).codec, "zpaq");
  const back = await readBack(`${TMP}/zpaq.pf`);
  ALL_TYPES.forEach((f, i) => assertColumnEqual(back.columns[i]!, batch.columns[i]!, f.name));
});

Deno.test("freeze() with zpaqwasm round-trips through the Worker pool", async () => {
  const batch = randomBatch(ALL_TYPES, 700, 9);
  const s = await freeze({ schema: ALL_TYPES, batches: [batch] }, `${TMP}/zpaqwasm.pf`, {
    codec: "zpaqwasm",
    chunkRows: 400,
    threads: 2,
  });
  assert.equal(s.codec, "zpaqwasm");
  assert.equal((await audit(`${TMP}/zpaqwasm.pf`)).codec, "zpaqwasm");
  assert.equal((await verify(`${TMP}/zpaqwasm.pf`)).ok, true);
  const back = await readBack(`${TMP}/zpaqwasm.pf`);
  ALL_TYPES.forEach((f, i) => assertColumnEqual(back.columns[i]!, batch.columns[i]!, f.name));
});

// The reader as it was before the zpaqwasm codec, from the repository's history: a
// new codec id needs no format version because an older reader refuses it by name.
const BEFORE_ZPAQWASM = "049f236";

Deno.test({
  name: "a reader from before zpaqwasm refuses a zpaqwasm archive as UNKNOWN_CODEC",
  ignore: !(await historyHas(BEFORE_ZPAQWASM)), // a shallow clone has no history
  fn: async () => {
    const batch = randomBatch(ALL_TYPES, 50, 10);
    const archive = `${Deno.cwd()}/${TMP}/zpaqwasm_old_reader.pf`;
    await freeze({ schema: ALL_TYPES, batches: [batch] }, archive, {
      codec: "zpaqwasm",
      threads: 0,
    });
    const old = await readerAt(BEFORE_ZPAQWASM, `${Deno.cwd()}/${TMP}/reader_before_zpaqwasm`);
    await assert.rejects(old.ArchiveReader.open(archive), (err: unknown) => {
      assert.ok(err instanceof Error && "code" in err, String(err));
      assert.equal(err.code, "UNKNOWN_CODEC");
      assert.match(err.message, /unknown codec "zpaqwasm"/);
      return true;
    });
  },
});

Deno.test("freeze() of an empty source writes a valid empty archive", async () => {
  await Deno.writeTextFile(`${TMP}/empty.csv`, "a,b\n");
  const s = await freeze(`${TMP}/empty.csv`, `${TMP}/empty.pf`, { threads: 0 });
  assert.equal(s.rows, 0);
  assert.equal((await verify(`${TMP}/empty.pf`)).ok, true);
  await thaw(`${TMP}/empty.pf`, `${TMP}/empty_back.csv`);
  assert.equal(await Deno.readTextFile(`${TMP}/empty_back.csv`), "a,b\n");
});

Deno.test("freeze() refuses bad options before touching the destination", async () => {
  await assert.rejects(
    freeze(`${TMP}/pk2.csv`, `${TMP}/x.pf`, { codec: "gzip" }),
    /Unknown codec "gzip"/,
  );
  for (const chunkRows of [0, 10_000_001, 1.5]) {
    await assert.rejects(
      freeze(`${TMP}/pk2.csv`, `${TMP}/x.pf`, { chunkRows }),
      /Chunk rows must be an integer 1\.\.10000000/,
    );
  }
  await assert.rejects(Deno.stat(`${TMP}/x.pf`), Deno.errors.NotFound);
});

Deno.test("freeze() and append() refuse more than 4 threads per core with BAD_OPTION", async () => {
  const cores = Math.max(1, navigator.hardwareConcurrency || 1);
  const table = tableFromArrays({ n: Float64Array.of(1, 2, 3) });
  const refused = (err: unknown) => {
    assert.ok(err instanceof OpsError);
    assert.equal(err.code, "BAD_OPTION");
    assert.match(err.message, new RegExp(`at most ${4 * cores} \\(4 per core`));
    return true;
  };
  await Deno.remove(`${TMP}/threads.pf`).catch(() => {});
  await assert.rejects(freeze(table, `${TMP}/threads.pf`, { threads: 1000 }), refused);
  await assert.rejects(Deno.stat(`${TMP}/threads.pf`), Deno.errors.NotFound);
  await freeze(table, `${TMP}/threads.pf`, { threads: 4 * cores });
  await assert.rejects(append(table, `${TMP}/threads.pf`, { threads: 4 * cores + 1 }), refused);
});
