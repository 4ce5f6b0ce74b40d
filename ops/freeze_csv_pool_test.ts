/**
 * A CSV file frozen with Worker threads is cut into byte ranges of a chunk's rows
 * (`_csv_chunks.ts`) and parsed where it is encoded; the archive must be the one a
 * read on the calling thread makes, byte for byte, whatever the file's quoting, line
 * ends and blank lines, and a bad cell must fail with the same error.
 */
import assert from "node:assert/strict";
import { freeze } from "./freeze.ts";
import { thaw } from "./thaw.ts";

const TMP = ".tmp/ops_freeze_csv_pool";
await Deno.mkdir(TMP, { recursive: true });

/** A CSV text of `rows` rows in several column types, with `line` as the line end. */
function csvText(rows: number, line: string, seed: number): string {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  const out = [`id,name,when,amount,flag${line}`];
  for (let i = 0; i < rows; i++) {
    const r = next();
    const name = r < 0.1
      ? `"quoted, with ""quotes""${line}and a line end"`
      : r < 0.15
      ? ""
      : r < 0.2
      ? "ünïcödé ✓"
      : `name ${Math.floor(r * 50)}`;
    const when = `2024-0${1 + (i % 9)}-1${i % 10} 0${i % 10}:${10 + (i % 50)}:00`;
    const amount = r < 0.05 ? "" : (Math.round(r * 1e6) / 100).toString();
    out.push(`${i},${name},${when},${amount},${r < 0.5 ? "true" : "false"}${line}`);
  }
  return out.join("");
}

/** Freezes `csv` on the calling thread and with 2 Workers; returns both archives. */
async function both(name: string, text: string, chunkRows: number) {
  const source = `${TMP}/${name}.csv`;
  await Deno.writeTextFile(source, text);
  const inline = await freeze(source, `${TMP}/${name}.inline.pf`, { threads: 0, chunkRows });
  const pooled = await freeze(source, `${TMP}/${name}.pooled.pf`, { threads: 2, chunkRows });
  assert.equal(pooled.rows, inline.rows);
  assert.deepEqual(pooled.csv_dialect, inline.csv_dialect);
  return {
    inline: await Deno.readFile(`${TMP}/${name}.inline.pf`),
    pooled: await Deno.readFile(`${TMP}/${name}.pooled.pf`),
    chunks: pooled.chunks,
  };
}

Deno.test("a CSV frozen on Worker threads is the archive a read on this thread makes", async (t) => {
  const cases: [string, string, number][] = [
    ["lf", csvText(1_000, "\n", 1), 64],
    ["crlf", csvText(700, "\r\n", 2), 50],
    ["bom_blank_lines", "\ufeff" + csvText(400, "\n", 3).replace(/\n(?=5)/g, "\n\n\n"), 33],
    ["no_final_line_end", csvText(300, "\n", 4).trimEnd(), 100],
    [
      "one_column",
      "v\n" + Array.from({ length: 500 }, (_, i) => i % 7 === 0 ? "" : `x${i}`).join("\n") + "\n",
      40,
    ],
    ["semicolons", csvText(300, "\n", 5).replaceAll(",", ";"), 64],
  ];
  for (const [name, text, chunkRows] of cases) {
    await t.step(name, async () => {
      const { inline, pooled, chunks } = await both(name, text, chunkRows);
      assert.ok(chunks > 2, `${chunks} chunks`);
      assert.deepEqual(pooled, inline);
    });
  }
  await t.step("a file of one chunk stays on this thread and is the same too", async () => {
    const { inline, pooled, chunks } = await both("small", csvText(50, "\n", 6), 64);
    assert.equal(chunks, 1);
    assert.deepEqual(pooled, inline);
  });
});

Deno.test("a late cell that does not fit its inferred type widens the column the same way on Worker threads", async () => {
  // Past the 10,000 rows types are inferred from.
  const rows = Array.from({ length: 12_000 }, (_, i) => `${i},${i % 3 === 0 ? "" : i * 1.5}`);
  rows[11_555] = "11555,not a number";
  const { inline, pooled } = await both("late_widen", `id,amount\n${rows.join("\n")}\n`, 1000);
  assert.deepEqual(pooled, inline);
  for (const threads of [0, 2]) {
    const again = await freeze(`${TMP}/late_widen.csv`, `${TMP}/late_widen.again.pf`, {
      threads,
      chunkRows: 1000,
    });
    assert.deepEqual(again.widened_columns, ["amount"]);
  }
});

