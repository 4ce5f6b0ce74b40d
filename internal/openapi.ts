/**
 * The pieces every server's `@hono/zod-openapi` routes are declared with, so the
 * master, the workers and the catalog describe requests, answers and errors the
 * same way: the one error body ({@link ErrorSchema}, what `http_error.ts` sends),
 * JSON content, error answers by status, and the bearer-token security marker.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";

/** The one HTTP error body (`http_error.ts`). */
export const ErrorSchema = z.object({
  error: z.object({
    code: z.string().openapi({ example: "NOT_FOUND" }),
    message: z.string().openapi({ example: "No job 'j1': list them with GET /jobs" }),
    fields: z.array(z.object({ in: z.string(), path: z.string(), message: z.string() })).optional(),
  }),
}).openapi("Error");

/**
 * A JSON answer.
 *
 * @param schema Its schema.
 * @param description What it is.
 * @returns The OpenAPI response object.
 */
export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});

/**
 * Error answers for some statuses.
 *
 * @param statuses The statuses.
 * @param texts A description per status (default `Error <status>`).
 * @returns The OpenAPI responses by status.
 */
export const errorResponses = (
  statuses: readonly number[],
  texts: Readonly<Record<number, string>> = {},
) =>
  Object.fromEntries(
    statuses.map((s) => [s, jsonContent(ErrorSchema, texts[s] ?? `Error ${s}`)]),
  );

/**
 * A required JSON request body.
 *
 * @param schema Its schema.
 * @returns The OpenAPI request body object.
 */
export const jsonRequest = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { "application/json": { schema } },
});

/** Marks a route as needing a bearer token (the servers register `bearerAuth`). */
export const BEARER_SECURITY = { security: [{ bearerAuth: [] }] };
