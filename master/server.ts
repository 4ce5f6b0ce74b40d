/**
 * Wires a master from its resolved settings: opens the job store, resumes its jobs,
 * builds the app and runs the clock ({@link Master.tick}) on a timer. Shared by
 * `cli/servers.ts` (`master` command, on `Deno.serve`) and `serve.ts` (`deno serve`).
 *
 * Security: with a JWT secret it opens the user store (`--users-db`,
 * default `users.db` in the data directory: the file `cluster add-user` writes) so
 * user tokens are checked against it (a removed user's tokens stop at once), signs
 * the master's own service token for its calls to workers, and resolves the data
 * roots once (a missing root fails the start). Without a secret the app logs that
 * auth is off; with auth on but no data roots it logs that only namespace `*` may
 * submit.
 *
 * @module
 */
import { join } from "node:path";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { RBACManager } from "../auth/rbac.ts";
import { openSqliteUserStore } from "../auth/sqlite_store.ts";
import type { UserStore } from "../auth/store.ts";
import { MASTER_SERVICE_NAME, serviceToken } from "../cluster/service_token.ts";
import { createLogger, type Logger } from "../internal/log.ts";
import { resolveDataRoots } from "../internal/paths.ts";
import { createMasterApp, type MasterEnv } from "./app.ts";
import type { MasterConfig } from "./config.ts";
import { Master } from "./master.ts";
import { httpTransport, type WorkerTransport } from "./transport.ts";
import { JobStore } from "./store.ts";
import { warmUpMaster } from "./_warm_up.ts";

/** A master with its app, store and clock, ready to serve. */
export interface MasterServices {
  /** The state machine. */
  master: Master;
  /** Its store. */
  store: JobStore;
  /** The HTTP app. */
  app: OpenAPIHono<MasterEnv>;
  /** The logger used. */
  logger: Logger;
  /** Token validator (null: auth off). */
  rbac: RBACManager | null;
  /** Data roots, resolved. */
  dataRoots: readonly string[];
  /** Stops the clock, waits for background work, closes the stores. */
  close(): Promise<void>;
}

/**
 * Opens the store, resumes jobs and starts the clock.
 *
 * @param config The master's settings.
 * @param options Logger and worker transport overrides; `warmUp: false` skips the
 * warm-up (`_warm_up.ts`, default on).
 * @returns The services.
 * @throws {import("../client/errors.ts").JobError} when the store cannot be opened;
 * {import("../auth/errors.ts").AuthError} STORE_FAILED when the user store cannot;
 * {import("../internal/paths.ts").PathError} PATH_INVALID for a missing data root.
 */
export async function startMaster(
  config: Omit<MasterConfig, "host" | "port">,
  options: { logger?: Logger; transport?: WorkerTransport; warmUp?: boolean } = {},
): Promise<MasterServices> {
  const logger = options.logger ?? createLogger({ component: "master", level: config.logLevel });
  const dataRoots = await resolveDataRoots(config.dataRoots);
  let users: UserStore | null = null;
  let rbac: RBACManager | null = null;
  if (config.jwtSecret !== "") {
    await Deno.mkdir(config.dataDir, { recursive: true });
    users = openSqliteUserStore(
      config.usersDb === "" ? join(config.dataDir, "users.db") : config.usersDb,
    );
    rbac = new RBACManager({ secret: config.jwtSecret, store: users });
    if (dataRoots.length === 0) {
      logger.warn(
        "no data roots configured (--data-roots / PERMAFROST_DATA_ROOTS): job paths are not confined, and only namespace '*' tokens may submit jobs",
      );
    }
  }
  const transport = options.transport ??
    httpTransport({ token: rbac ? serviceToken(rbac, MASTER_SERVICE_NAME) : undefined });
  const dbPath = config.db === "" ? join(config.dataDir, "jobs.db") : config.db;
  let store: JobStore;
  try {
    store = await JobStore.open(dbPath);
  } catch (err) {
    users?.close();
    throw err;
  }
  const master = Master.open({
    store,
    dataDir: config.dataDir,
    maxRetries: config.maxRetries,
    heartbeatS: config.heartbeatS,
    taskTimeoutS: config.taskTimeoutS,
    defaultChunk: config.defaultChunk,
    logger,
    transport,
  });
  const app = createMasterApp({
    master,
    logger,
    maxChunkBytes: config.maxChunkBytes,
    rbac,
    dataRoots,
  });
  // A few ticks per heartbeat interval, so offline detection lags by a fraction of one.
  const every = Math.min(1000, Math.max(25, (config.heartbeatS * 1000) / 4));
  const timer = setInterval(() => master.tick(), every);
  // In the background: the master serves (and workers register) meanwhile.
  const warming = options.warmUp === false ? Promise.resolve() : warmUp(config.dataDir, logger);
  let closing: Promise<void> | undefined;
  return {
    master,
    store,
    app,
    logger,
    rbac,
    dataRoots,
    close() {
      closing ??= (async () => {
        clearInterval(timer);
        await warming;
        await master.close();
        store.close();
        users?.close();
      })();
      return closing;
    },
  };
}

/** Runs {@link warmUpMaster}, logging how long it took, or why it failed (nothing else). */
async function warmUp(dataDir: string, logger: Logger): Promise<void> {
  const started = performance.now();
  try {
    await warmUpMaster(dataDir);
    logger.debug("warmed up", { ms: Math.round(performance.now() - started) });
  } catch (err) {
    logger.warn("warm-up failed (the first job compiles what it needs itself)", { err });
  }
}
