/**
 * Tests of `codecs/zpaq_wasm.ts` beyond the shared codec conformance suite:
 * every level on column-like data, the stream's shape, hostile models (an
 * endless ZPAQL loop, a memory bomb) and that the committed `.wasm` is what
 * `build.sh` builds (only where emcc is installed).
 *
 * Needs `--allow-read` (the `.wasm`); the build check also `--allow-run` and
 * `--allow-write` (a temp dir under `.tmp/`).
 *
 * @module
 */
import assert from "node:assert/strict";
import { CodecError } from "./errors.ts";
import { decodedLimit, memoryLimit, stepBudget, zpaqWasm } from "./zpaq_wasm.ts";
import { ARCHIVE_PREFIX } from "./zpaq.ts";
import { pseudoRandomBytes } from "../internal/_test_utils.ts";

/** Blocks like the ones predictors hand the codec: text, float64 bits, small ints. */
function columnLikeBlocks(): [string, Uint8Array][] {
  const text = new TextEncoder().encode(
    Array.from(
      { length: 2000 },
      (_, i) => `${["LAX", "SFO", "JFK", "ORD"][i % 4]},${(i * 37) % 1440},Delta Air Lines\n`,
    ).join(""),
  );
  const floats = new Float64Array(4000);
  for (let i = 0; i < floats.length; i++) floats[i] = Math.round(Math.sin(i / 50) * 1e4) / 100;
  const ints = new Uint8Array(8000);
  for (let i = 0; i < ints.length; i++) ints[i] = (i * 7) % 13 < 3 ? 0 : (i % 5) + 1;
  return [
    ["CSV-like text", text],
    ["float64 series", new Uint8Array(floats.buffer)],
    ["small integers", ints],
    ["random bytes", pseudoRandomBytes(20_000, 99)],
  ];
}

async function rejectsWith(promise: Promise<unknown>, code: string, pattern: RegExp) {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof CodecError, String(err));
    assert.equal(err.code, code, err.message);
    assert.match(err.message, pattern);
    return true;
  });
}

/**
 * A ZPAQ block whose model is one CM (`hh`, `hm` as given) and whose HCOMP is
 * `hcomp`, with a segment declaring `rawLength` and `data` as compressed bytes.
 */
function handMadeBlock(
  options: { hh: number; hm: number; hcomp: number[]; rawLength: number; data: Uint8Array },
): Uint8Array {
  const comp = [2, 0, 255]; // CM, 2^0 contexts, limit 255
  const hsize = 5 + comp.length + 1 + options.hcomp.length + 1;
  const comment = new TextEncoder().encode(String(options.rawLength));
  return Uint8Array.from([
    ...ARCHIVE_PREFIX,
    2, // ZPAQ level 2
    1, // ZPAQL type
    hsize & 0xff,
    hsize >> 8,
    options.hh,
    options.hm,
    0, // ph
    0, // pm
    1, // one component
    ...comp,
    0, // end of COMP
    ...options.hcomp,
    0, // end of HCOMP
    1, // segment
    0, // empty name
    ...comment,
    0,
    0, // reserved
    ...options.data,
  ]);
}

Deno.test("zpaqWasm has id 'zpaqwasm', wire code 0x04 and levels 1..5", () => {
  assert.equal(zpaqWasm.id, "zpaqwasm");
  assert.equal(zpaqWasm.code, 0x04);
  assert.deepEqual({ ...zpaqWasm.levels }, { min: 1, max: 5, default: 5 });
});

Deno.test("zpaqWasm.decode() returns the input at every level", async (t) => {
  for (
    const [label, raw] of [["an empty block", new Uint8Array(0)], ...columnLikeBlocks()] as [
      string,
      Uint8Array,
    ][]
  ) {
    for (let level = 1; level <= 5; level++) {
      await t.step(`${label}, level ${level}`, async () => {
        const packed = await zpaqWasm.encode(raw, level);
        assert.deepEqual(
          [...packed.subarray(0, 16)],
          [...ARCHIVE_PREFIX],
          "starts with a ZPAQ block",
        );
        assert.equal(packed[packed.length - 1], 0xff, "ends with the end-of-block byte");
        const out = await zpaqWasm.decode(packed, raw.length);
        assert.equal(out.length, raw.length);
        assert.ok(out.every((b, i) => b === raw[i]), "decoded bytes equal the input");
      });
    }
  }
});

Deno.test("zpaqWasm.encode() at level 5 makes column-like data smaller than level 1", async () => {
  for (const [label, raw] of columnLikeBlocks().slice(0, 3)) {
    const fast = await zpaqWasm.encode(raw, 1);
    const best = await zpaqWasm.encode(raw);
    assert.ok(best.length < fast.length, `${label}: ${best.length} < ${fast.length}`);
    assert.ok(best.length < raw.length / 2, `${label}: ${best.length} < ${raw.length} / 2`);
  }
});

