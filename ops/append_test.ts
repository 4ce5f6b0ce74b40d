import assert from "node:assert/strict";
import { tableFromArrays } from "apache-arrow";
import { FormatError } from "../format/errors.ts";
import { append } from "./append.ts";
import { diff } from "./diff.ts";
import { OpsError } from "./errors.ts";
import { freeze } from "./freeze.ts";
import { audit, verify } from "./inspect.ts";
import { thaw, thawTable } from "./thaw.ts";

const TMP = ".tmp/ops_append";
await Deno.mkdir(TMP, { recursive: true });

function csv(from: number, to: number, order: "natural" | "swapped" = "natural"): string {
  const head = order === "natural" ? "id,ts,city,temp" : "temp,city,ts,id";
  const lines = [head];
  for (let i = from; i < to; i++) {
    const cells = [
      String(i),
      `2024-03-${String(1 + (i % 28)).padStart(2, "0")} 10:${String(i % 60).padStart(2, "0")}:00`,
      ["Oslo", "Lima", "Pune"][i % 3]!,
      `${(i % 40) - 10}.5`,
    ];
    lines.push((order === "natural" ? cells : cells.reverse()).join(","));
  }
  return lines.join("\n") + "\n";
}

async function tempFiles(): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(TMP)) if (e.name.includes(".pf.tmp-")) out.push(e.name);
  return out;
}

Deno.test("append() adds chunks encoded with the archive's header: same payload as one freeze, verify passes", async () => {
  await Deno.writeTextFile(`${TMP}/all.csv`, csv(0, 3500));
  await Deno.writeTextFile(`${TMP}/first.csv`, csv(0, 2000));
  await Deno.writeTextFile(`${TMP}/more.csv`, csv(2000, 3500, "swapped"));
  const whole = await freeze(`${TMP}/all.csv`, `${TMP}/whole.pf`, { chunkRows: 1000, threads: 0 });
  await freeze(`${TMP}/first.csv`, `${TMP}/grown.pf`, { chunkRows: 1000, threads: 0 });
  await Deno.copyFile(`${TMP}/grown.pf`, `${TMP}/before.pf`);
  const s = await append(`${TMP}/more.csv`, `${TMP}/grown.pf`, { threads: 2 });
  assert.equal(s.rows_before, 2000);
  assert.equal(s.rows_added, 1500);
  assert.equal(s.rows, 3500);
  assert.equal(s.chunks_before, 2);
  assert.equal(s.chunks_added, 2);
  assert.equal(
    s.payload_sha256,
    whole.payload_sha256,
    "the appended payload is what one freeze writes",
  );
  const report = await verify(`${TMP}/grown.pf`);
  assert.equal(report.ok, true);
  assert.equal(report.chunks, 4);
  const d = await diff(`${TMP}/before.pf`, `${TMP}/grown.pf`);
  assert.deepEqual(d.summary, { unchanged: 2, changed: 0, added: 2, removed: 0 });
  await thaw(`${TMP}/grown.pf`, `${TMP}/grown.csv`);
  assert.equal(
    await Deno.readTextFile(`${TMP}/grown.csv`),
    await Deno.readTextFile(`${TMP}/all.csv`),
  );
  assert.deepEqual(await tempFiles(), []);
});

Deno.test("append() of an Arrow table converts nothing silently: a type mismatch lists the columns", async () => {
  await freeze(tableFromArrays({ n: Float64Array.of(1, 2), s: ["a", "b"] }), `${TMP}/t.pf`, {
    threads: 0,
  });
  const before = (await audit(`${TMP}/t.pf`)).payload_sha256;
  await assert.rejects(
    append(tableFromArrays({ n: ["x"], extra: Float64Array.of(1) }), `${TMP}/t.pf`, { threads: 0 }),
    (e) =>
      e instanceof OpsError && e.code === "SCHEMA_MISMATCH" &&
      /missing "s" \(string\); extra "extra" \(float64\); "n": archive float64, source string/
        .test(e.message),
  );
  await Deno.writeTextFile(`${TMP}/wrong.csv`, "n,t\n1.5,x\n");
  await assert.rejects(
    append(`${TMP}/wrong.csv`, `${TMP}/t.pf`, { threads: 0 }),
    /columns differ: missing "s" \(string\); extra "t" \(string\)/,
  );
  assert.equal((await audit(`${TMP}/t.pf`)).payload_sha256, before);
  const s = await append(tableFromArrays({ s: ["c"], n: Float64Array.of(3) }), `${TMP}/t.pf`, {
    threads: 0,
  });
  assert.equal(s.rows, 3);
  const t = await thawTable(`${TMP}/t.pf`);
  assert.deepEqual([...t.getChild("n")!.toArray()], [1, 2, 3]);
  assert.deepEqual([...t.getChild("s")!.toArray()], ["a", "b", "c"]);
});

