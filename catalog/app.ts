/**
 * The catalog's Hono app: the REST paths of `DESIGN.md` over a {@link Catalog},
 * typed with `@hono/zod-openapi`, plus `/openapi.json`, `/docs` (Swagger UI) and
 * `/redoc` (ReDoc), both offline, and a page for people at `/` (`page.ts`).
 *
 * The app owns no state: it gets the catalog and a logger in {@link CatalogAppDeps},
 * so tests drive it through `app.request()` and `serve.ts`/`server.ts` put it behind
 * `Deno.serve`. Every error answer is `{"error": {"code", "message"}}`
 * (`internal/http_error.ts`), with catalog codes mapped by
 * {@link CATALOG_STATUS_BY_CODE}. Request bodies sent the way `curl -d` sends them
 * (form content type) are read as JSON (`internal/json_body.ts`).
 *
 * Security: with an {@link RBACManager} every route but `/`, `/health`,
 * `/openapi.json`, `/docs` and `/redoc` (and their assets) needs
 * `Authorization: Bearer <JWT>` of a *user* (401 without a valid one). The manager
 * checks user tokens against its user store when it has one (`--users-db`), so a
 * removed user is refused at once. Service tokens (the cluster's own processes,
 * `kind: "service"`) are 403 on every route, as on the master: they carry namespace
 * `*` but speak for no user. Registering and removing need `can_freeze`, `POST /sql`
 * needs `can_thaw` (403 without); a token sees only its namespace's datasets, and
 * whole-catalog reads (`/sql`, `/stats`, `/cost_report`) need namespace `*` (see
 * `_access.ts`). `register` and `register_dir` are confined to the data roots (403
 * outside). Bodies over `maxBodyBytes` are 413. Without a manager auth is off and a
 * warning is logged.
 *
 * @module
 */
import { CATALOG_PAGE_HTML } from "./page.ts";
import { version } from "../internal/version.ts";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { requestId } from "hono/request-id";
import { accessLog } from "../internal/access_log.ts";
import {
  BEARER_SECURITY as secured,
  errorResponses,
  jsonContent as json,
  jsonRequest as body,
} from "../internal/openapi.ts";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { type AuthVariables, bearerAuth, requireClaim, requireUser } from "../auth/bearer/index.ts";
import type { RBACManager } from "../auth/rbac.ts";
import { DEFAULT_MAX_BODY_BYTES, limitBody } from "../internal/body_limit.ts";
import { createErrorHandler, notFoundHandler, validationHook } from "../internal/http_error.ts";
import { jsonBody } from "../internal/json_body.ts";
import { createLogger, type Logger } from "../internal/log.ts";
import type { Catalog } from "./catalog.ts";
import { mountDocs } from "../internal/docs.ts";

const DOCS_TITLE = "Permafrost catalog API";
import { CatalogAccess } from "./_access.ts";
import {
  ChunkPageSchema,
  ChunksQuerySchema,
  ColumnsReportSchema,
  CostReportSchema,
  DatasetDetailSchema,
  DatasetPageSchema,
  HealthSchema,
  IntegritySchema,
  ListQuerySchema,
  NameParamSchema,
  PagingQuerySchema,
  RegisterBodySchema,
  RegisterDirBodySchema,
  RegisterDirResultSchema,
  RegisterResultSchema,
  RemoveResultSchema,
  RowsQuerySchema,
  SearchQuerySchema,
  SearchResultSchema,
  SqlBodySchema,
  SqlResultSchema,
  StatsSchema,
  VersionPageSchema,
  VersionQuerySchema,
} from "./_wire_schemas.ts";

