/**
 * Wires a master from its resolved settings: opens the job store, resumes its jobs,
 * builds the app and runs the clock ({@link Master.tick}) on a timer. Shared by
 * `cluster/cli.ts` (`master` command, on `Deno.serve`) and `serve.ts` (`deno serve`).
 *
 * @module
 */
import { join } from "node:path";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { createLogger, type Logger } from "../internal/log.ts";
import { createMasterApp, type MasterEnv } from "./app.ts";
import type { MasterConfig } from "./config.ts";
import { Master, type WorkerTransport } from "./master.ts";
import { JobStore } from "./store.ts";

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
  /** Stops the clock, waits for background work, closes the store. */
  close(): Promise<void>;
}

/**
 * Opens the store, resumes jobs and starts the clock.
 *
 * @param config The master's settings.
 * @param options Logger and worker transport overrides.
 * @returns The services.
 * @throws {import("../client/errors.ts").JobError} when the store cannot be opened.
 */
export async function startMaster(
  config: Omit<MasterConfig, "host" | "port">,
  options: { logger?: Logger; transport?: WorkerTransport } = {},
): Promise<MasterServices> {
  const logger = options.logger ?? createLogger({ component: "master", level: config.logLevel });
  const dbPath = config.db === "" ? join(config.dataDir, "jobs.db") : config.db;
  const store = await JobStore.open(dbPath);
  const master = Master.open({
    store,
    dataDir: config.dataDir,
    maxRetries: config.maxRetries,
    heartbeatS: config.heartbeatS,
    taskTimeoutS: config.taskTimeoutS,
    defaultChunk: config.defaultChunk,
    logger,
    transport: options.transport,
  });
  const app = createMasterApp({ master, logger, maxChunkBytes: config.maxChunkBytes });
  // A few ticks per heartbeat interval, so offline detection lags by a fraction of one.
  const every = Math.min(1000, Math.max(25, (config.heartbeatS * 1000) / 4));
  const timer = setInterval(() => master.tick(), every);
  let closing: Promise<void> | undefined;
  return {
    master,
    store,
    app,
    logger,
    close() {
      closing ??= (async () => {
        clearInterval(timer);
        await master.close();
        store.close();
      })();
      return closing;
    },
  };
}
