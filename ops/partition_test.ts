import assert from "node:assert/strict";
import type { Batch, Schema } from "../format/column.ts";
import { STALE_TEMP_AGE_MS } from "../internal/temp_files.ts";
import { OpsError } from "./errors.ts";
import { freezePartitioned, pathSegment } from "./partition.ts";
import { MANIFEST_NAME, readManifest } from "./partition_read.ts";
import { audit, verify } from "./inspect.ts";
import { freeze } from "./freeze.ts";
import { thaw, thawTable } from "./thaw.ts";

const TMP = ".tmp/ops_partition";
await Deno.remove(TMP, { recursive: true }).catch(() => {});
await Deno.mkdir(TMP, { recursive: true });

const COUNTRIES = ["US", "FR", "São Paulo/x", ""];

function events(n: number): { text: string; rows: string[][] } {
  const rows: string[][] = [];
  for (let i = 0; i < n; i++) {
    rows.push([
      String(i),
      COUNTRIES[i % 4]!,
      String(2000 + ((i >> 2) % 3)),
      `${i % 17}.25`,
    ]);
  }
  const text = ["id,country,year,amount", ...rows.map((r) => r.join(","))].join("\n") + "\n";
  return { text, rows };
}

Deno.test("freezePartitioned() writes one archive per partition and thaws back every row", async () => {
  const { text, rows } = events(6000);
  await Deno.writeTextFile(`${TMP}/events.csv`, text);
  const s = await freezePartitioned(`${TMP}/events.csv`, `${TMP}/out`, {
    partitionBy: ["country", "year"],
    chunkRows: 400,
    threads: 2,
  });
  assert.equal(s.rows, 6000);
  assert.equal(s.partitions.length, 12);
  assert.deepEqual(s.partitions[0]!.values, { country: "US", year: "2000" });
  assert.equal(s.partitions[0]!.path, "country=US/year=2000/part.pf");
  const paths = s.partitions.map((p) => p.path);
  assert.ok(paths.includes("country=S%C3%A3o%20Paulo%2Fx/year=2001/part.pf"), paths.join(" "));
  assert.ok(paths.includes("country=__null__/year=2002/part.pf"), "empty CSV cells are nulls");
  for (const p of s.partitions) {
    assert.equal((await verify(`${TMP}/out/${p.path}`)).ok, true);
  }
  const { manifest } = await readManifest(`${TMP}/out`);
  assert.equal(manifest.rows, 6000);
  assert.deepEqual(manifest.partition_by, ["country", "year"]);

  const back = await thawTable(`${TMP}/out`);
  assert.equal(back.numRows, 6000);
  const ids = [...back.getChild("id")!.toArray()].map(Number).sort((a, b) => a - b);
  assert.deepEqual(ids, rows.map((r) => Number(r[0])));

  const fr = await thaw(`${TMP}/out`, `${TMP}/fr.csv`, {
    where: "country = 'FR' and year >= 2001",
    columns: ["id", "year"],
  });
  assert.equal(fr.partitions_total, 12);
  assert.equal(fr.partitions_read, 2, "only the two matching partitions are opened");
  const expected = rows.filter((r) => r[1] === "FR" && Number(r[2]) >= 2001);
  assert.equal(fr.rows, expected.length);
  const got = (await Deno.readTextFile(`${TMP}/fr.csv`)).trim().split("\n").slice(1)
    .map((l) => l.split(",")[0]).map(Number).sort((a, b) => a - b);
  assert.deepEqual(got, expected.map((r) => Number(r[0])));

  const nulls = await thawTable(`${TMP}/out`, { where: "country is null and id < 100" });
  assert.equal(nulls.numRows, 25);
  const byAmount = await thaw(`${TMP}/out`, `${TMP}/big.jsonl`, { where: "amount > 100" });
  assert.equal(byAmount.rows, 0);
  assert.equal(byAmount.partitions_read, 0, "manifest statistics prune on any column");
});

Deno.test("freezePartitioned() under max_speed plans each partition as freeze plans it", async () => {
  const { text, rows } = events(6000);
  await Deno.writeTextFile(`${TMP}/fast.csv`, text);
  const options = { chunkRows: 400, threads: 2, profile: "max_speed" as const };
  const s = await freezePartitioned(`${TMP}/fast.csv`, `${TMP}/fast`, {
    ...options,
    partitionBy: ["country"],
  });
  assert.equal(s.rows, 6000);
  // The FR partition frozen alone: the same quick plan, each column's predictor fixed.
  const fr = rows.filter((r) => r[1] === "FR");
  await Deno.writeTextFile(
    `${TMP}/fr_only.csv`,
    ["id,country,year,amount", ...fr.map((r) => r.join(","))].join("\n") + "\n",
  );
  await freeze(`${TMP}/fr_only.csv`, `${TMP}/fr_only.pf`, options);
  const alone = await audit(`${TMP}/fr_only.pf`);
  const part = await audit(`${TMP}/fast/country=FR/part.pf`);
  const planOf = (a: typeof alone) =>
    a.columns.map((c) => ({ name: c.name, deps: c.depends_on, predictors: c.predictors }));
  assert.deepEqual(planOf(part), planOf(alone));
  const back = await thawTable(`${TMP}/fast/country=FR/part.pf`);
  assert.deepEqual(
    [...back.getChild("id")!.toArray()].map(Number),
    fr.map((r) => Number(r[0])),
  );
  assert.deepEqual([...back.getChild("amount")!.toArray()], fr.map((r) => Number(r[3])));
});