/** HTTP status of each catalog error code. */
export const CATALOG_STATUS_BY_CODE: Readonly<Record<string, ContentfulStatusCode>> = Object.freeze(
  {
    NOT_FOUND: 404,
    CONFLICT: 409,
    INVALID_ARGUMENT: 400,
    PATH_OUTSIDE_ROOT: 403,
    ARCHIVE_UNREADABLE: 422,
    SQL_REFUSED: 400,
    SQL_FAILED: 400,
    SQL_TIMEOUT: 408,
    SQL_TOO_LARGE: 400,
    PATH_NOT_ALLOWED: 403,
    DB_LOCKED: 409,
    DB_FAILED: 500,
    THAW_UNAVAILABLE: 501,
    CLOSED: 503,
    // A registered archive found damaged while its rows are read (rows, SQL over them):
    // the archive's fault, named by the reader's code, not the server's.
    BAD_MAGIC: 422,
    UNSUPPORTED_VERSION: 422,
    TRUNCATED: 422,
    HASH_MISMATCH: 422,
    CORRUPT: 422,
    UNKNOWN_CODEC: 422,
    UNKNOWN_PREDICTOR: 422,
  },
);

/** What the app needs. */
export interface CatalogAppDeps {
  /** The catalog to serve. */
  catalog: Catalog;
  /** Logger (default: warnings and errors to stderr). */
  logger?: Logger;
  /** Largest request body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Validates bearer tokens; null or absent turns auth off (a warning is logged). */
  rbac?: RBACManager | null;
  /**
   * Data roots (resolved with `resolveDataRoots`): `register` and `register_dir` are
   * confined to them, and namespaces are their first-level directories. Empty or
   * absent: no confinement here, and only namespace `*` may register.
   */
  dataRoots?: readonly string[];
  /** Directory a relative `path`/`dir` resolves against (default: the first data root). */
  pathBase?: string;
}

/** Context variables the app sets: the request id and the caller (`auth`, null when auth is off). */
export type CatalogEnv = { Variables: { requestId: string } & AuthVariables };

/** Paths served without a token. */
export const CATALOG_PUBLIC_PATHS: readonly string[] = Object.freeze([
  "/",
  "/health",
  "/openapi.json",
  "/docs",
  "/docs/*",
  "/redoc",
  "/redoc/*",
]);

const errors = (...statuses: number[]) => errorResponses(statuses, ERROR_TEXT);
const ERROR_TEXT: Record<number, string> = {
  400: "Invalid request",
  401: "No valid bearer token (expired, bad, or its user was removed)",
  403: "A service token, a missing right or namespace, or a path outside the data roots",
  413: "Request body too large",
  404: "No such dataset or version",
  408: "Query ran past the time limit",
  409: "Already registered with other content",
  422: "Not a readable archive",
};
const tags = (t: string) => [t];
const canFreeze = [requireClaim("can_freeze")];
const canThaw = [requireClaim("can_thaw")];