Deno.test("zpaqWasm.encode() writes the raw length as the segment's comment, no SHA-1", async () => {
  const raw = columnLikeBlocks()[0]![1];
  const packed = await zpaqWasm.encode(raw);
  const latin1 = new TextDecoder("latin1").decode(packed);
  assert.ok(latin1.includes(`\x01\x00${raw.length}\x00\x00`), "segment: empty name, length");
  // End of segment without a checksum (254), then end of block (255).
  assert.deepEqual([...packed.subarray(-2)], [254, 255]);
});

Deno.test("zpaqWasm.encode() rejects a level outside 1..5", async () => {
  for (const level of [0, 6, 2.5]) {
    await assert.rejects(zpaqWasm.encode(new Uint8Array(4), level), RangeError);
  }
});

Deno.test("zpaqWasm.decode() refuses what surrounds or follows a valid block", async (t) => {
  const raw = columnLikeBlocks()[2]![1];
  const packed = await zpaqWasm.encode(raw, 2);
  await t.step("a byte before the block", async () => {
    const shifted = Uint8Array.from([0, ...packed]);
    await rejectsWith(zpaqWasm.decode(shifted, raw.length), "DECODE_FAILED", /start/);
  });
  await t.step("a byte after the block", async () => {
    const longer = Uint8Array.from([...packed, 0]);
    await rejectsWith(zpaqWasm.decode(longer, raw.length), "DECODE_FAILED", /follow/);
  });
  await t.step("a second block", async () => {
    const twice = Uint8Array.from([...packed, ...packed]);
    await rejectsWith(zpaqWasm.decode(twice, raw.length), "DECODE_FAILED", /follow/);
  });
});

Deno.test("zpaqWasm.decode() stops a model that loops forever", async () => {
  // HCOMP `JMP -1`: jumps back to itself after the first decoded byte.
  const looping = handMadeBlock({
    hh: 0,
    hm: 0,
    hcomp: [63, 254],
    rawLength: 5,
    data: new Uint8Array(64).fill(0x55),
  });
  await rejectsWith(zpaqWasm.decode(looping, 5), "DECODE_FAILED", /instruction budget/);
});

Deno.test("zpaqWasm.decode() refuses a model that needs more memory than any level", async () => {
  const bomb = handMadeBlock({
    hh: 30, // 2^32 bytes of H
    hm: 0,
    hcomp: [56], // HALT
    rawLength: 5,
    data: new Uint8Array(64).fill(0x55),
  });
  await rejectsWith(zpaqWasm.decode(bomb, 5), "DECODE_FAILED", /memory/);
});

Deno.test("zpaqWasm's decode limits leave room for real blocks and grow with them", () => {
  assert.equal(memoryLimit(0), 256 << 20);
  assert.equal(memoryLimit(2 << 20), 256 * (4 << 20));
  assert.ok(decodedLimit(1000) > 2000);
  assert.ok(stepBudget(1 << 20) > 180 * 3 * (1 << 20));
  assert.ok(stepBudget(10) < stepBudget(1 << 20));
});

/**
 * Whether emcc is on PATH. Not `requireTool`: CI has no emscripten and must not
 * fail for it (the committed `.wasm` is what runs), so this check only skips.
 */
function emccInstalled(): boolean {
  const dirs = (Deno.env.get("PATH") ?? "").split(":").filter((d) => d !== "");
  const found = dirs.some((dir) => {
    try {
      return Deno.statSync(`${dir}/emcc`).isFile;
    } catch {
      return false;
    }
  });
  if (!found) {
    const line =
      "SKIPPED: codecs/zpaq_wasm_test.ts does not rebuild zpaq.wasm: emcc is not installed (apt-get install -y emscripten)\n";
    Deno.stderr.writeSync(new TextEncoder().encode(line));
  }
  return found;
}

const EMCC = emccInstalled();

Deno.test(
  "codecs/zpaq_wasm/zpaq.wasm is what build.sh builds from the committed sources",
  { ignore: !EMCC },
  async () => {
    await Deno.mkdir(".tmp", { recursive: true });
    const dir = await Deno.makeTempDir({ dir: ".tmp", prefix: "zpaq-wasm-build-" });
    try {
      const script = new URL("./zpaq_wasm/build.sh", import.meta.url).pathname;
      const built = `${dir}/zpaq.wasm`;
      const result = await new Deno.Command("sh", {
        args: [script, built],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.ok(result.success, new TextDecoder().decode(result.stderr));
      const committed = await Deno.readFile(new URL("./zpaq_wasm/zpaq.wasm", import.meta.url));
      assert.deepEqual(await Deno.readFile(built), committed);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
