/**
 * The auth settings every process shares, declared once for the config loader
 * (`internal/config.ts`): each server's and the CLI's table includes these entries,
 * so the flag, the variable and the checks are the same everywhere.
 *
 * @module
 */
import { type Parser, type Setting, setting } from "../internal/config.ts";
import { DEFAULT_TOKEN_TTL, MIN_SECRET_BYTES, parseLifetime } from "./lifetime.ts";

/**
 * Parses a JWT secret: at least 32 bytes (RFC 7518 §3.2), so a weak secret fails at
 * startup naming the flag and the variable. Marked secret: errors never echo it.
 *
 * @returns The parser.
 */
export function jwtSecretParser(): Parser<string> {
  return {
    describe: `a secret of at least ${MIN_SECRET_BYTES} bytes`,
    secret: true,
    parse(raw) {
      if (new TextEncoder().encode(raw).length < MIN_SECRET_BYTES) {
        throw new Error(
          `the secret must be at least ${MIN_SECRET_BYTES} bytes (e.g. openssl rand -base64 48)`,
        );
      }
      return raw;
    },
  };
}

/** `--jwt-secret` / `PERMAFROST_JWT_SECRET`: turns auth on; empty means off. */
export const JWT_SECRET_SETTING: Setting<string> = setting({
  flag: "--jwt-secret",
  env: "PERMAFROST_JWT_SECRET",
  default: "",
  parse: jwtSecretParser(),
  description:
    "HS256 secret of the bearer tokens; turns auth on (unset: auth off, a warning at start). Prefer the variable: flags show in ps",
});

/** `--expires-in` / `PERMAFROST_TOKEN_TTL`: lifetime of the tokens a command issues. */
export const TOKEN_TTL_SETTING: Setting<string> = setting({
  flag: "--expires-in",
  env: "PERMAFROST_TOKEN_TTL",
  default: DEFAULT_TOKEN_TTL,
  parse: {
    describe: "seconds, or 30s, 15m, 24h, 7d",
    parse(raw) {
      try {
        parseLifetime(raw);
      } catch (err) {
        throw new Error((err as Error).message);
      }
      return raw.trim();
    },
  },
  description: "Lifetime of the tokens issued",
});

/**
 * Parses a comma-separated list of directories (`/data/a,/data/b`); whether each
 * exists is checked when the server resolves them (`resolveDataRoots`).
 *
 * @returns The parser.
 */
export function dataRootsParser(): Parser<readonly string[]> {
  return {
    describe: "comma-separated directories or object-storage prefixes",
    parse(raw) {
      const dirs = raw.split(",").map((d) => d.trim()).filter((d) => d !== "");
      if (dirs.length === 0 || dirs.some((d) => d.includes("\0"))) {
        throw new Error("expected one or more directories, comma-separated");
      }
      return Object.freeze(dirs);
    },
  };
}

/**
 * `--data-roots` / `PERMAFROST_DATA_ROOTS`: where user-given paths may point, and
 * whose first-level directories are the namespaces (`<root>/team-a/...`). The same
 * flag and variable as the catalog's, so one setting serves both servers.
 */
export const DATA_ROOTS_SETTING: Setting<readonly string[]> = setting({
  flag: "--data-roots",
  env: "PERMAFROST_DATA_ROOTS",
  default: Object.freeze([]) as readonly string[],
  parse: dataRootsParser(),
  description:
    "Directories (or prefixes like s3://bucket/root) user-given paths are confined to (symlinks followed); their subdirectories are the namespaces",
});
