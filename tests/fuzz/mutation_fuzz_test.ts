/**
 * Thousands of random mutations of real archives — plain and encrypted, zstd and
 * lzma2 — fed to the reader. Besides blind damage (bit flips, overwritten runs,
 * truncation, trailing junk), half the mutations are *resealed*: payload bytes or
 * header/footer JSON values are changed and then every SHA-256 is recomputed
 * (`resealArchive`), the way an attacker would, so the damage reaches the JSON
 * validation, the codecs, the predictors and AES-GCM instead of stopping at a hash.
 *
 * Outcomes allowed:
 * - blind damage, any archive: the exact original rows (and `verify` passes), or a
 *   `FormatError`;
 * - resealed damage, encrypted archive: the exact original rows, or a `FormatError`
 *   (AES-GCM authenticates the blocks, the header and each block's footer entry);
 * - resealed damage, plain archive: any rows or a `FormatError` — with the hashes
 *   rewritten nothing can tell forged plain data from real, but the reader must
 *   still never crash, hang or throw anything untyped.
 *
 * Bounded: exactly {@link MUTATIONS} attempts, each of which must finish within
 * {@link ATTEMPT_LIMIT_MS}. The PRNG is seeded, so every run tries the same mutations and
 * a failure names one that reproduces.
 */
import assert from "node:assert/strict";
import type { Batch } from "../../format/column.ts";
import { concatBatches } from "../../format/column.ts";
import { FormatError } from "../../format/errors.ts";
import type { ArchiveFooter } from "../../format/header.ts";
import { localKeyProvider } from "../../format/local_key.ts";
import type { EncryptionOptions, KeyRing } from "../../format/key_provider.ts";
import { ArchiveReader } from "../../format/reader.ts";
import {
  ALL_TYPES,
  assertColumnEqual,
  prng,
  randomBatch,
  resealArchive,
  writeTestArchive,
} from "../../format/_test_utils.ts";

const TMP = ".tmp/fuzz_mutation";
await Deno.mkdir(TMP, { recursive: true });

/** Mutations tried (over all archives): a count, so every run tries the same ones. */
const MUTATIONS = 1500;
/** Longest one attempt may take. */
const ATTEMPT_LIMIT_MS = 5_000;

const KEY = Uint8Array.from({ length: 32 }, (_, i) => 255 - i);
const KEK = Uint8Array.from({ length: 32 }, (_, i) => i ^ 0x5a);
const RING: KeyRing = { key: KEY, providers: [localKeyProvider(KEK)] };

interface Subject {
  name: string;
  bytes: Uint8Array;
  batch: Batch;
  encrypted: boolean;
}

type Outcome = "same" | "different" | "format-error";

async function subjects(): Promise<Subject[]> {
  const specs: { name: string; codec: string; encryption?: EncryptionOptions; rows: number }[] = [
    { name: "plain-zstd", codec: "zstd", rows: 160 },
    { name: "plain-lzma2", codec: "lzma2", rows: 120 },
    { name: "raw-key-zstd", codec: "zstd", rows: 160, encryption: { key: KEY } },
    {
      name: "local-kms-lzma2",
      codec: "lzma2",
      rows: 120,
      encryption: { provider: localKeyProvider(KEK) },
    },
  ];
  const out: Subject[] = [];
  for (const [i, s] of specs.entries()) {
    const batch = randomBatch(ALL_TYPES, s.rows, 1000 + i);
    const path = `${TMP}/${s.name}.pf`;
    await writeTestArchive(path, batch, {
      codec: s.codec,
      chunkRows: 40,
      encryption: s.encryption,
    });
    out.push({ name: s.name, bytes: await Deno.readFile(path), batch, encrypted: !!s.encryption });
  }
  return out;
}

async function attempt(path: string, original: Batch): Promise<Outcome> {
  const work = (async (): Promise<Outcome> => {
    let reader: ArchiveReader;
    try {
      reader = await ArchiveReader.open(path, { keys: RING });
    } catch (err) {
      if (err instanceof FormatError) return "format-error";
      throw err;
    }
    try {
      const parts: Batch[] = [];
      for await (const b of reader.read()) parts.push(b);
      const verified = await reader.verify();
      const back = concatBatches(reader.index.schema, parts);
      try {
        assert.equal(back.length, original.length);
        assert.equal(back.schema.length, original.schema.length);
        original.schema.forEach((f, i) =>
          assertColumnEqual(back.columns[i]!, original.columns[i]!, f.name)
        );
        assert.ok(verified.ok);
        return "same";
      } catch {
        return "different";
      }
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
      () => reject(new Error(`reader hung over ${ATTEMPT_LIMIT_MS} ms`)),
      ATTEMPT_LIMIT_MS,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Values a JSON field may be replaced with. */
function randomJson(rand: () => number): unknown {
  const pool: unknown[] = [
    null,
    true,
    0,
    -1,
    1,
    2 ** 31,
    2 ** 53,
    1e300,
    0.5,
    "",
    "zstd",
    "raw",
    "local",
    "delta_zigzag",
    "x".repeat(64),
    "0".repeat(64),
    [],
    {},
    [0],
    { name: "int", bitWidth: 64, isSigned: true },
  ];
  return pool[Math.floor(rand() * pool.length)];
}

/** Replaces (or deletes) one random member somewhere in a JSON value. */
function mutateJson(root: Record<string, unknown>, rand: () => number): void {
  const slots: { parent: Record<string, unknown> | unknown[]; key: string | number }[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        slots.push({ parent: v, key: i });
        walk(x);
      });
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        slots.push({ parent: v as Record<string, unknown>, key: k });
        walk(x);
      }
    }
  };
  walk(root);
  const slot = slots[Math.floor(rand() * slots.length)];
  if (!slot) return;
  const p = slot.parent as Record<string | number, unknown>;
  const current = p[slot.key];
  const r = rand();
  if (r < 0.15 && !Array.isArray(slot.parent)) delete p[slot.key];
  else if (r < 0.35 && typeof current === "number") p[slot.key] = current + (rand() < 0.5 ? 1 : -1);
  else p[slot.key] = structuredClone(randomJson(rand));
}

