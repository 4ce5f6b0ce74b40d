/**
 * The shape of a task (`TaskSpec`, `client/types.ts`) as a worker checks it before
 * running it: from `POST /tasks` (the app) and from the `next` task the master puts
 * in its answer to a done-report (`worker.ts`).
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { SOURCE_FORMATS } from "../io/types.ts";
import { COLUMN_TYPES, type ColumnType, MAX_DECIMAL_PRECISION } from "../format/column.ts";

const name = z.string().min(1).max(100_000);
const count = z.number().int().min(0);

/** A task as the master hands it out (`POST /tasks`, or `next` in a done-report's answer). */
export const TaskSpecSchema = z.object({
  task_id: z.string().min(1).max(200),
  job_id: z.string().min(1).max(200),
  index: count,
  lease: z.string().min(1).max(200),
  worker_id: z.string().min(1).max(200),
  source: z.object({
    path: z.string().min(1),
    format: z.enum(SOURCE_FORMATS),
    bytes: count,
    dev: z.number().int().min(0),
    ino: z.number().int().min(0),
    mtime_ms: z.number().nullable(),
    uri: z.string().min(1).max(4096).optional(),
    etag: z.string().min(1).max(1024).optional(),
    delimiter: z.string().length(1).optional(),
  }),
  window: z.object({
    unit: z.enum(["bytes", "rows"]),
    start: count,
    end: count,
    span_rows: count,
    skip: count,
    rows: z.number().int().min(1),
    batch_rows: z.number().int().min(1),
  }).refine((w) => w.end >= w.start && w.skip + w.rows <= w.span_rows, {
    message: "window must satisfy start <= end and skip + rows <= span_rows",
  }),
  schema: z.array(z.object({
    name,
    type: z.enum(COLUMN_TYPES as [ColumnType, ...ColumnType[]]),
    nullable: z.boolean(),
    unit: z.enum(["s", "ms", "us", "ns"]).optional(),
    timezone: z.string().optional(),
    precision: z.number().int().min(1).max(MAX_DECIMAL_PRECISION).optional(),
    scale: z.number().int().min(0).max(MAX_DECIMAL_PRECISION).optional(),
  })).max(100_000),
  types: z.record(z.string(), z.enum(["string", "json"])),
  plans: z.record(
    z.string(),
    z.object({
      deps: z.array(z.string()),
      quantization: z.enum(["QUANT_NONE", "QUANT_HIGH", "QUANT_MEDIUM", "QUANT_LOW"]),
    }),
  ),
  codec: z.string().min(1).max(100),
}).refine((t) => t.schema.every((f) => Object.hasOwn(t.plans, f.name)), {
  message: "plans must hold every column of the schema",
});
