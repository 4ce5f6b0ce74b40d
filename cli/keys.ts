/**
 * The key flags of `freeze`, `thaw` and `peek`: {@link ENCRYPTION_SETTINGS} to declare,
 * {@link freezeEncryption} and {@link thawKeys} to turn the parsed flags and the
 * `PERMAFROST_*` environment into `freeze`'s `encryption` and `thaw`'s `keys`. Keys come
 * from `--key-file F` (32 raw bytes, or their base64), `PERMAFROST_KEY` (base64 of 32
 * bytes), or `--kms` (`local:keys/master.key`, `aws-kms:<key id, ARN or alias/…>`,
 * `gcp-kms:projects/…/cryptoKeys/…`) with KMS credentials from the environment only (a
 * flag would show in `ps`). A key given for a plain archive is reported
 * ({@link unusedKeyWarning}).
 *
 * Settings follow flag > environment variable > default (`internal/config.ts`).
 *
 * @module
 */
import { strictBase64 } from "../internal/base64.ts";
import type { FlagValue } from "./command.ts";
import type { EncryptionOptions, KeyProvider, KeyRing } from "../format/key_provider.ts";
import {
  ConfigError,
  type ConfigOf,
  type ConfigTable,
  loadConfig,
  type Parser,
  pathParser,
  processEnv,
  type Setting,
  setting,
  stringParser,
  urlParser,
} from "../internal/config.ts";
import { type LazyModules, loadModule } from "./lazy.ts";

/** A `--kms` value, parsed. */
export interface KmsUri {
  /** Key provider. */
  provider: "local" | "aws-kms" | "gcp-kms";
  /** Key file (`local`), key id/ARN/alias (`aws-kms`), CryptoKey name (`gcp-kms`). */
  target: string;
}

/**
 * Parses `local:PATH`, `aws-kms:KEY` or `gcp-kms:projects/…/cryptoKeys/K`.
 *
 * @returns The parser.
 */
export function kmsUriParser(): Parser<KmsUri> {
  return {
    describe: "local:PATH, aws-kms:KEY or gcp-kms:projects/…/cryptoKeys/K",
    parse(raw) {
      const m = /^(local|aws-kms|gcp-kms):(.+)$/.exec(raw.trim());
      if (!m) {
        throw new Error("expected local:PATH, aws-kms:KEY or gcp-kms:projects/…/cryptoKeys/K");
      }
      return { provider: m[1] as KmsUri["provider"], target: m[2]! };
    },
  };
}

/** Parses `PERMAFROST_KEY`: strict base64 of exactly 32 bytes; never echoed. */
function base64KeyParser(): Parser<Uint8Array | null> {
  return {
    describe: "base64 of 32 bytes",
    secret: true,
    parse(raw) {
      const key = strictBase64(raw.trim());
      if (key === null) {
        throw new Error("expected the base64 of 32 bytes (openssl rand -base64 32)");
      }
      if (key.length !== 32) {
        throw new Error(`expected 32 bytes, the value decodes to ${key.length}`);
      }
      return key;
    },
  };
}

function secretText(describe: string): Parser<string> {
  return { ...stringParser(), describe, secret: true };
}

/** The table of {@link ENCRYPTION_SETTINGS}. */
export interface EncryptionSettings extends ConfigTable {
  /** `--key-file` / `PERMAFROST_KEY_FILE`. */
  readonly keyFile: Setting<string>;
  /** `--kms` / `PERMAFROST_KMS`. */
  readonly kms: Setting<KmsUri | null>;
  /** `--aws-region` / `PERMAFROST_AWS_REGION`. */
  readonly awsRegion: Setting<string>;
  /** `--aws-kms-endpoint` / `PERMAFROST_AWS_KMS_ENDPOINT`. */
  readonly awsKmsEndpoint: Setting<string>;
  /** `--gcp-kms-endpoint` / `PERMAFROST_GCP_KMS_ENDPOINT`. */
  readonly gcpKmsEndpoint: Setting<string>;
}