Deno.test("append() reads a CSV's columns as the archive's types (3 in a float column is 3.0)", async () => {
  await Deno.writeTextFile(`${TMP}/f.csv`, "k,v\n1,0.5\n2,1.5\n");
  await freeze(`${TMP}/f.csv`, `${TMP}/f.pf`, { threads: 0 });
  await Deno.writeTextFile(`${TMP}/f_more.csv`, "k,v\n3,3\n4,\n");
  await append(`${TMP}/f_more.csv`, `${TMP}/f.pf`, { threads: 0 });
  const t = await thawTable(`${TMP}/f.pf`);
  assert.deepEqual([...t.getChild("v")!.toArray()].slice(0, 3), [0.5, 1.5, 3]);
  assert.equal(t.getChild("v")!.get(3), null);
});

Deno.test("append() refuses a primary key already stored, reading only chunks whose min/max overlap", async () => {
  await Deno.writeTextFile(`${TMP}/pk.csv`, csv(0, 3000));
  await freeze(`${TMP}/pk.csv`, `${TMP}/pk.pf`, { chunkRows: 1000, threads: 0, primaryKey: "id" });
  const before = (await audit(`${TMP}/pk.pf`)).payload_sha256;
  await Deno.writeTextFile(`${TMP}/pk_dup.csv`, csv(2990, 3010));
  await assert.rejects(
    append(`${TMP}/pk_dup.csv`, `${TMP}/pk.pf`, { threads: 0 }),
    (e) =>
      e instanceof OpsError && e.code === "PRIMARY_KEY" &&
      /"2990" at appended row 3000 is already in the archive/.test(e.message),
  );
  await Deno.writeTextFile(
    `${TMP}/pk_self.csv`,
    csv(5000, 5002) + "5000,2024-03-01 10:00:00,Oslo,1.5\n",
  );
  await assert.rejects(
    append(`${TMP}/pk_self.csv`, `${TMP}/pk.pf`, { threads: 0 }),
    /repeats value "5000"/,
  );
  assert.equal((await audit(`${TMP}/pk.pf`)).payload_sha256, before);
  assert.deepEqual(await tempFiles(), []);
  await Deno.writeTextFile(`${TMP}/pk_new.csv`, csv(3000, 3100));
  assert.equal((await append(`${TMP}/pk_new.csv`, `${TMP}/pk.pf`, { threads: 0 })).rows, 3100);
});

Deno.test("append() of no rows leaves the archive as it was", async () => {
  await Deno.writeTextFile(`${TMP}/e.csv`, csv(0, 10));
  await freeze(`${TMP}/e.csv`, `${TMP}/e.pf`, { threads: 0 });
  const before = await Deno.readFile(`${TMP}/e.pf`);
  await Deno.writeTextFile(`${TMP}/e_none.csv`, csv(0, 0));
  const s = await append(`${TMP}/e_none.csv`, `${TMP}/e.pf`, { threads: 0 });
  assert.equal(s.rows_added, 0);
  assert.deepEqual(await Deno.readFile(`${TMP}/e.pf`), before);
});

Deno.test("append() to a damaged archive fails naming the chunk and replaces nothing", async () => {
  await Deno.writeTextFile(`${TMP}/d.csv`, csv(0, 2000));
  await freeze(`${TMP}/d.csv`, `${TMP}/d.pf`, { chunkRows: 1000, threads: 0 });
  const bytes = await Deno.readFile(`${TMP}/d.pf`);
  const { chunks } = await audit(`${TMP}/d.pf`);
  bytes[chunks[1]!.offset + 3]! ^= 0xff;
  await Deno.writeFile(`${TMP}/d.pf`, bytes);
  await Deno.writeTextFile(`${TMP}/d_more.csv`, csv(2000, 2100));
  await assert.rejects(
    append(`${TMP}/d_more.csv`, `${TMP}/d.pf`, { threads: 0 }),
    (e) => e instanceof FormatError && e.code === "HASH_MISMATCH" && e.chunk === 1,
  );
  assert.deepEqual(await Deno.readFile(`${TMP}/d.pf`), bytes);
  assert.deepEqual(await tempFiles(), []);
});

Deno.test("append() of a value that does not fit blames the archive's type, not a type sample", async (t) => {
  for (const ext of ["csv", "jsonl"]) {
    await t.step(ext, async () => {
      const archive = `${TMP}/fixed-${ext}.pf`;
      await Deno.writeTextFile(`${TMP}/fixed.csv`, "id,n\n1,10\n2,20\n");
      await freeze(`${TMP}/fixed.csv`, archive, { threads: 0 });
      const before = (await audit(archive)).payload_sha256;
      const more = `${TMP}/more-fixed.${ext}`;
      await Deno.writeTextFile(
        more,
        ext === "csv" ? "id,n\n3,30\n4,abc\n" : '{"id":3,"n":30}\n{"id":4,"n":"abc"}\n',
      );
      await assert.rejects(append(more, archive, { threads: 0 }), (e) => {
        assert.ok(e instanceof OpsError, String(e));
        assert.equal(e.code, "SCHEMA_MISMATCH");
        assert.equal(e.column, "n");
        assert.equal(e.path, archive);
        assert.match(e.message, /column "n" is int64 in the archive/);
        assert.match(e.message, /'abc'/);
        assert.match(e.message, /type was given, not inferred/);
        assert.doesNotMatch(e.message, /first \d+ rows/);
        return true;
      });
      assert.equal((await audit(archive)).payload_sha256, before);
    });
  }
});
