import assert from "node:assert/strict";
import { append } from "./append.ts";
import { diff, formatDiff } from "./diff.ts";
import { freeze } from "./freeze.ts";

const TMP = ".tmp/ops_diff";
await Deno.mkdir(TMP, { recursive: true });

function csv(n: number, change = -1): string {
  const lines = ["id,value"];
  for (let i = 0; i < n; i++) lines.push(`${i},${i === change ? "changed" : `v${i % 13}`}`);
  return lines.join("\n") + "\n";
}

Deno.test("diff() of identical, appended and modified archives reports chunks by status with row ranges", async (t) => {
  await Deno.writeTextFile(`${TMP}/a.csv`, csv(3000));
  await freeze(`${TMP}/a.csv`, `${TMP}/a.pf`, { chunkRows: 1000, threads: 0 });
  await freeze(`${TMP}/a.csv`, `${TMP}/a2.pf`, { chunkRows: 1000, threads: 0 });

  await t.step("identical", async () => {
    const d = await diff(`${TMP}/a.pf`, `${TMP}/a2.pf`);
    assert.equal(d.identical, true);
    assert.deepEqual(d.summary, { unchanged: 3, changed: 0, added: 0, removed: 0 });
    assert.deepEqual(d.header_changes, []);
    assert.match(formatDiff(d), /identical .*3 unchanged, 0 changed, 0 added, 0 removed/);
  });

  await t.step("appended, and the reverse: removed", async () => {
    await Deno.copyFile(`${TMP}/a.pf`, `${TMP}/grown.pf`);
    await Deno.writeTextFile(
      `${TMP}/more.csv`,
      csv(1500).replace(/^(\d+)/gm, (m) => String(Number(m) + 3000)),
    );
    await append(`${TMP}/more.csv`, `${TMP}/grown.pf`, { threads: 0 });
    const d = await diff(`${TMP}/a.pf`, `${TMP}/grown.pf`);
    assert.equal(d.identical, false);
    assert.deepEqual(d.summary, { unchanged: 3, changed: 0, added: 2, removed: 0 });
    assert.deepEqual(d.chunks[4]!.b, { ...d.chunks[4]!.b!, row_start: 4000, row_end: 4500 });
    assert.equal(d.chunks[4]!.a, null);
    const text = formatDiff(d);
    assert.match(
      text,
      /\(3 unchanged chunks\)\nadded {4}chunk 3 {2}rows 3000\.\.4000\nadded {4}chunk 4 {2}rows 4000\.\.4500/,
    );
    const back = await diff(`${TMP}/grown.pf`, `${TMP}/a.pf`);
    assert.deepEqual(back.summary, { unchanged: 3, changed: 0, added: 0, removed: 2 });
  });

  await t.step("one value modified: one chunk changed", async () => {
    await Deno.writeTextFile(`${TMP}/m.csv`, csv(3000, 1500));
    await freeze(`${TMP}/m.csv`, `${TMP}/m.pf`, { chunkRows: 1000, threads: 0 });
    const d = await diff(`${TMP}/a.pf`, `${TMP}/m.pf`);
    assert.deepEqual(d.summary, { unchanged: 2, changed: 1, added: 0, removed: 0 });
    assert.equal(d.chunks[1]!.status, "changed");
    assert.deepEqual([d.chunks[1]!.a!.row_start, d.chunks[1]!.a!.row_end], [1000, 2000]);
    assert.notEqual(d.chunks[1]!.a!.sha256, d.chunks[1]!.b!.sha256);
  });

  await t.step("other codec: every chunk changed, and the header says why", async () => {
    await freeze(`${TMP}/a.csv`, `${TMP}/lz.pf`, { chunkRows: 1000, threads: 0, codec: "lzma2" });
    const d = await diff(`${TMP}/a.pf`, `${TMP}/lz.pf`);
    assert.deepEqual(d.summary, { unchanged: 0, changed: 3, added: 0, removed: 0 });
    assert.deepEqual(d.header_changes, ["codec zstd -> lzma2"]);
  });
});
