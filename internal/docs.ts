/**
 * `/docs` (Swagger UI) and `/redoc` (ReDoc), working offline: their assets come
 * from the npm packages `swagger-ui-dist` and `redoc` (its standalone bundle),
 * imported as text so they are part of the module graph (no read permission, no
 * path into the npm cache, and `deno compile` embeds them). Nothing is fetched
 * from a CDN; the pages load only what this server serves. The catalog and the
 * master mount them.
 *
 * @module
 */
import type { Env, Hono } from "hono";
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "text" };
import swaggerJs from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "text" };
import redocJs from "redoc/bundles/redoc.standalone.js" with { type: "text" };

const SWAGGER_INIT = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true });
});
`;

function swaggerPage(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} — docs</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;
}

function redocPage(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} — ReDoc</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="/openapi.json"></redoc>
<script src="/redoc/redoc.standalone.js"></script>
</body>
</html>
`;
}

const CACHE = "public, max-age=86400";

/**
 * Adds `/docs`, `/redoc` and their assets to an app.
 *
 * @param app The app (its `/openapi.json` is what the pages load).
 * @param title Page title (the API's name).
 */
export function mountDocs<E extends Env>(app: Hono<E>, title: string): void {
  const swagger = swaggerPage(title);
  const redoc = redocPage(title);
  app.get("/docs", (c) => c.html(swagger));
  app.get("/docs/", (c) => c.redirect("/docs", 301));
  app.get(
    "/docs/swagger-ui.css",
    (c) =>
      c.body(swaggerCss, 200, {
        "content-type": "text/css; charset=utf-8",
        "cache-control": CACHE,
      }),
  );
  app.get(
    "/docs/swagger-ui-bundle.js",
    (c) =>
      c.body(swaggerJs, 200, {
        "content-type": "text/javascript; charset=utf-8",
        "cache-control": CACHE,
      }),
  );
  app.get(
    "/docs/init.js",
    (c) => c.body(SWAGGER_INIT, 200, { "content-type": "text/javascript; charset=utf-8" }),
  );
  app.get("/redoc", (c) => c.html(redoc));
  app.get(
    "/redoc/redoc.standalone.js",
    (c) =>
      c.body(redocJs, 200, {
        "content-type": "text/javascript; charset=utf-8",
        "cache-control": CACHE,
      }),
  );
}
