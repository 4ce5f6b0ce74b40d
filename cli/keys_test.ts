import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { FormatError, type FormatErrorCode } from "../format/errors.ts";
import { startFakeAwsKms, startFakeGcpKms } from "../keys/_fake_kms.ts";
import { ConfigError } from "../internal/config.ts";
import { freeze } from "../ops/freeze.ts";
import { audit, peek, verify } from "../ops/inspect.ts";
import { thaw, thawTable } from "../ops/thaw.ts";
import { OpsError } from "../ops/errors.ts";
import { freezeEncryption, thawKeys, unusedKeyWarning } from "./keys.ts";

const TMP = resolve(".tmp/cli_keys");
await Deno.mkdir(TMP, { recursive: true });

const SECRET_TEXT = "NEEDLE-IN-THE-PERMAFROST-4471";
const KEY = Uint8Array.from({ length: 32 }, (_, i) => (i * 7 + 3) & 0xff);
const KEY_B64 = btoa(String.fromCharCode(...KEY));
const isCode = (code: FormatErrorCode) => (e: unknown) =>
  e instanceof FormatError && e.code === code;

async function sourceCsv(): Promise<string> {
  const path = join(TMP, "source.csv");
  const lines = ["id,note,amount"];
  for (let i = 0; i < 2500; i++) {
    lines.push(
      `${i},${i % 11 === 0 ? SECRET_TEXT : `plain note ${i % 13}`},${(i * 1.25).toFixed(2)}`,
    );
  }
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
  return path;
}