const routes = {
  health: createRoute({
    method: "get",
    path: "/health",
    tags: tags("service"),
    summary: "Liveness and counts",
    responses: { 200: json(HealthSchema, "The catalog is up") },
  }),
  register: createRoute({
    method: "post",
    path: "/datasets/register",
    tags: tags("datasets"),
    summary: "Register an archive (reads its header and footer only); needs can_freeze",
    ...secured,
    middleware: canFreeze,
    request: { body: body(RegisterBodySchema) },
    responses: {
      201: json(RegisterResultSchema, "A new version was recorded"),
      200: json(RegisterResultSchema, "The same archive was already registered; nothing changed"),
      ...errors(400, 401, 403, 409, 413, 422),
    },
  }),
  registerDir: createRoute({
    method: "post",
    path: "/datasets/register_dir",
    tags: tags("datasets"),
    summary: "Register every *.pf archive in a directory; needs can_freeze",
    ...secured,
    middleware: canFreeze,
    request: { body: body(RegisterDirBodySchema) },
    responses: {
      200: json(RegisterDirResultSchema, "What was registered"),
      ...errors(400, 401, 403, 413),
    },
  }),
  list: createRoute({
    method: "get",
    path: "/datasets",
    tags: tags("datasets"),
    summary: "List datasets (latest version of each, or every version)",
    ...secured,
    request: { query: ListQuerySchema },
    responses: { 200: json(DatasetPageSchema, "One page of datasets"), ...errors(400, 401) },
  }),
  get: createRoute({
    method: "get",
    path: "/datasets/{name}",
    tags: tags("datasets"),
    summary: "One dataset: its latest version (or ?version=) and the number of versions",
    ...secured,
    request: { params: NameParamSchema, query: VersionQuerySchema },
    responses: { 200: json(DatasetDetailSchema, "The dataset"), ...errors(401, 404) },
  }),
  versions: createRoute({
    method: "get",
    path: "/datasets/{name}/versions",
    tags: tags("datasets"),
    summary: "Every version of a dataset, newest first",
    ...secured,
    request: { params: NameParamSchema, query: PagingQuerySchema },
    responses: {
      200: json(VersionPageSchema, "One page of versions, each with its schema changes"),
      ...errors(400, 401, 404),
    },
  }),
  chunks: createRoute({
    method: "get",
    path: "/datasets/{name}/chunks",
    tags: tags("datasets"),
    summary: "The chunk index of a version: row and byte ranges, hashes, per-column stats",
    ...secured,
    request: { params: NameParamSchema, query: ChunksQuerySchema },
    responses: { 200: json(ChunkPageSchema, "One page of chunks"), ...errors(400, 401, 404) },
  }),
  columns: createRoute({
    method: "get",
    path: "/datasets/{name}/columns",
    tags: tags("datasets"),
    summary: "Where a version's bytes go: each column's stored and raw bytes, share, nulls",
    ...secured,
    request: { params: NameParamSchema, query: VersionQuerySchema },
    responses: { 200: json(ColumnsReportSchema, "The columns"), ...errors(401, 404, 422) },
  }),
  rows: createRoute({
    method: "get",
    path: "/datasets/{name}/rows",
    tags: tags("datasets"),
    summary:
      "A version's rows, streamed as CSV, JSON lines or Arrow (rows, columns, where); needs can_thaw",
    description:
      "Every hash is checked as the archive is read; chunks a `where` cannot match are skipped unread. A bad column, filter or range is a 400 before any row is sent; a failure after that cuts the body.",
    ...secured,
    middleware: canThaw,
    request: { params: NameParamSchema, query: RowsQuerySchema },
    responses: {
      200: {
        description: "The rows",
        content: {
          "text/csv": { schema: z.string() },
          "application/x-ndjson": { schema: z.string() },
          "application/vnd.apache.arrow.stream": {
            schema: z.string().openapi({ format: "binary" }),
          },
        },
      },
      ...errors(400, 401, 403, 404, 422),
    },
  }),
  integrity: createRoute({
    method: "get",
    path: "/datasets/{name}/integrity",
    tags: tags("datasets"),
    summary: "Re-hash the archive's chunks against the catalog and the file's footer",
    ...secured,
    request: { params: NameParamSchema, query: VersionQuerySchema },
    responses: {
      200: json(IntegritySchema, "The report (ok: false lists each problem)"),
      ...errors(401, 404),
    },
  }),
  remove: createRoute({
    method: "delete",
    path: "/datasets/{name}",
    tags: tags("datasets"),
    summary:
      "Forget a dataset (every version, or ?version=); the archive file stays; needs can_freeze",
    ...secured,
    middleware: canFreeze,
    request: { params: NameParamSchema, query: VersionQuerySchema },
    responses: {
      200: json(RemoveResultSchema, "The versions removed"),
      ...errors(401, 403, 404),
    },
  }),
  stats: createRoute({
    method: "get",
    path: "/stats",
    tags: tags("reports"),
    summary: "Datasets, versions, rows, raw vs stored bytes, ratio by codec; needs namespace *",
    ...secured,
    responses: { 200: json(StatsSchema, "Totals"), ...errors(401, 403) },
  }),
  costReport: createRoute({
    method: "get",
    path: "/cost_report",
    tags: tags("reports"),
    summary:
      "Monthly storage cost by storage class, savings vs raw and vs a Parquet estimate; needs namespace *",
    ...secured,
    responses: { 200: json(CostReportSchema, "The report"), ...errors(401, 403) },
  }),
  sql: createRoute({
    method: "post",
    path: "/sql",
    tags: tags("query"),
    summary:
      "One read-only SELECT over the catalog's tables (datasets, chunks, chunk_stats, dataset_columns; namespace *) or over datasets' rows (each table a dataset, \"name@version\" for an older one); needs can_thaw",
    ...secured,
    middleware: canThaw,
    request: { body: body(SqlBodySchema) },
    responses: {
      200: json(SqlResultSchema, "Columns and rows"),
      ...errors(400, 401, 403, 408, 413),
    },
  }),
  search: createRoute({
    method: "get",
    path: "/search",
    tags: tags("query"),
    summary: "Search names, versions, column names and descriptions, ranked",
    ...secured,
    request: { query: SearchQuerySchema },
    responses: { 200: json(SearchResultSchema, "Hits, best first"), ...errors(400, 401) },
  }),
};

