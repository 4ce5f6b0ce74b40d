/**
 * Tests of `jsonl.ts`: kinds and exact big integers, nested values kept verbatim,
 * the SCHEMA_MISMATCH fallback, malformed lines, and row-boundary cutting.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type Batch, cellValue, concatBatches } from "../format/column.ts";
import { IoError } from "./errors.ts";
import { jsonlRowBoundaries, openJsonl, readJsonlRange } from "./jsonl.ts";
import { writeOutput } from "./output.ts";
import { MAX_COLUMNS } from "./types.ts";
import {
  ALL_TYPES,
  assertSameValues,
  collect,
  makeTempDir,
  randomBatch,
  Rng,
} from "./_test_utils.ts";

const SAMPLE = new URL("./testdata/sample.jsonl", import.meta.url).pathname;

function rowsOf(batch: Batch): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let r = 0; r < batch.length; r++) {
    out.push(
      Object.fromEntries(batch.schema.map((f, c) => [f.name, cellValue(batch.columns[c]!, r)])),
    );
  }
  return out;
}

async function readAll(path: string, options = {}): Promise<Batch> {
  const src = await openJsonl(path, options);
  return await collect(src.schema, src.batches());
}

Deno.test("openJsonl() reads keys, kinds and exact big integers", async () => {
  const batch = await readAll(SAMPLE);
  assert.deepEqual(batch.schema.map((f) => [f.name, f.type, f.unit, f.timezone]), [
    ["id", "int64", undefined, undefined],
    ["big", "int64", undefined, undefined],
    ["f", "float64", undefined, undefined],
    ["ok", "bool", undefined, undefined],
    ["when", "timestamp", "us", "UTC"],
    ["day", "date", undefined, undefined],
    ["name", "string", undefined, undefined],
    ["nested", "json", undefined, undefined],
    ["extra", "string", undefined, undefined],
  ]);
  const rows = rowsOf(batch);
  assert.equal(rows.length, 4, "the blank line is skipped");
  assert.equal(rows[0]?.big, 9007199254740993n, "beyond 2^53, exact");
  assert.equal(rows[1]?.big, -(2n ** 63n));
  assert.equal(rows[2]?.big, 2n ** 63n - 1n);
  assert.equal(rows[0]?.name, 'aé"b');
  assert.equal(rows[1]?.name, "", "empty string is not null");
  assert.equal(rows[3]?.name, null);
  assert.equal(
    rows[0]?.nested,
    '{"x": [1, 2, {"y": null}], "big": 123456789012345678901234567890}',
    "nested JSON kept verbatim",
  );
  assert.equal(rows[1]?.nested, "[1,2]");
  assert.ok(Object.is(rows[1]?.f, -0));
  assert.ok(Number.isNaN(rows[2]?.f));
  assert.equal(rows[3]?.f, 2);
  assert.equal(rows[0]?.when, 1706696430000000n);
  assert.equal(rows[1]?.when, 1706742000000000n, "offset applied");
  assert.equal(rows[2]?.when, null, "missing key is null");
  assert.equal(rows[2]?.id, 3n, "keys in any order");
  assert.equal(rows[2]?.extra, "late key");
  assert.equal(rows[0]?.extra, null);
});

Deno.test("openJsonl() throws SCHEMA_MISMATCH past the sample, and types recovers", async (t) => {
  await t.step("a key the sample never saw", async () => {
    const src = await openJsonl(SAMPLE, { sampleRows: 2 });
    assert.ok(!src.schema.some((f) => f.name === "extra"));
    await assert.rejects(collect(src.schema, src.batches()), (err) => {
      assert.ok(err instanceof IoError);
      assert.equal(err.code, "SCHEMA_MISMATCH");
      assert.equal(err.column, "extra");
      return true;
    });
    const again = await readAll(SAMPLE, { sampleRows: 2, types: { extra: "string" } });
    assert.equal(rowsOf(again)[2]?.extra, "late key");
  });
  await t.step("a value that does not fit", async () => {
    const dir = await makeTempDir();
    try {
      const path = `${dir}/late.jsonl`;
      await Deno.writeTextFile(path, '{"n": 1}\n{"n": 2}\n{"n": "three"}\n');
      await assert.rejects(readAll(path, { sampleRows: 2 }), {
        code: "SCHEMA_MISMATCH",
        column: "n",
      });
      const batch = await readAll(path, { sampleRows: 2, types: { n: "string" } });
      assert.deepEqual(rowsOf(batch).map((r) => r.n), ["1", "2", "three"]);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("openJsonl() rejects lines that are not JSON objects with PARSE_FAILED", async (t) => {
  const dir = await makeTempDir();
  try {
    for (
      const bad of [
        "[1,2]",
        '{"a": 1',
        '{"a": tru}',
        '{"a": 1} x',
        '{"a": {"b": }}',
        '{"a": "\\q"}',
        '{"a": 01}',
      ]
    ) {
      await t.step(bad, async () => {
        const path = `${dir}/bad.jsonl`;
        await Deno.writeTextFile(path, `{"a": 1}\n${bad}\n`);
        await assert.rejects(readAll(path), (err) => {
          assert.ok(err instanceof IoError);
          assert.equal(err.code, "PARSE_FAILED");
          assert.match(err.message, /line 2/);
          return true;
        });
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("jsonlRowBoundaries() cuts ranges whose rows concatenate to the whole file", async (t) => {
  const dir = await makeTempDir();
  try {
    const path = `${dir}/random.jsonl`;
    await writeOutput(path, ALL_TYPES, [randomBatch(new Rng(3), ALL_TYPES, 1000)]);
    const whole = await readAll(path);
    for (const every of [1, 64, 999, 1000, 4096]) {
      await t.step(`every ${every} rows`, async () => {
        const b = await jsonlRowBoundaries(path, every);
        assert.equal(b.rows, 1000);
        const parts: Batch[] = [];
        for (let i = 0; i + 1 < b.offsets.length; i++) {
          const range = { start: b.offsets[i]!, end: b.offsets[i + 1]! };
          parts.push(await collect(whole.schema, readJsonlRange(path, whole.schema, range)));
        }
        assertSameValues(concatBatches(whole.schema, parts), whole, true);
      });
    }
    await t.step("blank lines are not rows", async () => {
      const b = await jsonlRowBoundaries(SAMPLE, 3);
      assert.equal(b.rows, 4);
      assert.equal(b.offsets.length, 3);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openJsonl() reads CR, CRLF and LF line ends, mixed, as jsonlRowBoundaries cuts them", async (t) => {
  const dir = await makeTempDir();
  try {
    const files: [string, string][] = [
      ["CR only", '{"a":1,"b":"x"}\r{"a":2,"b":"y\\rz"}\r\r{"a":3}\r'],
      ["mixed", '{"a":1,"b":"x"}\r\n{"a":2,"b":"y\\rz"}\r\n\r{"a":3}\n'],
    ];
    for (const [what, text] of files) {
      await t.step(what, async () => {
        const path = `${dir}/lines.jsonl`;
        await Deno.writeTextFile(path, text);
        const whole = await readAll(path);
        assert.deepEqual(rowsOf(whole), [
          { a: 1n, b: "x" },
          { a: 2n, b: "y\rz" },
          { a: 3n, b: null },
        ]);
        const b = await jsonlRowBoundaries(path, 1);
        assert.equal(b.rows, 3);
        const parts: Batch[] = [];
        for (let i = 0; i + 1 < b.offsets.length; i++) {
          const range = { start: b.offsets[i]!, end: b.offsets[i + 1]! };
          parts.push(await collect(whole.schema, readJsonlRange(path, whole.schema, range)));
        }
        assert.deepEqual(parts.map((p) => p.length), [1, 1, 1]);
        assertSameValues(concatBatches(whole.schema, parts), whole, true);
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("jsonlRowBoundaries() starts a range after the LF of a CRLF that straddles two reads", async () => {
  const dir = await makeTempDir();
  try {
    // The scan reads 4 MiB at a time: put a CRLF's CR at the last byte of the first read.
    const path = `${dir}/big.jsonl`;
    const first = `{"s":"${"x".repeat((4 << 20) - 9)}"}`;
    await Deno.writeTextFile(path, `${first}\r\n{"s":"a"}\r\n{"s":"b"}`);
    assert.equal(first.length + 1, 4 << 20);
    const b = await jsonlRowBoundaries(path, 1);
    assert.deepEqual(b.offsets, [0, first.length + 2, first.length + 13, b.bytes]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openJsonl() names the exact line and byte offset of invalid UTF-8", async () => {
  const dir = await makeTempDir();
  try {
    const path = `${dir}/bad.jsonl`;
    const lines: string[] = [];
    for (let i = 1; i <= 50_000; i++) lines.push(`{"n":${i}}`);
    const before = new TextEncoder().encode(lines.join("\n") + '\n{"n":"');
    const bytes = new Uint8Array(before.length + 3);
    bytes.set(before);
    bytes.set([0xc3, 0x22, 0x7d], before.length);
    await Deno.writeFile(path, bytes);
    await assert.rejects(readAll(path), (err) => {
      assert.ok(err instanceof IoError);
      assert.equal(err.code, "PARSE_FAILED");
      assert.equal(err.offset, before.length);
      assert.match(err.message, /line 50001 is not valid UTF-8 \(the bad byte is at offset \d+\)/);
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openJsonl() refuses more than MAX_COLUMNS keys with TOO_MANY_COLUMNS", async () => {
  const dir = await makeTempDir();
  try {
    const path = `${dir}/wide.jsonl`;
    const half = (from: number) =>
      JSON.stringify(Object.fromEntries(
        Array.from({ length: MAX_COLUMNS / 2 }, (_, i) => [`k${from + i}`, i]),
      ));
    await Deno.writeTextFile(path, `${half(0)}\n${half(MAX_COLUMNS / 2)}\n{"one":"more"}\n`);
    await assert.rejects(openJsonl(path), (err) => {
      assert.ok(err instanceof IoError);
      assert.equal(err.code, "TOO_MANY_COLUMNS");
      assert.match(err.message, /line 3 brings the keys past 10000/);
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