/** The table of {@link ENCRYPTION_SECRETS}. */
export interface EncryptionSecrets extends ConfigTable {
  /** `PERMAFROST_KEY`. */
  readonly key: Setting<Uint8Array | null>;
  /** `PERMAFROST_AWS_ACCESS_KEY_ID`. */
  readonly awsAccessKeyId: Setting<string>;
  /** `PERMAFROST_AWS_SECRET_ACCESS_KEY`. */
  readonly awsSecretAccessKey: Setting<string>;
  /** `PERMAFROST_AWS_SESSION_TOKEN`. */
  readonly awsSessionToken: Setting<string>;
  /** `PERMAFROST_GCP_ACCESS_TOKEN`. */
  readonly gcpAccessToken: Setting<string>;
}

/** Encryption settings of `freeze`, `thaw` and `peek` that may be flags. */
export const ENCRYPTION_SETTINGS: EncryptionSettings = Object.freeze({
  keyFile: setting({
    flag: "--key-file",
    env: "PERMAFROST_KEY_FILE",
    default: "",
    parse: pathParser(),
    description: "Encrypt (freeze) or decrypt (thaw) with this 32-byte key (raw bytes or base64)",
  }),
  kms: setting<KmsUri | null>({
    flag: "--kms",
    env: "PERMAFROST_KMS",
    default: null,
    parse: kmsUriParser(),
    description: "Envelope encryption: a fresh data key per archive, wrapped by this key service",
  }),
  awsRegion: setting({
    flag: "--aws-region",
    env: "PERMAFROST_AWS_REGION",
    default: "",
    parse: stringParser(),
    description: "AWS region of aws-kms (default: the region in the key ARN)",
  }),
  awsKmsEndpoint: setting({
    flag: "--aws-kms-endpoint",
    env: "PERMAFROST_AWS_KMS_ENDPOINT",
    default: "",
    parse: urlParser(),
    description: "AWS KMS endpoint (default https://kms.<region>.amazonaws.com)",
  }),
  gcpKmsEndpoint: setting({
    flag: "--gcp-kms-endpoint",
    env: "PERMAFROST_GCP_KMS_ENDPOINT",
    default: "",
    parse: urlParser(),
    description: "Cloud KMS endpoint (default https://cloudkms.googleapis.com)",
  }),
});

/**
 * Secrets read from the environment only: no command declares these flags, so a key
 * or a credential never appears on a command line.
 */
export const ENCRYPTION_SECRETS: EncryptionSecrets = Object.freeze({
  key: setting<Uint8Array | null>({
    flag: "--key",
    env: "PERMAFROST_KEY",
    default: null,
    parse: base64KeyParser(),
    description: "Environment only: the 32-byte key, base64 (like --key-file)",
  }),
  awsAccessKeyId: setting({
    flag: "--aws-access-key-id",
    env: "PERMAFROST_AWS_ACCESS_KEY_ID",
    default: "",
    parse: secretText("an AWS access key id"),
    description: "Environment only: AWS access key id of aws-kms",
  }),
  awsSecretAccessKey: setting({
    flag: "--aws-secret-access-key",
    env: "PERMAFROST_AWS_SECRET_ACCESS_KEY",
    default: "",
    parse: secretText("an AWS secret access key"),
    description: "Environment only: AWS secret access key of aws-kms",
  }),
  awsSessionToken: setting({
    flag: "--aws-session-token",
    env: "PERMAFROST_AWS_SESSION_TOKEN",
    default: "",
    parse: secretText("an AWS session token"),
    description: "Environment only: AWS session token (temporary credentials)",
  }),
  gcpAccessToken: setting({
    flag: "--gcp-access-token",
    env: "PERMAFROST_GCP_ACCESS_TOKEN",
    default: "",
    parse: secretText("an OAuth 2 access token"),
    description:
      "Environment only: OAuth 2 access token of gcp-kms (gcloud auth print-access-token)",
  }),
});

/** Flags (without `--`) of {@link ENCRYPTION_SETTINGS}. */
const ENCRYPTION_FLAGS: readonly string[] = Object.freeze(
  Object.values(ENCRYPTION_SETTINGS).map((s) => s.flag.slice(2)),
);

