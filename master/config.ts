/**
 * The master's settings, declared once for the config loader (flag > `PERMAFROST_*`
 * environment variable > default; `internal/config.ts`) and for the README table
 * (`configMarkdown(MASTER_CONFIG)`).
 *
 * Security settings are shared with the other processes: `--jwt-secret` /
 * `PERMAFROST_JWT_SECRET` and `--data-roots` / `PERMAFROST_DATA_ROOTS` are the very
 * entries of `auth/settings.ts` the catalog uses; `--users-db` / `PERMAFROST_USERS_DB`
 * is the user store the user commands (`cluster add-user ...`) write.
 *
 * @module
 */
import {
  type ConfigOf,
  intParser,
  LOG_LEVEL_SETTING,
  numberParser,
  pathParser,
  portParser,
  setting,
  stringParser,
} from "../internal/config.ts";
import { DATA_ROOTS_SETTING, JWT_SECRET_SETTING } from "../auth/settings.ts";
import { MAX_CHUNK_ROWS } from "../format/constants.ts";

/** Default port of the master. */
export const MASTER_PORT = 8700;

/** The master's settings. */
export const MASTER_CONFIG = Object.freeze({
  host: setting({
    flag: "--host",
    env: "PERMAFROST_MASTER_HOST",
    default: "0.0.0.0",
    parse: stringParser(),
    description: "Interface the master listens on",
  }),
  port: setting({
    flag: "--port",
    env: "PERMAFROST_MASTER_PORT",
    default: MASTER_PORT,
    parse: portParser(),
    description: "Port the master listens on (0: any free port)",
  }),
  maxRetries: setting({
    flag: "--max-retries",
    env: "PERMAFROST_MAX_RETRIES",
    default: 3,
    parse: intParser({ min: 1, max: 100 }),
    description: "Attempts a task gets before its job is FAILED",
  }),
  defaultChunk: setting({
    flag: "--default-chunk",
    env: "PERMAFROST_DEFAULT_CHUNK",
    default: 50_000,
    parse: intParser({ min: 1, max: MAX_CHUNK_ROWS }),
    description: "Rows per chunk (and task) when a job does not say",
  }),
  heartbeatS: setting({
    flag: "--heartbeat-s",
    env: "PERMAFROST_HEARTBEAT_S",
    default: 5,
    parse: numberParser({ min: 0.05, max: 3600 }),
    description:
      "Seconds between worker heartbeats; a worker silent for 3 intervals is offline and its tasks re-queued",
  }),
  taskTimeoutS: setting({
    flag: "--task-timeout-s",
    env: "PERMAFROST_TASK_TIMEOUT_S",
    default: 900,
    parse: numberParser({ min: 0.1, max: 604_800 }),
    description: "Seconds a task may run before the attempt counts as failed",
  }),
  dataDir: setting({
    flag: "--data-dir",
    env: "PERMAFROST_MASTER_DATA_DIR",
    default: ".permafrost/master",
    parse: pathParser(),
    description: "Directory of the job store and the staged chunks",
  }),
  db: setting({
    flag: "--db",
    env: "PERMAFROST_MASTER_DB",
    default: "",
    parse: stringParser({ nonEmpty: false }),
    description: "SQLite job store (default: jobs.db in the data directory)",
  }),
  maxChunkBytes: setting({
    flag: "--max-chunk-bytes",
    env: "PERMAFROST_MAX_CHUNK_BYTES",
    default: 512 * 1024 * 1024,
    parse: intParser({ min: 1024, max: 4 * 1024 * 1024 * 1024 }),
    description: "Largest frozen chunk a worker may send (bytes)",
  }),
  logLevel: LOG_LEVEL_SETTING,
  jwtSecret: JWT_SECRET_SETTING,
  usersDb: setting({
    flag: "--users-db",
    env: "PERMAFROST_USERS_DB",
    default: "",
    parse: stringParser({ nonEmpty: false }),
    description:
      "User store (SQLite) whose users may hold tokens, as cluster add-user writes it (default: users.db in the data directory); read only when auth is on",
  }),
  dataRoots: DATA_ROOTS_SETTING,
});

/** The master's resolved settings. */
export type MasterConfig = ConfigOf<typeof MASTER_CONFIG>;
