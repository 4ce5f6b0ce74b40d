/**
 * The 1.8 golden archive (`tiny_v1_8_evolved.pf`: the rows of `tiny_v1_3.pf` in two
 * chunks, then two rows appended with `evolve` that add a nullable `note` and leave out
 * `name`) must always open and thaw to the same rows, today's writer must still produce
 * its bytes exactly, damage to the 1.8 members is a typed FormatError, and a reader
 * that predates 1.8 refuses the file rather than misread it.
 */
import assert from "node:assert/strict";
import { historyHas, readerAt } from "../_history.ts";
import { cellValue } from "../../format/column.ts";
import { FormatError } from "../../format/errors.ts";
import type { ArchiveFooter } from "../../format/header.ts";
import { ArchiveReader } from "../../format/reader.ts";
import { resealArchive } from "../../format/_test_utils.ts";
import { VERSION_MINOR_READ } from "../../format/constants.ts";
import { assertWriterReproduces, writeTinyEvolved } from "./make_golden.ts";

const GOLDEN = new URL("./tiny_v1_8_evolved.pf", import.meta.url).pathname;
const GOLDEN_SHA256 = "6aa1dd37d3a356d68be29e0f3ad6137954d9df9d9f840086f42a0a3631a01356";
const TMP = ".tmp/golden";
await Deno.mkdir(TMP, { recursive: true });

const ROWS = [
  { id: 1n, name: "ice", note: null },
  { id: 9007199254740993n, name: null, note: null },
  { id: -3n, name: "🧊", note: null },
  { id: 4n, name: null, note: "thawed" },
  { id: 5n, name: null, note: null },
];

async function rowsOf(path: string) {
  const reader = await ArchiveReader.open(path);
  try {
    const out: Record<string, unknown>[] = [];
    for await (const b of reader.read()) {
      for (let r = 0; r < b.length; r++) {
        out.push(Object.fromEntries(b.schema.map((f, i) => [f.name, cellValue(b.columns[i]!, r)])));
      }
    }
    return out;
  } finally {
    reader.close();
  }
}

/** Opening `bytes` fails with this FormatError code, its message matching `text`. */
async function refused(name: string, bytes: Uint8Array, code: string, text: RegExp) {
  const path = `${TMP}/${name}.pf`;
  await Deno.writeFile(path, bytes);
  await assert.rejects(rowsOf(path), (err: unknown) => {
    assert.ok(err instanceof FormatError, `${name}: ${err}`);
    assert.equal(err.code, code, `${name}: ${err.message}`);
    assert.match(err.message, text, name);
    return true;
  });
}

/** The same bytes stamped with another minor version (preamble and tail). */
function asMinor(bytes: Uint8Array, minor: number): Uint8Array {
  const b = bytes.slice();
  b[9] = minor;
  b[b.length - 48 + 37] = minor;
  return b;
}

Deno.test("golden tiny_v1_8_evolved.pf thaws to its rows: chunks 0 and 1 read the added column as null", async () => {
  const reader = await ArchiveReader.open(GOLDEN);
  try {
    assert.equal(reader.index.version, "1.8");
    assert.equal(reader.index.header.columns.note!.since_chunk, 2);
    assert.deepEqual(
      reader.index.footer.chunks.map((c) => c.blocks.map((b) => b !== null)),
      [[true, true, false], [true, true, false], [true, true, true]],
    );
    assert.equal((await reader.verify()).ok, true);
  } finally {
    reader.close();
  }
  assert.deepEqual(await rowsOf(GOLDEN), ROWS);
});

Deno.test("golden tiny_v1_8_evolved.pf bytes are pinned, and freeze + append --evolve still produce them", async () => {
  await assertWriterReproduces(GOLDEN, GOLDEN_SHA256, writeTinyEvolved);
});

Deno.test("an older preamble on an evolved header is CORRUPT, never read with columns shifted", async () => {
  const bytes = await Deno.readFile(GOLDEN);
  for (let minor = 3; minor < 8; minor++) {
    await refused(
      `evolved_as_1_${minor}`,
      asMinor(bytes, minor),
      "CORRUPT",
      /cannot have chunks that lack a column/,
    );
  }
});

