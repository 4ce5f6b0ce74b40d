/**
 * Tests of `codecs/zpaq.ts` beyond the shared codec conformance suite:
 * determinism against the clock, the binary's failure modes, temp-dir hygiene
 * and the options of `createZpaqCodec()`.
 *
 * Needs `--allow-run=zpaq --allow-read --allow-write` (temp dirs under `.tmp/`
 * and the system temp dir).
 *
 * @module
 */
import assert from "node:assert/strict";
import { CodecError } from "./errors.ts";
import { createZpaqCodec, zpaq } from "./zpaq.ts";
import { requireTool } from "../internal/_test_utils.ts";

const ZPAQ = requireTool("zpaq", "codecs/zpaq_test.ts") !== null;

const TEXT = new TextEncoder().encode(
  Array.from({ length: 3000 }, (_, i) => `${1_700_000_000 + i * 3},meter-${i % 11},${i % 101}\n`)
    .join(""),
);

/** A fresh directory under the repo's ignored `.tmp/`, removed by the caller. */
async function testDir(): Promise<string> {
  await Deno.mkdir(".tmp", { recursive: true });
  return await Deno.makeTempDir({ dir: ".tmp", prefix: "zpaq-test-" });
}

async function entries(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names;
}

async function rejectsWith(promise: Promise<unknown>, code: string, pattern?: RegExp) {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof CodecError, String(err));
    assert.equal(err.code, code, err.message);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

Deno.test("zpaq has id 'zpaq' and wire code 0x03", () => {
  assert.equal(zpaq.id, "zpaq");
  assert.equal(zpaq.code, 0x03);
  const custom = createZpaqCodec({ method: 3 });
  assert.equal(custom.id, "zpaq");
  assert.equal(custom.code, 0x03);
});

Deno.test(
  "zpaq.encode() gives the same bytes when the clock moves on",
  { ignore: !ZPAQ },
  async () => {
    const first = await zpaq.encode(TEXT);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // zpaq dates have 1 s resolution
    const second = await zpaq.encode(TEXT);
    assert.deepEqual(second, first);
    const latin1 = new TextDecoder("latin1").decode(first);
    assert.ok(latin1.includes("jDC20000101000000"), "every block carries the pinned date");
    assert.ok(!latin1.includes(`jDC${new Date().getUTCFullYear()}`), "no block carries today");
  },
);

Deno.test(
  "zpaq.encode() throws BINARY_MISSING naming the Debian package when the binary is missing",
  { ignore: !ZPAQ },
  async (t) => {
    const missing = createZpaqCodec({ binary: "permafrost-no-such-zpaq" });
    const message =
      "Cannot run 'permafrost-no-such-zpaq': the binary is missing; install the Debian package 'zpaq' (apt-get install -y zpaq)";
    await t.step("encode", async () => {
      await rejectsWith(
        missing.encode(TEXT),
        "BINARY_MISSING",
        new RegExp(`^${RegExp.escape(message)}$`),
      );
    });
    await t.step("decode", async () => {
      const packed = await zpaq.encode(TEXT);
      await rejectsWith(
        missing.decode(packed, TEXT.length),
        "BINARY_MISSING",
        /apt-get install -y zpaq/,
      );
    });
  },
);

Deno.test({
  name: "zpaq.encode() throws BINARY_DENIED when Deno may not run the binary",
  ignore: Deno.permissions.querySync({ name: "run", command: "/bin/true" }).state === "granted",
  async fn() {
    const denied = createZpaqCodec({ binary: "/bin/true" });
    await rejectsWith(denied.encode(TEXT), "BINARY_DENIED", /grant --allow-run=\/bin\/true/);
  },
});

Deno.test("zpaq.decode() throws DECODE_FAILED without running zpaq when the framing is wrong", {
  ignore: !ZPAQ,
}, async (t) => {
  const packed = await zpaq.encode(TEXT);
  // A missing binary proves zpaq is never started: the framing check comes first.
  const never = createZpaqCodec({ binary: "permafrost-no-such-zpaq" });
  await t.step("bytes that are not a zpaq archive", async () => {
    const garbage = new TextEncoder().encode("not a zpaq archive at all");
    await rejectsWith(
      never.decode(garbage, 10),
      "DECODE_FAILED",
      /does not start like a zpaq archive/,
    );
  });
  await t.step("an archive cut by one byte", async () => {
    await rejectsWith(
      never.decode(packed.subarray(0, packed.length - 1), TEXT.length),
      "DECODE_FAILED",
      /does not end with a ZPAQ end-of-block byte, so it is truncated/,
    );
  });
});

