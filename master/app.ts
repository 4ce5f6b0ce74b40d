/**
 * The master's Hono app: the REST paths of `DESIGN.md` ("Master REST") over a
 * {@link Master}, typed with `@hono/zod-openapi` (`/openapi.json`), plus the status
 * page at `/`, `GET /tasks/{id}/rows` (a task's rows, for a worker that cannot
 * read the source itself) and `POST /tasks/done` (several frozen chunks of one
 * worker in one request, `cluster/wire.ts` encodeChunkBodies: each taken or refused
 * as `POST /tasks/{id}/done` would, its outcome in `results`; `?next=N` brings up to
 * N next tasks, in `next` and `next_more`). A worker that registers with `slots` > 1
 * holds that many tasks and lists them in `tasks` on register and heartbeat.
 *
 * The app owns no state: {@link createMasterApp} gets the master and a logger, so
 * tests drive it through `app.request()` and `serve.ts` / `cli/servers.ts` put it
 * behind `Deno.serve`. Every error answer is `{"error": {"code", "message"}}`
 * (`internal/http_error.ts`; cluster codes mapped by `JOB_STATUS_BY_CODE`). Bodies
 * are limited to 1 MiB, except frozen chunks (`maxChunkBytes`).
 *
 * Security: with an {@link RBACManager} (a JWT secret configured) every
 * route but `GET /health` and the status page `/` needs `Authorization: Bearer
 * <JWT>`; 401 without a valid token, 403 without the right:
 *
 * | routes | who |
 * |---|---|
 * | `POST /jobs` | a user token with `can_freeze` |
 * | `GET /jobs`, `GET /jobs/{id}`, `GET /workers` | a user token |
 * | `POST /jobs/{id}/cancel`, `DELETE /jobs/{id}` | a user token with `can_freeze` |
 * | `POST /workers/register`, `POST /workers/{id}/heartbeat`, `POST /tasks/{id}/done`, `POST /tasks/done`, `POST /tasks/{id}/failed`, `GET /tasks/{id}/rows` | a service token (the cluster's own processes) |
 * | `GET /openapi.json` | any valid token |
 *
 * Jobs record their submitter's namespace and user; a user sees and cancels only
 * its namespace's jobs (`*`: all; another namespace's job is 404). With data roots
 * (`--data-roots`), a job's `source` and `destination` must resolve inside a root
 * (`..`, absolute paths elsewhere, escaping symlinks: 403 `PATH_OUTSIDE_ROOT`),
 * relative paths resolve against the first root (`cluster submit src.csv
 * team-a/out.pf` reads `<root>/src.csv` and writes `<root>/team-a/out.pf`), and a
 * namespaced user writes only under `<root>/<namespace>/` and reads there or at a
 * root's top level (403 `FORBIDDEN` otherwise). Without data roots, paths are not
 * confined, and with auth on only namespace `*` may submit. The rules live in
 * `_access.ts`.
 *
 * The status page is static HTML that holds no data: its script asks for a token
 * (kept in the browser's `localStorage`) when the master answers 401, and sends it
 * with each request. The token is checked before any body is read. Without a manager auth is
 * off and one warning is logged when the app is built.
 *
 * @module
 */
