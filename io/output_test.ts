/**
 * Tests of `output.ts`: the write → read round trip of every format with random
 * data, empty tables, the exact CSV forms, atomic replacement and failures.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type Batch, concatBatches, type Schema } from "../format/column.ts";
import { IoError } from "./errors.ts";
import {
  extensionOf,
  type OutputFormat,
  outputFormatOf,
  startOutput,
  SYNC_AHEAD_BYTES,
  writeOutput,
} from "./output.ts";
import { extname } from "node:path";
import { openSource } from "./source.ts";
import {
  ALL_TYPES,
  assertSameValues,
  collect,
  makeTempDir,
  randomBatch,
  Rng,
} from "./_test_utils.ts";

const EXTENSIONS = ["csv", "jsonl", "ndjson", "parquet", "arrow", "arrows"];

async function readBack(path: string, batchRows?: number): Promise<Batch> {
  const src = await openSource(path, batchRows === undefined ? {} : { batchRows });
  try {
    return await collect(src.schema, src.batches());
  } finally {
    await src.close();
  }
}

async function listDir(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  return names.sort();
}

Deno.test("writeOutput() then openSource() round-trips every type exactly", async (t) => {
  const dir = await makeTempDir();
  try {
    for (const seed of [1, 2, 3]) {
      const rng = new Rng(seed);
      const batches = [
        randomBatch(rng, ALL_TYPES, 1000),
        randomBatch(rng, ALL_TYPES, 0),
        randomBatch(rng, ALL_TYPES, 333),
      ];
      const want = concatBatches(ALL_TYPES, batches);
      for (const ext of EXTENSIONS) {
        await t.step(`${ext}, seed ${seed}`, async () => {
          const path = `${dir}/rt-${seed}.${ext}`;
          const typed = ext === "parquet" || ext.startsWith("arrow");
          // Async input for half of the cases, sync for the rest.
          const input = seed % 2 === 0 ? batches : (async function* () {
            yield* batches;
          })();
          const result = await writeOutput(path, ALL_TYPES, input);
          assert.equal(result.rows, 1333);
          assert.equal(result.bytes, (await Deno.stat(path)).size);
          const got = await readBack(path, 512);
          if (typed) assert.deepEqual(got.schema, ALL_TYPES, "typed formats keep the exact schema");
          assertSameValues(got, want, typed);
        });
      }
    }
    assert.deepEqual(
      (await listDir(dir)).filter((n) => n.includes(".pf.tmp-")),
      [],
      "no temp files left",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeOutput() writes empty tables that read back empty", async (t) => {
  const dir = await makeTempDir();
  try {
    for (const ext of EXTENSIONS) {
      await t.step(ext, async () => {
        const path = `${dir}/empty.${ext}`;
        const result = await writeOutput(path, ALL_TYPES, []);
        assert.equal(result.rows, 0);
        const got = await readBack(path);
        assert.equal(got.length, 0);
        if (ext === "parquet" || ext.startsWith("arrow")) assert.deepEqual(got.schema, ALL_TYPES);
        if (ext === "csv") {
          assert.deepEqual(got.schema.map((f) => f.name), ALL_TYPES.map((f) => f.name));
        }
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeOutput() writes CSV in the documented forms", async () => {
  const dir = await makeTempDir();
  try {
    const schema: Schema = [
      { name: "s", type: "string", nullable: true },
      { name: "f", type: "float64", nullable: true },
      { name: "t", type: "timestamp", nullable: true, unit: "ms" },
      { name: "z", type: "timestamp", nullable: true, unit: "us", timezone: "UTC" },
      { name: "d", type: "date", nullable: true },
      { name: "i", type: "int64", nullable: true },
    ];
    const batch: Batch = {
      schema,
      length: 4,
      columns: [
        {
          type: "string",
          values: ["", "a,b", " pad", "x"],
          validity: new Uint8Array([1, 1, 1, 0]),
        },
        { type: "float64", values: new Float64Array([-0, NaN, -Infinity, 2]), validity: null },
        { type: "timestamp", values: new BigInt64Array([0n, 1500n, -1n, 0n]), validity: null },
        { type: "timestamp", values: new BigInt64Array([0n, 1n, 0n, 0n]), validity: null },
        { type: "date", values: new BigInt64Array([0n, -1n, 19753n, 0n]), validity: null },
        {
          type: "int64",
          values: new BigInt64Array([-(2n ** 63n), 0n, 2n ** 63n - 1n, 5n]),
          validity: null,
        },
      ],
    };
    const path = `${dir}/forms.csv`;
    await writeOutput(path, schema, [batch]);
    assert.equal(
      await Deno.readTextFile(path),
      "s,f,t,z,d,i\n" +
        '"",-0.0,1970-01-01 00:00:00,1970-01-01 00:00:00Z,1970-01-01,-9223372036854775808\n' +
        '"a,b",NaN,1970-01-01 00:00:01.500,1970-01-01 00:00:00.000001Z,1969-12-31,0\n' +
        '" pad",-inf,1969-12-31 23:59:59.999,1970-01-01 00:00:00Z,2024-01-31,9223372036854775807\n' +
        ",2.0,1970-01-01 00:00:00,1970-01-01 00:00:00Z,1970-01-01,5\n",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeOutput() writes int64 cells of every digit count as their decimal text", async () => {
  const dir = await makeTempDir();
  try {
    const edges = [0n, 9n, 10n, 99n, 100n, 999n, 1000n, 9999n, 10000n, 65536n, 2n ** 31n];
    const more = [2n ** 53n - 1n, 2n ** 53n, 2n ** 63n - 1n];
    const values = [...edges, ...more].flatMap((v) => [v, -v]).concat([-(2n ** 63n)]);
    const schema: Schema = [{ name: "i", type: "int64", nullable: false }];
    const batch: Batch = {
      schema,
      length: values.length,
      columns: [{ type: "int64", values: BigInt64Array.from(values), validity: null }],
    };
    const path = `${dir}/ints.csv`;
    await writeOutput(path, schema, [batch]);
    assert.equal(await Deno.readTextFile(path), `i\n${values.map(String).join("\n")}\n`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeOutput() never leaves a half-written file under the final name", async (t) => {
  const dir = await makeTempDir();
  try {
    const rng = new Rng(9);
    const good = randomBatch(rng, ALL_TYPES, 50);
    for (const ext of ["csv", "jsonl", "parquet", "arrow"]) {
      await t.step(`${ext}: a failing input keeps the old file`, async () => {
        const path = `${dir}/keep.${ext}`;
        await Deno.writeTextFile(path, "old contents");
        const boom = new Error("source broke");
        async function* failing(): AsyncGenerator<Batch> {
          yield good;
          throw boom;
        }
        await assert.rejects(writeOutput(path, ALL_TYPES, failing()), (err) => err === boom);
        assert.equal(await Deno.readTextFile(path), "old contents");
        assert.deepEqual((await listDir(dir)).filter((n) => n.includes(".pf.tmp-")), []);
      });
    }
    await t.step("a lone surrogate is WRITE_FAILED and writes nothing", async () => {
      const schema: Schema = [{ name: "s", type: "string", nullable: false }];
      const bad: Batch = {
        schema,
        length: 1,
        columns: [{ type: "string", values: ["a\uD800b"], validity: null }],
      };
      for (const ext of ["csv", "parquet", "arrow"]) {
        await assert.rejects(writeOutput(`${dir}/bad.${ext}`, schema, [bad]), (err) => {
          assert.ok(err instanceof IoError);
          assert.equal(err.code, "WRITE_FAILED");
          assert.equal(err.column, "s");
          assert.equal(err.path, `${dir}/bad.${ext}`);
          return true;
        });
      }
      const jsonl = `${dir}/ok.jsonl`;
      await writeOutput(jsonl, schema, [bad]);
      // JSON escapes it, and the reader keeps the escape as a json value.
      const back = (await readBack(jsonl)).columns[0]!;
      assert.equal(back.type, "json");
      assert.equal(back.values[0], '"a\\ud800b"');
    });
    await t.step("a batch of the wrong shape is SCHEMA_MISMATCH", async () => {
      const other: Schema = [{ name: "x", type: "int64", nullable: true }];
      await assert.rejects(writeOutput(`${dir}/shape.csv`, other, [good]), {
        code: "SCHEMA_MISMATCH",
      });
    });
    await t.step("a missing directory is WRITE_FAILED", async () => {
      await assert.rejects(writeOutput(`${dir}/no/such/dir/x.csv`, ALL_TYPES, [good]), {
        code: "WRITE_FAILED",
      });
    });
    assert.deepEqual(
      (await listDir(dir)).filter((n) => n.includes(".pf.tmp-")),
      [],
      "no temp files left",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("outputFormatOf() maps extensions and rejects unknown ones", () => {
  const cases: [string, OutputFormat][] = [
    ["a.csv", "csv"],
    ["a.JSONL", "jsonl"],
    ["a.ndjson", "jsonl"],
    ["a.parquet", "parquet"],
    ["a.arrow", "arrow"],
    ["a.arrows", "arrow"],
    ["a.XLSX", "xlsx"],
  ];
  for (const [path, format] of cases) assert.equal(outputFormatOf(path), format);
  assert.throws(() => outputFormatOf("a.ods"), (err) => {
    assert.ok(err instanceof IoError);
    assert.equal(err.code, "UNKNOWN_FORMAT");
    assert.match(err.message, /'\.ods'/);
    assert.match(err.message, /\.parquet/);
    return true;
  });
});

Deno.test("writeOutput() honours format, delimiter and arrowStream options", async () => {
  const dir = await makeTempDir();
  try {
    const batch = randomBatch(new Rng(4), ALL_TYPES, 20);
    await writeOutput(`${dir}/x.txt`, ALL_TYPES, [batch], { format: "csv", delimiter: ";" });
    const src = await openSource(`${dir}/x.txt`, { format: "csv", delimiter: ";" });
    assertSameValues(await collect(src.schema, src.batches()), batch, false);
    await writeOutput(`${dir}/s.arrow`, ALL_TYPES, [batch], { arrowStream: true });
    const head = await Deno.readFile(`${dir}/s.arrow`);
    assert.notEqual(
      new TextDecoder().decode(head.subarray(0, 6)),
      "ARROW1",
      "stream format has no magic",
    );
    assertSameValues(await readBack(`${dir}/s.arrow`), batch, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

async function mkfifo(path: string): Promise<void> {
  const { success } = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.ok(success, `mkfifo ${path}`);
}

/**
 * Reads everything written into a FIFO (by a `cat` child) while `write` writes it.
 * A writer that replaced the FIFO instead fails the check, and `cat`, still waiting
 * for a writer, is killed.
 */