Deno.test("malformed CSV in a late chunk fails a Worker freeze with the same error as on this thread", async () => {
  const rows = Array.from({ length: 600 }, (_, i) => `${i},v${i}`);
  rows[555] = '555,"closed"then text';
  const source = `${TMP}/late_bad.csv`;
  await Deno.writeTextFile(source, `id,name\n${rows.join("\n")}\n`);
  const messages: string[] = [];
  for (const threads of [0, 2]) {
    const out = `${TMP}/late_bad_${threads}.pf`;
    await Deno.remove(out).catch(() => {});
    await assert.rejects(
      freeze(source, out, { threads, chunkRows: 50 }),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, "PARSE_FAILED", err.message);
        messages.push(err.message);
        return true;
      },
    );
    await assert.rejects(Deno.stat(out), Deno.errors.NotFound);
  }
  assert.match(messages[0]!, /data row 556\b/);
  assert.equal(messages[1], messages[0]);
});

Deno.test("an encrypted freeze of a CSV on Worker threads thaws to the same rows", async () => {
  const source = `${TMP}/enc.csv`;
  await Deno.writeTextFile(source, csvText(500, "\n", 8));
  const key = Uint8Array.from({ length: 32 }, (_, i) => i * 3);
  const outs: string[] = [];
  for (const threads of [0, 2]) {
    const archive = `${TMP}/enc_${threads}.pf`;
    await freeze(source, archive, { threads, chunkRows: 64, encryption: { key } });
    await thaw(archive, `${TMP}/enc_${threads}.csv`, { keys: { key } });
    outs.push(await Deno.readTextFile(`${TMP}/enc_${threads}.csv`));
  }
  assert.equal(outs[1], outs[0]);
  assert.ok(outs[0]!.includes('"quoted, with ""quotes""\nand a line end"'));
});

Deno.test("progress on Worker threads: the share of rows written, known while the file is cut, reaching 1", async () => {
  const source = `${TMP}/progress.csv`;
  await Deno.writeTextFile(source, csvText(1_000, "\n", 9));
  const fractions: (number | null)[] = [];
  await freeze(source, `${TMP}/progress.pf`, {
    threads: 2,
    chunkRows: 100,
    onProgress: (p) => fractions.push(p.fraction),
  });
  assert.equal(fractions.length, 10);
  assert.ok(fractions.every((f, i) => f === (i + 1) / 10), String(fractions));
});

Deno.test("max_speed on Worker threads (the plan's sample read here, every chunk by the Workers, the cut as they go) is the archive a read on this thread makes", async () => {
  const source = `${TMP}/fast.csv`;
  await Deno.writeTextFile(source, csvText(9_000, "\n", 11));
  const archives: Uint8Array[] = [];
  for (const threads of [0, 2]) {
    const fractions: (number | null)[] = [];
    const out = `${TMP}/fast_${threads}.pf`;
    const summary = await freeze(source, out, {
      profile: "max_speed",
      threads,
      chunkRows: 1000,
      overwrite: true,
      onProgress: (p) => fractions.push(p.fraction),
    });
    assert.equal(summary.rows, 9_000);
    assert.equal(summary.chunks, 9);
    assert.equal(fractions.length, 9);
    // On this thread the share is how far the reader has read ahead: all of this file.
    const rises = (f: number | null, i: number) =>
      i === 0 || (threads === 0 ? f! >= fractions[i - 1]! : f! > fractions[i - 1]!);
    assert.ok(fractions.every(rises), String(fractions));
    assert.equal(fractions.at(-1), 1);
    archives.push(await Deno.readFile(out));
  }
  assert.deepEqual(archives[1], archives[0]);
  // A file of fewer rows than the sample, and one without rows.
  const small: [string, string][] = [
    ["fast_small", csvText(30, "\n", 12)],
    ["fast_empty", csvText(0, "\n", 1)],
  ];
  for (const [name, text] of small) {
    const outs: Uint8Array[] = [];
    for (const threads of [0, 2]) {
      const out = `${TMP}/${name}_${threads}.pf`;
      await Deno.writeTextFile(`${TMP}/${name}.csv`, text);
      await freeze(`${TMP}/${name}.csv`, out, { profile: "max_speed", threads, overwrite: true });
      outs.push(await Deno.readFile(out));
    }
    assert.deepEqual(outs[1], outs[0], name);
  }
});