import { mountDocs } from "../internal/docs.ts";
import { PermafrostError } from "../internal/errors.ts";
import { JobError } from "../client/errors.ts";
import { version } from "../internal/version.ts";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { requestId } from "hono/request-id";
import { accessLog } from "../internal/access_log.ts";
import {
  BEARER_SECURITY as secured,
  errorResponses,
  jsonContent as json,
  jsonRequest as body,
} from "../internal/openapi.ts";
import { DEFAULT_MAX_BODY_BYTES, limitBody } from "../internal/body_limit.ts";
import {
  createErrorHandler,
  errorResponse,
  notFoundHandler,
  validationHook,
} from "../internal/http_error.ts";
import { jsonBody } from "../internal/json_body.ts";
import { createLogger, type Logger } from "../internal/log.ts";
import {
  type AuthVariables,
  bearerAuth,
  requireClaim,
  requireService,
  requireUser,
} from "../auth/bearer/index.ts";
import type { RBACManager } from "../auth/rbac.ts";
import { JOB_STATUS_BY_CODE } from "../client/errors.ts";
import { MAX_JOB_WAIT_S } from "../client/types.ts";
import { decodeChunkBodies, MAX_BODIES, WIRE_CONTENT_TYPE } from "../cluster/wire.ts";
import { MAX_CHUNK_ROWS } from "../format/constants.ts";
import { CODEC_CHOICES } from "../codecs/registry.ts";
import { SOURCE_FORMATS } from "../io/types.ts";
import type { Master } from "./master.ts";
import { JobAccess } from "./_access.ts";
import { STATUS_PAGE_HTML } from "./status_page.ts";
import { MAX_SLOTS } from "./_state.ts";

/** What the app needs. */
export interface MasterAppDeps {
  /** The master. */
  master: Master;
  /** Logger (default: warnings and errors to stderr). */
  logger?: Logger;
  /** Largest frozen chunk body in bytes (default 512 MiB). */
  maxChunkBytes?: number;
  /** Validates bearer tokens; null or absent turns auth off (a warning is logged). */
  rbac?: RBACManager | null;
  /**
   * Data roots (resolved with `resolveDataRoots`): job paths are confined to them and
   * their first-level directories are the namespaces. Empty or absent: no
   * confinement, and with auth on only namespace `*` may submit.
   */
  dataRoots?: readonly string[];
}

/**
 * Paths served without a token: liveness, the status page (static HTML, no data), and
 * the API's description with its documentation pages.
 */
export const MASTER_PUBLIC_PATHS: readonly string[] = Object.freeze([
  "/health",
  "/",
  "/openapi.json",
  "/docs",
  "/docs/*",
  "/redoc",
  "/redoc/*",
]);

/** Context variables the app sets: the request id and the caller (`auth`, null when auth is off). */
export type MasterEnv = {
  Variables: { requestId: string } & AuthVariables;
  Bindings: { remoteAddr?: Deno.NetAddr };
};

const JOB_STATUSES = ["QUEUED", "RUNNING", "DONE", "FAILED", "CANCELLED"] as const;

const SubmitSchema = z.object({
  source: z.string().min(1).openapi({
    description: "Source file on the master's filesystem, or an object URI (s3://, az://, gs://)",
  }),
  destination: z.string().min(1).openapi({
    description: "Archive to write: a path on the master's filesystem, or an object URI",
  }),
  // CODEC_CHOICES is never empty (three codecs and auto); zod wants that said as a tuple.
  codec: z.enum(CODEC_CHOICES as [string, ...string[]]).optional(),
  chunk_rows: z.number().int().min(1).max(MAX_CHUNK_ROWS).optional(),
  format: z.enum(SOURCE_FORMATS).optional(),
  cwd: z.string().min(1).max(4096).optional().openapi({
    description:
      "Absolute directory relative paths resolve against when the master has no data roots",
  }),
}).strict().openapi("SubmitRequest");

const SubmitResultSchema = z.object({
  job_id: z.string(),
  status: z.enum(JOB_STATUSES),
}).openapi("SubmitResponse");

const TaskSchema = z.object({
  task_id: z.string(),
  index: z.number().int(),
  status: z.enum(JOB_STATUSES),
  attempts: z.number().int(),
  worker_id: z.string().nullable(),
  rows: z.number().int(),
  error: z.string().nullable(),
  started_at: z.string().nullable().optional().openapi({
    description: "When its current or last attempt was handed out; null while queued",
  }),
  finished_at: z.string().nullable().optional().openapi({
    description: "When it ended (DONE, FAILED or CANCELLED)",
  }),
}).openapi("Task");

