/**
 * A worker's settings, declared once for the config loader (flag > `PERMAFROST_*`
 * environment variable > default; `internal/config.ts`) and for the README table
 * (`configMarkdown(WORKER_CONFIG)`).
 *
 * The heartbeat interval is not here: the master decides it and says it when the
 * worker registers (`PERMAFROST_HEARTBEAT_S` on the master).
 *
 * `--jwt-secret` / `PERMAFROST_JWT_SECRET` is the entry of `auth/settings.ts` every
 * process shares: give the master and every worker the same secret.
 *
 * @module
 */
import {
  type ConfigOf,
  enumParser,
  LOG_LEVEL_SETTING,
  portParser,
  setting,
  stringParser,
  urlParser,
} from "../internal/config.ts";
import { JWT_SECRET_SETTING } from "../auth/settings.ts";

/** Default port of the first worker. */
export const WORKER_PORT = 8801;

/** A worker's settings. */
export const WORKER_CONFIG = Object.freeze({
  master: setting({
    flag: "--master",
    env: "PERMAFROST_MASTER_URL",
    default: "http://master:8700",
    parse: urlParser(),
    description: "The master's URL",
  }),
  host: setting({
    flag: "--host",
    env: "PERMAFROST_WORKER_HOST",
    default: "0.0.0.0",
    parse: stringParser(),
    description: "Interface the worker listens on",
  }),
  port: setting({
    flag: "--port",
    env: "PERMAFROST_WORKER_PORT",
    default: WORKER_PORT,
    parse: portParser(),
    description: "Port the worker listens on (0: any free port)",
  }),
  workerId: setting({
    flag: "--worker-id",
    env: "PERMAFROST_WORKER_ID",
    default: "",
    parse: {
      describe: "letters, digits and . _ : @ - (empty: generated)",
      parse(raw: string): string {
        if (!/^[A-Za-z0-9._:@-]{0,200}$/.test(raw)) {
          throw new Error("expected letters, digits and . _ : @ -");
        }
        return raw;
      },
    },
    description: "The worker's id (default: worker-<random>)",
  }),
  url: setting({
    flag: "--url",
    env: "PERMAFROST_WORKER_URL",
    default: "",
    parse: {
      describe: "an http(s) URL, or empty",
      parse: (raw: string) => raw.trim() === "" ? "" : urlParser().parse(raw),
    },
    description:
      "URL the master reaches this worker at (default: its host and port; 0.0.0.0 becomes the address the master sees)",
  }),
  read: setting({
    flag: "--read",
    env: "PERMAFROST_WORKER_READ",
    default: "auto" as "auto" | "master",
    parse: enumParser(["auto", "master"] as const),
    description:
      "auto: read the source directly when this machine sees the same file, else fetch rows from the master; master: always fetch",
  }),
  logLevel: LOG_LEVEL_SETTING,
  jwtSecret: JWT_SECRET_SETTING,
});

/** A worker's resolved settings. */
export type WorkerConfig = ConfigOf<typeof WORKER_CONFIG>;
