/**
 * The shape of a task (`TaskSpec`, `client/types.ts`) as a worker checks it before
 * running it: from `POST /tasks` (the app) and from the `next` task the master puts
 * in its answer to a done-report (`worker.ts`).
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import type { TaskSpec } from "../client/types.ts";
import { SOURCE_FORMATS } from "../io/types.ts";
import { COLUMN_TYPES, type ColumnType, MAX_DECIMAL_PRECISION } from "../format/column.ts";

const name = z.string().min(1).max(100_000);
const count = z.number().int().min(0);

/** What differs between the tasks of one job. */
const taskPart = {
  task_id: z.string().min(1).max(200),
  job_id: z.string().min(1).max(200),
  index: count,
  lease: z.string().min(1).max(200),
  worker_id: z.string().min(1).max(200),
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
};

/**
 * The part of a task that differs between the tasks of one job: what
 * {@link checkTaskSpec} checks of a task whose job's part it has checked before.
 */
export const TaskPartSchema = z.object(taskPart);

/** A task as the master hands it out (`POST /tasks`, or `next` in a done-report's answer). */
export const TaskSpecSchema = z.object({
  ...taskPart,
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

/**
 * Checks tasks as {@link TaskSpecSchema} does, the job's part (source, schema, types,
 * plans, codec: the same in every task of a job, and most of the work) in full only
 * when it differs from the last one checked, as text: the tasks a worker takes one
 * after another are mostly of one job.
 */
export class TaskSpecChecker {
  /** The last job part checked in full, as text, and the task it was checked in. */
  #last: { jobPart: string; spec: TaskSpec } | null = null;

  /**
   * @param raw A task as received.
   * @returns The task, or the error message.
   */
  check(raw: unknown): { spec: TaskSpec } | { error: string } {
    if (raw !== null && typeof raw === "object" && !Array.isArray(raw)) {
      const { task_id, index, lease, worker_id, window, ...job } = raw as Record<string, unknown>;
      const jobPart = JSON.stringify(job);
      if (jobPart === this.#last?.jobPart) {
        const own = taskPartOf(task_id, index, lease, worker_id, window);
        if (own) return { spec: { ...this.#last.spec, ...own } };
        const part = TaskPartSchema.safeParse({
          task_id,
          job_id: job.job_id,
          index,
          lease,
          worker_id,
          window,
        });
        if (part.success) return { spec: { ...this.#last.spec, ...part.data } };
      }
      const full = TaskSpecSchema.safeParse(raw);
      if (!full.success) return { error: full.error.message };
      this.#last = { jobPart, spec: full.data as TaskSpec };
      return { spec: full.data as TaskSpec };
    }
    const full = TaskSpecSchema.safeParse(raw);
    return full.success ? { spec: full.data as TaskSpec } : { error: full.error.message };
  }
}

/** What {@link taskPartOf} gives: a task's own part, as {@link TaskPartSchema} parses it. */
type TaskPart = Pick<TaskSpec, "task_id" | "index" | "lease" | "worker_id" | "window">;

/** A string of 1 to 200 characters (the ids and lease of {@link TaskPartSchema}). */
function isId(x: unknown): x is string {
  return typeof x === "string" && x.length >= 1 && x.length <= 200;
}

/** A whole number from 0 (`count` above: zod's `int()` takes safe integers only). */
function isCount(x: unknown): x is number {
  return Number.isSafeInteger(x) && (x as number) >= 0;
}

/**
 * A task's own part when it passes every rule of {@link TaskPartSchema} (the job id
 * is in the job part, already checked), built with only the schema's keys as a parse
 * would; null otherwise, and the schema then says what is wrong. Every task a worker
 * takes goes through here: the same rules written out cost a few property reads, a
 * parse by the schema several allocations (and, in a fresh process, compiling it).
 */
function taskPartOf(
  task_id: unknown,
  index: unknown,
  lease: unknown,
  worker_id: unknown,
  window: unknown,
): TaskPart | null {
  if (!isId(task_id) || !isCount(index) || !isId(lease) || !isId(worker_id)) return null;
  if (window === null || typeof window !== "object" || Array.isArray(window)) return null;
  const { unit, start, end, span_rows, skip, rows, batch_rows } = window as Record<
    string,
    unknown
  >;
  if (unit !== "bytes" && unit !== "rows") return null;
  if (!isCount(start) || !isCount(end) || !isCount(span_rows) || !isCount(skip)) return null;
  if (!isCount(rows) || rows < 1 || !isCount(batch_rows) || batch_rows < 1) return null;
  if (end < start || skip + rows > span_rows) return null;
  return {
    task_id,
    index,
    lease,
    worker_id,
    window: { unit, start, end, span_rows, skip, rows, batch_rows },
  };
}