Deno.test("zpaq.decode() throws DECODE_FAILED quoting zpaq when the archive is corrupt", {
  ignore: !ZPAQ,
}, async () => {
  const packed = await zpaq.encode(TEXT);
  const damaged = packed.slice();
  const middle = damaged.length >> 1;
  damaged.fill(0x55, middle - 40, middle + 40);
  await rejectsWith(
    zpaq.decode(damaged, TEXT.length),
    "DECODE_FAILED",
    /^Cannot decode zpaq block of \d+ bytes: zpaq exited with code \d+ \(.+\)$/,
  );
});

Deno.test("zpaq.decode() throws LENGTH_MISMATCH from the listing before extracting", {
  ignore: !ZPAQ,
}, async () => {
  const packed = await zpaq.encode(TEXT);
  await rejectsWith(
    zpaq.decode(packed, TEXT.length + 1),
    "LENGTH_MISMATCH",
    new RegExp(`holds ${TEXT.length} bytes, expected ${TEXT.length + 1}`),
  );
});

Deno.test(
  "zpaq.decode() extracts only the file 'data' from an archive",
  { ignore: !ZPAQ },
  async () => {
    const dir = await testDir();
    try {
      await Deno.writeFile(`${dir}/other`, TEXT);
      const made = await new Deno.Command("zpaq", {
        args: ["a", "foreign.zpaq", "other", "-m1"],
        cwd: dir,
        stdout: "null",
        stderr: "null",
      }).output();
      assert.ok(made.success);
      const foreign = await Deno.readFile(`${dir}/foreign.zpaq`);
      await rejectsWith(zpaq.decode(foreign, TEXT.length), "DECODE_FAILED", /holds no file 'data'/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test(
  "createZpaqCodec() removes its temp dirs after success and failure",
  { ignore: !ZPAQ },
  async () => {
    const dir = await testDir();
    try {
      const codec = createZpaqCodec({ tempDir: dir, method: 1 });
      const packed = await codec.encode(TEXT);
      assert.deepEqual(await codec.decode(packed, TEXT.length), TEXT);
      await assert.rejects(codec.decode(packed, 3), CodecError);
      await assert.rejects(codec.decode(Uint8Array.of(1, 2, 3), 3), CodecError);
      assert.deepEqual(await entries(dir), []);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test(
  "createZpaqCodec() stops zpaq when it runs past timeoutMs",
  { ignore: !ZPAQ },
  async () => {
    const dir = await testDir();
    try {
      const slow = createZpaqCodec({ tempDir: dir, timeoutMs: 50 });
      const big = new Uint8Array(4 << 20).map((_, i) => (i * 2654435761) >>> 24);
      await rejectsWith(slow.encode(big), "ENCODE_FAILED", /ran longer than 50 ms and was stopped/);
      assert.deepEqual(await entries(dir), []);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("createZpaqCodec() output of any method decodes with the default codec", {
  ignore: !ZPAQ,
}, async () => {
  const fast = createZpaqCodec({ method: 1 });
  const packedFast = await fast.encode(TEXT);
  const packedBest = await zpaq.encode(TEXT);
  assert.ok(packedBest.length < packedFast.length, "-m5 beats -m1");
  assert.deepEqual(await zpaq.decode(packedFast, TEXT.length), TEXT);
});

Deno.test("createZpaqCodec() throws RangeError when an option is out of range", () => {
  // deno-lint-ignore no-explicit-any
  for (const method of [0, 6, 2.5] as any[]) {
    assert.throws(() => createZpaqCodec({ method }), RangeError);
  }
  for (const timeoutMs of [0, -1, Number.NaN]) {
    assert.throws(() => createZpaqCodec({ timeoutMs }), RangeError);
  }
});
