/**
 * One table-driven suite over every key provider: `local` (`format/local_key.ts`), and
 * `aws-kms` / `gcp-kms` (`keys/`) against local fakes of their HTTP APIs
 * (`keys/_fake_kms.ts`, on port 0). A provider throws its own layer's error class
 * (`FormatError`, `KeyError`) with the shared codes; through the archive reader every
 * failure is a `FormatError`.
 */
import assert from "node:assert/strict";
import { FormatError } from "../../format/errors.ts";
import type { Batch } from "../../format/column.ts";
import { concatBatches } from "../../format/column.ts";
import { ArchiveReader } from "../../format/reader.ts";
import {
  ALL_TYPES,
  assertColumnEqual,
  randomBatch,
  writeTestArchive,
} from "../../format/_test_utils.ts";
import { awsKmsProvider } from "../../keys/aws_kms.ts";
import { gcpKmsProvider } from "../../keys/gcp_kms.ts";
import { localKeyProvider, readKeyFile } from "../../format/local_key.ts";
import { type KeyProvider, prepareEncryption, unlockDataKey } from "../../format/key_provider.ts";
import { startFakeAwsKms, startFakeGcpKms } from "../../keys/_fake_kms.ts";
import { PermafrostError } from "../../internal/errors.ts";

const TMP = ".tmp/format_keys";
await Deno.mkdir(TMP, { recursive: true });

/** A typed error of any layer with this code. */
const isCode = (code: string) => (e: unknown) => e instanceof PermafrostError && e.code === code;

/** A `FormatError` with this code (what the reader and `prepareEncryption` throw). */
const isFormat = (code: string) => (e: unknown) => e instanceof FormatError && e.code === code;

const AWS_CREDENTIALS = {
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
};
const AWS_KEY_1 = "1234abcd-12ab-34cd-56ef-1234567890ab";
const AWS_KEY_2 = "0987dcba-09fe-87dc-65ba-ab0987654321";
const GCP_KEY_1 = "projects/p/locations/global/keyRings/r/cryptoKeys/archives";
const GCP_KEY_2 = "projects/p/locations/global/keyRings/r/cryptoKeys/other";

/** One provider under test: two keys, and a way to make each fail. */
interface Case {
  name: string;
  expectedKeyId: (keyId: string) => boolean;
  make(): Promise<{
    first: KeyProvider;
    second: KeyProvider;
    broken: KeyProvider;
    calls: () => string[];
    close(): Promise<void>;
  }>;
}

const CASES: Case[] = [
  {
    name: "local",
    expectedKeyId: (id) => /^sha256:[0-9a-f]{32}$/.test(id),
    make() {
      return Promise.resolve({
        first: localKeyProvider(new Uint8Array(32).fill(1)),
        second: localKeyProvider(new Uint8Array(32).fill(2)),
        broken: localKeyProvider(new Uint8Array(32).fill(3)),
        calls: () => [],
        close: () => Promise.resolve(),
      });
    },
  },
  {
    name: "aws-kms",
    expectedKeyId: (id) => id === `arn:aws:kms:eu-west-1:111122223333:key/${AWS_KEY_1}`,
    async make() {
      const fake = await startFakeAwsKms({
        region: "eu-west-1",
        credentials: AWS_CREDENTIALS,
        keys: { [AWS_KEY_1]: ["alias/archives"], [AWS_KEY_2]: [] },
      });
      const base = { region: "eu-west-1", credentials: AWS_CREDENTIALS, endpoint: fake.url };
      return {
        first: awsKmsProvider({ ...base, keyId: "alias/archives" }),
        second: awsKmsProvider({ ...base, keyId: AWS_KEY_2 }),
        broken: awsKmsProvider({
          ...base,
          keyId: AWS_KEY_1,
          credentials: { ...AWS_CREDENTIALS, secretAccessKey: "not-the-secret" },
        }),
        calls: () => fake.calls,
        close: () => fake.close(),
      };
    },
  },
  {
    name: "gcp-kms",
    expectedKeyId: (id) => id === GCP_KEY_1,
    async make() {
      const fake = await startFakeGcpKms({
        token: "ya29.test-token",
        keys: [GCP_KEY_1, GCP_KEY_2],
      });
      const base = { accessToken: "ya29.test-token", endpoint: fake.url };
      return {
        first: gcpKmsProvider({ ...base, keyName: GCP_KEY_1 }),
        second: gcpKmsProvider({ ...base, keyName: GCP_KEY_2 }),
        broken: gcpKmsProvider({ ...base, keyName: GCP_KEY_1, accessToken: "expired" }),
        calls: () => fake.calls,
        close: () => fake.close(),
      };
    },
  },
];