/**
 * Creates the catalog app.
 *
 * @param deps The catalog and a logger.
 * @returns The app (serve it with `Deno.serve(app.fetch)` or call `app.request`).
 *
 * @example Ask a catalog for its health without a socket
 * ```ts ignore
 * import { Catalog } from "./catalog.ts";
 * import { createCatalogApp } from "./app.ts";
 * const app = createCatalogApp({ catalog: await Catalog.open(".tmp/c.db") });
 * const res = await app.request("/health");
 * ```
 */
export function createCatalogApp(deps: CatalogAppDeps): OpenAPIHono<CatalogEnv> {
  const { catalog } = deps;
  const logger = deps.logger ?? createLogger({ component: "catalog", level: "warn" });
  const roots = deps.dataRoots ?? [];
  const access = new CatalogAccess(catalog, { roots, base: deps.pathBase ?? roots[0] });
  const app = new OpenAPIHono<CatalogEnv>({ defaultHook: validationHook });
  app.onError(createErrorHandler({ logger, statusByCode: CATALOG_STATUS_BY_CODE }));
  app.notFound(notFoundHandler);

  app.use(requestId());
  const log = accessLog(logger);
  if (log) app.use(log);
  // Authentication first, so a stranger's body is never read.
  app.use(
    bearerAuth({
      rbac: deps.rbac ?? null,
      publicPaths: CATALOG_PUBLIC_PATHS,
      logger,
      component: "catalog",
    }),
  );
  // Every protected route reads or changes users' datasets: none is for services.
  app.use(requireUser());
  const limit = deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  app.use(limitBody({ maxBytes: limit }));
  app.use(jsonBody({ maxBytes: limit }));

  app.openapi(routes.health, async (c) => {
    const s = await catalog.stats();
    return c.json(
      { status: "ok" as const, version: version(), datasets: s.datasets, versions: s.versions },
      200,
    );
  });

  app.openapi(routes.register, async (c) => {
    const b = c.req.valid("json");
    const result = await access.register(c.get("auth"), b.path, {
      name: b.name,
      version: b.version,
      description: b.description,
      storageClass: b.storage_class,
    });
    return result.created ? c.json(result, 201) : c.json(result, 200);
  });

  app.openapi(routes.registerDir, async (c) => {
    const b = c.req.valid("json");
    return c.json(
      await access.registerDir(c.get("auth"), b.dir, {
        recursive: b.recursive,
        storageClass: b.storage_class,
      }),
      200,
    );
  });

  app.openapi(routes.list, async (c) => {
    const q = c.req.valid("query");
    const page = await access.list(c.get("auth"), {
      limit: q.limit,
      offset: q.offset,
      codec: q.codec,
      prefix: q.prefix,
      storageClass: q.storage_class,
      allVersions: q.all_versions,
    });
    return c.json(page, 200);
  });

  app.openapi(routes.get, async (c) => {
    const { name } = c.req.valid("param");
    return c.json(await access.get(c.get("auth"), name, c.req.valid("query").version), 200);
  });

  app.openapi(routes.versions, async (c) => {
    const { name } = c.req.valid("param");
    const q = c.req.valid("query");
    return c.json(
      await access.versions(c.get("auth"), name, { limit: q.limit, offset: q.offset }),
      200,
    );
  });

  app.openapi(routes.chunks, async (c) => {
    const { name } = c.req.valid("param");
    const q = c.req.valid("query");
    const [start, end] = (q.rows ?? "").split(":").map(Number);
    const page = await catalog.chunks(name, {
      version: await access.versionFor(c.get("auth"), name, q.version),
      limit: q.limit,
      offset: q.offset,
      rows: q.rows === undefined ? undefined : { start: start!, end: end! },
    });
    return c.json(page, 200);
  });

  app.openapi(routes.columns, async (c) => {
    const { name } = c.req.valid("param");
    return c.json(await access.columns(c.get("auth"), name, c.req.valid("query").version), 200);
  });

  app.openapi(routes.rows, async (c) => {
    const { name } = c.req.valid("param");
    const q = c.req.valid("query");
    const [start, end] = q.rows?.split(":").map(Number) ?? [];
    const served = await access.rows(c.get("auth"), name, q.version, {
      ...(q.rows ? { rows: { start: start!, end: end! } } : {}),
      ...(q.columns ? { columns: q.columns.split(",") } : {}),
      ...(q.where ? { where: q.where } : {}),
      format: q.format ?? "csv",
    });
    return new Response(served.body, {
      status: 200,
      headers: { "content-type": served.contentType, "cache-control": "no-store" },
    });
  });

  app.openapi(routes.integrity, async (c) => {
    const { name } = c.req.valid("param");
    return c.json(
      await access.integrity(c.get("auth"), name, c.req.valid("query").version),
      200,
    );
  });

  app.openapi(routes.remove, async (c) => {
    const { name } = c.req.valid("param");
    return c.json(await access.remove(c.get("auth"), name, c.req.valid("query").version), 200);
  });

  app.openapi(routes.stats, async (c) => {
    access.requireAll(c.get("auth"), "GET /stats");
    return c.json(await catalog.stats(), 200);
  });
  app.openapi(routes.costReport, async (c) => {
    access.requireAll(c.get("auth"), "GET /cost_report");
    return c.json(await catalog.costReport(), 200);
  });

  app.openapi(routes.sql, async (c) => {
    return c.json(await access.sql(c.get("auth"), c.req.valid("json").query), 200);
  });

  app.openapi(routes.search, async (c) => {
    const q = c.req.valid("query");
    return c.json(
      await access.search(c.get("auth"), q.q, { limit: q.limit, offset: q.offset }),
      200,
    );
  });

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "A Permafrost token (cluster add-user prints one); not needed when auth is off",
  });
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: DOCS_TITLE,
      version: version(),
      description:
        "Index of Permafrost archives: register, browse, verify, search and query them. " +
        'Errors are `{"error": {"code", "message"}}`.',
    },
    tags: [
      { name: "datasets", description: "Registered archives and their versions" },
      { name: "reports", description: "Totals and costs" },
      { name: "query", description: "Search and read-only SQL" },
      { name: "service", description: "Health" },
    ],
  });
  mountDocs(app, DOCS_TITLE);
  // The page holds no data: its script reads the API with the browser's token.
  app.get("/", (c) => c.html(CATALOG_PAGE_HTML));
  return app;
}
