/**
 * Wires a worker from its resolved settings: the {@link WorkerNode} and its app.
 * The caller serves the app and then calls {@link advertisedUrl} + `node.start(url)`
 * once it knows the port it got (port 0 asks the OS). Shared by `cli/servers.ts`
 * (`worker` command) and `serve.ts` (`deno serve`).
 *
 * With a JWT secret the worker signs its own service token (its worker id, from the
 * shared secret) for the master, and its app accepts only service tokens (the
 * master's); without one its app logs that auth is off.
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { RBACManager } from "../auth/rbac.ts";
import { serviceNameOf, serviceToken } from "../cluster/service_token.ts";
import { createLogger, type Logger } from "../internal/log.ts";
import { createWorkerApp, type WorkerEnv } from "./app.ts";
import type { WorkerConfig } from "./config.ts";
import { WorkerNode } from "./worker.ts";

/** A worker and its app. */
export interface WorkerServices {
  /** The worker. */
  node: WorkerNode;
  /** Its HTTP app. */
  app: OpenAPIHono<WorkerEnv>;
  /** The logger used. */
  logger: Logger;
}

/**
 * Builds a worker (not yet registered: call `node.start(url)` once listening).
 *
 * @param config The worker's settings (host and port are the caller's business).
 * @param options Logger and fetch overrides.
 * @returns The worker and its app.
 */
export function createWorker(
  config:
    & Pick<WorkerConfig, "master" | "workerId" | "read" | "logLevel">
    & Partial<Pick<WorkerConfig, "jwtSecret">>,
  options: { logger?: Logger; fetch?: typeof fetch } = {},
): WorkerServices {
  const logger = options.logger ?? createLogger({ component: "worker", level: config.logLevel });
  const rbac = config.jwtSecret ? new RBACManager({ secret: config.jwtSecret }) : null;
  const workerId = config.workerId || `worker-${crypto.randomUUID().slice(0, 8)}`;
  const node = new WorkerNode({
    masterUrl: config.master,
    workerId,
    read: config.read,
    logger,
    fetch: options.fetch,
    token: rbac ? serviceToken(rbac, serviceNameOf(workerId)) : undefined,
  });
  const app = createWorkerApp({ node, logger, rbac });
  return { node, app, logger };
}

/**
 * The URL the master should use: the configured one, else `http://HOST:PORT` (an
 * unspecified host such as `0.0.0.0` is kept; the master replaces it with the
 * address it sees the worker register from).
 *
 * @param configured `--url` / `PERMAFROST_WORKER_URL` (empty: derive).
 * @param host The interface listened on.
 * @param port The port actually bound.
 * @returns The URL.
 */
export function advertisedUrl(configured: string, host: string, port: number): string {
  if (configured !== "") return configured;
  const h = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return `http://${h}:${port}`;
}