const JobSummarySchema = z.object({
  job_id: z.string(),
  status: z.enum(JOB_STATUSES),
  phase: z.enum(["preparing", "freezing", "writing", "finished"]),
  progress: z.number(),
  total_rows: z.number().int().nullable(),
  source: z.string(),
  destination: z.string(),
  codec: z.string(),
  codec_used: z.string().nullable(),
  auto_reason: z.string().nullable(),
  chunk_rows: z.number().int(),
  tasks_total: z.number().int().nullable(),
  tasks_done: z.number().int(),
  widened_columns: z.array(z.string()),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  updated_at: z.string(),
  error: z.string().nullable(),
  payload_sha256: z.string().nullable(),
  archive_bytes: z.number().int().nullable(),
  namespace: z.string().nullable(),
  submitted_by: z.string().nullable(),
  source_bytes: z.number().int().nullable(),
  rows_done: z.number().int(),
  elapsed_s: z.number().nullable(),
  rows_per_s: z.number().nullable(),
  mb_per_s: z.number().nullable(),
  eta_s: z.number().nullable(),
  ratio: z.number().nullable().openapi({
    description: "Source bytes per archive byte (estimated from staged chunks while RUNNING)",
  }),
}).openapi("JobSummary");

const JobSchema = JobSummarySchema.extend({ tasks: z.array(TaskSchema) }).openapi("Job");

const WorkerSchema = z.object({
  worker_id: z.string(),
  url: z.string(),
  status: z.enum(["idle", "busy", "offline"]),
  jobs_done: z.number().int().openapi({ description: "Jobs it finished at least one task for" }),
  tasks_done: z.number().int().openapi({ description: "Tasks it finished" }),
  tasks_failed: z.number().int(),
  last_heartbeat: z.string(),
  heartbeat_age_s: z.number(),
  task_id: z.string().nullable(),
  registered_at: z.string(),
}).openapi("Worker");

const HealthSchema = z.object({
  status: z.literal("ok"),
  version: z.string().openapi({ description: "The release version", example: "1.3.1" }),
  workers: z.number().int(),
  idle_workers: z.number().int(),
  offline_workers: z.number().int(),
  active_jobs: z.number().int(),
  heartbeat_s: z.number(),
}).openapi("Health");

const RunningSchema = z.object({ task_id: z.string().min(1), lease: z.string().min(1) })
  .nullable().optional();

const HeldSchema = z.array(z.object({ task_id: z.string().min(1), lease: z.string().min(1) }))
  .max(1000).optional().openapi({
    description:
      "Every task the worker holds (computing, queued, or its result on the way); when given, `running` is ignored",
  });

const RegisterSchema = z.object({
  worker_id: z.string().min(1).max(200).regex(/^[A-Za-z0-9._:@-]+$/, {
    message: "use letters, digits and . _ : @ -",
  }),
  url: z.string().url(),
  running: RunningSchema,
  tasks: HeldSchema,
  slots: z.number().int().min(1).max(MAX_SLOTS).optional().openapi({
    description:
      `Tasks the worker may hold at once (default 1, at most ${MAX_SLOTS}): small tasks queue on it while it reports the last`,
  }),
}).openapi("RegisterRequest");

const RegisterResultSchema = z.object({
  worker_id: z.string(),
  heartbeat_s: z.number(),
  url: z.string(),
  drop: z.array(z.string()),
}).openapi("RegisterResponse");

const HeartbeatSchema = z.object({ running: RunningSchema, tasks: HeldSchema }).openapi(
  "HeartbeatRequest",
);

const FailedSchema = z.object({
  lease: z.string().min(1),
  worker_id: z.string().min(1),
  error: z.union([
    z.string(),
    z.object({
      code: z.string().min(1).max(100),
      message: z.string().max(100_000),
      column: z.string().optional(),
    }),
  ]),
}).openapi("FailedRequest");

const OkSchema = z.object({ ok: z.literal(true) }).openapi("Ok");
const HeartbeatResultSchema = z.object({ ok: z.literal(true), drop: z.array(z.string()) });

