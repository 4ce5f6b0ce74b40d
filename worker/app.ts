/**
 * A worker's Hono app: what the master calls on it.
 *
 * | method | path | body → answer |
 * |---|---|---|
 * | GET | /health | → `{status, version, worker_id, state, task_id, master, tasks_done}` |
 * | POST | /tasks | a task (`TaskSpec`) → 202 `{accepted, task_id}`; 409 `BUSY` while it holds as many as its slots |
 * | POST | /tasks/{task_id}/cancel | → `{ok, dropped}` (`DELETE /tasks/{task_id}` does the same) |
 *
 * No state of its own: {@link createWorkerApp} gets the {@link WorkerNode}, so tests
 * drive it through `app.request()`. Errors are `{"error": {"code", "message"}}`.
 *
 * Security: with an {@link RBACManager} (the shared JWT secret) every
 * route but `GET /health` — `/tasks...` and `/openapi.json` — needs
 * `Authorization: Bearer` with a *service* token, which only the cluster's own
 * processes can sign (the master signs `service:master`): 401 without a valid
 * token, 403 for a user token. The token is checked before the body is read.
 * Without a manager auth is off and one warning is logged when the app is built.
 *
 * @module
 */
import { version } from "../internal/version.ts";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { limitBody } from "../internal/body_limit.ts";
import { createErrorHandler, notFoundHandler, validationHook } from "../internal/http_error.ts";
import { jsonBody } from "../internal/json_body.ts";
import { createLogger, type Logger } from "../internal/log.ts";
import { type AuthVariables, bearerAuth, requireService } from "../auth/bearer/index.ts";
import type { RBACManager } from "../auth/rbac.ts";
import { JOB_STATUS_BY_CODE } from "../client/errors.ts";
import type { TaskSpec } from "../client/types.ts";
import { TaskSpecSchema } from "./task_spec.ts";
import { ErrorSchema, jsonContent as json } from "../internal/openapi.ts";
import type { WorkerNode } from "./worker.ts";

/** What the app needs. */
export interface WorkerAppDeps {
  /** The worker. */
  node: WorkerNode;
  /** Logger (default: warnings and errors to stderr). */
  logger?: Logger;
  /** Validates bearer tokens; null or absent turns auth off (a warning is logged). */
  rbac?: RBACManager | null;
}

/** Context variables the app sets: the caller (`auth`, null when auth is off). */
export type WorkerEnv = { Variables: AuthVariables };

/** Paths served without a token. */
export const WORKER_PUBLIC_PATHS: readonly string[] = Object.freeze(["/health"]);

/** Largest task body: a task holds its schema and plan, never rows. */
const MAX_TASK_BYTES = 8 * 1024 * 1024;

const TaskIdParam = z.object({ task_id: z.string().min(1).max(200) });

const routes = {
  health: createRoute({
    method: "get",
    path: "/health",
    summary: "Liveness and what the worker does",
    responses: {
      200: json(
        z.object({
          status: z.literal("ok"),
          version: z.string().openapi({ description: "The release version", example: "1.3.1" }),
          worker_id: z.string(),
          state: z.enum(["registering", "idle", "busy"]),
          task_id: z.string().nullable(),
          master: z.string(),
          tasks_done: z.number().int(),
        }),
        "The worker is up",
      ),
    },
  }),
  assign: createRoute({
    method: "post",
    path: "/tasks",
    summary: "Run a task (the master calls this)",
    request: {
      body: { required: true, content: { "application/json": { schema: TaskSpecSchema } } },
    },
    responses: {
      202: json(z.object({ accepted: z.literal(true), task_id: z.string() }), "Started"),
      400: json(ErrorSchema, "Invalid task"),
      409: json(ErrorSchema, "Busy: it holds as many tasks as its slots"),
    },
  }),
  cancel: createRoute({
    method: "post",
    path: "/tasks/{task_id}/cancel",
    summary: "Drop a task (no result is sent)",
    request: { params: TaskIdParam },
    responses: {
      200: json(z.object({ ok: z.literal(true), dropped: z.boolean() }), "Dropped if running"),
    },
  }),
  remove: createRoute({
    method: "delete",
    path: "/tasks/{task_id}",
    summary: "Same as POST /tasks/{task_id}/cancel",
    request: { params: TaskIdParam },
    responses: {
      200: json(z.object({ ok: z.literal(true), dropped: z.boolean() }), "Dropped if running"),
    },
  }),
};

/**
 * Creates a worker's app.
 *
 * @param deps The worker and a logger.
 * @returns The app.
 */
export function createWorkerApp(deps: WorkerAppDeps): OpenAPIHono<WorkerEnv> {
  const { node } = deps;
  const logger = deps.logger ?? createLogger({ component: "worker", level: "warn" });
  const app = new OpenAPIHono<WorkerEnv>({ defaultHook: validationHook });
  app.onError(createErrorHandler({ logger, statusByCode: JOB_STATUS_BY_CODE }));
  app.notFound(notFoundHandler);
  // Authentication first, so a stranger's body is never read; then every route but
  // the public ones is for the cluster's own processes (requireService lets the
  // public paths through: bearerAuth sets no principal there).
  app.use(
    bearerAuth({
      rbac: deps.rbac ?? null,
      publicPaths: WORKER_PUBLIC_PATHS,
      logger,
      component: "worker",
    }),
  );
  app.use(requireService());
  app.use(limitBody({ maxBytes: MAX_TASK_BYTES }));
  app.use(jsonBody({ maxBytes: MAX_TASK_BYTES }));

  app.openapi(routes.health, (c) => {
    const s = node.state;
    return c.json({
      status: "ok" as const,
      version: version(),
      worker_id: s.worker_id,
      state: s.status,
      task_id: s.task_id,
      master: s.master,
      tasks_done: s.tasks_done,
    }, 200);
  });

  app.openapi(routes.assign, (c) => {
    const spec = c.req.valid("json") as TaskSpec;
    node.accept(spec);
    return c.json({ accepted: true as const, task_id: spec.task_id }, 202);
  });

  app.openapi(routes.cancel, (c) => {
    const dropped = node.cancel(c.req.valid("param").task_id);
    return c.json({ ok: true as const, dropped }, 200);
  });

  app.openapi(routes.remove, (c) => {
    const dropped = node.cancel(c.req.valid("param").task_id);
    return c.json({ ok: true as const, dropped }, 200);
  });

  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: { title: "Permafrost worker", version: version() },
  });
  return app;
}
