/**
 * The reader against damaged archives: every single-bit flip of a small real
 * archive, random multi-byte damage and every class of truncation. The only
 * acceptable outcomes are the exact original data or a `FormatError` — never
 * another exception, wrong data or a hang (each attempt is time-bounded).
 */
import assert from "node:assert/strict";
import { concatBatches } from "../../format/column.ts";
import type { Batch } from "../../format/column.ts";
import { FormatError } from "../../format/errors.ts";
import { ArchiveReader } from "../../format/reader.ts";
import {
  ALL_TYPES,
  assertColumnEqual,
  prng,
  randomBatch,
  writeTestArchive,
} from "../../format/_test_utils.ts";

const TMP = ".tmp/fuzz";
await Deno.mkdir(TMP, { recursive: true });
const ATTEMPT_LIMIT_MS = 10_000;

type Outcome = "same" | "format-error";

async function attempt(path: string, original: Batch): Promise<Outcome> {
  const work = (async (): Promise<Outcome> => {
    let reader: ArchiveReader;
    try {
      reader = await ArchiveReader.open(path);
    } catch (err) {
      if (err instanceof FormatError) return "format-error";
      throw err;
    }
    try {
      const parts: Batch[] = [];
      for await (const b of reader.read()) parts.push(b);
      const verified = await reader.verify();
      const back = concatBatches(reader.index.schema, parts);
      assert.equal(back.length, original.length, "row count");
      original.schema.forEach((f, i) =>
        assertColumnEqual(back.columns[i]!, original.columns[i]!, f.name)
      );
      assert.ok(verified.ok, "data read back exactly, so verify must pass");
      return "same";
    } catch (err) {
      if (err instanceof FormatError) return "format-error";
      throw err;
    } finally {
      reader.close();
    }
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`reader hung over ${ATTEMPT_LIMIT_MS} ms on ${path}`)),
      ATTEMPT_LIMIT_MS,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("ArchiveReader turns every single-bit flip of a small archive into a FormatError", async () => {
  const batch = randomBatch(ALL_TYPES, 40, 21);
  const path = `${TMP}/small.pf`;
  await writeTestArchive(path, batch, { chunkRows: 16 });
  const good = await Deno.readFile(path);
  // The check can tell: the undamaged archive reads back exactly.
  assert.equal(await attempt(path, batch), "same", "the undamaged archive reads back");
  const bad = `${TMP}/small_bad.pf`;
  for (let at = 0; at < good.length; at++) {
    const b = good.slice();
    b[at]! ^= 1 << (at % 8);
    await Deno.writeFile(bad, b);
    const outcome = await attempt(bad, batch);
    assert.equal(outcome, "format-error", `flip at byte ${at} of ${good.length} was not detected`);
  }
});

Deno.test("ArchiveReader survives random damage and truncation with only typed errors", async (t) => {
  for (const codec of ["zstd", "lzma2"]) {
    await t.step(codec, async () => {
      const batch = randomBatch(ALL_TYPES, 600, 33);
      const path = `${TMP}/rand_${codec}.pf`;
      await writeTestArchive(path, batch, { chunkRows: 200, codec });
      const good = await Deno.readFile(path);
      const rand = prng(99);
      const bad = `${TMP}/rand_${codec}_bad.pf`;
      for (let i = 0; i < 150; i++) {
        const kind = i % 3;
        let b: Uint8Array;
        if (kind === 0) {
          b = good.slice();
          const n = 1 + Math.floor(rand() * 16);
          const at = Math.floor(rand() * (good.length - n));
          for (let j = 0; j < n; j++) b[at + j] = Math.floor(rand() * 256);
        } else if (kind === 1) {
          b = good.slice(0, Math.floor(rand() * good.length));
        } else {
          const extra = Uint8Array.from(
            { length: 1 + Math.floor(rand() * 64) },
            () => Math.floor(rand() * 256),
          );
          b = new Uint8Array(good.length + extra.length);
          b.set(good);
          b.set(extra, good.length);
        }
        await Deno.writeFile(bad, b);
        const outcome = await attempt(bad, batch);
        if (kind !== 0) {
          assert.equal(outcome, "format-error", `mutation ${i} (kind ${kind}) was not detected`);
        }
      }
    });
  }
});