const JobIdParam = z.object({ job_id: z.string().min(1).max(200) });
const JobWaitQuery = z.object({
  wait_s: z.coerce.number().min(0).max(MAX_JOB_WAIT_S).optional().openapi({
    description: `Seconds to wait for the job to finish before answering (0..${MAX_JOB_WAIT_S})`,
    example: 30,
  }),
});
const WorkerIdParam = z.object({ worker_id: z.string().min(1).max(200) });
const TaskIdParam = z.object({ task_id: z.string().min(1).max(200) });

const errors = (...statuses: number[]) => errorResponses(statuses);

const freezer = [requireUser(), requireClaim("can_freeze")];
const user = [requireUser()];
const service = [requireService()];

const routes = {
  health: createRoute({
    method: "get",
    path: "/health",
    summary: "Liveness and worker counts",
    responses: { 200: json(HealthSchema, "The master is up") },
  }),
  submit: createRoute({
    method: "post",
    path: "/jobs",
    summary: "Submit a freeze job; needs can_freeze",
    ...secured,
    middleware: freezer,
    request: { body: body(SubmitSchema) },
    responses: {
      201: json(SubmitResultSchema, "Accepted, QUEUED"),
      ...errors(400, 401, 403, 409, 413),
    },
  }),
  list: createRoute({
    method: "get",
    path: "/jobs",
    summary: "Every job the caller's namespace sees, newest first (without tasks)",
    ...secured,
    middleware: user,
    responses: { 200: json(z.array(JobSummarySchema), "Jobs"), ...errors(401, 403) },
  }),
  get: createRoute({
    method: "get",
    path: "/jobs/{job_id}",
    summary: "One job with its tasks",
    description:
      "With `wait_s`, the answer waits until the job is DONE, FAILED or CANCELLED, or `wait_s` seconds have passed, whichever comes first: a client learns the end of a job at once, without polling.",
    ...secured,
    middleware: user,
    request: { params: JobIdParam, query: JobWaitQuery },
    responses: { 200: json(JobSchema, "The job"), ...errors(401, 403, 404) },
  }),
  cancel: createRoute({
    method: "post",
    path: "/jobs/{job_id}/cancel",
    summary: "Cancel a QUEUED or RUNNING job; needs can_freeze",
    ...secured,
    middleware: freezer,
    request: { params: JobIdParam },
    responses: { 200: json(SubmitResultSchema, "CANCELLED"), ...errors(401, 403, 404, 409) },
  }),
  remove: createRoute({
    method: "delete",
    path: "/jobs/{job_id}",
    summary: "Same as POST /jobs/{job_id}/cancel",
    ...secured,
    middleware: freezer,
    request: { params: JobIdParam },
    responses: { 200: json(SubmitResultSchema, "CANCELLED"), ...errors(401, 403, 404, 409) },
  }),
  workers: createRoute({
    method: "get",
    path: "/workers",
    summary: "Every worker the master knows",
    ...secured,
    middleware: user,
    responses: { 200: json(z.array(WorkerSchema), "Workers"), ...errors(401, 403) },
  }),
  register: createRoute({
    method: "post",
    path: "/workers/register",
    summary: "Register (or re-register) a worker; needs a service token",
    ...secured,
    middleware: service,
    request: { body: body(RegisterSchema) },
    responses: { 200: json(RegisterResultSchema, "Registered"), ...errors(400, 401, 403) },
  }),
  heartbeat: createRoute({
    method: "post",
    path: "/workers/{worker_id}/heartbeat",
    summary: "A worker's heartbeat (body optional: the task it runs); needs a service token",
    ...secured,
    middleware: service,
    request: { params: WorkerIdParam },
    responses: { 200: json(HeartbeatResultSchema, "Recorded"), ...errors(400, 401, 403, 404) },
  }),
  failed: createRoute({
    method: "post",
    path: "/tasks/{task_id}/failed",
    summary: "A worker reports a failed attempt; needs a service token",
    ...secured,
    middleware: service,
    request: { params: TaskIdParam, body: body(FailedSchema) },
    responses: { 200: json(OkSchema, "Recorded"), ...errors(400, 401, 403, 404, 409) },
  }),
};