Deno.test("damage to the 1.8 header and footer members is CORRUPT naming what is wrong", async (t) => {
  const bytes = await Deno.readFile(GOLDEN);
  const footer = (edit: (f: ArchiveFooter) => void) => resealArchive(bytes, { footer: edit });
  const plans = (edit: (columns: Record<string, Record<string, unknown>>) => void) =>
    resealArchive(bytes, {
      header: (h) => edit(h.columns as Record<string, Record<string, unknown>>),
    });
  const cases: [string, Uint8Array, RegExp][] = [
    [
      "a block where the column has not started",
      footer((f) => {
        f.chunks[0]!.blocks[2] = { ...f.chunks[0]!.blocks[1]! };
      }),
      /footer chunk 0 has a block for column 2, which starts at a later chunk/,
    ],
    [
      "no block where the column has started",
      footer((f) => {
        f.chunks[2]!.blocks[2] = null;
      }),
      /footer chunk 2 block 2 does not start at byte/,
    ],
    [
      "statistics of a lacking column that claim values",
      footer((f) => {
        f.chunks[1]!.stats[2] = { min: "a", max: "z", null_count: 0 };
      }),
      /footer chunk 1 statistics of column 2 \(which it lacks\) are not 1 nulls/,
    ],
    [
      "since_chunk is not a chunk index",
      plans((c) => {
        c.note!.since_chunk = "2";
      }),
      /column "note" has since_chunk "2"/,
    ],
    [
      "since_chunk 0",
      plans((c) => {
        c.note!.since_chunk = 0;
      }),
      /column "note" has since_chunk 0/,
    ],
    [
      "since_chunk past the last chunk",
      plans((c) => {
        c.note!.since_chunk = 3;
      }),
      /footer chunk 2 has a block for column 2, which starts at a later chunk/,
    ],
    [
      "since_chunk earlier than the blocks",
      plans((c) => {
        c.note!.since_chunk = 1;
      }),
      /footer chunk 1 block 2 does not start at byte/,
    ],
    [
      "no since_chunk although chunks lack the column",
      plans((c) => {
        delete c.note!.since_chunk;
      }),
      /footer chunk 0 block 2 does not start at byte/,
    ],
    [
      "a column that is not nullable starting later",
      plans((c) => {
        c.id!.since_chunk = 1;
      }),
      /column "id" starts at chunk 1 but is not nullable/,
    ],
    [
      "a column conditioned on one that starts later",
      plans((c) => {
        c.name!.deps = ["note"];
      }),
      /column "name" depends on column "note", which starts at a later chunk \(2\)/,
    ],
  ];
  for (const [name, damaged, text] of cases) {
    await t.step(name, () => refused(name.replaceAll(" ", "_"), damaged, "CORRUPT", text));
  }
});

Deno.test("a footer this reader cannot parse is UNSUPPORTED_VERSION in a newer minor, CORRUPT in its own", async () => {
  // What a 1.7 reader with this rule makes of a 1.8 file: a footer member it has no
  // meaning for (here a null block entry where the column has started).
  const damaged = resealArchive(await Deno.readFile(GOLDEN), {
    footer: (f) => {
      f.chunks[2]!.blocks[2] = null;
    },
  });
  await refused(
    "newer_minor",
    asMinor(damaged, VERSION_MINOR_READ + 1),
    "UNSUPPORTED_VERSION",
    new RegExp(`format version 1\\.${VERSION_MINOR_READ + 1} is newer than this reader`),
  );
  await refused("own_minor", damaged, "CORRUPT", /footer chunk 2 block 2 does not start/);
});

// The reader as it was before 1.8 existed, from the repository's history: it must
// refuse the golden file, not read it with a column missing or shifted.
const BEFORE_1_8 = "0ee5dac";
const history = await historyHas(BEFORE_1_8);

Deno.test({
  name: "the reader of 1.6 (before 1.8 existed) refuses the 1.8 golden file",
  ignore: !history, // a shallow clone has no history to take it from
  fn: async () => {
    const old = await readerAt(BEFORE_1_8, `${Deno.cwd()}/${TMP}/reader_before_1_8`);
    await assert.rejects(old.ArchiveReader.open(GOLDEN), (err: unknown) => {
      assert.ok(err instanceof Error && "code" in err, String(err));
      assert.equal(err.code, "CORRUPT");
      assert.match(err.message, /footer chunk 0 block 2 does not start at byte/);
      return true;
    });
  },
});