/** What the security handlers read besides the parsed flags. */
export interface SecurityIo {
  /** Environment (default: the `PERMAFROST_*` variables the tables name). */
  env?: Readonly<Record<string, string | undefined>>;
  /** HTTP client of the KMS providers (default: `fetch`). */
  fetch?: typeof fetch;
}

interface Resolved {
  config: ConfigOf<typeof ENCRYPTION_SETTINGS>;
  secrets: ConfigOf<typeof ENCRYPTION_SECRETS>;
  env: Readonly<Record<string, string | undefined>>;
}

function resolve(
  flags: Readonly<Record<string, FlagValue>>,
  io: SecurityIo,
): Resolved {
  const env = io.env ?? processEnv(ENCRYPTION_SETTINGS, ENCRYPTION_SECRETS);
  const args = ENCRYPTION_FLAGS.flatMap((name) =>
    flags[name] === undefined ? [] : [`--${name}=${String(flags[name])}`]
  );
  return {
    config: loadConfig(ENCRYPTION_SETTINGS, { args, env }),
    secrets: loadConfig(ENCRYPTION_SECRETS, { env }),
    env,
  };
}

/**
 * The `encryption` option of `freeze` from `--key-file`, `--kms` and the environment.
 * Flags win over variables; at most one key source may be given.
 *
 * @param flags Parsed flags of the command (see {@link ENCRYPTION_FLAGS}).
 * @param io Environment and fetch.
 * @returns The option, or undefined for a plain archive.
 * @throws {ConfigError} BAD_CONFIG for two key sources or a bad value (exit 2);
 * {import("../format/errors.ts").FormatError} BAD_ARGUMENT for an unreadable key file.
 *
 * @example A key file given on the command line
 * ```ts ignore
 * const encryption = await freezeEncryption({ "key-file": "k.bin" });
 * await freeze("in.csv", "out.pf", { encryption });
 * ```
 */
export async function freezeEncryption(
  flags: Readonly<Record<string, FlagValue>>,
  io: SecurityIo = {},
): Promise<EncryptionOptions | undefined> {
  const r = resolve(flags, io);
  const fromFlags = ["key-file", "kms"].filter((f) => flags[f] !== undefined);
  const fromEnv = ["PERMAFROST_KEY_FILE", "PERMAFROST_KMS", "PERMAFROST_KEY"].filter((v) =>
    r.env[v] !== undefined && r.env[v] !== ""
  );
  const sources = fromFlags.length > 0 ? fromFlags.map((f) => `--${f}`) : fromEnv;
  if (sources.length > 1) {
    throw new ConfigError(
      "BAD_CONFIG",
      `Give one key source to encrypt with, not ${sources.join(" and ")}`,
    );
  }
  const source = sources[0];
  if (source === undefined) return undefined;
  if (source === "--kms" || source === "PERMAFROST_KMS") {
    return { provider: await kmsProvider(r.config.kms!, r, io) };
  }
  if (source === "--key-file" || source === "PERMAFROST_KEY_FILE") {
    return { key: await readKeyFile(r.config.keyFile) };
  }
  return { key: r.secrets.key! };
}

/**
 * The `keys` option of `thaw` and `peek`: the key file or `PERMAFROST_KEY`, the
 * `--kms` provider, and — for an archive whose header names an `aws-kms` or `gcp-kms`
 * key — a provider for that key with credentials from the environment.
 *
 * @param flags Parsed flags of the command (see {@link ENCRYPTION_FLAGS}).
 * @param io Environment and fetch.
 * @returns The key ring (empty when nothing is configured: plain archives need none).
 * @throws {ConfigError} BAD_CONFIG for a bad value.
 */