Deno.test("freezePartitioned() refuses an unknown column and a non-empty directory", async () => {
  await Deno.writeTextFile(`${TMP}/small.csv`, "a,b\n1,x\n");
  await assert.rejects(
    freezePartitioned(`${TMP}/small.csv`, `${TMP}/bad`, { partitionBy: ["c"], threads: 0 }),
    (e) =>
      e instanceof OpsError && e.code === "BAD_OPTION" &&
      /partition by "c": the source has a, b/.test(e.message),
  );
  await Deno.mkdir(`${TMP}/full`, { recursive: true });
  await Deno.writeTextFile(`${TMP}/full/keep.txt`, "x");
  await assert.rejects(
    freezePartitioned(`${TMP}/small.csv`, `${TMP}/full`, { partitionBy: ["a"], threads: 0 }),
    /not empty/,
  );
  await assert.rejects(Deno.stat(`${TMP}/full/${MANIFEST_NAME}`), Deno.errors.NotFound);
});

Deno.test("pathSegment() keeps safe characters and encodes the rest", () => {
  assert.equal(pathSegment("2001-02-01"), "2001-02-01");
  assert.equal(pathSegment("a/b c"), "a%2Fb%20c");
  assert.equal(pathSegment(".."), "%2E.");
  assert.equal(pathSegment(null), "__null__");
  assert.equal(pathSegment(""), "__empty__");
  assert.equal(pathSegment("__null__"), "%5F%5Fnull%5F%5F");
});

async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    out.push(e.name);
    if (e.isDirectory) out.push(...(await tree(`${dir}/${e.name}`)).map((n) => `${e.name}/${n}`));
  }
  return out.sort();
}

const KV: Schema = [
  { name: "k", type: "string", nullable: true },
  { name: "v", type: "float64", nullable: true },
];

function kvBatch(keys: string[]): Batch {
  return {
    schema: KV,
    length: keys.length,
    columns: [
      { type: "string", values: keys, validity: null },
      { type: "float64", values: Float64Array.from(keys, (_, i) => i), validity: null },
    ],
  };
}

Deno.test("freezePartitioned() that fails midway leaves no folders, and runs again", async (t) => {
  const boom = new Error("disk full");
  async function* failing(): AsyncGenerator<Batch> {
    yield kvBatch(["a", "b", "a", "c", "b", "a"]);
    throw boom;
  }
  const options = { partitionBy: ["k"], chunkRows: 2, threads: 0 };
  await t.step("into a directory it makes", async () => {
    const dir = `${TMP}/failed-new`;
    await assert.rejects(
      freezePartitioned({ schema: KV, batches: failing() }, dir, options),
      (e) => e === boom,
    );
    await assert.rejects(Deno.stat(dir), Deno.errors.NotFound);
  });
  await t.step("into an empty directory it was given", async () => {
    const dir = `${TMP}/failed-given`;
    await Deno.mkdir(dir);
    await assert.rejects(
      freezePartitioned({ schema: KV, batches: failing() }, dir, options),
      (e) => e === boom,
    );
    assert.deepEqual(await tree(dir), []);
    const s = await freezePartitioned({ schema: KV, batches: [kvBatch(["a", "b"])] }, dir, options);
    assert.equal(s.rows, 2);
    assert.equal((await readManifest(dir)).manifest.partitions.length, 2);
  });
});

Deno.test("freezePartitioned() clears what a killed freeze left, and nothing else", async () => {
  const dir = `${TMP}/killed`;
  const old = new Date(Date.now() - 2 * STALE_TEMP_AGE_MS);
  const leftover = async (path: string) => {
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, "half an archive");
    await Deno.utime(path, old, old);
  };
  await leftover(`${dir}/k=a/.part.pf.pf.tmp-1abc`);
  await leftover(`${dir}/k=b/j=1/.part.pf.pf.tmp-2def`);
  await Deno.mkdir(`${dir}/k=c`);
  const s = await freezePartitioned({ schema: KV, batches: [kvBatch(["a", "z"])] }, dir, {
    partitionBy: ["k"],
    threads: 0,
  });
  assert.equal(s.rows, 2);
  assert.deepEqual(await tree(dir), [MANIFEST_NAME, "k=a", "k=a/part.pf", "k=z", "k=z/part.pf"]);

  const kept = `${TMP}/killed-keep`;
  await leftover(`${kept}/k=a/.part.pf.pf.tmp-1abc`);
  await leftover(`${kept}/k=a/notes.txt`);
  await assert.rejects(
    freezePartitioned({ schema: KV, batches: [kvBatch(["a"])] }, kept, { partitionBy: ["k"] }),
    /not empty/,
  );
  assert.deepEqual(await tree(kept), ["k=a", "k=a/notes.txt"]);
});