for (const c of CASES) {
  Deno.test(`${c.name} key provider wraps, unwraps and refuses what it should`, async (t) => {
    const p = await c.make();
    try {
      const dataKey = crypto.getRandomValues(new Uint8Array(32));
      const wrapped = await p.first.wrap(dataKey);
      await t.step("round trip, recording the key id", async () => {
        assert.ok(c.expectedKeyId(wrapped.keyId), wrapped.keyId);
        assert.ok(wrapped.edek.length > 32);
        assert.deepEqual(await p.first.unwrap(wrapped.edek, wrapped.keyId), dataKey);
      });
      await t.step("another key is WRONG_KEY", async () => {
        await assert.rejects(
          p.second.unwrap(wrapped.edek, c.name === "local" ? null : p.second.keyId),
          isCode("WRONG_KEY"),
        );
      });
      await t.step("a damaged EDEK is WRONG_KEY", async () => {
        const bad = wrapped.edek.slice();
        bad[bad.length - 3]! ^= 0x10;
        await assert.rejects(p.first.unwrap(bad, wrapped.keyId), isCode("WRONG_KEY"));
      });
      if (c.name !== "local") {
        await t.step("refused credentials are KEY_PROVIDER_FAILED", async () => {
          await assert.rejects(p.broken.wrap(dataKey), isCode("KEY_PROVIDER_FAILED"));
          await assert.rejects(
            p.broken.unwrap(wrapped.edek, wrapped.keyId),
            isCode("KEY_PROVIDER_FAILED"),
          );
        });
        await t.step("the HTTP API was used", () => {
          assert.ok(p.calls().length >= 4, JSON.stringify(p.calls()));
        });
      }
      await t.step("an archive encrypted through it thaws back", async () => {
        const batch = randomBatch(ALL_TYPES, 150, 3);
        const path = `${TMP}/${c.name}.pf`;
        await writeTestArchive(path, batch, { chunkRows: 50, encryption: { provider: p.first } });
        const reader = await ArchiveReader.open(path, { keys: { providers: [p.first] } });
        try {
          assert.equal(reader.index.header.encryption?.key_provider, c.name);
          assert.ok(c.expectedKeyId(reader.index.header.encryption!.key_id!));
          const parts: Batch[] = [];
          for await (const b of reader.read()) parts.push(b);
          const back = concatBatches(reader.index.schema, parts);
          batch.schema.forEach((f, i) =>
            assertColumnEqual(back.columns[i]!, batch.columns[i]!, f.name)
          );
        } finally {
          reader.close();
        }
        await assert.rejects(ArchiveReader.open(path, { keys: {} }), isFormat("KEY_REQUIRED"));
      });
    } finally {
      await p.close();
    }
  });
}

Deno.test("aws-kms and gcp-kms providers report an unreachable endpoint as KEY_PROVIDER_FAILED", async () => {
  const aws = await startFakeAwsKms({ credentials: AWS_CREDENTIALS, keys: { [AWS_KEY_1]: [] } });
  const gcp = await startFakeGcpKms({ token: "t", keys: [GCP_KEY_1] });
  await aws.close();
  await gcp.close();
  const providers = [
    awsKmsProvider({
      keyId: AWS_KEY_1,
      region: "us-east-1",
      credentials: AWS_CREDENTIALS,
      endpoint: aws.url,
    }),
    gcpKmsProvider({ keyName: GCP_KEY_1, accessToken: "t", endpoint: gcp.url }),
  ];
  for (const p of providers) {
    await assert.rejects(p.wrap(new Uint8Array(32)), isCode("KEY_PROVIDER_FAILED"));
  }
});

Deno.test("key providers refuse malformed options at construction", () => {
  for (
    const make of [
      () => localKeyProvider(new Uint8Array(16)),
      () => awsKmsProvider({ keyId: "", region: "us-east-1", credentials: AWS_CREDENTIALS }),
      () => awsKmsProvider({ keyId: "k", region: "Not A Region", credentials: AWS_CREDENTIALS }),
      () =>
        awsKmsProvider({
          keyId: "k",
          region: "us-east-1",
          credentials: AWS_CREDENTIALS,
          endpoint: "ftp://x",
        }),
      () => gcpKmsProvider({ keyName: "projects/p/keyRings/r", accessToken: "t" }),
    ]
  ) {
    assert.throws(make, isCode("BAD_ARGUMENT"));
  }
});

Deno.test("prepareEncryption() takes exactly one of a key and a provider", async () => {
  await assert.rejects(prepareEncryption({}), isFormat("BAD_ARGUMENT"));
  await assert.rejects(
    prepareEncryption({ key: new Uint8Array(32), provider: localKeyProvider(new Uint8Array(32)) }),
    isCode("BAD_ARGUMENT"),
  );
  await assert.rejects(prepareEncryption({ key: new Uint8Array(31) }), isCode("BAD_ARGUMENT"));
  const local = await prepareEncryption({ provider: localKeyProvider(new Uint8Array(32).fill(4)) });
  assert.equal(local.header.key_provider, "local");
  assert.deepEqual(
    await unlockDataKey(local.header, { key: new Uint8Array(32).fill(4) }, "x.pf"),
    local.dataKey,
  );
  await assert.rejects(unlockDataKey(local.header, undefined, "x.pf"), isFormat("KEY_REQUIRED"));
});

Deno.test("readKeyFile() reads 32 raw bytes or their base64, and nothing else", async () => {
  const key = crypto.getRandomValues(new Uint8Array(32));
  await Deno.writeFile(`${TMP}/raw.key`, key);
  await Deno.writeTextFile(`${TMP}/b64.key`, btoa(String.fromCharCode(...key)) + "\n");
  await Deno.writeTextFile(`${TMP}/short.key`, "too short");
  assert.deepEqual(await readKeyFile(`${TMP}/raw.key`), key);
  assert.deepEqual(await readKeyFile(`${TMP}/b64.key`), key);
  await assert.rejects(readKeyFile(`${TMP}/short.key`), isCode("BAD_ARGUMENT"));
  await assert.rejects(readKeyFile(`${TMP}/missing.key`), isCode("BAD_ARGUMENT"));
});
