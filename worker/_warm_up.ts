/**
 * A worker's warm-up: while its task thread loads, its main thread takes a small
 * built-in task once through the path a small task takes there (`worker.ts`,
 * `INLINE_CELLS`): the task's check (`TaskSpecChecker`, whose schema also checks the
 * tasks the master posts), the CSV window read from its bytes, the inline encode and
 * the result's framing. A fresh worker's first tasks then find that code compiled
 * and the codec's kept contexts made, instead of paying for it in the first job.
 *
 * One pass, on purpose: what it saves is the one-time cost (compiling functions on
 * first call, making the zstd contexts), ~30 ms of CPU that the first job would
 * otherwise spend. V8's later tiers need hundreds of calls with the job's own types;
 * warming those on a made-up table cost more CPU than it saved in the first job
 * (measured, see the commit), so they are left to the work itself.
 *
 * Nothing it makes leaves the process: no file, no request.
 *
 * @module
 */
import type { Schema } from "../format/column.ts";
import type { ColumnPlan } from "../format/header.ts";
import type { TaskSpec } from "../client/types.ts";
import { encodeChunk, INLINE_ENCODER } from "../format/chunk.ts";
import { readCsvRange } from "../io/csv.ts";
import { cutChunk } from "../io/chunk_window.ts";
import { encodeChunkBody } from "../cluster/wire.ts";
import { fieldJson } from "../cluster/task_source.ts";
import { warmUpRows } from "../cluster/warm_up_table.ts";
import { TaskSpecChecker } from "./task_spec.ts";

/** Rows of the built-in table: a small task's. */
const ROWS = 100;

/** The built-in table's columns (`cluster/warm_up_table.ts`). */
const SCHEMA: Schema = [
  { name: "id", type: "int64", nullable: false },
  { name: "amount", type: "float64", nullable: true },
  { name: "label", type: "string", nullable: false },
  { name: "at", type: "timestamp", nullable: false, unit: "us" },
];

/**
 * Takes the built-in task once through the small-task path (see the module doc).
 *
 * @returns When done.
 * @throws Whatever that path throws (the caller logs it: a warm-up changes nothing else).
 */
export async function warmUpSmallTasks(): Promise<void> {
  const bytes = new TextEncoder().encode(warmUpRows(ROWS)); // no header: a window starts after it
  const plans: Record<string, ColumnPlan> = {};
  for (const f of SCHEMA) plans[f.name] = { deps: [], quantization: "QUANT_NONE" };
  const spec: TaskSpec = {
    task_id: "warm-up-t0",
    job_id: "warm-up",
    index: 0,
    lease: "warm-up",
    worker_id: "warm-up",
    source: { path: "(built-in)", format: "csv", bytes: bytes.length, dev: 0, ino: 0, mtime_ms: 0 },
    window: {
      unit: "bytes",
      start: 0,
      end: bytes.length,
      span_rows: ROWS,
      skip: 0,
      rows: ROWS,
      batch_rows: ROWS,
    },
    schema: SCHEMA.map(fieldJson),
    types: {},
    plans,
    codec: "zstd",
  };
  const checked = new TaskSpecChecker().check(spec);
  if ("error" in checked) throw new Error(`the built-in task is refused: ${checked.error}`);
  const { window } = checked.spec;
  const batches = readCsvRange(
    spec.source.path,
    SCHEMA,
    { start: window.start, end: window.end },
    { bytes, delimiter: ",", batchRows: window.batch_rows },
  );
  const { chunk: rows } = await cutChunk(batches, SCHEMA, window.skip, window.rows);
  if (rows === null) throw new Error("the built-in task read no rows");
  const chunk = await encodeChunk(rows, { plans, codec: spec.codec, encoder: INLINE_ENCODER });
  encodeChunkBody(spec, chunk);
}