export async function thawKeys(
  flags: Readonly<Record<string, FlagValue>>,
  io: SecurityIo = {},
): Promise<KeyRing> {
  const r = resolve(flags, io);
  // The KMS clients load node:crypto and more (~20 ms): only an archive whose header
  // names a KMS key needs one, so its provider loads them on its first call.
  let kms: Promise<KmsModules> | null = null;
  const modules = () => kms ??= kmsModules();
  const ring: KeyRing = {
    providerFor: (name, keyId) => {
      if (keyId === null) return undefined;
      if (name === "aws-kms") {
        return deferredProvider(
          name,
          keyId,
          async () => awsProvider(await modules(), keyId, r, io),
        );
      }
      if (name === "gcp-kms") {
        return deferredProvider(
          name,
          keyId,
          async () => gcpProvider(await modules(), keyId, r, io),
        );
      }
      return undefined;
    },
  };
  if (r.config.keyFile !== "") ring.key = await readKeyFile(r.config.keyFile);
  else if (r.secrets.key) ring.key = r.secrets.key;
  if (r.config.kms) ring.providers = [await kmsProvider(r.config.kms, r, io)];
  return ring;
}

/**
 * The line to warn with when a key was given for an archive that is not encrypted,
 * so a user who expected encryption learns otherwise.
 *
 * @param archive The archive (or dataset directory) read.
 * @param keys What {@link thawKeys} returned.
 * @param encrypted Whether the archive was encrypted.
 * @returns The warning, or null when there is nothing to say.
 */
export function unusedKeyWarning(
  archive: string,
  keys: KeyRing,
  encrypted: boolean,
): string | null {
  if (encrypted || (keys.key === undefined && (keys.providers ?? []).length === 0)) return null;
  return `warning: '${archive}' is not encrypted, so the key given (--key-file, --kms or PERMAFROST_KEY) was not used; pass --require-encryption to refuse plain archives`;
}

/** Reads a key file (`format/local_key.ts`, loaded only when a key is given: it loads node:crypto). */
async function readKeyFile(path: string): Promise<Uint8Array> {
  return await (await loadModule("localKey")).readKeyFile(path);
}

/** The KMS providers' modules: loaded by the commands that take keys, not by `--help` (they load node:crypto). */
interface KmsModules {
  aws: LazyModules["awsKms"];
  gcp: LazyModules["gcpKms"];
}

/**
 * A provider that builds the real one (and loads its module) on its first call; a
 * bad setting (a malformed key id or region) fails that call, as the provider would.
 */
function deferredProvider(
  name: string,
  keyId: string,
  build: () => Promise<KeyProvider>,
): KeyProvider {
  let built: Promise<KeyProvider> | null = null;
  const provider = () => built ??= build();
  return {
    name,
    keyId,
    wrap: async (dataKey) => (await provider()).wrap(dataKey),
    unwrap: async (edek, id) => (await provider()).unwrap(edek, id),
  };
}

async function kmsModules(): Promise<KmsModules> {
  const [aws, gcp] = await Promise.all([loadModule("awsKms"), loadModule("gcpKms")]);
  return { aws, gcp };
}

async function kmsProvider(uri: KmsUri, r: Resolved, io: SecurityIo): Promise<KeyProvider> {
  switch (uri.provider) {
    case "local":
      return (await loadModule("localKey")).localKeyProvider(await readKeyFile(uri.target));
    case "aws-kms":
      return awsProvider(await kmsModules(), uri.target, r, io);
    case "gcp-kms":
      return gcpProvider(await kmsModules(), uri.target, r, io);
  }
}

function awsProvider(kms: KmsModules, keyId: string, r: Resolved, io: SecurityIo): KeyProvider {
  const fromArn = /^arn:aws[a-z-]*:kms:([a-z0-9-]+):/.exec(keyId)?.[1];
  return kms.aws.awsKmsProvider({
    keyId,
    region: r.config.awsRegion || fromArn || "",
    endpoint: r.config.awsKmsEndpoint || undefined,
    credentials: {
      accessKeyId: r.secrets.awsAccessKeyId,
      secretAccessKey: r.secrets.awsSecretAccessKey,
      ...(r.secrets.awsSessionToken ? { sessionToken: r.secrets.awsSessionToken } : {}),
    },
    fetch: io.fetch,
  });
}

function gcpProvider(kms: KmsModules, keyName: string, r: Resolved, io: SecurityIo): KeyProvider {
  return kms.gcp.gcpKmsProvider({
    keyName,
    accessToken: r.secrets.gcpAccessToken,
    endpoint: r.config.gcpKmsEndpoint || undefined,
    fetch: io.fetch,
  });
}