function remoteHost(c: Context<MasterEnv>): string | undefined {
  try {
    return c.env?.remoteAddr?.hostname;
  } catch {
    return undefined;
  }
}

/**
 * Creates the master's app.
 *
 * @param deps The master and a logger.
 * @returns The app (`app.fetch` for `Deno.serve`, `app.request` for tests).
 *
 * @example Ask a fresh master for its health
 * ```ts ignore
 * const store = await JobStore.open(":memory:");
 * const app = createMasterApp({ master: Master.open({ store, dataDir: ".tmp/m" }) });
 * const res = await app.request("/health");
 * assert.equal((await res.json()).status, "ok");
 * ```
 */
export function createMasterApp(deps: MasterAppDeps): OpenAPIHono<MasterEnv> {
  const { master } = deps;
  const logger = deps.logger ?? createLogger({ component: "master", level: "warn" });
  const maxChunkBytes = deps.maxChunkBytes ?? 512 * 1024 * 1024;
  const app = new OpenAPIHono<MasterEnv>({ defaultHook: validationHook });
  app.onError(createErrorHandler({ logger, statusByCode: JOB_STATUS_BY_CODE }));
  app.notFound(notFoundHandler);
  const access = new JobAccess(master, deps.dataRoots ?? []);
  app.use(requestId());
  const log = accessLog(logger);
  if (log) app.use(log);
  // Authentication first, so a stranger's body (a chunk of hundreds of MiB) is never read.
  app.use(
    bearerAuth({
      rbac: deps.rbac ?? null,
      publicPaths: MASTER_PUBLIC_PATHS,
      logger,
      component: "master",
    }),
  );
  const smallLimit = limitBody({ maxBytes: DEFAULT_MAX_BODY_BYTES });
  const chunkLimit = limitBody({ maxBytes: maxChunkBytes });
  app.use(function bodyLimits(c, next) {
    return /^\/tasks\/(?:[^/]+\/)?done$/.test(c.req.path)
      ? chunkLimit(c, next)
      : smallLimit(c, next);
  });
  app.use(jsonBody());

  app.get("/", (c) => c.html(STATUS_PAGE_HTML));

  app.openapi(routes.health, (c) => c.json(master.health(), 200));

  app.openapi(routes.submit, async (c) => {
    const job = await access.submit(c.get("auth"), c.req.valid("json"));
    return c.json({ job_id: job.job_id, status: job.status }, 201);
  });

  app.openapi(routes.list, (c) => c.json(access.jobs(c.get("auth")), 200));

  app.openapi(routes.get, async (c) => {
    const who = c.get("auth");
    const { job_id } = c.req.valid("param");
    const { wait_s } = c.req.valid("query");
    const job = access.job(who, job_id); // 404 at once, before any wait
    if (!wait_s) return c.json(job, 200);
    await master.untilFinished(job_id, wait_s * 1000, c.req.raw.signal);
    return c.json(access.job(who, job_id), 200);
  });

  app.openapi(routes.cancel, (c) => {
    const job = access.cancel(c.get("auth"), c.req.valid("param").job_id);
    return c.json({ job_id: job.job_id, status: job.status }, 200);
  });

  app.openapi(routes.remove, (c) => {
    const job = access.cancel(c.get("auth"), c.req.valid("param").job_id);
    return c.json({ job_id: job.job_id, status: job.status }, 200);
  });

  app.openapi(routes.workers, (c) => c.json(access.workers(c.get("auth")), 200));

  app.openapi(routes.register, (c) => {
    const answer = master.register(c.req.valid("json"), remoteHost(c));
    return c.json(answer, 200);
  });

  app.openapi(routes.heartbeat, async (c) => {
    // The body is optional: a bare POST is a heartbeat of an idle worker.
    const text = await c.req.text();
    let raw: unknown = {};
    if (text.trim() !== "") {
      try {
        raw = JSON.parse(text);
      } catch {
        throw new HTTPException(400, { message: "Heartbeat body is not valid JSON" });
      }
    }
    const parsed = HeartbeatSchema.safeParse(raw);
    if (!parsed.success) {
      const why = parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`);
      throw new HTTPException(400, { message: `Invalid heartbeat body: ${why.join("; ")}` });
    }
    const answer = master.heartbeat(c.req.valid("param").worker_id, parsed.data);
    return c.json(answer, 200);
  });

  app.openapi(routes.failed, (c) => {
    master.taskFailed(c.req.valid("param").task_id, c.req.valid("json"));
    return c.json({ ok: true as const }, 200);
  });

  // Several results of one worker in one request (`cluster/wire.ts` encodeChunkBodies):
  // each is taken or refused as `POST /tasks/{id}/done` would, and said in `results`;
  // `?next=N`: up to N next tasks come in `next` (the first) and `next_more` (the rest).
  app.post("/tasks/done", requireService(), async (c) => {
    const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== WIRE_CONTENT_TYPE) {
      return c.json({
        error: {
          code: "UNSUPPORTED_MEDIA_TYPE",
          message: `Send the frozen chunks as ${WIRE_CONTENT_TYPE}, got '${type || "nothing"}'`,
        },
      }, 415);
    }
    const bodies = decodeChunkBodies(new Uint8Array(await c.req.arrayBuffer()));
    const wanted = Number(c.req.query("next") ?? 0);
    const max = Number.isSafeInteger(wanted) ? Math.max(0, Math.min(wanted, MAX_BODIES)) : 0;
    const { results, next } = master.tasksDone(bodies, max);
    const [first, ...more] = next;
    return c.json({
      ok: true as const,
      results,
      ...(first ? { next: first } : {}),
      ...(more.length > 0 ? { next_more: more } : {}),
    }, 200);
  });

  app.post("/tasks/:task_id/done", requireService(), async (c) => {
    const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== WIRE_CONTENT_TYPE && type !== "application/octet-stream") {
      return c.json({
        error: {
          code: "UNSUPPORTED_MEDIA_TYPE",
          message: `Send the frozen chunk as ${WIRE_CONTENT_TYPE}, got '${type || "nothing"}'`,
        },
      }, 415);
    }
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    const { next } = await master.taskDone(c.req.param("task_id"), bytes, {
      acceptNext: c.req.query("next") === "1",
    });
    return c.json(next ? { ok: true as const, next } : { ok: true as const }, 200);
  });

  app.get("/tasks/:task_id/rows", requireService(), async (c) => {
    const lease = c.req.query("lease");
    if (!lease) {
      throw new HTTPException(400, {
        message: "Give the task's lease: GET /tasks/{task_id}/rows?lease=…",
      });
    }
    let bytes: Uint8Array;
    try {
      bytes = await master.taskRows(c.req.param("task_id"), lease);
    } catch (err) {
      // The source's own errors (a value that does not fit its column, a changed
      // file) go to the worker as they are, so it reports them as a local read would
      // (a SCHEMA_MISMATCH with its column widens the column instead of failing).
      if (!(err instanceof PermafrostError) || err instanceof JobError) throw err;
      return errorResponse(422, err.code, err.message, err.column ? { column: err.column } : {});
    }
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, { "content-type": WIRE_CONTENT_TYPE });
  });

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "A user token (cluster add-user prints one), or the cluster's service token; not needed when auth is off",
  });
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "Permafrost master",
      version: version(),
      description: "Freeze jobs split into tasks run by workers. Errors: {error: {code, message}}.",
    },
  });
  mountDocs(app, "Permafrost master API");
  return app;
}