function contains(haystack: Uint8Array, text: string): boolean {
  const needle = new TextEncoder().encode(text);
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("freezeEncryption() picks one key source, flags over environment", async (t) => {
  const keyFile = join(TMP, "k.bin");
  await Deno.writeFile(keyFile, KEY);
  await t.step("nothing configured: a plain archive", async () => {
    assert.equal(await freezeEncryption({}, { env: {} }), undefined);
  });
  await t.step("--key-file, PERMAFROST_KEY_FILE, PERMAFROST_KEY", async () => {
    assert.deepEqual((await freezeEncryption({ "key-file": keyFile }, { env: {} }))?.key, KEY);
    assert.deepEqual(
      (await freezeEncryption({}, { env: { PERMAFROST_KEY_FILE: keyFile } }))?.key,
      KEY,
    );
    assert.deepEqual((await freezeEncryption({}, { env: { PERMAFROST_KEY: KEY_B64 } }))?.key, KEY);
  });
  await t.step("--kms local: a provider", async () => {
    const enc = await freezeEncryption({ kms: `local:${keyFile}` }, { env: {} });
    assert.equal(enc?.provider?.name, "local");
  });
  await t.step("a flag beats the environment", async () => {
    const enc = await freezeEncryption({ kms: `local:${keyFile}` }, {
      env: { PERMAFROST_KEY: KEY_B64 },
    });
    assert.equal(enc?.provider?.name, "local");
  });
  await t.step("two sources, a bad key or a bad --kms are usage errors", async () => {
    const isConfig = (e: unknown) => e instanceof ConfigError;
    await assert.rejects(
      freezeEncryption({ "key-file": keyFile, kms: `local:${keyFile}` }, { env: {} }),
      isConfig,
    );
    await assert.rejects(
      freezeEncryption({}, { env: { PERMAFROST_KEY: KEY_B64, PERMAFROST_KEY_FILE: keyFile } }),
      isConfig,
    );
    await assert.rejects(
      freezeEncryption({}, { env: { PERMAFROST_KEY: "c2hvcnQ=" } }),
      (e: unknown) => isConfig(e) && !(e as Error).message.includes("c2hvcnQ="),
    );
    await assert.rejects(freezeEncryption({ kms: "vault:x" }, { env: {} }), isConfig);
  });
});

Deno.test("freeze and thaw with a key: round trip, no plaintext, audit and verify without the key", async (t) => {
  const csv = await sourceCsv();
  const keyFile = join(TMP, "k2.bin");
  await Deno.writeFile(keyFile, KEY);
  const plain = join(TMP, "plain.pf");
  const sealed = join(TMP, "sealed.pf");
  await freeze(csv, plain, { chunkRows: 500, threads: 0 });
  await freeze(csv, sealed, {
    chunkRows: 500,
    threads: 2,
    encryption: await freezeEncryption({ "key-file": keyFile }, { env: {} }),
  });
  await t.step("the distinctive string is in the plain archive only", async () => {
    assert.ok(contains(await Deno.readFile(plain), SECRET_TEXT), "the search can find plaintext");
    assert.ok(!contains(await Deno.readFile(sealed), SECRET_TEXT));
  });
  await t.step("thaw with the key gives the same rows as the plain archive", async () => {
    const keys = await thawKeys({ "key-file": keyFile }, { env: {} });
    await thaw(sealed, join(TMP, "sealed.csv"), { keys });
    await thaw(plain, join(TMP, "plain.csv"));
    assert.equal(
      await Deno.readTextFile(join(TMP, "sealed.csv")),
      await Deno.readTextFile(join(TMP, "plain.csv")),
    );
    const viaEnv = await thawKeys({}, { env: { PERMAFROST_KEY: KEY_B64 } });
    const rows = await peek(sealed, { rows: 3, keys: viaEnv });
    assert.deepEqual(rows.rows[0], [0, SECRET_TEXT, 0]);
  });
  await t.step("thaw without the key or with a wrong one fails and writes nothing", async () => {
    for (
      const [keys, code] of [[{}, "KEY_REQUIRED"], [
        { key: new Uint8Array(32) },
        "WRONG_KEY",
      ]] as const
    ) {
      const out = join(TMP, `refused-${code}.csv`);
      await assert.rejects(thaw(sealed, out, { keys }), isCode(code));
      await assert.rejects(thaw(sealed, out), isCode("KEY_REQUIRED"));
      assert.equal(await exists(out), false);
      const leftovers = [...Deno.readDirSync(TMP)].filter((e) => e.name.includes("refused"));
      assert.deepEqual(leftovers, [], "no temp file either");
    }
    await assert.rejects(peek(sealed), isCode("KEY_REQUIRED"));
  });
  await t.step("audit and verify need no key", async () => {
    const report = await audit(sealed);
    assert.equal(report.encrypted, true);
    assert.equal(report.format_version, "1.4");
    assert.equal(report.edek_size, null, "a raw key has no EDEK");
    assert.equal(report.rows, 2500);
    assert.equal((await verify(sealed)).ok, true);
    const plainReport = await audit(plain);
    assert.deepEqual([plainReport.encrypted, plainReport.format_version], [false, "1.3"]);
  });
});

Deno.test("thaw() with requireEncryption refuses a plain archive; a key for one is reported", async () => {
  const csv = await sourceCsv();
  const plain = join(TMP, "plain-required.pf");
  const sealed = join(TMP, "sealed-required.pf");
  await freeze(csv, plain, { chunkRows: 1000, threads: 0 });
  await freeze(csv, sealed, { chunkRows: 1000, threads: 0, encryption: { key: KEY } });
  const out = join(TMP, "required.csv");
  await Deno.remove(out).catch(() => {});
  const notEncrypted = (e: unknown) => {
    assert.ok(e instanceof OpsError);
    assert.equal(e.code, "NOT_ENCRYPTED");
    assert.equal(e.path, plain);
    assert.match(e.message, /is not encrypted, and encryption is required/);
    return true;
  };
  await assert.rejects(thaw(plain, out, { requireEncryption: true }), notEncrypted);
  await assert.rejects(thawTable(plain, { requireEncryption: true }), notEncrypted);
  assert.equal(await exists(out), false);
  const keys = { key: KEY };
  const s = await thaw(sealed, out, { keys, requireEncryption: true });
  assert.deepEqual([s.rows, s.encrypted], [2500, true]);
  assert.equal(unusedKeyWarning(sealed, keys, s.encrypted), null);
  const p = await thaw(plain, out, { keys });
  assert.equal(p.encrypted, false);
  assert.match(unusedKeyWarning(plain, keys, p.encrypted) ?? "", /^warning: .* is not encrypted/);
  assert.equal(unusedKeyWarning(plain, {}, false), null, "no key, nothing to say");
});

Deno.test("freeze --kms local: envelope encryption, edek_size in audit", async () => {
  const csv = await sourceCsv();
  const kek = join(TMP, "master.key");
  await Deno.writeFile(kek, crypto.getRandomValues(new Uint8Array(32)));
  const path = join(TMP, "envelope.pf");
  await freeze(csv, path, {
    chunkRows: 1000,
    threads: 0,
    encryption: await freezeEncryption({ kms: `local:${kek}` }, { env: {} }),
  });
  const report = await audit(path);
  assert.equal(report.edek_size, 40);
  assert.ok(!contains(await Deno.readFile(path), SECRET_TEXT));
  const byKms = await thawKeys({ kms: `local:${kek}` }, { env: {} });
  const byFile = await thawKeys({ "key-file": kek }, { env: {} });
  for (const keys of [byKms, byFile]) {
    assert.equal((await peek(path, { rows: 1, keys })).rows[0]![1], SECRET_TEXT);
  }
  await assert.rejects(
    thaw(path, join(TMP, "nope.csv"), {
      keys: await thawKeys({}, { env: { PERMAFROST_KEY: KEY_B64 } }),
    }),
    isCode("WRONG_KEY"),
  );
});

Deno.test("freeze --kms aws-kms / gcp-kms against fake KMS servers; thaw finds the key from the header", async (t) => {
  const csv = await sourceCsv();
  const aws = await startFakeAwsKms({
    region: "eu-central-1",
    credentials: { accessKeyId: "AKIATEST", secretAccessKey: "test-secret" },
    keys: { "11111111-2222-3333-4444-555555555555": ["alias/permafrost"] },
  });
  const gcp = await startFakeGcpKms({
    token: "ya29.fake",
    keys: ["projects/p/locations/europe-west1/keyRings/r/cryptoKeys/archives"],
  });
  try {
    const cases = [
      {
        name: "aws-kms",
        kms: "aws-kms:alias/permafrost",
        env: {
          PERMAFROST_AWS_REGION: "eu-central-1",
          PERMAFROST_AWS_KMS_ENDPOINT: aws.url,
          PERMAFROST_AWS_ACCESS_KEY_ID: "AKIATEST",
          PERMAFROST_AWS_SECRET_ACCESS_KEY: "test-secret",
        },
        badEnv: { PERMAFROST_AWS_SECRET_ACCESS_KEY: "wrong" },
      },
      {
        name: "gcp-kms",
        kms: "gcp-kms:projects/p/locations/europe-west1/keyRings/r/cryptoKeys/archives",
        env: { PERMAFROST_GCP_KMS_ENDPOINT: gcp.url, PERMAFROST_GCP_ACCESS_TOKEN: "ya29.fake" },
        badEnv: { PERMAFROST_GCP_ACCESS_TOKEN: "expired" },
      },
    ];
    for (const c of cases) {
      await t.step(c.name, async () => {
        const path = join(TMP, `${c.name}.pf`);
        await freeze(csv, path, {
          chunkRows: 1000,
          threads: 0,
          encryption: await freezeEncryption({ kms: c.kms }, { env: c.env }),
        });
        const report = await audit(path);
        assert.ok(report.edek_size !== null && report.edek_size > 32);
        const out = join(TMP, `${c.name}.csv`);
        await thaw(path, out, { keys: await thawKeys({}, { env: c.env }) });
        assert.ok((await Deno.readTextFile(out)).includes(SECRET_TEXT));
        await assert.rejects(
          thaw(path, join(TMP, `${c.name}-bad.csv`), {
            keys: await thawKeys({}, { env: { ...c.env, ...c.badEnv } }),
          }),
          isCode("KEY_PROVIDER_FAILED"),
        );
        assert.equal(await exists(join(TMP, `${c.name}-bad.csv`)), false);
      });
    }
  } finally {
    await aws.close();
    await gcp.close();
  }
});