function mutate(
  s: Subject,
  kind: number,
  rand: () => number,
): { bytes: Uint8Array; resealed: boolean } {
  const good = s.bytes;
  const at = (n = 1) => Math.floor(rand() * (good.length - n));
  switch (kind) {
    case 0: { // one flipped bit
      const b = good.slice();
      b[at()]! ^= 1 << Math.floor(rand() * 8);
      return { bytes: b, resealed: false };
    }
    case 1: { // a run of random bytes
      const b = good.slice();
      const n = 1 + Math.floor(rand() * 24);
      const from = at(n);
      for (let j = 0; j < n; j++) b[from + j] = Math.floor(rand() * 256);
      return { bytes: b, resealed: false };
    }
    case 2: // truncation
      return { bytes: good.slice(0, Math.floor(rand() * good.length)), resealed: false };
    case 3: { // trailing junk
      const extra = Uint8Array.from({ length: 1 + Math.floor(rand() * 64) }, () => rand() * 256);
      const b = new Uint8Array(good.length + extra.length);
      b.set(good);
      b.set(extra, good.length);
      return { bytes: b, resealed: false };
    }
    case 4: { // payload bytes changed, every hash recomputed
      const view = new DataView(good.buffer, good.byteOffset, good.byteLength);
      const start = 16 + view.getUint32(12, true) + 32;
      const end = good.length - 48 - view.getUint32(good.length - 16, true);
      const b = good.slice();
      const n = 1 + Math.floor(rand() * 4);
      for (let j = 0; j < n; j++) {
        const p = start + Math.floor(rand() * (end - start));
        b[p] = rand() < 0.5 ? b[p]! ^ (1 << Math.floor(rand() * 8)) : Math.floor(rand() * 256);
      }
      return { bytes: resealArchive(b), resealed: true };
    }
    case 5: // a header value changed, every hash recomputed
      return {
        bytes: resealArchive(good.slice(), { header: (h) => mutateJson(h, rand) }),
        resealed: true,
      };
    default: // a footer value changed, every hash recomputed
      return {
        bytes: resealArchive(good.slice(), {
          footer: (f: ArchiveFooter) => mutateJson(f as unknown as Record<string, unknown>, rand),
        }),
        resealed: true,
      };
  }
}

Deno.test("ArchiveReader answers thousands of random mutations of real archives with typed errors only", async () => {
  const all = await subjects();
  const rand = prng(20240601);
  const tally = new Map<string, number>();
  let tried = 0;
  for (let done = 0; done < MUTATIONS; done++) {
    const s = all[done % all.length]!;
    const kind = Math.floor(rand() * 7);
    let mutated: { bytes: Uint8Array; resealed: boolean };
    try {
      mutated = mutate(s, kind, rand);
    } catch {
      continue; // a mutation so broken that resealing could not parse it: nothing to test
    }
    tried++;
    const path = `${TMP}/m_${s.name}.pf`;
    await Deno.writeFile(path, mutated.bytes);
    const outcome = await attempt(path, s.batch).catch((err) => {
      throw new Error(`mutation ${done} (${s.name}, kind ${kind}) escaped: ${err}`, {
        cause: err,
      });
    });
    const key = `${s.name}/${mutated.resealed ? "resealed" : "blind"}/${outcome}`;
    tally.set(key, (tally.get(key) ?? 0) + 1);
    if (outcome === "different") {
      assert.ok(
        mutated.resealed && !s.encrypted,
        `mutation ${done} (${s.name}, kind ${kind}) read back wrong data without an error`,
      );
    }
    if (kind === 2 || kind === 3) {
      assert.equal(outcome, "format-error", `mutation ${done} (kind ${kind}) was not detected`);
    }
  }
  // Mutations that resealing could not parse are skipped: most must still have run.
  assert.ok(tried >= MUTATIONS * 0.9, `only ${tried} of ${MUTATIONS} mutations could be tried`);
  // Every encrypted subject saw resealed damage and refused it.
  for (const s of all.filter((x) => x.encrypted)) {
    assert.ok((tally.get(`${s.name}/resealed/format-error`) ?? 0) > 0, s.name);
  }
});