async function throughFifo(fifo: string, write: () => Promise<unknown>): Promise<Uint8Array> {
  const cat = new Deno.Command("cat", { args: [fifo], stdout: "piped", stderr: "null" }).spawn();
  const out = new Response(cat.stdout).bytes();
  try {
    await write();
    assert.ok((await Deno.lstat(fifo)).isFifo, "the FIFO is still a FIFO");
    return await out;
  } finally {
    try {
      cat.kill();
    } catch {
      // Already exited.
    }
    await cat.status;
    await out.catch(() => {});
  }
}

Deno.test("writeOutput() writes into a FIFO, or a link to one, in place, never replacing it", async (t) => {
  const dir = await makeTempDir();
  try {
    const batch = randomBatch(new Rng(11), ALL_TYPES, 40);
    const fifo = `${dir}/pipe`;
    await mkfifo(fifo);
    await Deno.symlink(fifo, `${dir}/link-to-pipe`);
    for (const [target, format] of [[fifo, "csv"], [`${dir}/link-to-pipe`, "jsonl"]] as const) {
      await t.step(`${format} into ${target.slice(dir.length + 1)}`, async () => {
        let result: { rows: number; bytes: number } | undefined;
        const bytes = await throughFifo(fifo, async () => {
          result = await writeOutput(target, ALL_TYPES, [batch], { format });
        });
        assert.equal(result?.rows, 40);
        assert.equal(result?.bytes, bytes.length);
        await Deno.writeFile(`${dir}/copy.${format}`, bytes);
        assertSameValues(await readBack(`${dir}/copy.${format}`), batch, false);
        assert.ok((await Deno.lstat(fifo)).isFifo, "still a FIFO");
        assert.ok((await Deno.lstat(`${dir}/link-to-pipe`)).isSymlink, "still a link");
      });
    }
    await t.step("parquet, staged in a private temp directory", async () => {
      const bytes = await throughFifo(
        fifo,
        () => writeOutput(fifo, ALL_TYPES, [batch], { format: "parquet" }),
      );
      await Deno.writeFile(`${dir}/copy.parquet`, bytes);
      assertSameValues(await readBack(`${dir}/copy.parquet`), batch, true);
      assert.ok((await Deno.lstat(fifo)).isFifo, "still a FIFO");
    });
    assert.deepEqual((await listDir(dir)).filter((n) => n.includes(".pf.tmp-")), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeOutput() replaces the file a link names and keeps the link", async () => {
  const dir = await makeTempDir();
  try {
    const batch = randomBatch(new Rng(12), ALL_TYPES, 10);
    await Deno.writeTextFile(`${dir}/real.csv`, "old");
    await Deno.symlink(`${dir}/real.csv`, `${dir}/link.csv`);
    await writeOutput(`${dir}/link.csv`, ALL_TYPES, [batch]);
    assert.ok((await Deno.lstat(`${dir}/link.csv`)).isSymlink);
    assertSameValues(await readBack(`${dir}/real.csv`), batch, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeOutput() refuses a directory and a link to nothing with WRITE_FAILED", async () => {
  const dir = await makeTempDir();
  try {
    await Deno.mkdir(`${dir}/out.csv`);
    await Deno.symlink(`${dir}/missing/x.csv`, `${dir}/dangling.csv`);
    for (
      const [path, why] of [[`${dir}/out.csv`, /is a directory/], [
        `${dir}/dangling.csv`,
        /symbolic link to nothing/,
      ]] as const
    ) {
      await assert.rejects(writeOutput(path, ALL_TYPES, []), (err) => {
        assert.ok(err instanceof IoError);
        assert.equal(err.code, "WRITE_FAILED");
        assert.match(err.message, why);
        return true;
      });
    }
    assert.ok((await Deno.lstat(`${dir}/dangling.csv`)).isSymlink);
    assert.ok((await Deno.stat(`${dir}/out.csv`)).isDirectory);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("extensionOf() is node:path's extname, for plain names and odd ones alike", () => {
  const paths = [
    "a.csv",
    "dir/a.CSV",
    "a.b.arrow",
    ".csv",
    "..",
    "...",
    ".",
    "",
    "a.",
    "a..",
    "..csv",
    "dir.d/file",
    "dir.d/.hidden",
    "a.csv/",
    "dir/",
    "/",
    "C:a.csv",
    "C:.csv",
    "a:b.csv",
    "x\\y.csv",
    "x.y\\z",
    "a/b.c.d",
    "é.csv",
    "a b.parquet",
    "-",
    "out.ARROWS",
    "./x.jsonl",
  ];
  // And every string of up to 5 characters from those that matter.
  const alphabet = ["a", ".", "/", "\\", ":"];
  const grow = (prefix: string, n: number): void => {
    paths.push(prefix);
    if (n > 0) { for (const c of alphabet) grow(prefix + c, n - 1); }
  };
  grow("", 5);
  for (const path of paths) assert.equal(extensionOf(path), extname(path), JSON.stringify(path));
});

Deno.test("outputFormatOf() reads '-' (stdout) as CSV", () => {
  assert.equal(outputFormatOf("-"), "csv");
});

Deno.test("writeOutput() refuses Parquet columns that differ only in case, naming both", async () => {
  const dir = await makeTempDir();
  try {
    const schema: Schema = [
      { name: "a", type: "int64", nullable: false },
      { name: "é", type: "int64", nullable: false },
      { name: "É", type: "int64", nullable: false },
      { name: "A", type: "int64", nullable: false },
    ];
    const col = { type: "int64" as const, values: BigInt64Array.of(1n), validity: null };
    const batch: Batch = { schema, length: 1, columns: [col, col, col, col] };
    await assert.rejects(writeOutput(`${dir}/aA.parquet`, schema, [batch]), (err) => {
      assert.ok(err instanceof IoError);
      assert.equal(err.code, "WRITE_FAILED");
      assert.equal(err.column, "A");
      assert.match(err.message, /columns "a" and "A" to Parquet/);
      return true;
    });
    assert.deepEqual(await listDir(dir), [], "nothing written, no temp file");
    const ok = schema.slice(0, 3);
    await writeOutput(`${dir}/ok.parquet`, ok, [{
      schema: ok,
      length: 1,
      columns: [col, col, col],
    }]);
    assert.deepEqual((await readBack(`${dir}/ok.parquet`)).schema.map((f) => f.name), [
      "a",
      "é",
      "É",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeOutput() then openSource() keep float32 and float16 columns", async (t) => {
  const schema: Schema = [
    { name: "f32", type: "float32", nullable: true },
    { name: "f16", type: "float16", nullable: true },
  ];
  const rng = new Rng(7);
  const batches = [randomBatch(rng, schema, 2000), randomBatch(rng, schema, 300)];
  const want = concatBatches(schema, batches);
  const dir = await makeTempDir();
  try {
    for (const ext of EXTENSIONS) {
      await t.step(ext, async () => {
        const path = `${dir}/floats.${ext}`;
        await writeOutput(path, schema, batches);
        if (ext === "parquet" || ext.startsWith("arrow")) {
          const got = await readBack(path, 700);
          assert.deepEqual(got.schema, schema, "typed formats keep float32 and float16");
          // DuckDB's Parquet dictionary keeps one NaN per column: payloads only via Arrow.
          assertSameValues(got, want, ext !== "parquet");
          return;
        }
        // Text: the shortest form of each value, read back as that type.
        const src = await openSource(path, { types: { f32: "float32", f16: "float16" } });
        try {
          assertSameValues(await collect(src.schema, src.batches()), want, false);
        } finally {
          await src.close();
        }
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("repeated dates and timestamps are written right across the writer's 1 MiB flushes", async () => {
  const dir = await makeTempDir();
  try {
    const n = 120_000;
    const ts = new BigInt64Array(n);
    const days = new BigInt64Array(n);
    const small = new BigInt64Array(n);
    for (let i = 0; i < n; i++) {
      // One value for the first 100,000 rows (far past a flush), then a new one every 700.
      ts[i] = i < 100_000 ? 1_700_000_000_000_000n : BigInt(Math.floor(i / 700)) * 60_000_000n;
      days[i] = BigInt(Math.floor(i / 333) - 200);
      small[i] = BigInt((i % 2300) - 1150);
    }
    const schema: Schema = [
      { name: "ts", type: "timestamp", nullable: false, unit: "us" },
      { name: "d", type: "date", nullable: false },
      { name: "n", type: "int64", nullable: false },
    ];
    const batch: Batch = {
      schema,
      columns: [
        { type: "timestamp", values: ts, validity: null },
        { type: "date", values: days, validity: null },
        { type: "int64", values: small, validity: null },
      ],
      length: n,
    };
    for (const format of ["csv", "jsonl"] as const) {
      const path = `${dir}/r.${format}`;
      const { bytes } = await writeOutput(path, schema, [batch], { format });
      assert.ok(bytes > 3 * 1024 * 1024, `${bytes} bytes: several flushes`);
      assertSameValues(await readBack(path), batch, true);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Rows 10,000,000 + k for k in [0, rows), in batches of 500,000. */
function* countingBatches(schema: Schema, rows: number): Generator<Batch> {
  const per = 500_000;
  for (let at = 0; at < rows; at += per) {
    const n = Math.min(per, rows - at);
    const values = new BigInt64Array(n);
    for (let k = 0; k < n; k++) values[k] = BigInt(10_000_000 + at + k);
    yield { schema, length: n, columns: [{ type: "int64", values, validity: null }] };
  }
}

Deno.test("writeOutput() flushing a big file to disk as it grows writes every byte, in order", async () => {
  const dir = await makeTempDir();
  try {
    // Rows of 9 bytes ("1xxxxxxx\n"), past two flushes and a tail.
    const rows = Math.ceil((2.5 * SYNC_AHEAD_BYTES) / 9);
    const schema: Schema = [{ name: "i", type: "int64", nullable: false }];
    const path = `${dir}/big.csv`;
    const written = await writeOutput(path, schema, countingBatches(schema, rows));
    assert.equal(written.rows, rows);
    assert.equal(written.bytes, 2 + 9 * rows);
    const text = await Deno.readTextFile(path);
    assert.equal(text.length, 2 + 9 * rows);
    assert.ok(text.startsWith("i\n10000000\n10000001\n"));
    for (let k = 0; k < rows; k += 7919) {
      assert.equal(text.slice(2 + 9 * k, 2 + 9 * k + 9), `${10_000_000 + k}\n`);
    }
    assert.ok(text.endsWith(`${10_000_000 + rows - 1}\n`));
    assert.deepEqual(await listDir(dir), ["big.csv"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("startOutput() starts a Parquet file's writer ahead, which the write takes or lets go", async () => {
  const dir = await makeTempDir();
  try {
    const batch = randomBatch(new Rng(17), ALL_TYPES, 300);
    assert.equal(startOutput(`${dir}/a.csv`), null);
    assert.equal(startOutput("-", "parquet"), null);
    assert.equal(startOutput(`${dir}/a.unknown`), null);
    // Taken: the same bytes as a write that starts its own.
    await writeOutput(`${dir}/own.parquet`, ALL_TYPES, [batch]);
    const started = startOutput(`${dir}/ahead.parquet`);
    assert.ok(started !== null);
    await writeOutput(`${dir}/ahead.parquet`, ALL_TYPES, [batch], { started });
    assert.deepEqual(
      await Deno.readFile(`${dir}/ahead.parquet`),
      await Deno.readFile(`${dir}/own.parquet`),
    );
    // Let go: another format, and a write refused before any row.
    await writeOutput(`${dir}/other.csv`, ALL_TYPES, [batch], {
      started: startOutput(`${dir}/other.parquet`),
    });
    await assert.rejects(
      writeOutput(`${dir}/own.parquet`, ALL_TYPES, [batch], {
        replace: false,
        started: startOutput(`${dir}/own.parquet`),
      }),
      (err) => err instanceof IoError && err.code === "DESTINATION_EXISTS",
    );
    // The Worker's name, spawned here and served there.
    const { PARQUET_WORKER } = await import("./_write_parquet.ts");
    assert.match(
      await Deno.readTextFile(new URL("./output.ts", import.meta.url)),
      new RegExp(`const PARQUET_WORKER = "${PARQUET_WORKER}";`),
    );
    // Never written: closed by its owner.
    startOutput(`${dir}/never.parquet`)!.close();
    assert.deepEqual((await listDir(dir)).sort(), [
      "ahead.parquet",
      "other.csv",
      "own.parquet",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
